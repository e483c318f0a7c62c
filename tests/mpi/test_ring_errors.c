/*
 * test_ring_errors: the statuses of the ring calls are collective. Bad
 * input on one rank only (rank 1, or rank 0 alone; bad row, head and
 * batch strides among the cases) gives the same status on every rank,
 * nobody hangs (ctest's TIMEOUT would end the run), and
 * every rank's outputs stay byte for byte as they were (*plan too for a
 * failing create); two ranks failing differently give the lower rank's
 * status everywhere; after each failure a valid call still works (no
 * message is left in flight). Both precisions. Also: the local-only
 * statuses (a plan of another kind: PLAN_KIND on each rank alone, and
 * attn_sdpa_* / attn_forward_* on a ring plan), ATTN_INFERENCE, the
 * counters (P steps per call, the bytes of P - 1 K/V blocks sent by a
 * forward), and attn_plan_set_threads on a ring plan.
 */
#include "ring_support.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* local shape: B 2, NH 4, NH_kv 2, T 6, hs 8 */
static const attn_sdpa_shape shape = {2, 4, 2, 6, 6, 8, 0};

/* The arrays of one rank, in one arena (byte-compared after failures). */
typedef struct buffers {
    const rt_prec *p;
    size_t nq, nk, no, nl; /* elements of Q (and dQ), K (V, dK, dV), out (dout), lse */
    unsigned char *arena, *copy;
    size_t bytes;
    void *Q, *K, *V, *dout, *out, *lse, *dQ, *dK, *dV;
} buffers;

static void buffers_make(buffers *b, const rt_prec *p, uint64_t seed)
{
    b->p = p;
    b->nq = shape.B * shape.Tq * shape.NH * shape.hs;
    b->nk = shape.B * shape.Tk * shape.NH_kv * shape.hs;
    b->no = b->nq;
    b->nl = shape.B * shape.NH * shape.Tq;
    const size_t counts[] = {b->nq, b->nk, b->nk, b->no, b->no, b->nl, b->nq, b->nk, b->nk};
    size_t total = 0;
    for (size_t i = 0; i < 9; i++)
        total += counts[i];
    b->bytes = total * p->size;
    b->arena = rt_alloc(b->bytes);
    b->copy = rt_alloc(b->bytes);
    double *x = rt_alloc(total * sizeof(double));
    rt_normals(seed, x, total);
    p->from_double(b->arena, x, total);
    free(x);
    void **slots[] = {&b->Q, &b->K, &b->V, &b->dout, &b->out, &b->lse, &b->dQ, &b->dK, &b->dV};
    unsigned char *at = b->arena;
    for (size_t i = 0; i < 9; i++) {
        *slots[i] = at;
        at += counts[i] * p->size;
    }
}

static void buffers_snapshot(buffers *b)
{
    memcpy(b->copy, b->arena, b->bytes);
}

static int buffers_untouched(const buffers *b)
{
    return memcmp(b->copy, b->arena, b->bytes) == 0;
}

static void buffers_free(buffers *b)
{
    free(b->arena);
    free(b->copy);
}

static rt_arrays arrays_of(const buffers *b)
{
    const rt_arrays a = {.Q = b->Q, .K = b->K, .V = b->V, .out = b->out, .lse = b->lse};
    return a;
}

/* What a case changes on the ranks it spoils. */
typedef enum spoil {
    SPOIL_ARGS_NULL, SPOIL_Q_NULL, SPOIL_MASK, SPOIL_LENGTHS, SPOIL_LDQ, SPOIL_LDO_OVERFLOW,
    SPOIL_LDK_BLAS, SPOIL_OUT_IS_Q, SPOIL_LSE_IS_K, SPOIL_DTYPE, SPOIL_DQ_NULL, SPOIL_LSE_NULL,
    SPOIL_DOUT_NULL, SPOIL_DK_IS_DV, SPOIL_DQ_IS_DOUT, SPOIL_SHQ, SPOIL_SBO_OVERFLOW,
    SPOIL_OUT_HEADS_IN_Q, SPOIL_NONE
} spoil;

