/*
 * test_determinism: the repeatability attn promises (docs/api.md,
 * "Determinism"), tested as stated, in two parts.
 *
 * In this process, for each problem below in both precisions: the problem
 * run on attn's own threads, 1, 2, 3 and 5 of them (attn_plan_set_threads),
 * gives the same bytes every time; and on a plan left at its default
 * (ATTN_THREADS_AUTO) that resolves to own threads, the same bytes again.
 * Any difference exits 1. Then one line per problem and precision:
 *     <problem>/<f32|f64> own <digest>
 *     <problem>/<f32|f64> default-<own|blas> <digest>
 * the FNV-1a digests of every output byte (forward and backward) of the
 * own-thread runs and of the default plan's run.
 *
 * Across processes, tests/determinism.cmake runs this program under
 * environments that must not change an own-thread result (ATTN_NUM_THREADS
 * unset, 1, 3 and 0; OPENBLAS_NUM_THREADS 1 and 2: the own engine never
 * calls BLAS) and requires the same `own` lines from all; with BLAS threads
 * (ATTN_NUM_THREADS=0) it requires the same output from two processes at
 * one BLAS thread count, and only reports whether two counts agree (that
 * depends on the BLAS kernel, which attn does not promise).
 *
 * Problems (inputs N(0,1), weights N(0, 1.5^2/C), fixed seeds):
 *   training      projected plan B=2 T=300 C=96 NH=4 causal with Wo: forward
 *                 out, backward dX dWq dWk dWv dWo (several query and key
 *                 blocks per head, so the backward's items are groups)
 *   tiled         ATTN_INFERENCE | ATTN_TILED plan B=1 T=700 C=64 NH=2
 *   sdpa-prefill  sdpa B=2 NH=4 NH_kv=2 Tq=Tk=300 hs=40 causal: out, lse,
 *                 dQ dK dV
 *   sdpa-decode   sdpa B=1 NH=4 NH_kv=1 Tq=1 Tk=5000 hs=64, key length 4321:
 *                 few (sequence, key head) pairs, so split over key blocks
 *                 and merged through lse (flash-decoding); out, lse, dQ dK dV
 *   sdpa-oneshot  attn_sdpa_* of the prefill shape (default engine only)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <attn/attn.h>

#include "support/inputs.h"
#include "support/precision.h"
#include "support/rng.h"
#include "support/talloc.h"

static const unsigned own_counts[] = {1, 2, 3, 5};
#define OWN_COUNTS (sizeof own_counts / sizeof own_counts[0])

static int failures;

/* FNV-1a over the bytes of n arrays */
typedef struct digest {
    uint64_t h;
} digest;
static void digest_add(digest *d, const void *p, size_t bytes)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < bytes; i++)
        d->h = (d->h ^ c[i]) * 0x100000001b3ull;
}

/* A typed buffer of n random values (stddev) with a fixed seed stream. */
static void *typed_random(const test_prec *p, test_rng *rng, size_t n, double stddev)
{
    return prec_typed(p, random_rounded(p, rng, n, stddev), n);
}
/* Outputs of one run: zeroed, freed together by outputs_free. */
static void *outputs[16];
static size_t output_count;
static void *typed_zeros(const test_prec *p, size_t n)
{
    void *z = calloc(n, p->size); /* all-zero bytes are 0.0 */
    if (z == NULL || output_count == sizeof outputs / sizeof outputs[0]) {
        fprintf(stderr, "out of memory or output slots\n");
        exit(1);
    }
    outputs[output_count++] = z;
    return z;
}
static void outputs_free(void)
{
    while (output_count > 0)
        free(outputs[--output_count]);
}

/* ---- problems: run on a plan (made by `make`) and digest the outputs ---- */

typedef struct problem problem;
struct problem {
    const char *name;
    /* creates the plan; 0 on success */
    attn_status (*make)(const problem *pb, const test_prec *p, attn_plan **plan);
    /* runs it and digests every output into *d */
    attn_status (*run)(const problem *pb, const test_prec *p, attn_plan *plan, digest *d);
    void *data; /* the problem's inputs, made once per precision */
};

/* Projected plans. */
typedef struct projected {
    size_t B, T, C, NH;
    unsigned flags;
    int with_Wo, backward;
    void *X, *Wq, *Wk, *Wv, *Wo, *dout;
} projected;

static void projected_inputs(projected *pr, const test_prec *p, uint64_t seed)
{
    test_rng rng;
    rng_seed(&rng, seed);
    size_t x = pr->B * pr->T * pr->C, w = pr->C * pr->C;
    double gain = 1.5 / sqrt((double)pr->C);
    pr->X = typed_random(p, &rng, x, 1.0);
    pr->Wq = typed_random(p, &rng, w, gain);
    pr->Wk = typed_random(p, &rng, w, gain);
    pr->Wv = typed_random(p, &rng, w, gain);
    pr->Wo = pr->with_Wo ? typed_random(p, &rng, w, 1.0 / sqrt((double)pr->C)) : NULL;
    pr->dout = typed_random(p, &rng, x, 1.0);
}

