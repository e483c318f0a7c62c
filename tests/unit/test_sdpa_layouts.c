/*
 * test_sdpa_layouts: attention on given Q, K, V (attn_sdpa_*) read and
 * written in place in the layouts callers keep, through the batch, head and
 * row strides of attn_sdpa_args_* (attn.h, "The arrays of one call"), in
 * both precisions, against the naive double reference of sdpa_reference.c.
 * The reference reads only attn's dense (B,T,NH,hs) rows: it runs on dense
 * copies gathered from the layouts element by element (sdpa_view_gather),
 * so no stride arithmetic of the library's is shared with it.
 * (test_sdpa_strides checks the statuses of strides; test_sdpa the rest.)
 *
 * Layouts of one array (Q; K, V with Tk and NH_kv; out with hs_v), in
 * elements:
 *   BSHD      (B,T,NH,hs) dense, every stride passed as 0
 *   BHSD      (B,NH,T,hs), PyTorch's: ld hs, sh T*hs, sb NH*T*hs
 *   CACHE     a slice of a (B,NH_kv,S_max,hs) cache, Tk < S_max (S_max =
 *             Tk + 5 + Tk/8): ld hs, sh S_max*hs, sb NH_kv*S_max*hs; the
 *             slots beyond Tk (and beyond each key length) hold NaN
 *   PADDED    (B,NH,T,hs) with gaps: ld hs+3, sh T*ld+5, sb NH*sh+7
 *   ONEROW    (B,NH,T,hs) of a single row (T = 1) whose row stride no
 *             address uses, passed as 1 (attn.h lets a dimension of one
 *             element have any stride; BLAS still wants ld >= hs)
 *   FUSED     Q, K, V side by side in each row of one (B,T,NH*hs +
 *             NH_kv*(hs + hs_v)) buffer, as a fused QKV projection leaves
 *             them; out too when its layout is FUSED (a fourth block)
 *   HEADWISE  (B,T,NH,3,hs): q, k, v interleaved head by head (NH_kv = NH,
 *             hs_v = hs); (B,T,NH,4,hs) with out
 * Every input buffer holds NaN wherever the layout has no element.
 *
 * Each case, in each precision, runs on a training plan on BLAS threads
 * (attn_plan_set_threads 0) and on 2 own threads: the forward (out, lse)
 * and, where marked, the backward (dout in out's layout; dQ, dK, dV in the
 * layouts of Q, K, V inside one buffer shaped as the inputs' buffer, so
 * one fused gradient buffer when the inputs are fused); and the one-shot
 * attn_sdpa_* (the default engine) runs the forward. Checks:
 *   - out, lse, dQ, dK, dV against the reference, with the residuals and
 *     tolerances of sdpa_calls.h (test_sdpa.c's analysis: f32 1e-5, f64
 *     1e-12 for the forward, 1e-4 and 1e-12 for gradients, times
 *     sqrt(K/130) and sqrt(K/260) for sums longer than that); every output
 *     buffer starts as a sentinel pattern (NaN in a fused input buffer), so
 *     an element left unwritten fails;
 *   - every element of an output's buffer that its layout does not address
 *     (gaps, a cache's slots beyond Tk, the other arrays' columns of a fused
 *     buffer) keeps its bytes, and the inputs keep theirs;
 *   - the same call on dense (B,T,NH,hs) copies of the same values (zero
 *     strides), on the same engine, gives the same bytes. This holds on
 *     every engine (the same kernels and products run; a layout changes
 *     only the addresses), so it is asserted for all three; but a decode
 *     step (Tq 1) with several K or V heads apart (BHSD, a cache) sums V in
 *     its own order (attn.h): there only lse must be the same bytes (out
 *     and the gradients, which take out, are bounded by the check above).
 * Buffers are placed 3 elements past a multiple of the fused row's bytes,
 * so that the blocks of a fused buffer straddle multiples of the row
 * stride, as they do wherever a framework allocates them
 * (test_sdpa_strides places them at every offset).
 *
 * Shapes: GQA 8/2, MHA, MQA; causal and not (Tq = Tk, Tq < Tk); hs_v != hs;
 * key lengths; a full (B,NH,Tq,Tk) mask with -inf entries; decode steps
 * (Tq 1, B 1: few (sequence, kv head) pairs, so the forward splits the keys
 * and the backward groups key blocks) at Tk 3000 in a cache; a prefill of
 * Tq = Tk = 300 (beyond one tile of 128 queries: own threads pack K and V).
 * Under valgrind or ATTN_SDPA_SHORT=1 (sdpa_calls.h) each case runs in one
 * precision (alternating) and the decode and prefill shapes are 1500 and
 * 200.
 *
 * Observed (Release, AMD EPYC with the AVX2 and scalar kernel sets; each
 * test prints its largest): out <= 1.6e-7 (f32), 3.0e-16 (f64); lse <=
 * 1.8e-7, 3.2e-16; gradients <= 8.0e-7, 2.9e-15: two orders below the
 * tolerances, while a head stride off by one element fails by 0.1-1.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference/sdpa_reference.h"
#include "support/inputs.h"
#include "support/sdpa_calls.h"
#include "support/test_common.h"

#define N_OF(array) (sizeof(array) / sizeof((array)[0]))
#define C ATTN_CAUSAL

static int short_run;

typedef enum kind { BSHD, BHSD, CACHE, PADDED, ONEROW, FUSED, HEADWISE } kind;

typedef struct lcase {
    const char *name;
    size_t B, NH, NH_kv, Tq, Tk, hs, hs_v; /* hs_v 0: hs */
    unsigned causal;
    const size_t *lengths; /* B entries or NULL */
    int mask;              /* a full (B,NH,Tq,Tk) mask */
    kind q, k, v, o;       /* FUSED and HEADWISE: all of q, k, v (and o or not) */
    int backward;
} lcase;