/* One forward (backward) call with `how` applied on this rank when `bad`. */
static attn_status call(const buffers *b, attn_plan *plan, int backward, int bad, spoil how)
{
    rt_arrays a = arrays_of(b);
    const rt_prec *p = b->p;
    const void *dout = b->dout;
    void *dQ = b->dQ, *dK = b->dK, *dV = b->dV;
    static const float mask = 0.0f;
    static const size_t lengths[2] = {6, 6};
    if (bad)
        switch (how) {
        case SPOIL_ARGS_NULL:
            return backward ? p->ring_backward(plan, NULL, dout, dQ, dK, dV)
                            : p->ring_forward(plan, NULL);
        case SPOIL_Q_NULL: a.Q = NULL; break;
        case SPOIL_MASK: a.mask = &mask; break;
        case SPOIL_LENGTHS: a.key_lengths = lengths; break;
        case SPOIL_LDQ: a.ldq = shape.NH * shape.hs - 1; break;
        case SPOIL_LDO_OVERFLOW: a.ldo = SIZE_MAX / 4; break;
        case SPOIL_LDK_BLAS: a.ldk = (size_t)INT_MAX + 1; break;
        case SPOIL_OUT_IS_Q: a.out = (void *)(uintptr_t)b->Q; break;
        case SPOIL_LSE_IS_K: a.lse = (void *)(uintptr_t)b->K; break;
        case SPOIL_DTYPE: p = p->other; break;
        case SPOIL_DQ_NULL: dQ = NULL; break;
        case SPOIL_LSE_NULL: a.lse = NULL; break;
        case SPOIL_DOUT_NULL: dout = NULL; break;
        case SPOIL_DK_IS_DV: dK = dV; break;
        case SPOIL_DQ_IS_DOUT: dQ = (void *)(uintptr_t)dout; break;
        case SPOIL_SHQ: a.shq = shape.hs - 1; break; /* Q's heads overlap */
        case SPOIL_SBO_OVERFLOW: a.sbo = SIZE_MAX / 2; break;
        case SPOIL_OUT_HEADS_IN_Q: /* out's heads between Q's: (B,T,2,NH,hs) rows */
            a.ldq = a.ldo = 2 * shape.NH * shape.hs;
            a.shq = a.sho = 2 * shape.hs;
            a.out = (char *)(uintptr_t)b->Q + shape.hs * p->size / 2;
            break;
        case SPOIL_NONE: break;
        }
    return backward ? p->ring_backward(plan, &a, dout, dQ, dK, dV) : p->ring_forward(plan, &a);
}

typedef struct call_case {
    const char *name;
    int backward;
    spoil how;
    attn_status want;
} call_case;

static const call_case call_cases[] = {
    {"forward args NULL", 0, SPOIL_ARGS_NULL, ATTN_ERR_NULL_POINTER},
    {"forward Q NULL", 0, SPOIL_Q_NULL, ATTN_ERR_NULL_POINTER},
    {"forward dtype", 0, SPOIL_DTYPE, ATTN_ERR_DTYPE_MISMATCH},
    {"forward mask", 0, SPOIL_MASK, ATTN_ERR_BAD_SHAPE},
    {"forward key lengths", 0, SPOIL_LENGTHS, ATTN_ERR_BAD_SHAPE},
    {"forward ldq", 0, SPOIL_LDQ, ATTN_ERR_BAD_STRIDE},
    {"forward ldo overflow", 0, SPOIL_LDO_OVERFLOW, ATTN_ERR_SIZE_OVERFLOW},
    {"forward ldk blas", 0, SPOIL_LDK_BLAS, ATTN_ERR_BLAS_RANGE},
    {"forward out = Q", 0, SPOIL_OUT_IS_Q, ATTN_ERR_ALIASING},
    {"forward lse = K", 0, SPOIL_LSE_IS_K, ATTN_ERR_ALIASING},
    {"forward shq", 0, SPOIL_SHQ, ATTN_ERR_BAD_STRIDE},
    {"forward sbo overflow", 0, SPOIL_SBO_OVERFLOW, ATTN_ERR_SIZE_OVERFLOW},
    {"forward out heads half over Q's", 0, SPOIL_OUT_HEADS_IN_Q, ATTN_ERR_ALIASING},
    {"backward args NULL", 1, SPOIL_ARGS_NULL, ATTN_ERR_NULL_POINTER},
    {"backward dQ NULL", 1, SPOIL_DQ_NULL, ATTN_ERR_NULL_POINTER},
    {"backward lse NULL", 1, SPOIL_LSE_NULL, ATTN_ERR_NULL_POINTER},
    {"backward dout NULL", 1, SPOIL_DOUT_NULL, ATTN_ERR_NULL_POINTER},
    {"backward dtype", 1, SPOIL_DTYPE, ATTN_ERR_DTYPE_MISMATCH},
    {"backward mask", 1, SPOIL_MASK, ATTN_ERR_BAD_SHAPE},
    {"backward ldq", 1, SPOIL_LDQ, ATTN_ERR_BAD_STRIDE},
    {"backward dK = dV", 1, SPOIL_DK_IS_DV, ATTN_ERR_ALIASING},
    {"backward dQ = dout", 1, SPOIL_DQ_IS_DOUT, ATTN_ERR_ALIASING},
    {"backward shq", 1, SPOIL_SHQ, ATTN_ERR_BAD_STRIDE},
};