static attn_status projected_make(const problem *pb, const test_prec *p, attn_plan **plan)
{
    const projected *pr = pb->data;
    return attn_plan_create(plan, p->dtype, pr->B, pr->T, pr->C, pr->NH, pr->C / pr->NH, 0.0,
                            pr->flags);
}

static attn_status projected_run(const problem *pb, const test_prec *p, attn_plan *plan,
                                 digest *d)
{
    const projected *pr = pb->data;
    size_t x = pr->B * pr->T * pr->C, w = pr->C * pr->C;
    void *out = typed_zeros(p, x);
    attn_status st = p->forward(plan, pr->X, pr->Wq, pr->Wk, pr->Wv, pr->Wo, out, NULL);
    if (st != ATTN_OK)
        return st;
    digest_add(d, out, x * p->size);
    if (!pr->backward)
        return ATTN_OK;
    void *dX = typed_zeros(p, x), *dW[4];
    for (int i = 0; i < 4; i++)
        dW[i] = typed_zeros(p, w);
    st = p->backward(plan, pr->X, pr->Wq, pr->Wk, pr->Wv, pr->Wo, pr->dout, dX, dW[0], dW[1],
                     dW[2], pr->Wo != NULL ? dW[3] : NULL);
    digest_add(d, dX, x * p->size);
    for (int i = 0; i < 4; i++)
        digest_add(d, dW[i], w * p->size);
    return st;
}

/* sdpa plans and the one-shot. */
typedef struct sdpa_problem {
    attn_sdpa_shape shape;
    unsigned flags;
    size_t key_length; /* 0: none */
    int backward;
    size_t len_storage;
    void *Q, *K, *V, *dout;
} sdpa_problem;

static size_t q_elems(const attn_sdpa_shape *s) { return s->B * s->Tq * s->NH * s->hs; }
static size_t kv_elems(const attn_sdpa_shape *s) { return s->B * s->Tk * s->NH_kv * s->hs; }
static size_t lse_elems(const attn_sdpa_shape *s) { return s->B * s->NH * s->Tq; }

static void sdpa_inputs(sdpa_problem *sp, const test_prec *p, uint64_t seed)
{
    test_rng rng;
    rng_seed(&rng, seed);
    sp->Q = typed_random(p, &rng, q_elems(&sp->shape), 1.0);
    sp->K = typed_random(p, &rng, kv_elems(&sp->shape), 1.0);
    sp->V = typed_random(p, &rng, kv_elems(&sp->shape), 1.0);
    sp->dout = typed_random(p, &rng, q_elems(&sp->shape), 1.0);
    sp->len_storage = sp->key_length;
}

static attn_status sdpa_make(const problem *pb, const test_prec *p, attn_plan **plan)
{
    const sdpa_problem *sp = pb->data;
    return attn_sdpa_plan_create(plan, p->dtype, &sp->shape, 0.0, sp->flags, 0);
}

/* One call (forward, backward or one-shot) through the typed argument
 * struct of p's precision; out and lse are the caller's. */
typedef enum sdpa_call { SDPA_FORWARD, SDPA_BACKWARD, SDPA_ONESHOT } sdpa_call;
static attn_status sdpa_typed(const test_prec *p, sdpa_call call, attn_plan *plan,
                              const sdpa_problem *sp, void *out, void *lse, void *dQ, void *dK,
                              void *dV)
{
    const size_t *lengths = sp->key_length != 0 ? &sp->len_storage : NULL;
    /* the same call in either precision (bits 32 or 64) */
#define SDPA_TYPED_CALL(bits)                                                                  \
    do {                                                                                       \
        attn_sdpa_args_f##bits a = {.Q = sp->Q, .K = sp->K, .V = sp->V,                        \
                                    .key_lengths = lengths, .out = out, .lse = lse};           \
        if (call == SDPA_FORWARD)                                                              \
            return attn_sdpa_forward_f##bits(plan, &a);                                        \
        if (call == SDPA_BACKWARD)                                                             \
            return attn_sdpa_backward_f##bits(plan, &a, sp->dout, dQ, dK, dV);                 \
        return attn_sdpa_f##bits(&sp->shape, 0.0, sp->flags, 0, &a);                           \
    } while (0)
    if (p->dtype == ATTN_F32)
        SDPA_TYPED_CALL(32);
    SDPA_TYPED_CALL(64);
#undef SDPA_TYPED_CALL
}

static attn_status sdpa_run(const problem *pb, const test_prec *p, attn_plan *plan, digest *d)
{
    const sdpa_problem *sp = pb->data;
    size_t q = q_elems(&sp->shape), kv = kv_elems(&sp->shape), l = lse_elems(&sp->shape);
    void *out = typed_zeros(p, q), *lse = typed_zeros(p, l);
    sdpa_call call = plan != NULL ? SDPA_FORWARD : SDPA_ONESHOT;
    attn_status st = sdpa_typed(p, call, plan, sp, out, lse, NULL, NULL, NULL);
    digest_add(d, out, q * p->size);
    digest_add(d, lse, l * p->size);
    if (st != ATTN_OK || !sp->backward || plan == NULL)
        return st;
    void *dQ = typed_zeros(p, q), *dK = typed_zeros(p, kv), *dV = typed_zeros(p, kv);
    st = sdpa_typed(p, SDPA_BACKWARD, plan, sp, out, lse, dQ, dK, dV);
    digest_add(d, dQ, q * p->size);
    digest_add(d, dK, kv * p->size);
    digest_add(d, dV, kv * p->size);
    return st;
}