/* Where the four arrays of a call lie: Q, K, V in one input buffer, out in
 * its own buffer or (FUSED, HEADWISE) in the input buffer's rows. */
typedef struct placement {
    sdpa_view a[4]; /* q, k, v, o */
    int zero[4];    /* BSHD: the strides are passed as 0 */
    int out_in_in;
    size_t n_in, n_out; /* elements of the input buffer and of out's buffer */
    size_t period;      /* buffers sit 3 elements past multiples of this many bytes */
    double *in, *dout;  /* values (NaN where no element is); dout shaped as out's buffer */
} placement;

/* the dense (B,T,NH,hs) inputs, dout and the reference's results */
typedef struct problem {
    lcase c;
    size_t hs_v;
    double *Q, *K, *V, *dout, *mask;
    sdpa_ref ref;
    double *out, *lse, *dQ, *dK, *dV;
    double v_scale;
} problem;

typedef struct result {
    double *out, *lse, *dQ, *dK, *dV; /* dense, NULL when not run */
} result;

static size_t dims_of(const problem *pr, int i, size_t *H, size_t *T, size_t *w)
{
    const lcase *c = &pr->c;
    *H = i == 0 || i == 3 ? c->NH : c->NH_kv;
    *T = i == 0 || i == 3 ? c->Tq : c->Tk;
    *w = i == 0 || i == 1 ? c->hs : pr->hs_v;
    return c->B * *T * *H * *w;
}

static sdpa_view view_make(kind k, size_t B, size_t H, size_t T, size_t w, size_t at)
{
    sdpa_view v = {B, H, T, w, at, 0, 0, 0};
    switch (k) {
    case BSHD:
        v.ld = H * w, v.sh = w, v.sb = T * v.ld;
        break;
    case BHSD:
        v.ld = w, v.sh = T * w, v.sb = H * v.sh;
        break;
    case CACHE:
        v.ld = w, v.sh = (T + 5 + T / 8) * w, v.sb = H * v.sh;
        break;
    case ONEROW:
        v.ld = T == 1 ? 1 : w, v.sh = T * w, v.sb = H * v.sh;
        break;
    default: /* PADDED */
        v.ld = w + 3, v.sh = T * v.ld + 5, v.sb = H * v.sh + 7;
        break;
    }
    return v;
}