/* Same status everywhere and every rank's arrays untouched: the status
 * (checked equal on all ranks through MPI) and the byte comparison. */
static void expect_collective(rt_ctx *ctx, attn_status got, attn_status want, int untouched,
                              const char *what)
{
    rt_expect_status(ctx, got, want, what);
    int mine[2] = {(int)got, -(int)got}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ctx->checks++;
    if (all[0] != -all[1])
        rt_fail(ctx, "%s: the ranks returned different statuses", what);
    ctx->checks++;
    if (!untouched)
        rt_fail(ctx, "%s: an output changed", what);
}

static void run_call_cases(rt_ctx *ctx, const rt_prec *p, unsigned flags)
{
    const int bad_rank = ctx->size > 1 ? 1 : 0;
    buffers b;
    buffers_make(&b, p, 1000 + flags);
    attn_plan *plan = NULL;
    char label[256];
    snprintf(label, sizeof label, "%s flags %u: create", p->name, flags);
    rt_expect_status(
        ctx, attn_ring_plan_create(&plan, MPI_COMM_WORLD, p->dtype, &shape, 0.0, flags), ATTN_OK,
        label);
    if (plan == NULL) {
        buffers_free(&b);
        return;
    }
    /* a valid forward first: the backward's out and lse */
    snprintf(label, sizeof label, "%s flags %u: forward", p->name, flags);
    rt_expect_status(ctx, call(&b, plan, 0, 0, SPOIL_NONE), ATTN_OK, label);
    for (size_t c = 0; c < sizeof call_cases / sizeof call_cases[0]; c++) {
        const call_case *k = &call_cases[c];
        buffers_snapshot(&b);
        snprintf(label, sizeof label, "%s flags %u: %s on rank %d", p->name, flags, k->name,
                 bad_rank);
        const attn_status got = call(&b, plan, k->backward, ctx->rank == bad_rank, k->how);
        expect_collective(ctx, got, k->want, buffers_untouched(&b), label);
        /* the ring still works (and nothing of the failed call is in flight) */
        snprintf(label, sizeof label, "%s flags %u: valid call after %s", p->name, flags,
                 k->name);
        rt_expect_status(ctx, call(&b, plan, k->backward, 0, SPOIL_NONE), ATTN_OK, label);
    }
    /* two ranks failing differently: the lower rank's status everywhere */
    if (ctx->size > 1) {
        buffers_snapshot(&b);
        const spoil how = ctx->rank == 0 ? SPOIL_LDQ
                          : ctx->rank == ctx->size - 1 ? SPOIL_Q_NULL
                                                       : SPOIL_NONE;
        snprintf(label, sizeof label, "%s flags %u: rank 0 ldq, rank %d Q NULL", p->name, flags,
                 ctx->size - 1);
        const attn_status got = call(&b, plan, 0, how != SPOIL_NONE, how);
        expect_collective(ctx, got, ATTN_ERR_BAD_STRIDE, buffers_untouched(&b), label);
    }
    attn_plan_destroy(plan);
    buffers_free(&b);
}

/* ---- attn_ring_plan_create ---------------------------------------------- */

typedef struct create_case {
    const char *name;
    attn_sdpa_shape shape; /* on the spoiled rank */
    int shape_null, plan_null;
    attn_dtype dtype;
    double scale;
    unsigned flags;
    attn_status want;
    int disagreement; /* the status comes from ranks that differ: none on one rank */
} create_case;