static attn_status oneshot_make(const problem *pb, const test_prec *p, attn_plan **plan)
{
    (void)pb;
    (void)p;
    *plan = NULL; /* sdpa_run calls the one-shot */
    return ATTN_OK;
}

/* ---- running a problem on each engine ------------------------------------ */

/* The digest of one run: threads ATTN_THREADS_AUTO leaves the plan at its
 * default and reports the engine it resolved to in *engine_threads. */
static int run_once(const problem *pb, const test_prec *p, unsigned threads, uint64_t *h,
                    unsigned *engine_threads)
{
    attn_plan *plan = NULL;
    digest d = {0xcbf29ce484222325ull};
    attn_status st = pb->make(pb, p, &plan);
    if (st == ATTN_OK && plan != NULL && threads != ATTN_THREADS_AUTO)
        st = attn_plan_set_threads(plan, threads);
    if (st == ATTN_OK && plan != NULL && engine_threads != NULL)
        st = attn_plan_get_threads(plan, engine_threads);
    if (st == ATTN_OK)
        st = pb->run(pb, p, plan, &d);
    attn_plan_destroy(plan);
    outputs_free();
    if (st != ATTN_OK) {
        printf("FAIL %s/%s on %u threads: %s\n", pb->name, p->name, threads,
               attn_status_string(st));
        failures++;
        return 0;
    }
    *h = d.h;
    return 1;
}

/* Runs pb in precision p on every own-thread count and on the default,
 * checks the equalities this file's header states, prints its lines. */
static void check_problem(const problem *pb, const test_prec *p)
{
    int has_plan = pb->make != oneshot_make;
    uint64_t own = 0, h = 0;
    for (size_t i = 0; has_plan && i < OWN_COUNTS; i++) {
        if (!run_once(pb, p, own_counts[i], &h, NULL))
            return;
        if (i > 0 && h != own) {
            printf("FAIL %s/%s: %u own threads differ from %u\n", pb->name, p->name,
                   own_counts[i], own_counts[0]);
            failures++;
        }
        own = h;
    }
    unsigned engine = 1; /* a one-shot runs as a default plan does */
    uint64_t def = 0;
    if (!run_once(pb, p, ATTN_THREADS_AUTO, &def, has_plan ? &engine : NULL))
        return;
    if (has_plan && engine > 0 && def != own) {
        printf("FAIL %s/%s: the default plan (%u own threads) differs from own threads\n",
               pb->name, p->name, engine);
        failures++;
    }
    if (has_plan)
        printf("%s/%s own %016llx\n", pb->name, p->name, (unsigned long long)own);
    printf("%s/%s default-%s %016llx\n", pb->name, p->name,
           has_plan ? (engine > 0 ? "own" : "blas") : "oneshot", (unsigned long long)def);
}

int main(void)
{
    projected training = {.B = 2, .T = 300, .C = 96, .NH = 4, .flags = ATTN_CAUSAL,
                          .with_Wo = 1, .backward = 1};
    projected tiled = {.B = 1, .T = 700, .C = 64, .NH = 2,
                       .flags = ATTN_INFERENCE | ATTN_TILED};
    sdpa_problem prefill = {.shape = {.B = 2, .NH = 4, .NH_kv = 2, .Tq = 300, .Tk = 300, .hs = 40},
                            .flags = ATTN_CAUSAL, .backward = 1};
    sdpa_problem decode = {.shape = {.B = 1, .NH = 4, .NH_kv = 1, .Tq = 1, .Tk = 5000, .hs = 64},
                           .key_length = 4321, .backward = 1};
    sdpa_problem oneshot = prefill;
    oneshot.backward = 0;
    const problem problems[] = {
        {"training", projected_make, projected_run, &training},
        {"tiled", projected_make, projected_run, &tiled},
        {"sdpa-prefill", sdpa_make, sdpa_run, &prefill},
        {"sdpa-decode", sdpa_make, sdpa_run, &decode},
        {"sdpa-oneshot", oneshot_make, sdpa_run, &oneshot},
    };
    const test_prec *precs[] = {&test_prec_f32, &test_prec_f64};
    printf("# simd %s\n", attn_simd_name());
    for (size_t k = 0; k < 2; k++) {
        const test_prec *p = precs[k];
        projected_inputs(&training, p, 11);
        projected_inputs(&tiled, p, 12);
        sdpa_inputs(&prefill, p, 13);
        sdpa_inputs(&decode, p, 14);
        sdpa_inputs(&oneshot, p, 13);
        for (size_t i = 0; i < sizeof problems / sizeof problems[0]; i++)
            check_problem(&problems[i], p);
        talloc_free_all();
    }
    printf("# %d failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}