/* the dense array d (B,T,H,w) written into buf at v's places */
static void scatter(const sdpa_view *v, const double *d, double *buf)
{
    for (size_t b = 0; b < v->B; b++)
        for (size_t t = 0; t < v->T; t++)
            for (size_t h = 0; h < v->H; h++)
                memcpy(buf + sdpa_view_index(v, b, h, t), d + ((b * v->T + t) * v->H + h) * v->w,
                       v->w * sizeof(double));
}

static double *nan_doubles(size_t n)
{
    double *x = talloc_doubles(n);
    for (size_t i = 0; i < n; i++)
        x[i] = (double)NAN;
    return x;
}

/* The placement of kinds q, k, v, o for pr, holding pr's values. */
static placement placement_make(const problem *pr, const kind kinds[4])
{
    placement pl;
    memset(&pl, 0, sizeof pl);
    const lcase *c = &pr->c;
    size_t H[4], T[4], w[4], at = 0;
    for (int i = 0; i < 4; i++)
        dims_of(pr, i, &H[i], &T[i], &w[i]);
    const int fused = kinds[0] == FUSED || kinds[0] == HEADWISE;
    pl.out_in_in = fused && kinds[3] == kinds[0];
    const int blocks = pl.out_in_in ? 4 : 3;
    size_t row = 0;
    for (int i = 0; i < blocks; i++)
        row += H[i] * w[i];
    for (int i = 0; i < 4; i++) {
        if (fused && i < blocks) { /* the arrays' columns within one row */
            const int by_head = kinds[0] == HEADWISE;
            pl.a[i] = (sdpa_view){c->B, H[i], T[i], w[i], by_head ? i * c->hs : at,
                                  T[i] * row, by_head ? (size_t)blocks * c->hs : w[i], row};
            at += H[i] * w[i];
            continue;
        }
        if (i == 3) /* out in a buffer of its own */
            at = 0;
        pl.a[i] = view_make(kinds[i], c->B, H[i], T[i], w[i], at);
        pl.zero[i] = kinds[i] == BSHD;
        at = sdpa_view_end(&pl.a[i]);
    }
    pl.n_in = fused ? c->B * c->Tq * row : sdpa_view_end(&pl.a[2]);
    pl.n_out = pl.out_in_in ? pl.n_in : sdpa_view_end(&pl.a[3]);
    pl.period = (fused ? row : 16) * sizeof(double);
    pl.in = nan_doubles(pl.n_in);
    scatter(&pl.a[0], pr->Q, pl.in);
    scatter(&pl.a[1], pr->K, pl.in);
    scatter(&pl.a[2], pr->V, pl.in);
    pl.dout = nan_doubles(pl.n_out);
    scatter(&pl.a[3], pr->dout, pl.dout);
    return pl;
}