#define GOOD_SHAPE {2, 4, 2, 6, 6, 8, 0}
static const create_case create_cases[] = {
    {"plan NULL", GOOD_SHAPE, 0, 1, ATTN_F32, 0.0, 0, ATTN_ERR_NULL_POINTER, 0},
    {"shape NULL", GOOD_SHAPE, 1, 0, ATTN_F32, 0.0, 0, ATTN_ERR_NULL_POINTER, 0},
    {"dtype", GOOD_SHAPE, 0, 0, (attn_dtype)7, 0.0, 0, ATTN_ERR_BAD_DTYPE, 0},
    {"unknown flag", GOOD_SHAPE, 0, 0, ATTN_F32, 0.0, 1u << 20, ATTN_ERR_BAD_FLAGS, 0},
    {"a plan flag of attn.h", GOOD_SHAPE, 0, 0, ATTN_F32, 0.0, ATTN_TILED, ATTN_ERR_BAD_FLAGS, 0},
    {"zero B", {0, 4, 2, 6, 6, 8, 0}, 0, 0, ATTN_F32, 0.0, 0, ATTN_ERR_ZERO_DIMENSION, 0},
    {"zero hs", {2, 4, 2, 6, 6, 0, 0}, 0, 0, ATTN_F32, 0.0, 0, ATTN_ERR_ZERO_DIMENSION, 0},
    {"NH % NH_kv", {2, 4, 3, 6, 6, 8, 0}, 0, 0, ATTN_F32, 0.0, 0, ATTN_ERR_BAD_SHAPE, 0},
    {"Tq != Tk", {2, 4, 2, 6, 8, 8, 0}, 0, 0, ATTN_F32, 0.0, 0, ATTN_ERR_BAD_SHAPE, 0},
    {"zigzag odd T", {2, 4, 2, 5, 5, 8, 0}, 0, 0, ATTN_F32, 0.0, ATTN_ZIGZAG, ATTN_ERR_BAD_SHAPE,
     0},
    {"another T", {2, 4, 2, 8, 8, 8, 0}, 0, 0, ATTN_F32, 0.0, 0, ATTN_ERR_BAD_SHAPE, 1},
    {"another dtype", GOOD_SHAPE, 0, 0, ATTN_F64, 0.0, 0, ATTN_ERR_BAD_SHAPE, 1},
    {"another flag", GOOD_SHAPE, 0, 0, ATTN_F32, 0.0, ATTN_CAUSAL, ATTN_ERR_BAD_SHAPE, 1},
    {"another scale", GOOD_SHAPE, 0, 0, ATTN_F32, 0.5, 0, ATTN_ERR_BAD_SHAPE, 1},
    {"hs_v overflow", {2, 4, 2, 6, 6, 8, SIZE_MAX / 2}, 0, 0, ATTN_F32, 0.0, 0,
     ATTN_ERR_SIZE_OVERFLOW, 0},
    {"hs blas range", {1, 1, 1, 2, 2, (size_t)INT_MAX + 1, 1}, 0, 0, ATTN_F32, 0.0, 0,
     ATTN_ERR_BLAS_RANGE, 0},
    {"scale NaN", GOOD_SHAPE, 0, 0, ATTN_F32, (double)NAN, 0, ATTN_ERR_BAD_SCALE, 0},
    {"scale above FLT_MAX", GOOD_SHAPE, 0, 0, ATTN_F32, 1e39, 0, ATTN_ERR_BAD_SCALE, 0},
};

static void run_create_cases(rt_ctx *ctx)
{
    const int bad_rank = ctx->size > 1 ? 1 : 0;
    attn_plan *const marker = (attn_plan *)(uintptr_t)0x5a5a5a5a;
    char label[256];
    for (size_t c = 0; c < sizeof create_cases / sizeof create_cases[0]; c++) {
        const create_case *k = &create_cases[c];
        const int bad = ctx->rank == bad_rank;
        attn_plan *plan = marker;
        const attn_sdpa_shape *s = bad ? (k->shape_null ? NULL : &k->shape) : &shape;
        const attn_status got = attn_ring_plan_create(
            bad && k->plan_null ? NULL : &plan, MPI_COMM_WORLD, bad ? k->dtype : ATTN_F32, s,
            bad ? k->scale : 0.0, bad ? k->flags : 0u);
        /* one rank alone differing from nobody is no disagreement */
        const int alone = ctx->size == 1 && k->disagreement;
        snprintf(label, sizeof label, "create: %s on rank %d", k->name, bad_rank);
        if (alone) {
            rt_expect_status(ctx, got, ATTN_OK, label);
            attn_plan_destroy(plan);
            continue;
        }
        expect_collective(ctx, got, k->want, plan == marker, label);
    }
    /* MPI_COMM_NULL: local (no communicator), on every rank */
    attn_plan *plan = marker;
    rt_expect_status(ctx, attn_ring_plan_create(&plan, MPI_COMM_NULL, ATTN_F32, &shape, 0.0, 0),
                     ATTN_ERR_NULL_POINTER, "create: MPI_COMM_NULL");
    ctx->checks++;
    if (plan != marker)
        rt_fail(ctx, "create: MPI_COMM_NULL wrote *plan");
    /* the ring works on a communicator of its own too: every rank alone */
    MPI_Comm self;
    MPI_Comm_split(MPI_COMM_WORLD, ctx->rank, 0, &self);
    plan = NULL;
    rt_expect_status(ctx, attn_ring_plan_create(&plan, self, ATTN_F32, &shape, 0.0, ATTN_CAUSAL),
                     ATTN_OK, "create on a split communicator");
    attn_plan_destroy(plan);
    MPI_Comm_free(&self);
}