static problem problem_make(const lcase *c, test_rng *rng)
{
    problem pr;
    memset(&pr, 0, sizeof pr);
    pr.c = *c;
    pr.hs_v = c->hs_v ? c->hs_v : c->hs;
    size_t H, T, w, n[4];
    for (int i = 0; i < 4; i++)
        n[i] = dims_of(&pr, i, &H, &T, &w);
    /* N(0,1) rounded to float (one reference for both precisions) */
    pr.Q = random_rounded(&test_prec_f32, rng, n[0], 1.0);
    pr.K = random_rounded(&test_prec_f32, rng, n[1], 1.0);
    pr.V = random_rounded(&test_prec_f32, rng, n[2], 1.0);
    pr.dout = random_rounded(&test_prec_f32, rng, n[3], 1.0);
    /* keys j >= L_b do not exist: NaN (never read) */
    for (size_t b = 0; c->lengths != NULL && b < c->B; b++)
        for (size_t j = c->lengths[b]; j < c->Tk; j++) {
            for (size_t i = 0; i < c->NH_kv * c->hs; i++)
                pr.K[(b * c->Tk + j) * c->NH_kv * c->hs + i] = (double)NAN;
            for (size_t i = 0; i < c->NH_kv * pr.hs_v; i++)
                pr.V[(b * c->Tk + j) * c->NH_kv * pr.hs_v + i] = (double)NAN;
        }
    const size_t n_mask = c->B * c->NH * c->Tq * c->Tk;
    if (c->mask) { /* N(0,1), -inf with probability 0.15 */
        pr.mask = random_rounded(&test_prec_f32, rng, n_mask, 1.0);
        for (size_t i = 0; i < n_mask; i++)
            if (rng_uniform(rng) < 0.15)
                pr.mask[i] = -HUGE_VAL;
    }
    const sdpa_ref r = {c->B, c->NH, c->NH_kv, c->Tq, c->Tk, c->hs, pr.hs_v,
                        sdpa_ref_scale(0.0, c->hs), c->causal != 0, 0,
                        pr.Q, pr.K, pr.V, c->NH * c->hs, c->NH_kv * c->hs, c->NH_kv * pr.hs_v,
                        pr.mask, c->Tk, c->NH * c->Tq * c->Tk, c->Tq * c->Tk, c->lengths};
    pr.ref = r;
    pr.out = talloc_doubles(n[3]);
    pr.lse = talloc_doubles(c->B * c->NH * c->Tq);
    sdpa_ref_forward(&r, pr.out, pr.lse);
    if (c->backward) {
        pr.dQ = talloc_doubles(n[0]);
        pr.dK = talloc_doubles(n[1]);
        pr.dV = talloc_doubles(n[2]);
        sdpa_ref_backward(&r, pr.dout, pr.dQ, pr.dK, pr.dV);
    }
    for (size_t i = 0; i < n[2]; i++)
        if (isfinite(pr.V[i]))
            pr.v_scale = fmax(pr.v_scale, fabs(pr.V[i]));
    return pr;
}

static void *elem(const test_prec *p, void *base, size_t i)
{
    return (unsigned char *)base + i * p->size;
}

/* whether the elements of buf that no view in v[0..n) addresses hold the
 * bytes of `before` */
static int unaddressed_intact(const test_prec *p, const void *buf, const void *before,
                              size_t elements, const sdpa_view *v, int n)
{
    unsigned char *marks = talloc(elements);
    memset(marks, 0, elements);
    for (int i = 0; i < n; i++)
        sdpa_view_mark(&v[i], marks);
    for (size_t i = 0; i < elements; i++)
        if (!marks[i] && memcmp((const unsigned char *)buf + i * p->size,
                                (const unsigned char *)before + i * p->size, p->size) != 0)
            return 0;
    return 1;
}

/* a typed copy of src[0..n), 3 elements past a multiple of `period` bytes */
static void *typed_at(const test_prec *p, const double *src, size_t n, size_t period)
{
    void *t = sdpa_talloc_at(n * p->size, period, 3 * p->size);
    p->from_double(t, src, n);
    return t;
}

/* a sentinel-filled buffer placed as typed_at's, and its bytes */
static void *sentinel_at(const test_prec *p, size_t bytes, size_t period, void **before)
{
    void *b = sdpa_talloc_at(bytes, period, 3 * p->size);
    sentinel_fill(b, bytes);
    *before = talloc(bytes);
    memcpy(*before, b, bytes);
    return b;
}

/* One forward (plan NULL: the one-shot) and, when `backward`, backward of
 * pr in placement pl; checks the statuses and the untouched bytes, returns
 * the outputs gathered into dense arrays. */
static result execute(const test_prec *p, const problem *pr, const placement *pl,
                      attn_plan *plan, int backward, const char *what)
{
    const lcase *c = &pr->c;
    const size_t es = p->size, n_lse = c->B * c->NH * c->Tq;
    result r;
    memset(&r, 0, sizeof r);
    void *in = typed_at(p, pl->in, pl->n_in, pl->period), *in0 = talloc(pl->n_in * es);
    memcpy(in0, in, pl->n_in * es);
    void *out0 = in0, *obuf = in;
    if (!pl->out_in_in)
        obuf = sentinel_at(p, pl->n_out * es, pl->period, &out0);
    void *lse = talloc(n_lse * es);
    sentinel_fill(lse, n_lse * es);
    const sdpa_view *a = pl->a;
    sdpa_io io;
    memset(&io, 0, sizeof io);
    io.Q = elem(p, in, a[0].at);
    io.K = elem(p, in, a[1].at);
    io.V = elem(p, in, a[2].at);
    io.out = elem(p, obuf, a[3].at);
    size_t *s[4][3] = {{&io.sbq, &io.shq, &io.ldq}, {&io.sbk, &io.shk, &io.ldk},
                       {&io.sbv, &io.shv, &io.ldv}, {&io.sbo, &io.sho, &io.ldo}};
    for (int i = 0; i < 4; i++)
        if (!pl->zero[i])
            *s[i][0] = a[i].sb, *s[i][1] = a[i].sh, *s[i][2] = a[i].ld;
    if (c->mask) {
        io.mask = prec_typed(p, pr->mask, c->B * c->NH * c->Tq * c->Tk);
        io.mask_ld = pr->ref.mask_ld, io.mask_sh = pr->ref.mask_sh, io.mask_sb = pr->ref.mask_sb;
    }
    io.key_lengths = c->lengths;
    io.lse = lse;
    const attn_sdpa_shape shape = {c->B, c->NH, c->NH_kv, c->Tq, c->Tk, c->hs, c->hs_v};
    attn_status st = plan != NULL ? sdpa_forward(p, plan, &io)
                                  : sdpa_one_shot(p, &shape, 0.0, c->causal, 0, &io);
    expect_true(st == ATTN_OK, "%s: forward: %s", what, attn_status_string(st));
    if (st != ATTN_OK)
        return r;
    expect_true(unaddressed_intact(p, obuf, out0, pl->n_out, &a[3], 1),
                "%s: the forward wrote outside out's elements", what);
    expect_true(pl->out_in_in || memcmp(in, in0, pl->n_in * es) == 0,
                "%s: the forward changed its inputs", what);
    r.out = sdpa_view_gather(p, obuf, &a[3]);
    r.lse = prec_doubles(p, lse, n_lse);
    if (!backward)
        return r;
    void *dout = typed_at(p, pl->dout, pl->n_out, pl->period), *g0;
    void *g = sentinel_at(p, pl->n_in * es, pl->period, &g0);
    st = sdpa_backward(p, plan, &io, elem(p, dout, a[3].at), elem(p, g, a[0].at),
                       elem(p, g, a[1].at), elem(p, g, a[2].at));
    expect_true(st == ATTN_OK, "%s: backward: %s", what, attn_status_string(st));
    if (st != ATTN_OK)
        return r;
    expect_true(unaddressed_intact(p, g, g0, pl->n_in, a, 3),
                "%s: the backward wrote outside dQ's, dK's and dV's elements", what);
    r.dQ = sdpa_view_gather(p, g, &a[0]);
    r.dK = sdpa_view_gather(p, g, &a[1]);
    r.dV = sdpa_view_gather(p, g, &a[2]);
    return r;
}

typedef struct worsts {
    check_worst out, lse, grads;
} worsts;

static void check_result(const test_prec *p, const problem *pr, const result *r, worsts *w,
                         const char *what)
{
    const lcase *c = &pr->c;
    size_t H, T, wd, n[4];
    for (int i = 0; i < 4; i++)
        n[i] = dims_of(pr, i, &H, &T, &wd);
    if (r->out == NULL)
        return;
    const double tol = sdpa_forward_tol(p, c->Tk, c->hs);
    expect_within(&w->out, residual_scaled(r->out, pr->out, n[3], pr->v_scale), tol, "%s: out",
                  what);
    expect_within(&w->lse, sdpa_residual_lse(r->lse, pr->lse, c->B * c->NH * c->Tq), tol,
                  "%s: lse", what);
    if (r->dQ == NULL)
        return;
    const double gtol = sdpa_grad_tol(p, c->Tq, c->Tk, c->NH / c->NH_kv, c->hs);
    const double largest = fmax(max_abs(pr->dQ, n[0]), fmax(max_abs(pr->dK, n[1]),
                                                            max_abs(pr->dV, n[2])));
    const double *got[3] = {r->dQ, r->dK, r->dV}, *ref[3] = {pr->dQ, pr->dK, pr->dV};
    const char *names[3] = {"dQ", "dK", "dV"};
    for (int i = 0; i < 3; i++)
        expect_within(&w->grads, sdpa_grad_residual(got[i], ref[i], n[i], largest), gtol,
                      "%s: %s", what, names[i]);
}