/* ---- kinds, inference, counters, threads ------------------------------------ */

static void run_plan_cases(rt_ctx *ctx, const rt_prec *p)
{
    const int P = ctx->size;
    buffers b;
    buffers_make(&b, p, 77);
    rt_arrays a = arrays_of(&b);
    char label[256];

    /* an sdpa plan given to the ring calls, and a ring plan to attn's */
    attn_plan *sdpa = NULL, *ring = NULL;
    attn_sdpa_plan_create(&sdpa, p->dtype, &shape, 0.0, 0, 0);
    buffers_snapshot(&b);
    snprintf(label, sizeof label, "%s ring forward on an sdpa plan", p->name);
    rt_expect_status(ctx, p->ring_forward(sdpa, &a), ATTN_ERR_PLAN_KIND, label);
    snprintf(label, sizeof label, "%s ring backward on an sdpa plan", p->name);
    rt_expect_status(ctx, p->ring_backward(sdpa, &a, b.dout, b.dQ, b.dK, b.dV),
                     ATTN_ERR_PLAN_KIND, label);
    snprintf(label, sizeof label, "%s ring forward on NULL", p->name);
    rt_expect_status(ctx, p->ring_forward(NULL, &a), ATTN_ERR_NULL_POINTER, label);
    double counters[ATTN_RING_COUNTER_COUNT];
    rt_expect_status(ctx, attn_ring_counters(sdpa, counters), ATTN_ERR_PLAN_KIND,
                     "counters of an sdpa plan");
    rt_expect_status(ctx, attn_ring_counters(NULL, counters), ATTN_ERR_NULL_POINTER,
                     "counters of NULL");
    attn_plan_destroy(sdpa);

    rt_expect_status(ctx, attn_ring_plan_create(&ring, MPI_COMM_WORLD, p->dtype, &shape, 0.0,
                                                ATTN_CAUSAL | ATTN_ZIGZAG),
                     ATTN_OK, "create");
    if (ring != NULL) {
        snprintf(label, sizeof label, "%s sdpa forward on a ring plan", p->name);
        rt_expect_status(ctx, p->sdpa_forward(ring, &a), ATTN_ERR_PLAN_KIND, label);
        rt_expect_status(ctx,
                         attn_forward_f32(ring, b.Q, b.K, b.V, b.V, NULL, b.out, NULL),
                         ATTN_ERR_PLAN_KIND, "attn_forward_f32 on a ring plan");
        ctx->checks++;
        if (!buffers_untouched(&b))
            rt_fail(ctx, "%s: a PLAN_KIND call changed an output", p->name);
        rt_expect_status(ctx, attn_ring_counters(ring, NULL), ATTN_ERR_NULL_POINTER,
                         "counters into NULL");

        /* counters: one forward */
        attn_ring_counters_reset(ring);
        snprintf(label, sizeof label, "%s forward (counters)", p->name);
        rt_expect_status(ctx, p->ring_forward(ring, &a), ATTN_OK, label);
        attn_ring_counters(ring, counters);
        const double block_bytes =
            (double)(shape.B * shape.Tk * shape.NH_kv * 2 * shape.hs * p->size);
        ctx->checks += 4;
        if (counters[ATTN_RING_CALLS] != 1.0 || counters[ATTN_RING_STEPS] != (double)P)
            rt_fail(ctx, "%s counters: %g calls, %g steps (1, %d expected)", p->name,
                    counters[ATTN_RING_CALLS], counters[ATTN_RING_STEPS], P);
        if (counters[ATTN_RING_BLOCKS] != (double)P) /* zigzag: no block is skipped */
            rt_fail(ctx, "%s counters: %g blocks (%d expected)", p->name,
                    counters[ATTN_RING_BLOCKS], P);
        if (counters[ATTN_RING_BYTES_SENT] != (double)(P - 1) * block_bytes ||
            counters[ATTN_RING_BYTES_RECEIVED] != (double)(P - 1) * block_bytes)
            rt_fail(ctx, "%s counters: %g bytes sent, %g received (%g expected)", p->name,
                    counters[ATTN_RING_BYTES_SENT], counters[ATTN_RING_BYTES_RECEIVED],
                    (double)(P - 1) * block_bytes);
        if (!(counters[ATTN_RING_COMPUTE_SECONDS] > 0.0) ||
            counters[ATTN_RING_WAIT_SECONDS] < 0.0)
            rt_fail(ctx, "%s counters: compute %g s, wait %g s", p->name,
                    counters[ATTN_RING_COMPUTE_SECONDS], counters[ATTN_RING_WAIT_SECONDS]);
        /* a backward: P - 1 K/V blocks and P dK/dV blocks */
        attn_ring_counters_reset(ring);
        snprintf(label, sizeof label, "%s backward (counters)", p->name);
        rt_expect_status(ctx, p->ring_backward(ring, &a, b.dout, b.dQ, b.dK, b.dV), ATTN_OK,
                         label);
        attn_ring_counters(ring, counters);
        const double want = P > 1 ? (double)(2 * P - 1) * block_bytes : 0.0;
        ctx->checks++;
        if (counters[ATTN_RING_BYTES_SENT] != want)
            rt_fail(ctx, "%s backward counters: %g bytes sent (%g expected)", p->name,
                    counters[ATTN_RING_BYTES_SENT], want);

        /* threads set on the ring plan reach its blocks: the same results */
        const size_t out_bytes = b.no * p->size;
        unsigned char *before = rt_alloc(out_bytes);
        memcpy(before, b.out, out_bytes);
        rt_expect_status(ctx, attn_plan_set_threads(ring, 1), ATTN_OK, "set_threads 1");
        rt_expect_status(ctx, p->ring_forward(ring, &a), ATTN_OK, "forward on 1 thread");
        rt_expect_status(ctx, attn_plan_set_threads(ring, 2), ATTN_OK, "set_threads 2");
        rt_expect_status(ctx, p->ring_forward(ring, &a), ATTN_OK, "forward on 2 threads");
        ctx->checks++;
        if (memcmp(before, b.out, out_bytes) != 0) {
            double *x = rt_alloc(b.no * sizeof(double)), *y = rt_alloc(b.no * sizeof(double));
            p->to_double(x, before, b.no);
            p->to_double(y, b.out, b.no);
            rt_expect_residual(ctx, p->f64, rt_residual(y, x, b.no), p->tol,
                               "forward on 2 own threads against the default");
            free(x);
            free(y);
        }
        free(before);
    }
    attn_plan_destroy(ring);

    /* ATTN_INFERENCE: a forward, and a backward refused on every rank */
    ring = NULL;
    rt_expect_status(ctx, attn_ring_plan_create(&ring, MPI_COMM_WORLD, p->dtype, &shape, 0.0,
                                                ATTN_INFERENCE | ATTN_CAUSAL),
                     ATTN_OK, "create inference");
    if (ring != NULL) {
        rt_expect_status(ctx, p->ring_forward(ring, &a), ATTN_OK, "inference forward");
        buffers_snapshot(&b);
        const attn_status got = p->ring_backward(ring, &a, b.dout, b.dQ, b.dK, b.dV);
        expect_collective(ctx, got, ATTN_ERR_INFERENCE_PLAN, buffers_untouched(&b),
                          "backward on an inference plan");
    }
    attn_plan_destroy(ring);
    attn_plan_destroy(NULL);
    buffers_free(&b);
}

int main(int argc, char **argv)
{
    rt_ctx ctx;
    rt_init(&ctx, &argc, &argv);
    const rt_prec *precs[] = {&rt_f32, &rt_f64};
    const unsigned flag_sets[] = {0, ATTN_CAUSAL, ATTN_CAUSAL | ATTN_ZIGZAG};
    for (int k = 0; k < 2; k++)
        for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++)
            run_call_cases(&ctx, precs[k], flag_sets[f]);
    run_create_cases(&ctx);
    for (int k = 0; k < 2; k++)
        run_plan_cases(&ctx, precs[k]);
    return rt_finish(&ctx, "test_ring_errors");
}