/* Whether the layout's decode step may sum V in its own order (attn.h). */
static int sums_v_in_own_order(const lcase *c)
{
    const int apart = c->k == BHSD || c->k == CACHE || c->v == BHSD || c->v == CACHE;
    return c->Tq == 1 && c->NH_kv > 1 && apart;
}

/* whether two runs' gathered outputs are the same bytes (only lse: with
 * lse_only) */
static int results_identical(const problem *pr, const result *x, const result *y, int lse_only)
{
    size_t H, T, w, n[4];
    for (int i = 0; i < 4; i++)
        n[i] = dims_of(pr, i, &H, &T, &w);
    const size_t n_lse = pr->c.B * pr->c.NH * pr->c.Tq;
    const double *a[5] = {x->out, x->lse, x->dQ, x->dK, x->dV};
    const double *b[5] = {y->out, y->lse, y->dQ, y->dK, y->dV};
    const size_t count[5] = {n[3], n_lse, n[0], n[1], n[2]};
    for (int i = 0; i < 5; i++)
        if (lse_only && i != 1)
            continue;
        else if ((a[i] == NULL) != (b[i] == NULL) ||
            (a[i] != NULL && memcmp(a[i], b[i], count[i] * sizeof(double)) != 0))
            return 0;
    return 1;
}

static attn_plan *training_plan(const test_prec *p, const lcase *c, unsigned threads,
                                const char *what)
{
    const attn_sdpa_shape shape = {c->B, c->NH, c->NH_kv, c->Tq, c->Tk, c->hs, c->hs_v};
    attn_plan *plan = NULL;
    attn_status st = attn_sdpa_plan_create(&plan, p->dtype, &shape, 0.0, c->causal, 0);
    check_true(st == ATTN_OK, "%s: attn_sdpa_plan_create: %s", what, attn_status_string(st));
    sdpa_keep_plan(plan);
    st = attn_plan_set_threads(plan, threads);
    check_true(st == ATTN_OK, "%s: attn_plan_set_threads(%u): %s", what, threads,
               attn_status_string(st));
    return plan;
}

/* One case in both precisions (one, alternating, in a short run) on the
 * three engines, in its layout and in the dense one. */
static void run_case(const lcase *c, test_rng *rng, worsts w[2])
{
    static size_t cases_run;
    const size_t n = cases_run++;
    const problem pr = problem_make(c, rng);
    const kind dense[4] = {BSHD, BSHD, BSHD, BSHD}, kinds[4] = {c->q, c->k, c->v, c->o};
    const placement layout = placement_make(&pr, kinds), flat = placement_make(&pr, dense);
    const test_prec *precs[2] = {&test_prec_f32, &test_prec_f64};
    static const unsigned engines[3] = {0, 2, ATTN_THREADS_AUTO}; /* AUTO: the one-shot */
    static const char *const engine_names[3] = {"BLAS threads", "2 own threads", "one-shot"};
    for (size_t pi = 0; pi < 2; pi++) {
        if (short_run && pi != n % 2)
            continue;
        const test_prec *p = precs[pi];
        for (int e = 0; e < 3; e++) {
            char what[512];
            snprintf(what, sizeof what,
                     "%s %s \"%s\" (B %zu NH %zu/%zu Tq %zu Tk %zu hs %zu/%zu), %s",
                     attn_simd_name(), p->name, c->name, c->B, c->NH, c->NH_kv, c->Tq, c->Tk,
                     c->hs, pr.hs_v, engine_names[e]);
            attn_plan *plan = e < 2 ? training_plan(p, c, engines[e], what) : NULL;
            const int backward = c->backward && plan != NULL;
            const result r = execute(p, &pr, &layout, plan, backward, what);
            check_result(p, &pr, &r, &w[pi], what);
            const result d = execute(p, &pr, &flat, plan, backward, what);
            expect_true(results_identical(&pr, &r, &d, sums_v_in_own_order(c)),
                        "%s: the layout's results differ from the dense layout's", what);
            if (plan != NULL)
                sdpa_drop_plan(plan);
        }
    }
}

static void run_cases(const lcase *cases, size_t n, unsigned long seed, const char *what)
{
    test_enter();
    test_rng rng;
    rng_seed(&rng, seed);
    worsts w[2];
    memset(w, 0, sizeof w);
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i], &rng, w);
    for (int pi = 0; pi < 2; pi++) {
        const check_worst *cw[3] = {&w[pi].out, &w[pi].lse, &w[pi].grads};
        const char *names[3] = {"out", "lse", "gradients"};
        for (int i = 0; i < 3; i++)
            if (cw[i]->tol > 0.0)
                print_message("  %s %s %s %s: largest residual %.2e (tolerance %.1e)\n",
                              attn_simd_name(), what, pi ? "f64" : "f32", names[i],
                              cw[i]->residual, cw[i]->tol);
    }
    test_leave(what);
}

/* ---- the cases ---------------------------------------------------------------------- */

static const size_t len3[3] = {60, 23, 1}, len2[2] = {50, 31}, len_decode[1] = {2345};

/* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, causal, lengths, mask, q k v o, backward */
static const lcase strided_cases[] = {
    {"all BHSD, causal", 2, 8, 2, 40, 40, 16, 0, C, NULL, 0, BHSD, BHSD, BHSD, BHSD, 1},
    {"BSHD (zero strides), out BHSD, causal", 2, 8, 2, 40, 40, 16, 0, C, NULL, 0, BSHD, BSHD,
     BSHD, BHSD, 1},
    {"BHSD, out BSHD, mask", 2, 8, 2, 33, 47, 16, 0, 0, NULL, 1, BHSD, BHSD, BHSD, BSHD, 1},
    {"mixed: Q BSHD, K V BHSD, out padded, causal Tq < Tk", 2, 8, 2, 20, 45, 16, 0, C, NULL, 0,
     BSHD, BHSD, BHSD, PADDED, 1},
    {"mixed: Q padded, K BSHD, V BHSD, out BHSD, MQA, hs_v 24", 3, 3, 1, 17, 29, 8, 24, 0, NULL,
     0, PADDED, BSHD, BHSD, BHSD, 1},
    {"all padded, MHA, causal", 2, 4, 4, 25, 25, 16, 0, C, NULL, 0, PADDED, PADDED, PADDED,
     PADDED, 1},
};

static const lcase fused_cases[] = {
    {"fused QKV rows, out BHSD, causal", 2, 8, 2, 37, 37, 16, 0, C, NULL, 0, FUSED, FUSED, FUSED,
     BHSD, 1},
    {"fused QKV rows, out BSHD, hs_v 8, mask", 2, 6, 2, 30, 30, 16, 8, 0, NULL, 1, FUSED, FUSED,
     FUSED, BSHD, 1},
    {"fused QKV and out rows (B,T,4 blocks), causal", 2, 8, 2, 29, 29, 16, 0, C, NULL, 0, FUSED,
     FUSED, FUSED, FUSED, 1},
    {"per-head QKV (B,T,NH,3,hs), out BSHD, causal", 2, 4, 4, 30, 30, 16, 0, C, NULL, 0,
     HEADWISE, HEADWISE, HEADWISE, BSHD, 1},
    {"per-head QKV and out (B,T,NH,4,hs), mask", 2, 4, 4, 21, 21, 8, 0, 0, NULL, 1, HEADWISE,
     HEADWISE, HEADWISE, HEADWISE, 1},
};

static const lcase cache_cases[] = {
    {"cache, lengths, mask, causal, Q BHSD, out BHSD", 3, 8, 2, 5, 60, 16, 0, C, len3, 1, BHSD,
     CACHE, CACHE, BHSD, 1},
    {"cache, lengths, MQA, Q BSHD, out padded", 2, 4, 1, 7, 50, 32, 0, C, len2, 0, BSHD, CACHE,
     CACHE, PADDED, 1},
    {"decode split, B 1, NH 4/1, Tk 3000 cache", 1, 4, 1, 1, 3000, 64, 0, C, NULL, 0, BHSD,
     CACHE, CACHE, BHSD, 1},
    {"decode split, GQA 8/2, length 2345 of Tk 3000 cache", 1, 8, 2, 1, 3000, 64, 0, C,
     len_decode, 0, BHSD, CACHE, CACHE, BHSD, 1},
    {"decode, Q and out one row of ld 1, GQA 8/2 (BLAS: dV from dout)", 2, 8, 2, 1, 300, 64, 0,
     C, NULL, 0, ONEROW, CACHE, CACHE, ONEROW, 1},
    /* the key/value heads of a cache lie apart: a decode step reads them one
     * at a time, the keys of a tile (at least 64) as four parts side by
     * side, the keys left after the parts last (rows_kernel.inc.c) */
    {"decode, GQA 15/5, Tk 700 cache", 2, 15, 5, 1, 700, 32, 0, C, NULL, 0, BHSD, CACHE, CACHE,
     BSHD, 1},
    {"decode, MHA 3/3, Tk 500 cache, hs_v 24", 1, 3, 3, 1, 500, 16, 24, C, NULL, 0, BSHD, CACHE,
     CACHE, BHSD, 1},
    {"one key, K and V one row of ld 1", 2, 4, 2, 6, 1, 16, 0, 0, NULL, 0, BHSD, ONEROW, ONEROW,
     BHSD, 1},
};
static const lcase cache_cases_short[] = {
    {"decode split, B 1, NH 4/1, Tk 1500 cache", 1, 4, 1, 1, 1500, 64, 0, C, NULL, 0, BHSD,
     CACHE, CACHE, BHSD, 1},
};

static const lcase prefill_cases[] = {
    {"prefill 300, GQA 4/2, BHSD, causal", 1, 4, 2, 300, 300, 64, 0, C, NULL, 0, BHSD, BHSD,
     BHSD, BHSD, 1},
};
static const lcase prefill_cases_short[] = {
    {"prefill 200, GQA 4/2, BHSD, causal", 1, 4, 2, 200, 200, 64, 0, C, NULL, 0, BHSD, BHSD,
     BHSD, BHSD, 1},
};

static void strided(void **state)
{
    (void)state;
    run_cases(strided_cases, N_OF(strided_cases), 2301, "strided");
}

static void fused(void **state)
{
    (void)state;
    run_cases(fused_cases, N_OF(fused_cases), 2302, "fused");
}

static void caches(void **state)
{
    (void)state;
    run_cases(cache_cases, short_run ? 2 : N_OF(cache_cases), 2303, "caches");
    if (short_run)
        run_cases(cache_cases_short, N_OF(cache_cases_short), 2304, "caches (short)");
}

static void prefill(void **state)
{
    (void)state;
    if (short_run)
        run_cases(prefill_cases_short, N_OF(prefill_cases_short), 2305, "prefill (short)");
    else
        run_cases(prefill_cases, N_OF(prefill_cases), 2305, "prefill");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    short_run = sdpa_short_run();
    const struct CMUnitTest tests[] = {
        SDPA_CASE("strided", strided, NULL),
        SDPA_CASE("fused", fused, NULL),
        SDPA_CASE("caches", caches, NULL),
        SDPA_CASE("prefill", prefill, NULL),
    };
    return cmocka_run_group_tests_name("sdpa_layouts", tests, NULL, NULL);
}
