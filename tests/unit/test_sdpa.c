/*
 * test_sdpa: attention on given Q, K, V (attn.h, "attention on given Q, K, V
 * (sdpa)"): attn_sdpa_plan_create, attn_sdpa_forward_*, attn_sdpa_backward_*
 * and the one-shots attn_sdpa_*, in both precisions, against the naive double
 * reference of sdpa_reference.c.
 *
 * 1. engines: each case below, forward (out and lse) and, where marked,
 *    backward (dQ, dK, dV), on a training plan run on BLAS threads
 *    (attn_plan_set_threads 0), 1 and 2 own threads, and its forward again
 *    on an ATTN_INFERENCE plan (2 own threads); 1 and 2 own threads give the
 *    same bytes (attn.h: own-thread results do not depend on the count).
 *    Cases: plain MHA (NH_kv = NH), GQA (8/2), MQA (NH_kv = 1); causal with
 *    Tq = Tk, Tq < Tk (bottom-right alignment), Tq = 1 decode steps (GQA
 *    ones with head sizes 20 and 13: the few-row kernels' partial vectors
 *    and key tails), Tq > Tk
 *    (leading queries see no key); sliding windows with and without causal
 *    (window 1: the diagonal alone); key_lengths per sequence, one of them
 *    0, some below Tq, the unfilled cache slots (keys j >= L_b) holding NaN
 *    in K and V; additive masks: full (B,NH,Tq,Tk) with a padded row stride
 *    (NaN in the padding), key padding (mask_ld = mask_sh = 0), shared over
 *    heads (mask_sh = 0), over the batch (mask_sb = 0), one row for all
 *    (every stride 0), each with -INFINITY entries and fully masked rows
 *    (out 0 and lse -inf exactly, their dQ rows exactly 0); hs_v != hs;
 *    strided Q, K, V, out and dout (row strides beyond the row, NaN in the
 *    gaps of the inputs, the gaps of out, dQ, dK, dV checked byte for byte
 *    untouched); Q, K, V read in place from one fused (B,T,NH*hs +
 *    NH_kv*(hs + hs_v)) buffer; shapes beyond one tile (lib/engine/tiling.h: blocks of 128
 *    queries, 512 keys; Tq, Tk up to 700/1100, none a multiple of a block,
 *    hs 40, 64, 72; up to 300/600 in unoptimized and sanitizer builds and
 *    under valgrind); the default scale (0 and -1) and given ones.
 *    Every output buffer starts as a sentinel pattern, so an element left
 *    unwritten (or accumulated into) fails; the rows of dK and dV of keys
 *    j >= L_b must be exactly 0.
 * 2. finite differences (f64): every element of Q, K and V of small shapes
 *    (GQA with lengths, a mask with -inf entries and causal; MQA with a
 *    window; a key-padding mask with Tq < Tk), central differences of
 *    L = sum(out * dout) through the library's f64 forward, against its
 *    backward.
 * 3. decode split (flash-decoding): few (sequence, kv head) pairs and few
 *    queries, B = 1, NH = 4, NH_kv = 1, Tq = 1, Tk = 5000 (and with a length
 *    of 3333, and Tq = 4 causal at Tk = 3000; GQA 6/3 with hs 20, hs_v 13,
 *    every key/value head in one item): against the reference, and
 *    against the same sequence replicated into a B = 8 call (8 pairs: not
 *    split); backward of the split shapes too.
 * 4. NaN confinement: a NaN in K (one head's row of key j) and in V (two
 *    other keys, one of them the second key a sequence's first query can
 *    reach) under the causal mask, and a NaN in one query's row: the rows of
 *    queries at positions p < j, and every other head's rows, equal the
 *    reference (finite); the rows that see the NaN are NaN (attn.h); the
 *    NaN query's row alone is NaN. With the decode split too. (The
 *    lengths cases of 1. cover NaN in the unfilled slots.) Special scores
 *    set through the mask, in different key tiles and decode splits: two
 *    +inf share the weight (out their mean, lse +inf), +inf with NaN is NaN
 *    (out and lse), all -inf is out 0, lse -inf.
 * 5. errors: every status of attn_sdpa_plan_create, attn_sdpa_forward_*,
 *    attn_sdpa_backward_* and attn_sdpa_* case by case and in the header's
 *    order where two coincide; all buffers of an error call live in one
 *    sentinel-filled arena (and the key lengths in another), compared byte
 *    for byte afterwards, and *plan is untouched by a failing create;
 *    PLAN_KIND both ways (attn_forward/attn_backward on an sdpa plan,
 *    attn_sdpa_* on a projected plan), DTYPE_MISMATCH both ways,
 *    INFERENCE_PLAN; array extents exactly as strides make them (an output
 *    touching an input's last element is fine, one element more is
 *    ALIASING).
 * 6. one-shots equal an ATTN_INFERENCE plan on the default engine
 *    (ATTN_THREADS_AUTO) bit for bit; a backward needs no forward on its
 *    plan (out and lse from a one-shot); ld = 0 equals the dense stride and
 *    scale <= 0 equals 1/sqrt(hs), bit for bit.
 *
 * Under valgrind (~50x slower), or with ATTN_SDPA_SHORT=1 in the
 * environment (other slow hosts: CI's AArch64 build under qemu-aarch64),
 * each case runs on BLAS threads and 2 own threads, in one precision (alternating from case to case), without the
 * extra inference-plan forward, with the smaller large shapes and decode
 * splits of Tk <= 2000; unoptimized and sanitizer builds run everything but
 * the large shapes at full size.
 *
 * Inputs: Q, K, V, dout ~ N(0,1), the mask's finite entries ~ N(0,1), all
 * rounded to float, so that one reference (in double, on those values)
 * serves both precisions (as in test_engines); the scores are O(1).
 *
 * Residuals (check.h): out max|out - ref| / max|V| (out is a convex
 * combination of rows of V: its error lives on max|V|); lse
 * max |lse - ref| / (1 + |ref|) (the error of lse = m + log sum is u|m| plus
 * the relative error of the sum); each gradient array
 * max|G - ref| / max(max|ref G|, 0.01 * the largest max|ref| of the three)
 * (mha.h's gradient residual). Infinities must match exactly and a NaN
 * only where the reference has one.
 *
 * Tolerances:
 *   forward (out, lse): the suite's (precision.h: f32 1e-5, f64 1e-12,
 *     justified for sums of length <= ~130) times sqrt(K / 130) for
 *     K = max(Tk, hs) > 130: out sums P V over up to Tk keys, the scores
 *     over hs, and the rounding error of a sum of K terms of random sign
 *     grows like sqrt(K) u (test_engines.c). Tk = 5000: f32 6.2e-5, f64
 *     6.2e-12.
 *   backward: f32 1e-4, f64 1e-12 (mha_grad_tol, test_backward.c: four
 *     chained products of length <= 260 and the softmax backward's
 *     cancellation) times sqrt(K / 260) for K = max(Tk, Tq * NH / NH_kv, hs)
 *     > 260: dQ sums over Tk keys, dK and dV over Tq queries of every head
 *     of the group.
 *   decode split against the unsplit B = 8 call: the forward tolerance.
 *     Both are within it of the reference and observed an order below it;
 *     the split only regroups the sum over keys (partial sums merged with
 *     their maxima), so their difference is rounding of the same size.
 *   finite differences: 1e-7 with step 2^-17, the residual of the
 *     gradients (test_backward.c's analysis: truncation ~1e-8 for scores of
 *     a few units, rounding ~4e-9; a wrong formula is off by 1e-2 or more).
 * Observed (every kernel set, Release; each test prints its largest):
 * out <= 2.3e-7 (f32), 4.1e-16 (f64); lse <= 2.1e-7, 4.5e-16; gradients
 * <= 2.4e-6, 4.2e-15, except the window-1 case's f32 6.9e-6 (its dS is
 * 0 in exact arithmetic, P = 1 on the diagonal: dQ and dK are rounding
 * noise measured against the 0.01 floor); decode split against unsplit
 * <= 1.0e-7; finite differences <= 2.8e-10. A real defect is off by 1e-2
 * or more: the reference with top-left instead of bottom-right causal
 * alignment fails every Tq < Tk, lengths and window case by 0.1-2.
 *
 * Statuses the header leaves to interpretation, as read here: a row stride
 * above INT_MAX (whose extent fits) is ATTN_ERR_BLAS_RANGE, after
 * SIZE_OVERFLOW and before BAD_LENGTH (attn.h's conventions: "the BLAS
 * integer range"); the backward's INFERENCE_PLAN comes right after
 * DTYPE_MISMATCH, before the strides (as in attn_backward_*); key_lengths
 * is an input for ALIASING. The cases placed last (huge windows, products
 * wrapping around size_t, a shape that must be refused at once) are the
 * ones that crashed or hung the library when they were written.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reference/sdpa_reference.h"
#include "support/sdpa_calls.h"
#include "support/test_common.h"

#define N_OF(array) (sizeof(array) / sizeof((array)[0]))

#define FD_STEP 0x1p-17
#define FD_TOL 1e-7

/* Under valgrind (~50x slower; detected in main, or asked for by
 * ATTN_SDPA_SHORT=1) every case runs on two
 * engines (BLAS threads and 2 own threads) in one precision (alternating
 * from case to case), without the extra inference-plan forward, and the
 * decode-split shapes are shorter: the same code paths in about a quarter
 * of the time (sdpa_calls.h: sdpa_short_run). */
static int under_valgrind;

/* ---- plans (sdpa_calls.h: sdpa_keep_plan, sdpa_drop_plan, sdpa_teardown) and
 * typed calls (sdpa_io, sdpa_forward, sdpa_backward, sdpa_one_shot) ------------ */

static void report(const char *what, const check_worst *w)
{
    print_message("  %s %s: largest residual %.2e (tolerance %.1e)\n", attn_simd_name(), what,
                  w->residual, w->tol);
}

/* ---- problems ------------------------------------------------------------------ */

typedef enum mask_kind {
    MASK_NONE,
    MASK_FULL,   /* (B,NH,Tq,Tk), row stride Tk + 2 (NaN in the padding) */
    MASK_KEYPAD, /* mask_ld = mask_sh = 0, mask_sb = Tk: one row per sequence */
    MASK_HEADS,  /* mask_sh = 0: (B,Tq,Tk) shared by the heads */
    MASK_BATCH,  /* mask_sb = 0: (NH,Tq,Tk) shared by the sequences */
    MASK_ROW     /* every stride 0: one row of Tk for every (b, h, t) */
} mask_kind;

typedef struct spec {
    const char *name;
    size_t B, NH, NH_kv, Tq, Tk, hs, hs_v; /* hs_v 0: hs (passed as 0) */
    double scale;                          /* the argument: <= 0 the default */
    unsigned causal;                       /* 0 or ATTN_CAUSAL */
    size_t window;
    size_t pad; /* every row stride is its row's width + pad; 0: the strides are passed as 0 */
    int fused;  /* Q, K, V in one (B,T,...) buffer (Tq == Tk) */
    mask_kind mask;
    const size_t *lengths; /* B entries, or NULL */
    int backward;
    int finite_slots; /* keys j >= L_b hold numbers, not NaN */
} spec;

typedef struct problem {
    spec c;
    size_t hs_v, wq, wk, wv, wo;         /* row widths NH*hs, NH_kv*hs, NH_kv*hs_v, NH*hs_v */
    size_t ldq, ldk, ldv, ldo;           /* the actual strides */
    size_t ldq_arg, ldk_arg, ldv_arg, ldo_arg; /* as passed (0: dense) */
    size_t q_at, k_at, v_at, n_in;       /* Q, K, V in one input array `in` */
    size_t nq, nk, nv, no, nl;           /* extents of Q, K, V, out (and dout), lse */
    double *in, *mask, *dout;
    size_t n_mask, mask_ld, mask_sb, mask_sh;
    size_t *lengths;
    sdpa_ref ref;
} problem;

/* elements from the first of `rows` rows of `width` at stride ld to the last */
static size_t extent(size_t rows, size_t ld, size_t width)
{
    return (rows - 1) * ld + width;
}

static double rounded_normal(test_rng *rng)
{
    return (double)(float)rng_normal(rng);
}

static size_t length_of(const problem *pr, size_t b)
{
    return pr->lengths != NULL ? pr->lengths[b] : pr->c.Tk;
}

static void fill_mask(problem *pr, test_rng *rng)
{
    const spec *c = &pr->c;
    const size_t B = c->B, NH = c->NH, Tq = c->Tq, Tk = c->Tk;
    switch (c->mask) {
    case MASK_NONE:
        return;
    case MASK_FULL:
        pr->mask_ld = Tk + 2;
        pr->mask_sh = Tq * pr->mask_ld;
        pr->mask_sb = NH * pr->mask_sh;
        pr->n_mask = B * pr->mask_sb;
        break;
    case MASK_KEYPAD:
        pr->mask_ld = 0;
        pr->mask_sh = 0;
        pr->mask_sb = Tk;
        pr->n_mask = B * Tk;
        break;
    case MASK_HEADS:
        pr->mask_ld = Tk;
        pr->mask_sh = 0;
        pr->mask_sb = Tq * Tk;
        pr->n_mask = B * Tq * Tk;
        break;
    case MASK_BATCH:
        pr->mask_ld = Tk;
        pr->mask_sh = Tq * Tk;
        pr->mask_sb = 0;
        pr->n_mask = NH * Tq * Tk;
        break;
    case MASK_ROW:
        pr->mask_ld = pr->mask_sh = pr->mask_sb = 0;
        pr->n_mask = Tk;
        break;
    }
    pr->mask = talloc_doubles(pr->n_mask);
    for (size_t i = 0; i < pr->n_mask; i++)
        pr->mask[i] = (double)NAN; /* padding: never read */
    /* the entries: N(0,1), -inf with probability 0.15 */
    const size_t nb = pr->mask_sb ? B : 1, nh = pr->mask_sh ? NH : 1, nt = pr->mask_ld ? Tq : 1;
    for (size_t b = 0; b < nb; b++)
        for (size_t h = 0; h < nh; h++)
            for (size_t t = 0; t < nt; t++)
                for (size_t j = 0; j < Tk; j++) {
                    const double x = rounded_normal(rng);
                    pr->mask[b * pr->mask_sb + h * pr->mask_sh + t * pr->mask_ld + j] =
                        rng_uniform(rng) < 0.15 ? -HUGE_VAL : x;
                }
    /* fully masked rows */
    double *row = NULL;
    switch (c->mask) {
    case MASK_FULL: /* (b B-1, h NH-1, t Tq/2) */
        row = pr->mask + (B - 1) * pr->mask_sb + (NH - 1) * pr->mask_sh + Tq / 2 * pr->mask_ld;
        break;
    case MASK_KEYPAD: /* every row of the last sequence */
        row = B > 1 ? pr->mask + (B - 1) * pr->mask_sb : NULL;
        break;
    case MASK_HEADS: /* query 0 of sequence 0, every head */
        row = pr->mask;
        break;
    case MASK_BATCH: /* query Tq-1 of head 0, every sequence */
        row = pr->mask + (Tq - 1) * pr->mask_ld;
        break;
    default:
        break;
    }
    if (row != NULL)
        for (size_t j = 0; j < Tk; j++)
            row[j] = -HUGE_VAL;
}

static problem problem_make(const spec *c, test_rng *rng)
{
    problem pr;
    memset(&pr, 0, sizeof pr);
    pr.c = *c;
    const size_t B = c->B, Tq = c->Tq, Tk = c->Tk;
    pr.hs_v = c->hs_v ? c->hs_v : c->hs;
    pr.wq = c->NH * c->hs;
    pr.wk = c->NH_kv * c->hs;
    pr.wv = c->NH_kv * pr.hs_v;
    pr.wo = c->NH * pr.hs_v;
    if (c->fused) {
        check_true(Tq == Tk && c->lengths == NULL, "%s: a fused case needs Tq == Tk, no lengths",
                   c->name);
        pr.ldq = pr.ldk = pr.ldv = pr.wq + pr.wk + pr.wv + c->pad;
        pr.ldq_arg = pr.ldk_arg = pr.ldv_arg = pr.ldq;
        pr.q_at = 0;
        pr.k_at = pr.wq;
        pr.v_at = pr.wq + pr.wk;
        pr.n_in = B * Tq * pr.ldq;
    } else {
        pr.ldq = pr.wq + c->pad;
        pr.ldk = pr.wk + c->pad;
        pr.ldv = pr.wv + c->pad;
        if (c->pad > 0) {
            pr.ldq_arg = pr.ldq;
            pr.ldk_arg = pr.ldk;
            pr.ldv_arg = pr.ldv;
        }
    }
    pr.ldo = pr.wo + c->pad;
    pr.ldo_arg = c->pad > 0 ? pr.ldo : 0;
    pr.nq = extent(B * Tq, pr.ldq, pr.wq);
    pr.nk = extent(B * Tk, pr.ldk, pr.wk);
    pr.nv = extent(B * Tk, pr.ldv, pr.wv);
    pr.no = extent(B * Tq, pr.ldo, pr.wo);
    pr.nl = B * c->NH * Tq;
    if (!c->fused) {
        pr.q_at = 0;
        pr.k_at = pr.nq;
        pr.v_at = pr.nq + pr.nk;
        pr.n_in = pr.nq + pr.nk + pr.nv;
    }
    if (c->lengths != NULL) {
        pr.lengths = talloc(B * sizeof(size_t));
        memcpy(pr.lengths, c->lengths, B * sizeof(size_t));
    }
    /* inputs: NaN in every gap and unfilled slot, N(0,1) elsewhere */
    pr.in = talloc_doubles(pr.n_in);
    for (size_t i = 0; i < pr.n_in; i++)
        pr.in[i] = (double)NAN;
    for (size_t r = 0; r < B * Tq; r++)
        for (size_t i = 0; i < pr.wq; i++)
            pr.in[pr.q_at + r * pr.ldq + i] = rounded_normal(rng);
    for (size_t b = 0; b < B; b++)
        for (size_t j = 0; j < Tk; j++) {
            const int filled = j < length_of(&pr, b) || c->finite_slots;
            const size_t r = b * Tk + j;
            for (size_t i = 0; i < pr.wk; i++)
                pr.in[pr.k_at + r * pr.ldk + i] = filled ? rounded_normal(rng) : (double)NAN;
            for (size_t i = 0; i < pr.wv; i++)
                pr.in[pr.v_at + r * pr.ldv + i] = filled ? rounded_normal(rng) : (double)NAN;
        }
    fill_mask(&pr, rng);
    pr.dout = talloc_doubles(pr.no);
    for (size_t i = 0; i < pr.no; i++)
        pr.dout[i] = (double)NAN;
    for (size_t r = 0; r < B * Tq; r++)
        for (size_t i = 0; i < pr.wo; i++)
            pr.dout[r * pr.ldo + i] = rounded_normal(rng);

    sdpa_ref *f = &pr.ref;
    f->B = B;
    f->NH = c->NH;
    f->NH_kv = c->NH_kv;
    f->Tq = Tq;
    f->Tk = Tk;
    f->hs = c->hs;
    f->hs_v = pr.hs_v;
    f->scale = sdpa_ref_scale(c->scale, c->hs);
    f->causal = c->causal != 0;
    f->window = c->window;
    f->ldq = pr.ldq;
    f->ldk = pr.ldk;
    f->ldv = pr.ldv;
    f->mask = pr.mask;
    f->mask_ld = pr.mask_ld;
    f->mask_sb = pr.mask_sb;
    f->mask_sh = pr.mask_sh;
    f->key_lengths = pr.lengths;
    return pr;
}

/* the reference's pointers into pr->in (after pr moved or in changed) */
static sdpa_ref ref_of(const problem *pr)
{
    sdpa_ref r = pr->ref;
    r.Q = pr->in + pr->q_at;
    r.K = pr->in + pr->k_at;
    r.V = pr->in + pr->v_at;
    r.mask = pr->mask;
    r.key_lengths = pr->lengths;
    return r;
}

static attn_sdpa_shape shape_of(const problem *pr)
{
    attn_sdpa_shape s = {pr->c.B, pr->c.NH, pr->c.NH_kv, pr->c.Tq, pr->c.Tk, pr->c.hs,
                         pr->c.hs_v};
    return s;
}

/* dense (rows, width) doubles of a typed (rows, ld) array */
static double *dense_of(const test_prec *p, const void *typed, size_t rows, size_t ld,
                        size_t width)
{
    double *d = talloc_doubles(rows * width);
    for (size_t r = 0; r < rows; r++)
        p->to_double(d + r * width, (const unsigned char *)typed + r * ld * p->size, width);
    return d;
}

/* ---- the reference results ---------------------------------------------------- */

typedef struct expected {
    double *out, *lse, *dQ, *dK, *dV; /* dense */
    size_t n_out, n_dq, n_dk, n_dv;
    double v_scale; /* max |V| over its finite entries */
} expected;

static expected expected_make(const problem *pr, int backward)
{
    const spec *c = &pr->c;
    expected e;
    memset(&e, 0, sizeof e);
    e.n_out = c->B * c->Tq * pr->wo;
    e.n_dq = c->B * c->Tq * pr->wq;
    e.n_dk = c->B * c->Tk * pr->wk;
    e.n_dv = c->B * c->Tk * pr->wv;
    e.out = talloc_doubles(e.n_out);
    e.lse = talloc_doubles(pr->nl);
    const sdpa_ref r = ref_of(pr);
    sdpa_ref_forward(&r, e.out, e.lse);
    if (backward) {
        double *dout = talloc_doubles(e.n_out);
        for (size_t row = 0; row < c->B * c->Tq; row++)
            memcpy(dout + row * pr->wo, pr->dout + row * pr->ldo, pr->wo * sizeof(double));
        e.dQ = talloc_doubles(e.n_dq);
        e.dK = talloc_doubles(e.n_dk);
        e.dV = talloc_doubles(e.n_dv);
        sdpa_ref_backward(&r, dout, e.dQ, e.dK, e.dV);
    }
    for (size_t i = 0; i < pr->nv; i++) {
        const double v = pr->in[pr->v_at + i];
        if (isfinite(v) && fabs(v) > e.v_scale)
            e.v_scale = fabs(v);
    }
    return e;
}

/* ---- the library's inputs and outputs of one precision ---------------------------- */

typedef struct typed {
    const test_prec *p;
    void *in, *mask, *dout;
} typed;

static typed typed_make(const test_prec *p, const problem *pr)
{
    typed t = {p, prec_typed(p, pr->in, pr->n_in), NULL, prec_typed(p, pr->dout, pr->no)};
    if (pr->mask != NULL)
        t.mask = prec_typed(p, pr->mask, pr->n_mask);
    return t;
}

static void *elem(const test_prec *p, void *base, size_t i)
{
    return (unsigned char *)base + i * p->size;
}

/* typed outputs, sentinel-filled, with a copy of their initial bytes */
typedef struct outputs {
    void *out, *lse, *dQ, *dK, *dV;
    void *out0, *dQ0, *dK0, *dV0; /* the bytes before the call (gap checks) */
} outputs;

static void *sentinel_buffer(size_t bytes, void **copy)
{
    void *b = talloc(bytes);
    sentinel_fill(b, bytes);
    *copy = talloc(bytes);
    memcpy(*copy, b, bytes);
    return b;
}

static outputs outputs_make(const test_prec *p, const problem *pr, int backward)
{
    outputs o;
    memset(&o, 0, sizeof o);
    o.out = sentinel_buffer(pr->no * p->size, &o.out0);
    o.lse = talloc(pr->nl * p->size);
    sentinel_fill(o.lse, pr->nl * p->size);
    if (backward) {
        o.dQ = sentinel_buffer(pr->nq * p->size, &o.dQ0);
        o.dK = sentinel_buffer(pr->nk * p->size, &o.dK0);
        o.dV = sentinel_buffer(pr->nv * p->size, &o.dV0);
    }
    return o;
}

/* the gradient buffers back to their initial sentinel bytes */
static void outputs_refill_grads(const test_prec *p, const problem *pr, outputs *o)
{
    memcpy(o->dQ, o->dQ0, pr->nq * p->size);
    memcpy(o->dK, o->dK0, pr->nk * p->size);
    memcpy(o->dV, o->dV0, pr->nv * p->size);
}

static sdpa_io io_of(const problem *pr, const typed *t, const outputs *o, int with_lse)
{
    const test_prec *p = t->p;
    sdpa_io io;
    memset(&io, 0, sizeof io);
    io.Q = elem(p, t->in, pr->q_at);
    io.ldq = pr->ldq_arg;
    io.K = elem(p, t->in, pr->k_at);
    io.ldk = pr->ldk_arg;
    io.V = elem(p, t->in, pr->v_at);
    io.ldv = pr->ldv_arg;
    io.mask = t->mask;
    io.mask_ld = pr->mask_ld;
    io.mask_sb = pr->mask_sb;
    io.mask_sh = pr->mask_sh;
    io.key_lengths = pr->lengths;
    io.out = o->out;
    io.ldo = pr->ldo_arg;
    io.lse = with_lse ? o->lse : NULL;
    return io;
}

/* whether the bytes between the rows of a strided array are as before */
static int gaps_intact(const test_prec *p, const void *now, const void *before, size_t rows,
                       size_t ld, size_t width)
{
    if (ld == width)
        return 1;
    const unsigned char *a = now, *b = before;
    for (size_t r = 0; r + 1 < rows; r++) {
        const size_t from = (r * ld + width) * p->size, bytes = (ld - width) * p->size;
        if (memcmp(a + from, b + from, bytes) != 0)
            return 0;
    }
    return 1;
}

/* ---- tolerances and residuals --------------------------------------------------------- */

/* sdpa_calls.h: the residuals and tolerances, for a case */
static double forward_tol(const test_prec *p, const spec *c)
{
    return sdpa_forward_tol(p, c->Tk, c->hs);
}

static double grad_tol(const test_prec *p, const spec *c)
{
    return sdpa_grad_tol(p, c->Tq, c->Tk, c->NH / c->NH_kv, c->hs);
}

/* ---- checks of one run --------------------------------------------------------------- */

typedef struct worsts {
    check_worst out, lse, grads;
} worsts;

static void check_forward(const test_prec *p, const problem *pr, const expected *e,
                          const outputs *o, int with_lse, worsts *w, const char *what)
{
    const spec *c = &pr->c;
    const size_t rows = c->B * c->Tq;
    const double tol = forward_tol(p, c);
    double *out = dense_of(p, o->out, rows, pr->ldo, pr->wo);
    expect_within(&w->out, residual_scaled(out, e->out, e->n_out, e->v_scale), tol, "%s: out",
                  what);
    expect_true(gaps_intact(p, o->out, o->out0, rows, pr->ldo, pr->wo),
                "%s: the gaps between out's rows (ldo %zu) were written", what, pr->ldo);
    double *lse = with_lse ? prec_doubles(p, o->lse, pr->nl) : NULL;
    if (lse != NULL)
        expect_within(&w->lse, sdpa_residual_lse(lse, e->lse, pr->nl), tol, "%s: lse", what);
    /* rows without a visible, unmasked key: out exactly 0, lse -inf */
    size_t bad = 0;
    for (size_t b = 0; b < c->B; b++)
        for (size_t h = 0; h < c->NH; h++)
            for (size_t t = 0; t < c->Tq; t++) {
                const size_t l = (b * c->NH + h) * c->Tq + t;
                if (e->lse[l] != -HUGE_VAL)
                    continue;
                const double *row = out + ((b * c->Tq + t) * c->NH + h) * pr->hs_v;
                int zero = lse == NULL || lse[l] == -HUGE_VAL;
                for (size_t i = 0; i < pr->hs_v; i++)
                    zero &= row[i] == 0.0;
                if (!zero && bad++ == 0)
                    expect_true(0, "%s: row b %zu h %zu t %zu sees no key: out[0] %g, lse %g "
                                "(want 0 and -inf)",
                                what, b, h, t, row[0], lse != NULL ? lse[l] : 0.0);
            }
    expect_true(bad <= 1, "%s: %zu rows without keys are not 0 / -inf", what, bad);
}

static void check_backward(const test_prec *p, const problem *pr, const expected *e,
                           const outputs *o, worsts *w, const char *what)
{
    const spec *c = &pr->c;
    const double tol = grad_tol(p, c);
    double *dQ = dense_of(p, o->dQ, c->B * c->Tq, pr->ldq, pr->wq);
    double *dK = dense_of(p, o->dK, c->B * c->Tk, pr->ldk, pr->wk);
    double *dV = dense_of(p, o->dV, c->B * c->Tk, pr->ldv, pr->wv);
    const double largest = fmax(max_abs(e->dQ, e->n_dq),
                                fmax(max_abs(e->dK, e->n_dk), max_abs(e->dV, e->n_dv)));
    expect_within(&w->grads, sdpa_grad_residual(dQ, e->dQ, e->n_dq, largest), tol,
                  "%s: dQ", what);
    expect_within(&w->grads, sdpa_grad_residual(dK, e->dK, e->n_dk, largest), tol,
                  "%s: dK", what);
    expect_within(&w->grads, sdpa_grad_residual(dV, e->dV, e->n_dv, largest), tol,
                  "%s: dV", what);
    expect_true(gaps_intact(p, o->dQ, o->dQ0, c->B * c->Tq, pr->ldq, pr->wq) &&
                    gaps_intact(p, o->dK, o->dK0, c->B * c->Tk, pr->ldk, pr->wk) &&
                    gaps_intact(p, o->dV, o->dV0, c->B * c->Tk, pr->ldv, pr->wv),
                "%s: the gaps between the rows of dQ, dK or dV were written", what);
    /* rows of dK, dV of keys j >= L_b: exactly 0 */
    size_t nonzero = 0;
    for (size_t b = 0; b < c->B; b++)
        for (size_t j = length_of(pr, b); j < c->Tk; j++) {
            for (size_t i = 0; i < pr->wk; i++)
                nonzero += dK[(b * c->Tk + j) * pr->wk + i] != 0.0;
            for (size_t i = 0; i < pr->wv; i++)
                nonzero += dV[(b * c->Tk + j) * pr->wv + i] != 0.0;
        }
    expect_true(nonzero == 0, "%s: %zu entries of dK, dV rows of keys >= L_b are not 0", what,
                nonzero);
    /* dQ rows of queries without a visible, unmasked key: exactly 0 */
    nonzero = 0;
    for (size_t b = 0; b < c->B; b++)
        for (size_t h = 0; h < c->NH; h++)
            for (size_t t = 0; t < c->Tq; t++)
                if (e->lse[(b * c->NH + h) * c->Tq + t] == -HUGE_VAL)
                    for (size_t i = 0; i < c->hs; i++)
                        nonzero += dQ[((b * c->Tq + t) * c->NH + h) * c->hs + i] != 0.0;
    expect_true(nonzero == 0, "%s: %zu entries of dQ rows without keys are not 0", what,
                nonzero);
}

/* ---- plans on engines ------------------------------------------------------------------ */

typedef struct engine {
    const char *name;
    unsigned threads; /* the argument of attn_plan_set_threads; AUTO: not called */
} engine;

static const engine engines[] = {
    {"BLAS threads (0)", 0},
    {"1 own thread", 1},
    {"2 own threads", 2},
};

static const char *describe(char *buf, size_t size, const test_prec *p, const spec *c,
                            const char *engine_name, const char *path)
{
    snprintf(buf, size,
             "%s %s \"%s\" (B %zu NH %zu NH_kv %zu Tq %zu Tk %zu hs %zu hs_v %zu scale %g "
             "causal %d window %zu pad %zu fused %d mask %d lengths %d), %s, %s",
             attn_simd_name(), p->name, c->name, c->B, c->NH, c->NH_kv, c->Tq, c->Tk, c->hs,
             c->hs_v, c->scale, c->causal != 0, c->window, c->pad, c->fused, (int)c->mask,
             c->lengths != NULL, path, engine_name);
    return buf;
}

/* a plan for pr with flags (plus the case's causal), on `threads`; NULL
 * (the failure recorded) if it cannot be had */
static attn_plan *problem_plan(const test_prec *p, const problem *pr, unsigned flags,
                               unsigned threads, const char *what)
{
    const attn_sdpa_shape s = shape_of(pr);
    attn_plan *plan = NULL;
    attn_status st =
        attn_sdpa_plan_create(&plan, p->dtype, &s, pr->c.scale, flags | pr->c.causal, pr->c.window);
    if (st != ATTN_OK) {
        expect_true(0, "%s: attn_sdpa_plan_create: %s", what, attn_status_string(st));
        return NULL;
    }
    sdpa_keep_plan(plan);
    if (threads != ATTN_THREADS_AUTO) {
        st = attn_plan_set_threads(plan, threads);
        expect_true(st == ATTN_OK, "%s: attn_plan_set_threads(%u): %s", what, threads,
                    attn_status_string(st));
        unsigned got = 12345;
        st = attn_plan_get_threads(plan, &got);
        expect_true(st == ATTN_OK && got == threads, "%s: attn_plan_get_threads: %s, %u", what,
                    attn_status_string(st), got);
    }
    return plan;
}

/* the bytes of two runs' outputs equal */
static int outputs_identical(const test_prec *p, const problem *pr, const outputs *a,
                             const outputs *b, int backward)
{
    int same = memcmp(a->out, b->out, pr->no * p->size) == 0 &&
               memcmp(a->lse, b->lse, pr->nl * p->size) == 0;
    if (backward)
        same = same && memcmp(a->dQ, b->dQ, pr->nq * p->size) == 0 &&
               memcmp(a->dK, b->dK, pr->nk * p->size) == 0 &&
               memcmp(a->dV, b->dV, pr->nv * p->size) == 0;
    return same;
}

/* whether this run uses precision pi (0 f32, 1 f64) for its n-th case */
static int precision_runs(size_t pi, size_t n)
{
    return !under_valgrind || pi == n % 2;
}

/* whether this run uses engine k */
static int engine_runs(size_t k)
{
    return !under_valgrind || k != 1;
}

/* One case on every engine in both precisions (see 1. at the top). */
static void run_case(const spec *c, test_rng *rng, worsts w[2])
{
    static size_t cases_run;
    const size_t n = cases_run++;
    const problem pr = problem_make(c, rng);
    const expected e = expected_make(&pr, c->backward);
    const test_prec *precs[2] = {&test_prec_f32, &test_prec_f64};
    for (size_t pi = 0; pi < 2; pi++) {
        if (!precision_runs(pi, n))
            continue;
        const test_prec *p = precs[pi];
        const typed t = typed_make(p, &pr);
        outputs kept[N_OF(engines)];
        int ran[N_OF(engines)] = {0};
        for (size_t k = 0; k < N_OF(engines); k++) {
            if (!engine_runs(k))
                continue;
            char what[640];
            describe(what, sizeof what, p, c, engines[k].name,
                     c->backward ? "training plan" : "training plan, forward only");
            attn_plan *plan = problem_plan(p, &pr, 0u, engines[k].threads, what);
            if (plan == NULL)
                continue;
            outputs o = outputs_make(p, &pr, c->backward);
            const sdpa_io io = io_of(&pr, &t, &o, 1);
            const attn_status st = sdpa_forward(p, plan, &io);
            const attn_status sb = st == ATTN_OK && c->backward
                                       ? sdpa_backward(p, plan, &io, t.dout, o.dQ, o.dK, o.dV)
                                       : ATTN_OK;
            sdpa_drop_plan(plan);
            expect_true(st == ATTN_OK, "%s: forward: %s", what, attn_status_string(st));
            if (st != ATTN_OK)
                continue;
            check_forward(p, &pr, &e, &o, 1, &w[pi], what);
            if (c->backward) {
                expect_true(sb == ATTN_OK, "%s: backward: %s", what, attn_status_string(sb));
                if (sb != ATTN_OK)
                    continue;
                check_backward(p, &pr, &e, &o, &w[pi], what);
            }
            kept[k] = o;
            ran[k] = 1;
        }
        char what[640];
        describe(what, sizeof what, p, c, "1 and 2 own threads", "training plan");
        if (ran[1] && ran[2])
            expect_true(outputs_identical(p, &pr, &kept[1], &kept[2], c->backward),
                        "%s: the outputs differ (attn.h: the same bytes for every count)", what);
        /* an inference plan's forward, without lse */
        if (under_valgrind)
            continue;
        describe(what, sizeof what, p, c, engines[2].name, "ATTN_INFERENCE plan, lse NULL");
        attn_plan *plan = problem_plan(p, &pr, ATTN_INFERENCE, 2, what);
        if (plan != NULL) {
            outputs o = outputs_make(p, &pr, 0);
            const sdpa_io io = io_of(&pr, &t, &o, 0);
            const attn_status st = sdpa_forward(p, plan, &io);
            sdpa_drop_plan(plan);
            expect_true(st == ATTN_OK, "%s: forward: %s", what, attn_status_string(st));
            if (st == ATTN_OK) {
                check_forward(p, &pr, &e, &o, 0, &w[pi], what);
                expect_true(sentinel_intact(o.lse, pr.nl * p->size),
                            "%s: lse NULL, yet the lse buffer changed", what);
            }
        }
    }
}

static void run_cases(const spec *cases, size_t n, unsigned long seed, const char *what)
{
    test_enter();
    test_rng rng;
    rng_seed(&rng, seed);
    worsts w[2];
    memset(w, 0, sizeof w);
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i], &rng, w);
    char line[128];
    const char *names[2] = {"f32", "f64"};
    for (int pi = 0; pi < 2; pi++) {
        snprintf(line, sizeof line, "%s %s out", what, names[pi]);
        report(line, &w[pi].out);
        snprintf(line, sizeof line, "%s %s lse", what, names[pi]);
        report(line, &w[pi].lse);
        if (w[pi].grads.tol > 0.0) {
            snprintf(line, sizeof line, "%s %s gradients", what, names[pi]);
            report(line, &w[pi].grads);
        }
    }
    test_leave(what);
}

/* ---- 1. the cases ------------------------------------------------------------------------ */

#define C ATTN_CAUSAL
static const size_t len_decode[3] = {200, 17, 1};
static const size_t len_mixed[4] = {100, 57, 0, 20};
static const size_t len_short[2] = {3, 40};
static const size_t len_keypad[3] = {60, 33, 60};

/* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
 * lengths, backward, finite_slots */
static const spec heads_cases[] = {
    {"MHA", 2, 3, 3, 37, 37, 16, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"MHA causal, scale 0.3", 2, 3, 3, 37, 37, 16, 0, 0.3, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"GQA 8/2 causal", 2, 8, 2, 70, 70, 24, 0, 0.0, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"GQA 6/3, Tq < Tk", 1, 6, 3, 21, 90, 8, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"MQA causal, Tq < Tk, scale -1", 3, 4, 1, 9, 150, 32, 0, -1.0, C, 0, 0, 0, MASK_NONE, NULL,
     1, 0},
    {"MQA decode Tq 1", 2, 8, 1, 1, 77, 16, 0, 0.0, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"decode Tq 1 with lengths", 3, 4, 2, 1, 200, 64, 0, 0.0, C, 0, 0, 0, MASK_NONE, len_decode,
     1, 0},
    {"GQA decode Tq 1, hs 20, hs_v 13, lengths", 3, 6, 3, 1, 203, 20, 13, 0.0, C, 0, 0, 0,
     MASK_NONE, len_decode, 1, 0},
    {"causal Tq > Tk (leading queries see nothing)", 1, 2, 1, 8, 5, 8, 0, 0.0, C, 0, 0, 0,
     MASK_NONE, NULL, 1, 0},
};

static const spec window_length_cases[] = {
    {"sliding window 64, causal", 2, 4, 2, 300, 300, 40, 0, 0.0, C, 64, 0, 0, MASK_NONE, NULL,
     1, 0},
    {"window 20 without causal, Tq < Tk", 1, 2, 2, 50, 80, 16, 0, 0.0, 0, 20, 0, 0, MASK_NONE,
     NULL, 1, 0},
    {"window 1, causal (the diagonal alone)", 1, 2, 1, 20, 20, 8, 0, 0.0, C, 1, 0, 0, MASK_NONE,
     NULL, 1, 0},
    {"window Tq + Tk + 5 (beyond every key)", 1, 2, 1, 20, 30, 8, 0, 0.0, C, 55, 0, 0,
     MASK_NONE, NULL, 1, 0},
    {"lengths (one 0), NaN slots", 4, 4, 2, 20, 100, 16, 0, 0.0, 0, 0, 0, 0, MASK_NONE,
     len_mixed, 1, 0},
    {"lengths (one 0), NaN slots, causal", 4, 4, 2, 20, 100, 16, 0, 0.0, C, 0, 0, 0, MASK_NONE,
     len_mixed, 1, 0},
    {"lengths below Tq, causal", 2, 2, 2, 8, 40, 8, 0, 0.0, C, 0, 0, 0, MASK_NONE, len_short, 1,
     0},
    {"lengths, causal, window 7", 4, 2, 1, 12, 100, 16, 0, 0.0, C, 7, 0, 0, MASK_NONE, len_mixed,
     1, 0},
};

/* window values beyond PTRDIFF_MAX (attn.h: any window > 0; one beyond
 * every key hides nothing) */
static const spec huge_window_cases[] = {
    {"window SIZE_MAX (beyond every key)", 1, 2, 1, 20, 30, 8, 0, 0.0, C, SIZE_MAX, 0, 0,
     MASK_NONE, NULL, 1, 0},
    {"window 2^63, not causal", 1, 2, 1, 20, 30, 8, 0, 0.0, 0, (size_t)1 << 63, 0, 0, MASK_NONE,
     NULL, 1, 0},
};

static const spec mask_cases[] = {
    {"mask full, padded rows", 2, 4, 2, 33, 45, 16, 0, 0.0, C, 0, 0, 0, MASK_FULL, NULL, 1, 0},
    {"mask full, not causal", 2, 2, 2, 17, 29, 8, 0, 0.5, 0, 0, 0, 0, MASK_FULL, NULL, 1, 0},
    {"mask key padding (ld 0, sh 0), lengths", 3, 4, 2, 20, 60, 16, 0, 0.0, 0, 0, 0, 0,
     MASK_KEYPAD, len_keypad, 1, 0},
    {"mask shared over heads (sh 0), causal", 2, 4, 1, 30, 30, 8, 0, 0.0, C, 0, 0, 0, MASK_HEADS,
     NULL, 1, 0},
    {"mask shared over the batch (sb 0), window 50", 2, 2, 2, 25, 140, 16, 0, 0.0, 0, 50, 0, 0,
     MASK_BATCH, NULL, 1, 0},
    {"mask one row (every stride 0)", 2, 3, 3, 10, 70, 16, 0, 0.0, 0, 0, 0, 0, MASK_ROW, NULL, 1,
     0},
};

static const spec layout_cases[] = {
    {"hs_v 40 > hs 24, strided, scale 0.2", 2, 4, 2, 40, 50, 24, 40, 0.2, C, 0, 5, 0, MASK_NONE,
     NULL, 1, 0},
    {"hs_v 8 < hs 40, strided", 1, 6, 3, 17, 33, 40, 8, 0.0, 0, 0, 3, 0, MASK_NONE, NULL, 1, 0},
    {"fused QKV, ldo padded, causal", 2, 6, 2, 64, 64, 16, 0, 0.0, C, 0, 4, 1, MASK_NONE, NULL,
     1, 0},
    {"fused QKV, MHA, hs_v 24", 1, 4, 4, 150, 150, 40, 24, 0.0, 0, 0, 0, 1, MASK_NONE, NULL, 1,
     0},
    {"fused QKV, mask full", 2, 4, 2, 40, 40, 8, 0, 0.0, C, 0, 1, 1, MASK_FULL, NULL, 1, 0},
};

/* smaller in unoptimized and sanitizer builds and under valgrind (slow_run) */
static const spec large_cases_small[] = {
    {"large causal MQA", 1, 2, 1, 300, 300, 72, 0, 0.0, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"large, Tq < Tk, more than one key block", 1, 2, 2, 130, 600, 40, 0, 0.0, 0, 0, 0, 0,
     MASK_NONE, NULL, 1, 0},
};
static const spec large_cases[] = {
    {"large causal MQA", 1, 2, 1, 700, 700, 72, 0, 0.0, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"large, Tq < Tk", 2, 2, 2, 333, 650, 40, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"large, one (sequence, head): split backward", 1, 1, 1, 129, 1100, 64, 0, 0.0, C, 0, 0, 0,
     MASK_NONE, NULL, 1, 0},
    {"large, mask full, strided", 1, 2, 1, 257, 513, 64, 0, 0.0, C, 0, 3, 0, MASK_FULL, NULL, 1,
     0},
    {"large GQA, window 300, lengths", 2, 4, 2, 200, 700, 40, 0, 0.0, C, 300, 0, 0, MASK_NONE,
     (const size_t[]){700, 555}, 1, 0},
};
#undef C

static void heads(void **state)
{
    (void)state;
    run_cases(heads_cases, N_OF(heads_cases), 1101, "heads");
}

static void windows_and_lengths(void **state)
{
    (void)state;
    run_cases(window_length_cases, N_OF(window_length_cases), 1102, "windows and lengths");
}

static void huge_windows(void **state)
{
    (void)state;
    run_cases(huge_window_cases, N_OF(huge_window_cases), 1106, "huge windows");
}

static void masks(void **state)
{
    (void)state;
    run_cases(mask_cases, N_OF(mask_cases), 1103, "masks");
}

static void layouts(void **state)
{
    (void)state;
    run_cases(layout_cases, N_OF(layout_cases), 1104, "layouts");
}

/* whether code runs many times slower than a Release build: a slow build,
 * or valgrind (detected through its header, or the libraries it preloads) */
static int slow_run(void)
{
#ifdef SDPA_SLOW_BUILD
    return 1;
#else
    return under_valgrind;
#endif
}

static void large_shapes(void **state)
{
    (void)state;
    if (slow_run())
        run_cases(large_cases_small, N_OF(large_cases_small), 1105, "large shapes (small set)");
    else
        run_cases(large_cases, N_OF(large_cases), 1105, "large shapes");
}

/* ---- 2. finite differences -------------------------------------------------------------- */

/* L = sum(out * dout) by the library's f64 forward on the typed inputs */
static double loss_of(attn_plan *plan, const problem *pr, const typed *t, outputs *o)
{
    const sdpa_io io = io_of(pr, t, o, 0);
    const attn_status st = sdpa_forward(&test_prec_f64, plan, &io);
    check_true(st == ATTN_OK, "finite differences: forward: %s", attn_status_string(st));
    const double *out = o->out, *dout = t->dout;
    double L = 0.0;
    for (size_t r = 0; r < pr->c.B * pr->c.Tq; r++)
        for (size_t i = 0; i < pr->wo; i++)
            L += out[r * pr->ldo + i] * dout[r * pr->ldo + i];
    return L;
}

static void finite_differences(void **state)
{
    (void)state;
    static const size_t lengths[2] = {6, 4};
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"GQA, lengths, mask, causal", 2, 4, 2, 3, 6, 4, 3, 0.7, ATTN_CAUSAL, 0, 1, 0, MASK_FULL,
         lengths, 1, 1},
        {"MQA, window 2", 1, 3, 1, 5, 5, 5, 0, 0.0, 0, 2, 0, 0, MASK_NONE, NULL, 1, 1},
        {"key padding, Tq < Tk", 2, 2, 2, 2, 7, 3, 2, 0.0, 0, 0, 0, 0, MASK_KEYPAD, NULL, 1, 1},
    };
    const test_prec *p = &test_prec_f64;
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1201);
    check_worst w = {0.0, 0.0};
    for (size_t ci = 0; ci < N_OF(cases); ci++) {
        const spec *c = &cases[ci];
        problem pr = problem_make(c, &rng);
        if (c->mask == MASK_KEYPAD) /* keep every row of this small case visible */
            for (size_t j = 0; j + 1 < c->Tk; j++)
                pr.mask[(c->B - 1) * pr.mask_sb + j] = rounded_normal(&rng);
        typed t = typed_make(p, &pr);
        char what[640];
        describe(what, sizeof what, p, c, "1 own thread", "finite differences");
        attn_plan *train = problem_plan(p, &pr, 0u, 1, what);
        attn_plan *infer = problem_plan(p, &pr, ATTN_INFERENCE, 0, what);
        if (train == NULL || infer == NULL)
            continue;
        outputs o = outputs_make(p, &pr, 1);
        const sdpa_io io = io_of(&pr, &t, &o, 1);
        check_true(sdpa_forward(p, train, &io) == ATTN_OK &&
                       sdpa_backward(p, train, &io, t.dout, o.dQ, o.dK, o.dV) == ATTN_OK,
                   "%s: forward and backward", what);
        /* gradients of every element of Q, K, V (at their strided places) */
        struct {
            const char *name;
            size_t at, rows, ld, width;
            const double *g;
        } arrays[3] = {
            {"dQ", pr.q_at, c->B * c->Tq, pr.ldq, pr.wq, o.dQ},
            {"dK", pr.k_at, c->B * c->Tk, pr.ldk, pr.wk, o.dK},
            {"dV", pr.v_at, c->B * c->Tk, pr.ldv, pr.wv, o.dV},
        };
        double largest = 0.0;
        for (size_t a = 0; a < 3; a++)
            for (size_t r = 0; r < arrays[a].rows; r++)
                for (size_t i = 0; i < arrays[a].width; i++)
                    largest = fmax(largest, fabs(arrays[a].g[r * arrays[a].ld + i]));
        outputs scratch = outputs_make(p, &pr, 0);
        double *x = t.in;
        for (size_t a = 0; a < 3; a++) {
            double worst_err = 0.0, gmax = 0.0;
            for (size_t r = 0; r < arrays[a].rows; r++)
                for (size_t i = 0; i < arrays[a].width; i++)
                    gmax = fmax(gmax, fabs(arrays[a].g[r * arrays[a].ld + i]));
            for (size_t r = 0; r < arrays[a].rows; r++)
                for (size_t i = 0; i < arrays[a].width; i++) {
                    const size_t k = arrays[a].at + r * arrays[a].ld + i;
                    const double x0 = x[k];
                    x[k] = x0 + FD_STEP;
                    const double hp = x[k] - x0;
                    const double Lp = loss_of(infer, &pr, &t, &scratch);
                    x[k] = x0 - FD_STEP;
                    const double hm = x0 - x[k];
                    const double Lm = loss_of(infer, &pr, &t, &scratch);
                    x[k] = x0;
                    const double fd = (Lp - Lm) / (hp + hm);
                    worst_err = fmax(worst_err, fabs(fd - arrays[a].g[r * arrays[a].ld + i]));
                }
            const double res = worst_err / fmax(gmax, 0.01 * largest);
            expect_within(&w, res, FD_TOL, "%s: %s against central differences", what,
                          arrays[a].name);
        }
    }
    report("f64 finite differences", &w);
    test_leave("finite differences");
}

/* ---- 3. the decode split ------------------------------------------------------------------ */

/* A copy of pr with its one sequence replicated `copies` times. */
static problem replicated(const problem *pr, size_t copies, test_rng *rng)
{
    spec c = pr->c;
    c.B = copies;
    size_t *lengths = NULL;
    if (pr->lengths != NULL) {
        lengths = talloc(copies * sizeof(size_t));
        for (size_t b = 0; b < copies; b++)
            lengths[b] = pr->lengths[0];
        c.lengths = lengths;
    }
    problem r = problem_make(&c, rng); /* the layout; values copied below */
    for (size_t b = 0; b < copies; b++) {
        memcpy(r.in + r.q_at + b * c.Tq * r.ldq, pr->in + pr->q_at, pr->nq * sizeof(double));
        memcpy(r.in + r.k_at + b * c.Tk * r.ldk, pr->in + pr->k_at, pr->nk * sizeof(double));
        memcpy(r.in + r.v_at + b * c.Tk * r.ldv, pr->in + pr->v_at, pr->nv * sizeof(double));
        memcpy(r.dout + b * c.Tq * r.ldo, pr->dout, pr->no * sizeof(double));
    }
    return r;
}

static void decode_split(void **state)
{
    (void)state;
    static const size_t length[1] = {3333}, length_short[1] = {1333};
    static const spec cases_short[] = { /* under valgrind */
        {"decode split, Tk 2000", 1, 4, 1, 1, 2000, 64, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1,
         0},
        {"decode split, length 1333 of 2000", 1, 4, 1, 1, 2000, 64, 0, 0.0, ATTN_CAUSAL, 0, 0, 0,
         MASK_NONE, length_short, 1, 0},
        {"decode split, Tq 4 causal, Tk 1500", 1, 2, 1, 4, 1500, 40, 0, 0.0, ATTN_CAUSAL, 0, 0,
         0, MASK_NONE, NULL, 1, 0},
    };
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"decode split, Tk 5000", 1, 4, 1, 1, 5000, 64, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1,
         0},
        {"decode split, length 3333 of 5000", 1, 4, 1, 1, 5000, 64, 0, 0.0, ATTN_CAUSAL, 0, 0, 0,
         MASK_NONE, length, 1, 0},
        {"decode split, Tq 4 causal, Tk 3000", 1, 2, 1, 4, 3000, 40, 0, 0.0, ATTN_CAUSAL, 0, 0,
         0, MASK_NONE, NULL, 1, 0},
        {"decode split, GQA 4/2, Tq 2, window 1000", 1, 4, 2, 2, 2100, 64, 0, 0.0, ATTN_CAUSAL,
         1000, 0, 0, MASK_NONE, NULL, 1, 0},
        {"decode split, GQA 6/3, hs 20, hs_v 13, length 3333 of 5000", 1, 6, 3, 1, 5000, 20, 13,
         0.0, ATTN_CAUSAL, 0, 0, 0, MASK_NONE, length, 1, 0},
    };
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1301);
    worsts w[2];
    memset(w, 0, sizeof w);
    check_worst w_split = {0.0, 0.0};
    const spec *list = under_valgrind ? cases_short : cases;
    const size_t n_list = under_valgrind ? N_OF(cases_short) : N_OF(cases);
    for (size_t ci = 0; ci < n_list; ci++) {
        run_case(&list[ci], &rng, w); /* against the reference, every engine */
        const problem pr = problem_make(&list[ci], &rng);
        const problem rep = replicated(&pr, 8, &rng);
        const test_prec *precs[2] = {&test_prec_f32, &test_prec_f64};
        for (size_t pi = 0; pi < 2; pi++) {
            if (!precision_runs(pi, ci))
                continue;
            const test_prec *p = precs[pi];
            const double tol = forward_tol(p, &pr.c);
            for (size_t k = 0; k < N_OF(engines); k++) {
                if (!engine_runs(k))
                    continue;
                char what[640];
                describe(what, sizeof what, p, &pr.c, engines[k].name,
                         "split (B 1) against unsplit (B 8)");
                attn_plan *one = problem_plan(p, &pr, ATTN_INFERENCE, engines[k].threads, what);
                attn_plan *eight =
                    problem_plan(p, &rep, ATTN_INFERENCE, engines[k].threads, what);
                if (one == NULL || eight == NULL)
                    continue;
                const typed t1 = typed_make(p, &pr), t8 = typed_make(p, &rep);
                outputs o1 = outputs_make(p, &pr, 0), o8 = outputs_make(p, &rep, 0);
                const sdpa_io io1 = io_of(&pr, &t1, &o1, 1), io8 = io_of(&rep, &t8, &o8, 1);
                const attn_status s1 = sdpa_forward(p, one, &io1);
                const attn_status s8 = sdpa_forward(p, eight, &io8);
                sdpa_drop_plan(one);
                sdpa_drop_plan(eight);
                expect_true(s1 == ATTN_OK && s8 == ATTN_OK, "%s: %s, %s", what,
                            attn_status_string(s1), attn_status_string(s8));
                if (s1 != ATTN_OK || s8 != ATTN_OK)
                    continue;
                double v_scale = 0.0;
                for (size_t i = 0; i < pr.nv; i++)
                    if (isfinite(pr.in[pr.v_at + i]))
                        v_scale = fmax(v_scale, fabs(pr.in[pr.v_at + i]));
                const double *out1 = prec_doubles(p, o1.out, pr.no);
                const double *lse1 = prec_doubles(p, o1.lse, pr.nl);
                const double *out8 = prec_doubles(p, o8.out, rep.no);
                const double *lse8 = prec_doubles(p, o8.lse, rep.nl);
                for (size_t b = 0; b < 8; b++) {
                    expect_within(&w_split,
                                  residual_scaled(out1, out8 + b * pr.no, pr.no, v_scale), tol,
                                  "%s: out of copy %zu", what, b);
                    expect_within(&w_split,
                                  sdpa_residual_lse(lse1, lse8 + b * pr.nl, pr.nl), tol,
                                  "%s: lse of copy %zu", what, b);
                }
            }
        }
    }
    for (int pi = 0; pi < 2; pi++) {
        report(pi ? "decode f64 out" : "decode f32 out", &w[pi].out);
        report(pi ? "decode f64 gradients" : "decode f32 gradients", &w[pi].grads);
    }
    report("decode split against unsplit (both precisions)", &w_split);
    test_leave("decode split");
}

/* ---- 4. NaN confinement -------------------------------------------------------------------- */

static void nan_confinement(void **state)
{
    (void)state;
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"NaN in K, V and Q, causal", 2, 4, 2, 300, 300, 16, 0, 0.0, ATTN_CAUSAL, 0, 0, 0,
         MASK_NONE, NULL, 0, 0},
        {"NaN in K, V and Q, causal, Tq < Tk, strided", 2, 4, 1, 40, 700, 24, 0, 0.0,
         ATTN_CAUSAL, 0, 2, 0, MASK_NONE, NULL, 0, 0},
        {"NaN in K, V and Q, causal decode split", 1, 2, 1, 4, 3000, 40, 0, 0.0, ATTN_CAUSAL, 0,
         0, 0, MASK_NONE, NULL, 0, 0},
        {"NaN in K, V and Q, causal, one head", 1, 1, 1, 200, 200, 16, 0, 0.0, ATTN_CAUSAL, 0, 0,
         0, MASK_NONE, NULL, 0, 0},
    };
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1401);
    worsts w[2];
    memset(w, 0, sizeof w);
    const test_prec *precs[2] = {&test_prec_f32, &test_prec_f64};
    for (size_t ci = 0; ci < N_OF(cases); ci++) {
        const spec *c = &cases[ci];
        problem pr = problem_make(c, &rng);
        /* key positions: p = Tk - Tq + t; a NaN at key j reaches queries t with p >= j */
        const size_t first_p = c->Tk - c->Tq;
        const size_t jk = first_p + c->Tq / 2 + 1, jv = first_p + c->Tq / 4 + 1;
        const size_t gk = c->NH_kv - 1, gv = 0;
        /* sequence 0: K row jk of kv head gk; sequence B-1: V row jv of kv head gv */
        for (size_t i = 0; i < c->hs; i++)
            pr.in[pr.k_at + jk * pr.ldk + gk * c->hs + i] = (double)NAN;
        pr.in[pr.v_at + ((c->B - 1) * c->Tk + jv) * pr.ldv + gv * pr.hs_v + 1] = (double)NAN;
        /* and V of the second key seen by sequence 0's first query, kv head gk:
         * no query before it may multiply it, even by a weight of 0 */
        pr.in[pr.v_at + (first_p + 1) * pr.ldv + gk * pr.hs_v] = (double)NAN;
        /* one query row: sequence B-1, query Tq/3, head NH-1, one element */
        const size_t tq = c->Tq / 3;
        pr.in[pr.q_at + ((c->B - 1) * c->Tq + tq) * pr.ldq + (c->NH - 1) * c->hs + 2] =
            (double)NAN;
        const expected e = expected_make(&pr, 0);
        /* the reference's NaN rows, as attn.h says they must be */
        size_t nan_rows = 0;
        for (size_t l = 0; l < pr.nl; l++)
            nan_rows += isnan(e.lse[l]) != 0;
        const size_t group = c->NH / c->NH_kv;
        const size_t want_nan = group * (c->Tq - (jk - first_p)) + 1;
        check_true(nan_rows == want_nan, "%s: the reference has %zu NaN lse, expected %zu",
                   c->name, nan_rows, want_nan);
        for (size_t pi = 0; pi < 2; pi++) {
            if (!precision_runs(pi, ci))
                continue;
            const test_prec *p = precs[pi];
            const typed t = typed_make(p, &pr);
            for (size_t k = 0; k < N_OF(engines); k++) {
                if (!engine_runs(k))
                    continue;
                char what[640];
                describe(what, sizeof what, p, c, engines[k].name, "NaN confinement");
                attn_plan *plan = problem_plan(p, &pr, ATTN_INFERENCE, engines[k].threads, what);
                if (plan == NULL)
                    continue;
                outputs o = outputs_make(p, &pr, 0);
                const sdpa_io io = io_of(&pr, &t, &o, 1);
                const attn_status st = sdpa_forward(p, plan, &io);
                sdpa_drop_plan(plan);
                expect_true(st == ATTN_OK, "%s: %s", what, attn_status_string(st));
                if (st != ATTN_OK)
                    continue;
                /* NaN matches NaN only: the clean rows must be finite and exact */
                check_forward(p, &pr, &e, &o, 1, &w[pi], what);
                double *out = dense_of(p, o.out, c->B * c->Tq, pr.ldo, pr.wo);
                size_t nan_out = 0, want_out = 0, first = SIZE_MAX;
                for (size_t i = 0; i < e.n_out; i++) {
                    nan_out += isnan(out[i]) != 0;
                    want_out += isnan(e.out[i]) != 0;
                    if (first == SIZE_MAX && (isnan(out[i]) != 0) != (isnan(e.out[i]) != 0))
                        first = i;
                }
                if (first != SIZE_MAX) {
                    const size_t col = first % pr.hs_v, rh = first / pr.hs_v;
                    const size_t h = rh % c->NH, bt = rh / c->NH;
                    expect_true(0,
                                "%s: %zu NaN in out, the reference has %zu; the first "
                                "differing: b %zu h %zu t %zu (position %zu) column %zu, %g "
                                "(reference %g)",
                                what, nan_out, want_out, bt / c->Tq, h, bt % c->Tq,
                                c->Tk - c->Tq + bt % c->Tq, col, out[first], e.out[first]);
                }
            }
        }
    }
    report("NaN confinement f32 out", &w[0].out);
    report("NaN confinement f64 out", &w[1].out);
    test_leave("NaN confinement");
}

/* +inf scores (attn.h: they take the row's weight, shared equally, and lse
 * is +inf), a +inf with a NaN (the row is NaN), rows all -inf: set through
 * the mask, at keys in different key tiles and decode splits, against the
 * reference's special rules (infinities must match exactly). */
static void special_scores(void **state)
{
    (void)state;
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"+inf scores across key tiles", 2, 2, 1, 5, 700, 16, 0, 0.0, 0, 0, 0, 0, MASK_FULL,
         NULL, 0, 0},
        {"+inf scores across decode splits", 1, 2, 1, 1, 3000, 16, 0, 0.0, 0, 0, 0, 0,
         MASK_FULL, NULL, 0, 0},
    };
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1451);
    worsts w[2];
    memset(w, 0, sizeof w);
    const test_prec *precs[2] = {&test_prec_f32, &test_prec_f64};
    for (size_t ci = 0; ci < N_OF(cases); ci++) {
        const spec *c = &cases[ci];
        problem pr = problem_make(c, &rng);
        /* no -inf sprinkled: only the rows below are special */
        for (size_t i = 0; i < pr.n_mask; i++)
            if (pr.mask[i] == -HUGE_VAL)
                pr.mask[i] = 0.5;
        double *row = pr.mask; /* (b 0, h 0, t 0): two +inf, far apart */
        row[3] = HUGE_VAL;
        row[c->Tk - 100] = HUGE_VAL;
        row = pr.mask + pr.mask_sh; /* (b 0, h 1, t 0): one +inf */
        row[c->Tk / 2] = HUGE_VAL;
        if (c->Tq > 1) {
            row = pr.mask + pr.mask_ld; /* (b 0, h 0, t 1): +inf and NaN */
            row[1] = HUGE_VAL;
            row[c->Tk - 2] = (double)NAN;
            row = pr.mask + 2 * pr.mask_ld; /* (b 0, h 0, t 2): NaN and +inf */
            row[5] = (double)NAN;
            row[c->Tk - 7] = HUGE_VAL;
            row = pr.mask + 3 * pr.mask_ld; /* (b 0, h 0, t 3): all -inf */
            for (size_t j = 0; j < c->Tk; j++)
                row[j] = -HUGE_VAL;
        }
        const expected e = expected_make(&pr, 0);
        for (size_t pi = 0; pi < 2; pi++) {
            const test_prec *p = precs[pi];
            const typed t = typed_make(p, &pr);
            for (size_t k = 0; k < N_OF(engines); k++) {
                char what[640];
                describe(what, sizeof what, p, c, engines[k].name, "special scores");
                attn_plan *plan = problem_plan(p, &pr, ATTN_INFERENCE, engines[k].threads, what);
                if (plan == NULL)
                    continue;
                outputs o = outputs_make(p, &pr, 0);
                const sdpa_io io = io_of(&pr, &t, &o, 1);
                const attn_status st = sdpa_forward(p, plan, &io);
                sdpa_drop_plan(plan);
                expect_true(st == ATTN_OK, "%s: %s", what, attn_status_string(st));
                if (st == ATTN_OK)
                    check_forward(p, &pr, &e, &o, 1, &w[pi], what);
            }
        }
    }
    report("special scores f32 out", &w[0].out);
    report("special scores f64 out", &w[1].out);
    test_leave("special scores");
}

/* ---- 5. errors ------------------------------------------------------------------------------ */

/* The shape of the error calls: B 2, NH 4, NH_kv 2, Tq 3, Tk 5, hs 2, hs_v 3. */
enum { E_B = 2, E_NH = 4, E_NHKV = 2, E_TQ = 3, E_TK = 5, E_HS = 2, E_HSV = 3 };
enum {
    N_Q = E_B * E_TQ * E_NH * E_HS,      /* 48 */
    N_K = E_B * E_TK * E_NHKV * E_HS,    /* 40 */
    N_V = E_B * E_TK * E_NHKV * E_HSV,   /* 60 */
    N_O = E_B * E_TQ * E_NH * E_HSV,     /* 72 */
    N_L = E_B * E_NH * E_TQ,             /* 24 */
    N_M = E_B * E_NH * E_TQ * E_TK       /* 120 */
};
enum slot_id { S_Q, S_K, S_V, S_MASK, S_OUT, S_LSE, S_DOUT, S_DQ, S_DK, S_DV, SLOTS };
#define SLOT_ELEMENTS 192

typedef struct arena {
    const test_prec *p;
    unsigned char *base;
    size_t bytes;
    size_t *lengths; /* [0, 1] the call's, [2..] spare */
} arena;

static arena arena_make(const test_prec *p)
{
    arena a = {p, NULL, SLOTS * SLOT_ELEMENTS * p->size, NULL};
    a.base = talloc(a.bytes);
    a.lengths = talloc(8 * sizeof(size_t));
    return a;
}

static void *at(const arena *a, int id, size_t offset)
{
    return a->base + ((size_t)id * SLOT_ELEMENTS + offset) * a->p->size;
}

static const attn_sdpa_shape error_shape = {E_B, E_NH, E_NHKV, E_TQ, E_TK, E_HS, E_HSV};

/* every input and output of an error call */
typedef struct err_call {
    const test_prec *via;
    attn_plan *plan;
    int null_args;
    sdpa_io io;
    const void *dout;
    void *dQ, *dK, *dV;
} err_call;

static err_call err_default(const arena *a, attn_plan *plan)
{
    err_call c;
    memset(&c, 0, sizeof c);
    c.via = a->p;
    c.plan = plan;
    c.io.Q = at(a, S_Q, 0);
    c.io.K = at(a, S_K, 0);
    c.io.V = at(a, S_V, 0);
    c.io.mask = at(a, S_MASK, 0);
    c.io.mask_ld = E_TK;
    c.io.mask_sh = E_TQ * E_TK;
    c.io.mask_sb = E_NH * E_TQ * E_TK;
    c.io.key_lengths = a->lengths;
    c.io.out = at(a, S_OUT, 0);
    c.io.lse = at(a, S_LSE, 0);
    c.dout = at(a, S_DOUT, 0);
    c.dQ = at(a, S_DQ, 0);
    c.dK = at(a, S_DK, 0);
    c.dV = at(a, S_DV, 0);
    return c;
}

/* Fills the arena with the sentinel (and the lengths with valid ones unless
 * the case set them), runs the call and checks status and bytes. */
static void expect_call(const arena *a, const err_call *c, int backward, attn_status want,
                        const char *what, const size_t lengths[2])
{
    sentinel_fill(a->base, a->bytes);
    a->lengths[0] = lengths[0];
    a->lengths[1] = lengths[1];
    const attn_status st = backward
                               ? sdpa_backward(c->via, c->plan, c->null_args ? NULL : &c->io,
                                               c->dout, c->dQ, c->dK, c->dV)
                               : sdpa_forward(c->via, c->plan, c->null_args ? NULL : &c->io);
    const char *fn = backward ? "attn_sdpa_backward" : "attn_sdpa_forward";
    expect_true(st == want, "%s %s, %s: got %s (%d), want %s (%d)", a->p->name, fn, what,
                attn_status_string(st), (int)st, attn_status_string(want), (int)want);
    if (want != ATTN_OK) {
        expect_true(sentinel_intact(a->base, a->bytes), "%s %s, %s: a buffer was modified",
                    a->p->name, fn, what);
        expect_true(a->lengths[0] == lengths[0] && a->lengths[1] == lengths[1],
                    "%s %s, %s: key_lengths modified", a->p->name, fn, what);
    }
}

static const size_t valid_lengths[2] = {5, 3};

#define CALL_CASE(bw, plan_, want, what, ...)                      \
    do {                                                           \
        err_call c_ = err_default(&a, plan_);                      \
        const size_t *len_ = valid_lengths;                        \
        __VA_ARGS__;                                               \
        expect_call(&a, &c_, bw, want, what, len_);                \
    } while (0)
#define FORWARD_CASE(...) CALL_CASE(0, __VA_ARGS__)
#define BACKWARD_CASE(...) CALL_CASE(1, __VA_ARGS__)

static attn_plan *error_plan(const test_prec *p, attn_dtype dtype, unsigned flags)
{
    attn_plan *plan = NULL;
    const attn_status st = attn_sdpa_plan_create(&plan, dtype, &error_shape, 0.0, flags, 0);
    check_true(st == ATTN_OK, "%s: the error cases' plan: %s", p->name, attn_status_string(st));
    return sdpa_keep_plan(plan);
}

/* a projected plan of the same precision or the other */
static attn_plan *projected_plan(attn_dtype dtype)
{
    attn_plan *plan = NULL;
    const attn_status st = attn_plan_create(&plan, dtype, 2, 3, 4, 2, 3, 0.0, 0u);
    check_true(st == ATTN_OK, "a projected plan: %s", attn_status_string(st));
    return sdpa_keep_plan(plan);
}

static attn_dtype other_dtype(const test_prec *p)
{
    return p->dtype == ATTN_F32 ? ATTN_F64 : ATTN_F32;
}

/* the cases both calls share (bw 0 forward, 1 backward) */
static void shared_errors(const arena *arena_ptr, attn_plan *plan, int bw)
{
    const arena a = *arena_ptr;
    const test_prec *p = a.p;
    attn_plan *proj = projected_plan(p->dtype), *proj_other = projected_plan(other_dtype(p));
    static const size_t lengths_zero[2] = {0, 0}, lengths_full[2] = {5, 5};
    static const size_t lengths_over[2] = {5, 6}, lengths_max[2] = {SIZE_MAX, 1};
    CALL_CASE(bw, plan, ATTN_OK, "valid", (void)0);
    CALL_CASE(bw, plan, ATTN_OK, "mask NULL", c_.io.mask = NULL);
    CALL_CASE(bw, plan, ATTN_OK, "key_lengths NULL", c_.io.key_lengths = NULL);
    CALL_CASE(bw, plan, ATTN_OK, "lengths 0 and 0", len_ = lengths_zero);
    CALL_CASE(bw, plan, ATTN_OK, "lengths Tk", len_ = lengths_full);
    CALL_CASE(bw, plan, ATTN_OK, "strides given, dense", c_.io.ldq = E_NH * E_HS;
              c_.io.ldk = E_NHKV * E_HS; c_.io.ldv = E_NHKV * E_HSV; c_.io.ldo = E_NH * E_HSV);
    /* NULL pointers */
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "plan NULL", c_.plan = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "args NULL", c_.null_args = 1);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "Q NULL", c_.io.Q = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "K NULL", c_.io.K = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "V NULL", c_.io.V = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "out NULL", c_.io.out = NULL);
    /* plan kind and precision */
    CALL_CASE(bw, proj, ATTN_ERR_PLAN_KIND, "a projected plan", (void)0);
    CALL_CASE(bw, proj_other, ATTN_ERR_PLAN_KIND,
              "a projected plan of the other precision (PLAN_KIND before DTYPE_MISMATCH)",
              (void)0);
    CALL_CASE(bw, proj, ATTN_ERR_NULL_POINTER, "NULL before PLAN_KIND", c_.io.V = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_DTYPE_MISMATCH, "the other precision's call",
              c_.via = p->other);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "NULL before DTYPE_MISMATCH", c_.via = p->other;
              c_.io.K = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before BAD_STRIDE",
              c_.via = p->other; c_.io.ldq = 1);
    /* strides */
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldq < NH*hs", c_.io.ldq = E_NH * E_HS - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldk < NH_kv*hs", c_.io.ldk = E_NHKV * E_HS - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldv < NH_kv*hs_v", c_.io.ldv = E_NHKV * E_HSV - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldv = NH_kv*hs (< NH_kv*hs_v)",
              c_.io.ldv = E_NHKV * E_HS);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldo < NH*hs_v", c_.io.ldo = E_NH * E_HSV - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_ld < Tk", c_.io.mask_ld = E_TK - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_sh < (Tq-1)*mask_ld + Tk",
              c_.io.mask_sh = (E_TQ - 1) * E_TK + E_TK - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_sb < (NH-1)*mask_sh + one head",
              c_.io.mask_sb = (E_NH - 1) * E_TQ * E_TK + E_TQ * E_TK - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_ld 0, mask_sh < Tk", c_.io.mask_ld = 0;
              c_.io.mask_sh = E_TK - 1; c_.io.mask_sb = E_NH * E_TK);
    CALL_CASE(bw, plan, ATTN_OK, "mask_ld 0, mask_sh = Tk", c_.io.mask_ld = 0;
              c_.io.mask_sh = E_TK; c_.io.mask_sb = E_NH * E_TK);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_ld 0, mask_sh Tk, mask_sb < NH*Tk",
              c_.io.mask_ld = 0; c_.io.mask_sh = E_TK; c_.io.mask_sb = E_NH * E_TK - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_sh 0, mask_sb < one head", c_.io.mask_sh = 0;
              c_.io.mask_sb = E_TQ * E_TK - 1);
    CALL_CASE(bw, plan, ATTN_OK, "mask_sh 0, mask_sb = one head", c_.io.mask_sh = 0;
              c_.io.mask_sb = E_TQ * E_TK);
    CALL_CASE(bw, plan, ATTN_OK, "every mask stride 0", c_.io.mask_ld = 0; c_.io.mask_sh = 0;
              c_.io.mask_sb = 0);
    CALL_CASE(bw, plan, ATTN_OK, "mask_ld Tk + 1, the others exact", c_.io.mask_ld = E_TK + 1;
              c_.io.mask_sh = (E_TQ - 1) * (E_TK + 1) + E_TK;
              c_.io.mask_sb = E_NH * ((E_TQ - 1) * (E_TK + 1) + E_TK));
    /* extents */
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "BAD_STRIDE before SIZE_OVERFLOW",
              c_.io.ldq = 1; c_.io.ldk = SIZE_MAX / 2);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "Q's extent (elements)", c_.io.ldq = SIZE_MAX / 4);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "K's extent (bytes)", c_.io.ldk = SIZE_MAX / 16);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "V's extent (bytes)", c_.io.ldv = SIZE_MAX / 12);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "out's extent (bytes)", c_.io.ldo = SIZE_MAX / 8);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "the mask's extent (mask_sb)",
              c_.io.mask_sb = SIZE_MAX / 2);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "the mask's extent (mask_sh, sb 0)",
              c_.io.mask_sh = SIZE_MAX / 4; c_.io.mask_sb = 0);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "the mask's extent (mask_ld, sh 0, sb 0)",
              c_.io.mask_ld = SIZE_MAX / 2; c_.io.mask_sh = 0; c_.io.mask_sb = 0);
    /* a head's extent (Tq-1)*mask_ld + Tk beyond size_t: a nonzero mask_sh is
     * smaller than it, and BAD_STRIDE comes before SIZE_OVERFLOW */
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE,
              "mask_sh below a head's extent that overflows (BAD_STRIDE before SIZE_OVERFLOW)",
              c_.io.mask_ld = SIZE_MAX / 2; c_.io.mask_sh = E_TQ * E_TK; c_.io.mask_sb = 0);
    /* a row stride beyond BLAS's int (its extent 5 * 2^31 + 8 elements fits): the
     * call cannot be made, and ATTN_ERR_BLAS_RANGE (attn.h's conventions: the
     * BLAS integer range) is what says so; after SIZE_OVERFLOW, before BAD_LENGTH */
    CALL_CASE(bw, plan, ATTN_ERR_BLAS_RANGE, "ldq > INT_MAX", c_.io.ldq = (size_t)INT_MAX + 1);
    CALL_CASE(bw, plan, ATTN_ERR_BLAS_RANGE, "ldv > INT_MAX", c_.io.ldv = (size_t)INT_MAX + 1);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "SIZE_OVERFLOW before BLAS_RANGE",
              c_.io.ldq = (size_t)INT_MAX + 1; c_.io.ldk = SIZE_MAX / 4);
    CALL_CASE(bw, plan, ATTN_ERR_BLAS_RANGE, "BLAS_RANGE before BAD_LENGTH",
              c_.io.ldo = (size_t)INT_MAX + 1; len_ = lengths_over);
    /* lengths */
    CALL_CASE(bw, plan, ATTN_ERR_BAD_LENGTH, "a length Tk + 1", len_ = lengths_over);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_LENGTH, "a length SIZE_MAX", len_ = lengths_max);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "SIZE_OVERFLOW before BAD_LENGTH",
              c_.io.ldq = SIZE_MAX / 4; len_ = lengths_over);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "BAD_STRIDE before BAD_LENGTH",
              c_.io.mask_ld = 1; len_ = lengths_over);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_LENGTH, "BAD_LENGTH before ALIASING",
              c_.io.out = at(&a, S_Q, 0); len_ = lengths_over);
    /* aliasing of out and lse */
    CALL_CASE(bw, plan, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before ALIASING",
              c_.via = p->other; c_.io.out = at(&a, S_Q, 0));
    CALL_CASE(bw, plan, ATTN_OK, "inputs shared (Q == K == V)", c_.io.K = c_.io.Q;
              c_.io.V = c_.io.Q);
    CALL_CASE(bw, plan, ATTN_OK, "mask NULL, out where it would be", c_.io.mask = NULL;
              c_.io.out = at(&a, S_MASK, 0));
    if (!bw) {
        /* in the backward, out is an input: these are the forward's */
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out == Q", c_.io.out = at(&a, S_Q, 0));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out starts at K's last element",
                  c_.io.out = at(&a, S_K, N_K - 1));
        CALL_CASE(bw, plan, ATTN_OK, "out right after K", c_.io.out = at(&a, S_K, N_K));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "V starts at out's last element",
                  c_.io.V = at(&a, S_OUT, N_O - 1));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out == mask", c_.io.out = at(&a, S_MASK, 0));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out inside the mask's extent",
                  c_.io.out = at(&a, S_MASK, N_M - 1));
        CALL_CASE(bw, plan, ATTN_OK, "out right after the mask", c_.io.out = at(&a, S_MASK, N_M));
        CALL_CASE(bw, plan, ATTN_OK, "out right after a one-row mask (strides 0)",
                  c_.io.mask_ld = 0; c_.io.mask_sh = 0; c_.io.mask_sb = 0;
                  c_.io.out = at(&a, S_MASK, E_TK));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out on a one-row mask's last entry",
                  c_.io.mask_ld = 0; c_.io.mask_sh = 0; c_.io.mask_sb = 0;
                  c_.io.out = at(&a, S_MASK, E_TK - 1));
        /* Q strided (ldq 10): its extent is 5*10 + 8 = 58 */
        CALL_CASE(bw, plan, ATTN_OK, "out right after a strided Q", c_.io.ldq = 10;
                  c_.io.out = at(&a, S_Q, 58));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out on a strided Q's last element",
                  c_.io.ldq = 10; c_.io.out = at(&a, S_Q, 57));
        /* out strided (ldo 13): extent 5*13 + 12 = 77 */
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "Q on a strided out's last element",
                  c_.io.ldo = 13; c_.io.Q = at(&a, S_OUT, 76));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse == out", c_.io.lse = at(&a, S_OUT, 0));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse on out's last element",
                  c_.io.lse = at(&a, S_OUT, N_O - 1));
        CALL_CASE(bw, plan, ATTN_OK, "lse right after out", c_.io.lse = at(&a, S_OUT, N_O));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out on lse's last element",
                  c_.io.out = at(&a, S_LSE, N_L - 1));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse == Q", c_.io.lse = at(&a, S_Q, 0));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse inside V", c_.io.lse = at(&a, S_V, 10));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse inside the mask",
                  c_.io.lse = at(&a, S_MASK, 50));
        CALL_CASE(bw, plan, ATTN_OK, "lse NULL", c_.io.lse = NULL);
        /* key_lengths is an input too */
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out on key_lengths",
                  c_.io.out = (void *)a.lengths);
    }
    CALL_CASE(bw, plan, ATTN_OK, "the plan still works after its errors", (void)0);
}

static void forward_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const arena a = arena_make(p);
    attn_plan *plan = error_plan(p, p->dtype, ATTN_CAUSAL);
    attn_plan *inference = error_plan(p, p->dtype, ATTN_INFERENCE);
    shared_errors(&a, plan, 0);
    FORWARD_CASE(inference, ATTN_OK, "an inference plan", (void)0);
    FORWARD_CASE(inference, ATTN_ERR_ALIASING, "an inference plan, out == V",
                 c_.io.out = at(&a, S_V, 0));
    /* the projected calls on an sdpa plan */
    sentinel_fill(a.base, a.bytes);
    attn_status st = p->forward(plan, at(&a, S_Q, 0), at(&a, S_K, 0), at(&a, S_V, 0),
                                at(&a, S_MASK, 0), NULL, at(&a, S_OUT, 0), NULL);
    expect_true(st == ATTN_ERR_PLAN_KIND, "%s attn_forward on an sdpa plan: %s", p->name,
                attn_status_string(st));
    st = p->backward(plan, at(&a, S_Q, 0), at(&a, S_K, 0), at(&a, S_V, 0), at(&a, S_MASK, 0),
                     NULL, at(&a, S_DOUT, 0), at(&a, S_OUT, 0), at(&a, S_DQ, 0), at(&a, S_DK, 0),
                     at(&a, S_DV, 0), NULL);
    expect_true(st == ATTN_ERR_PLAN_KIND, "%s attn_backward on an sdpa plan: %s", p->name,
                attn_status_string(st));
    expect_true(sentinel_intact(a.base, a.bytes), "%s: a projected call on an sdpa plan wrote",
                p->name);
    /* the threads calls work on sdpa plans */
    unsigned threads = 0;
    expect_true(attn_plan_set_threads(plan, 2) == ATTN_OK &&
                    attn_plan_get_threads(plan, &threads) == ATTN_OK && threads == 2,
                "%s: set/get threads on an sdpa plan (%u)", p->name, threads);
    expect_true(attn_plan_set_threads(plan, ATTN_MAX_THREADS + 1) == ATTN_ERR_BAD_THREADS,
                "%s: BAD_THREADS on an sdpa plan", p->name);
    FORWARD_CASE(plan, ATTN_OK, "on 2 own threads", (void)0);
    test_leave("forward errors");
}

static void backward_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const arena a = arena_make(p);
    attn_plan *plan = error_plan(p, p->dtype, ATTN_CAUSAL);
    attn_plan *inference = error_plan(p, p->dtype, ATTN_INFERENCE | ATTN_CAUSAL);
    shared_errors(&a, plan, 1);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "lse NULL", c_.io.lse = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dout NULL", c_.dout = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dQ NULL", c_.dQ = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dK NULL", c_.dK = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dV NULL", c_.dV = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dV NULL before PLAN_KIND",
                  c_.plan = projected_plan(p->dtype); c_.dV = NULL);
    /* INFERENCE_PLAN */
    BACKWARD_CASE(inference, ATTN_ERR_INFERENCE_PLAN, "an inference plan", (void)0);
    BACKWARD_CASE(inference, ATTN_ERR_NULL_POINTER, "NULL before INFERENCE_PLAN",
                  c_.io.lse = NULL);
    BACKWARD_CASE(inference, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before INFERENCE_PLAN",
                  c_.via = p->other);
    BACKWARD_CASE(inference, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before ALIASING",
                  c_.dQ = at(&a, S_Q, 0));
    /* attn.h: "as the forward ...; then INFERENCE_PLAN": read as the projected
     * backward has it, right after DTYPE_MISMATCH (before the strides) */
    BACKWARD_CASE(inference, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before BAD_STRIDE",
                  c_.io.ldq = 1);
    BACKWARD_CASE(inference, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before BAD_LENGTH",
                  len_ = (const size_t[]){6, 6});
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dV on key_lengths", c_.dV = (void *)a.lengths);
    /* aliasing of the gradients */
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ == dK", c_.dK = c_.dQ);
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dK starts at dQ's last element",
                  c_.dK = at(&a, S_DQ, N_Q - 1));
    BACKWARD_CASE(plan, ATTN_OK, "dK right after dQ", c_.dK = at(&a, S_DQ, N_Q));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dV on dK's last element",
                  c_.dV = at(&a, S_DK, N_K - 1));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ on dV's last element",
                  c_.dQ = at(&a, S_DV, N_V - 1));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ == Q", c_.dQ = at(&a, S_Q, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dK == K", c_.dK = at(&a, S_K, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dK overlaps K's end", c_.dK = at(&a, S_K, N_K - 1));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dV == V", c_.dV = at(&a, S_V, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ == out", c_.dQ = at(&a, S_OUT, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dK on lse", c_.dK = at(&a, S_LSE, 3));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dV == dout", c_.dV = at(&a, S_DOUT, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ inside the mask", c_.dQ = at(&a, S_MASK, 70));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ (ldq 9) on dK",
                  c_.io.ldq = 9; c_.dK = at(&a, S_DQ, 5 * 9 + 7));
    BACKWARD_CASE(plan, ATTN_OK, "dK right after a strided dQ (ldq 9)",
                  c_.io.ldq = 9; c_.dK = at(&a, S_DQ, 5 * 9 + 8));
    BACKWARD_CASE(plan, ATTN_OK, "dout == Q (inputs may share)", c_.dout = at(&a, S_Q, 0));
    test_leave("backward errors");
}

/* ---- attn_sdpa_plan_create -------------------------------------------------------------- */

typedef struct create_call {
    int null_plan, null_shape;
    attn_dtype dtype;
    attn_sdpa_shape s;
    double scale;
    unsigned flags;
    size_t window;
} create_call;

static void expect_create(const test_prec *p, create_call c, attn_status want, const char *what)
{
    attn_plan *const untouched = (attn_plan *)&c; /* any address: it must stay */
    attn_plan *plan = untouched;
    const attn_status st = attn_sdpa_plan_create(c.null_plan ? NULL : &plan, c.dtype,
                                                 c.null_shape ? NULL : &c.s, c.scale, c.flags,
                                                 c.window);
    if (st == ATTN_OK && plan != untouched)
        attn_plan_destroy(plan);
    expect_true(st == want, "%s attn_sdpa_plan_create, %s: got %s (%d), want %s (%d)", p->name,
                what, attn_status_string(st), (int)st, attn_status_string(want), (int)want);
    if (want != ATTN_OK)
        expect_true(plan == untouched, "%s attn_sdpa_plan_create, %s: *plan was written",
                    p->name, what);
}

#define CREATE_CASE(want, what, ...)                                                         \
    do {                                                                                     \
        create_call c_ = {0, 0, p->dtype, {2, 4, 2, 3, 5, 2, 3}, 0.0, ATTN_CAUSAL, 0};       \
        __VA_ARGS__;                                                                         \
        expect_create(p, c_, want, what);                                                    \
    } while (0)

static void create_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const size_t big = (size_t)INT_MAX + 1;
    CREATE_CASE(ATTN_OK, "valid", (void)0);
    CREATE_CASE(ATTN_OK, "flags 0", c_.flags = 0);
    CREATE_CASE(ATTN_OK, "ATTN_INFERENCE", c_.flags = ATTN_INFERENCE);
    CREATE_CASE(ATTN_OK, "causal, inference, window 2", c_.flags = ATTN_CAUSAL | ATTN_INFERENCE;
                c_.window = 2);
    CREATE_CASE(ATTN_OK, "window SIZE_MAX", c_.window = SIZE_MAX);
    CREATE_CASE(ATTN_OK, "hs_v 0 (hs)", c_.s.hs_v = 0);
    CREATE_CASE(ATTN_OK, "MQA", c_.s.NH_kv = 1);
    CREATE_CASE(ATTN_OK, "MHA", c_.s.NH_kv = 4);
    CREATE_CASE(ATTN_OK, "Tq > Tk", c_.s.Tq = 9);
    CREATE_CASE(ATTN_ERR_NULL_POINTER, "plan NULL", c_.null_plan = 1);
    CREATE_CASE(ATTN_ERR_NULL_POINTER, "shape NULL", c_.null_shape = 1);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "dtype 0", c_.dtype = (attn_dtype)0);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "dtype 3", c_.dtype = (attn_dtype)3);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "ATTN_MATERIALIZED", c_.flags = ATTN_MATERIALIZED);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "ATTN_TILED", c_.flags = ATTN_TILED | ATTN_INFERENCE);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "flag bit 4", c_.flags = 1u << 4);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "flag bit 31 with known ones",
                c_.flags = ATTN_CAUSAL | ATTN_INFERENCE | (1u << 31));
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "every bit", c_.flags = ~0u);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "B 0", c_.s.B = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "NH 0", c_.s.NH = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "NH_kv 0 (no division by zero)", c_.s.NH_kv = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "Tq 0", c_.s.Tq = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "Tk 0", c_.s.Tk = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "hs 0", c_.s.hs = 0);
    CREATE_CASE(ATTN_ERR_BAD_SHAPE, "NH 4, NH_kv 3", c_.s.NH_kv = 3);
    CREATE_CASE(ATTN_ERR_BAD_SHAPE, "NH_kv > NH", c_.s.NH = 2; c_.s.NH_kv = 4);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "B*NH*Tq", c_.s.B = (size_t)1 << 62; c_.s.NH = 16;
                c_.s.NH_kv = 1);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "Q (B*Tq*NH*hs)", c_.s.B = 1; c_.s.Tq = (size_t)1 << 40;
                c_.s.hs = (size_t)1 << 30);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "K (B*Tk*NH_kv*hs)", c_.s.B = 1;
                c_.s.Tk = (size_t)1 << 40; c_.s.hs = (size_t)1 << 30);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "V (hs_v)", c_.s.hs_v = SIZE_MAX / 2);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "hs > INT_MAX", c_.s.B = 1; c_.s.NH = 1; c_.s.NH_kv = 1;
                c_.s.Tq = 1; c_.s.Tk = 1; c_.s.hs = big; c_.s.hs_v = 1);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "hs_v > INT_MAX", c_.s.B = 1; c_.s.NH = 1; c_.s.NH_kv = 1;
                c_.s.Tq = 1; c_.s.Tk = 1; c_.s.hs = 1; c_.s.hs_v = big);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale NaN", c_.scale = (double)NAN);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale +inf", c_.scale = HUGE_VAL);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale -inf", c_.scale = -HUGE_VAL);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale just above the largest finite",
                c_.scale = nextafter(p->max, HUGE_VAL));
    CREATE_CASE(ATTN_OK, "scale = the largest finite", c_.scale = p->max);
    CREATE_CASE(ATTN_OK, "scale -1 (default)", c_.scale = -1.0);
    CREATE_CASE(ATTN_OK, "scale DBL_MIN", c_.scale = DBL_MIN);
    /* the order */
    CREATE_CASE(ATTN_ERR_NULL_POINTER, "NULL before BAD_DTYPE", c_.null_shape = 1;
                c_.dtype = (attn_dtype)0);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "BAD_DTYPE before BAD_FLAGS", c_.dtype = (attn_dtype)7;
                c_.flags = ~0u);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "BAD_FLAGS before ZERO_DIMENSION", c_.flags = ATTN_TILED;
                c_.s.B = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "ZERO_DIMENSION before BAD_SHAPE", c_.s.Tk = 0;
                c_.s.NH_kv = 3);
    CREATE_CASE(ATTN_ERR_BAD_SHAPE, "BAD_SHAPE before SIZE_OVERFLOW", c_.s.NH_kv = 3;
                c_.s.B = (size_t)1 << 62);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "SIZE_OVERFLOW before BAD_SCALE",
                c_.s.B = (size_t)1 << 62; c_.scale = (double)NAN);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "BLAS_RANGE before BAD_SCALE", c_.s.B = 1; c_.s.NH = 1;
                c_.s.NH_kv = 1; c_.s.Tq = 1; c_.s.Tk = 1; c_.s.hs = big; c_.s.hs_v = 1;
                c_.scale = (double)NAN);
    test_leave("attn_sdpa_plan_create errors");
}

/* Shapes whose products wrap around size_t to small values or 0 (B*NH_kv =
 * 2^64, B*NH_kv*query blocks = 2^64): SIZE_OVERFLOW, not a division by
 * the wrapped count. */
static void create_wrapping_products(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "B 2^62, NH = NH_kv = 4 (B*NH_kv wraps to 0)",
                c_.s.B = (size_t)1 << 62; c_.s.NH = 4; c_.s.NH_kv = 4; c_.s.Tq = 1;
                c_.s.Tk = 1; c_.s.hs = 1; c_.s.hs_v = 0);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "B 2^40, Tq 2^31 (items wrap to 0)",
                c_.s.B = (size_t)1 << 40; c_.s.NH = 1; c_.s.NH_kv = 1;
                c_.s.Tq = (size_t)1 << 31; c_.s.Tk = 1; c_.s.hs = 1; c_.s.hs_v = 0);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "B 2^63 + 1, NH = NH_kv = 2 (B*NH_kv wraps to 2)",
                c_.s.B = ((size_t)1 << 63) + 1; c_.s.NH = 2; c_.s.NH_kv = 2; c_.s.Tq = 1;
                c_.s.Tk = 1; c_.s.hs = 1; c_.s.hs_v = 0);
    /* an invalid shape is refused at once: no work proportional to NH / NH_kv
     * (validation takes microseconds; 0.5 s leaves room for any slow build) */
    const clock_t start = clock();
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "NH 2^30, NH_kv 1, hs 2 (NH*hs > INT_MAX)", c_.s.B = 1;
                c_.s.NH = (size_t)1 << 30; c_.s.NH_kv = 1; c_.s.Tq = 3; c_.s.Tk = 4; c_.s.hs = 2;
                c_.s.hs_v = 0);
    const double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    expect_true(seconds < 0.5, "%s: attn_sdpa_plan_create of NH 2^30 took %.1f s", p->name,
                seconds);
    test_leave("attn_sdpa_plan_create with wrapping products");
}

/* ---- attn_sdpa_* one-shot errors -------------------------------------------------------- */

static void one_shot_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const arena a = arena_make(p);
    struct {
        const char *what;
        attn_status want;
        int null_shape, null_args;
        attn_sdpa_shape s;
        double scale;
        unsigned flags;
        size_t window;
        int change; /* 1 Q NULL, 2 ldk bad, 3 length Tk + 1, 4 out == K, 5 lse == out */
    } cases[] = {
        {"valid", ATTN_OK, 0, 0, error_shape, 0.0, ATTN_CAUSAL, 0, 0},
        {"valid, window 2, lse given", ATTN_OK, 0, 0, error_shape, 0.0, 0, 2, 0},
        {"shape NULL", ATTN_ERR_NULL_POINTER, 1, 0, error_shape, 0.0, 0, 0, 0},
        {"args NULL", ATTN_ERR_NULL_POINTER, 0, 1, error_shape, 0.0, 0, 0, 0},
        {"Q NULL", ATTN_ERR_NULL_POINTER, 0, 0, error_shape, 0.0, 0, 0, 1},
        {"unknown flag", ATTN_ERR_BAD_FLAGS, 0, 0, error_shape, 0.0, 1u << 9, 0, 0},
        {"ATTN_MATERIALIZED", ATTN_ERR_BAD_FLAGS, 0, 0, error_shape, 0.0, ATTN_MATERIALIZED, 0, 0},
        {"Tk 0", ATTN_ERR_ZERO_DIMENSION, 0, 0, {2, 4, 2, 3, 0, 2, 3}, 0.0, 0, 0, 0},
        {"NH_kv 3", ATTN_ERR_BAD_SHAPE, 0, 0, {2, 4, 3, 3, 5, 2, 3}, 0.0, 0, 0, 0},
        {"scale NaN", ATTN_ERR_BAD_SCALE, 0, 0, error_shape, (double)NAN, 0, 0, 0},
        {"ldk < NH_kv*hs", ATTN_ERR_BAD_STRIDE, 0, 0, error_shape, 0.0, 0, 0, 2},
        {"a length Tk + 1", ATTN_ERR_BAD_LENGTH, 0, 0, error_shape, 0.0, 0, 0, 3},
        {"out == K", ATTN_ERR_ALIASING, 0, 0, error_shape, 0.0, 0, 0, 4},
        {"lse == out", ATTN_ERR_ALIASING, 0, 0, error_shape, 0.0, 0, 0, 5},
        {"BAD_SCALE before BAD_STRIDE", ATTN_ERR_BAD_SCALE, 0, 0, error_shape, HUGE_VAL, 0, 0,
         2},
        {"BAD_SHAPE before ALIASING", ATTN_ERR_BAD_SHAPE, 0, 0, {2, 4, 3, 3, 5, 2, 3}, 0.0, 0, 0,
         4},
    };
    for (size_t i = 0; i < N_OF(cases); i++) {
        err_call c = err_default(&a, NULL);
        size_t lengths[2] = {valid_lengths[0], valid_lengths[1]};
        switch (cases[i].change) {
        case 1:
            c.io.Q = NULL;
            break;
        case 2:
            c.io.ldk = 1;
            break;
        case 3:
            lengths[1] = E_TK + 1;
            break;
        case 4:
            c.io.out = at(&a, S_K, 0);
            break;
        case 5:
            c.io.lse = c.io.out;
            break;
        default:
            break;
        }
        sentinel_fill(a.base, a.bytes);
        a.lengths[0] = lengths[0];
        a.lengths[1] = lengths[1];
        const attn_status st =
            sdpa_one_shot(p, cases[i].null_shape ? NULL : &cases[i].s, cases[i].scale,
                          cases[i].flags, cases[i].window, cases[i].null_args ? NULL : &c.io);
        expect_true(st == cases[i].want, "%s attn_sdpa one-shot, %s: got %s, want %s", p->name,
                    cases[i].what, attn_status_string(st), attn_status_string(cases[i].want));
        if (cases[i].want != ATTN_OK)
            expect_true(sentinel_intact(a.base, a.bytes) && a.lengths[0] == lengths[0] &&
                            a.lengths[1] == lengths[1],
                        "%s attn_sdpa one-shot, %s: a buffer was modified", p->name,
                        cases[i].what);
    }
    /* the other precision's one-shot is the other precision's plan: no mismatch exists */
    test_leave("one-shot errors");
}

/* ---- 6. one-shots, strides and scales ---------------------------------------------------- */

static void one_shot_equals_plan(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1601);
    static const size_t lengths[2] = {90, 61};
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"one-shot, GQA, causal, lengths, mask", 2, 4, 2, 30, 90, 24, 0, 0.0, ATTN_CAUSAL, 0, 2,
         0, MASK_FULL, lengths, 1, 0},
        {"one-shot, decode split", 1, 4, 1, 1, 3000, 64, 0, 0.4, 0, 0, 0, 0, MASK_NONE, NULL, 1,
         0},
        {"one-shot, fused, window", 1, 2, 2, 140, 140, 16, 0, 0.0, ATTN_CAUSAL, 33, 0, 1,
         MASK_NONE, NULL, 1, 0},
    };
    worsts w;
    memset(&w, 0, sizeof w);
    for (size_t ci = 0; ci < N_OF(cases); ci++) {
        const spec *c = &cases[ci];
        const problem pr = problem_make(c, &rng);
        const expected e = expected_make(&pr, 1);
        const typed t = typed_make(p, &pr);
        const attn_sdpa_shape s = shape_of(&pr);
        char what[640];
        describe(what, sizeof what, p, c, "default (ATTN_THREADS_AUTO)", "one-shot");
        outputs shot = outputs_make(p, &pr, 1);
        const sdpa_io io_shot = io_of(&pr, &t, &shot, 1);
        attn_status st = sdpa_one_shot(p, &s, c->scale, c->causal, c->window, &io_shot);
        expect_true(st == ATTN_OK, "%s: %s", what, attn_status_string(st));
        if (st != ATTN_OK)
            continue;
        check_forward(p, &pr, &e, &shot, 1, &w, what);
        /* the plan it is: ATTN_INFERENCE on the default engine */
        attn_plan *plan = problem_plan(p, &pr, ATTN_INFERENCE, ATTN_THREADS_AUTO, what);
        if (plan != NULL) {
            outputs o = outputs_make(p, &pr, 0);
            const sdpa_io io = io_of(&pr, &t, &o, 1);
            st = sdpa_forward(p, plan, &io);
            expect_true(st == ATTN_OK && memcmp(o.out, shot.out, pr.no * p->size) == 0 &&
                            memcmp(o.lse, shot.lse, pr.nl * p->size) == 0,
                        "%s: the one-shot and its plan give other bytes (%s)", what,
                        attn_status_string(st));
        }
        /* a backward on a fresh training plan that ran no forward, from the one-shot's out
         * and lse, on BLAS threads and on 2 own threads */
        for (size_t k = 0; k < N_OF(engines); k += 2) {
            describe(what, sizeof what, p, c, engines[k].name,
                     "backward without a forward on its plan");
            attn_plan *train = problem_plan(p, &pr, 0u, engines[k].threads, what);
            if (train == NULL)
                continue;
            outputs_refill_grads(p, &pr, &shot);
            st = sdpa_backward(p, train, &io_shot, t.dout, shot.dQ, shot.dK, shot.dV);
            expect_true(st == ATTN_OK, "%s: %s", what, attn_status_string(st));
            if (st == ATTN_OK)
                check_backward(p, &pr, &e, &shot, &w, what);
        }
    }
    report("one-shots out", &w.out);
    report("one-shots gradients", &w.grads);
    test_leave("one-shot equals plan");
}

/* ld = 0 and the dense stride, scale <= 0 and 1/sqrt(hs): the same bytes */
static void defaults_are_exact(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1701);
    const spec c = {"defaults", 2, 6, 2, 20, 45, 24, 0, 0.0, ATTN_CAUSAL, 0, 0, 0, MASK_NONE,
                    NULL, 1, 0};
    const problem pr = problem_make(&c, &rng);
    const typed t = typed_make(p, &pr);
    const double scales[4] = {0.0, -2.5, -0.0, 1.0 / sqrt(24.0)};
    outputs first;
    memset(&first, 0, sizeof first);
    for (size_t si = 0; si < N_OF(scales); si++)
        for (int explicit_ld = 0; explicit_ld <= 1; explicit_ld++) {
            problem q = pr;
            q.c.scale = scales[si];
            if (explicit_ld) {
                q.ldq_arg = q.ldq;
                q.ldk_arg = q.ldk;
                q.ldv_arg = q.ldv;
                q.ldo_arg = q.ldo;
            }
            char what[640];
            describe(what, sizeof what, p, &q.c, "2 own threads",
                     explicit_ld ? "strides given" : "strides 0");
            attn_plan *plan = problem_plan(p, &q, 0u, 2, what);
            if (plan == NULL)
                continue;
            outputs o = outputs_make(p, &q, 1);
            const sdpa_io io = io_of(&q, &t, &o, 1);
            const attn_status st = sdpa_forward(p, plan, &io);
            const attn_status sb = sdpa_backward(p, plan, &io, t.dout, o.dQ, o.dK, o.dV);
            expect_true(st == ATTN_OK && sb == ATTN_OK, "%s: %s, %s", what,
                        attn_status_string(st), attn_status_string(sb));
            if (si == 0 && !explicit_ld)
                first = o;
            else if (first.out != NULL)
                expect_true(outputs_identical(p, &q, &o, &first, 1),
                            "%s: not the bytes of scale 0 and strides 0", what);
        }
    /* a custom scale differs measurably: the comparisons above can fail */
    problem q = pr;
    q.c.scale = 0.37;
    q.ref.scale = 0.37;
    const expected e = expected_make(&q, 0);
    const expected e0 = expected_make(&pr, 0);
    expect_true(residual_scaled(e.out, e0.out, e.n_out, e.v_scale) > 1e-3,
                "scale 0.37 and the default agree");
    test_leave("defaults are exact");
}

/* Scores near the largest double (Q up to 3.4e38): the weights the backward
 * recomputes from one rounded lse (ulp 1e22 there) must stay finite, and so
 * must every gradient (the fuzz harness found NaN dQ). Finite is all that is
 * asserted: with only lse, weights of such rows are not recoverable exactly. */
static void huge_scores_backward(void **state)
{
    (void)state;
    test_enter();
    enum { NH = 4, TK = 4, HS = 8 };
    double Q[NH * HS], K[TK * HS], V[TK * HS], out[NH * HS], lse[NH], dout[NH * HS];
    double dQ[NH * HS], dK[TK * HS], dV[TK * HS];
    for (int i = 0; i < NH * HS; i++) {
        Q[i] = (i % 3 == 0 ? -3.4e38 : i % 3 == 1 ? 1e30 : 2.0) * (i % 2 ? 1 : -1);
        dout[i] = 0.25 * (i % 5) - 0.5;
    }
    for (int i = 0; i < TK * HS; i++) {
        K[i] = 0.37 * (i % 7) - 1.1;
        V[i] = 0.21 * (i % 9) - 0.8;
    }
    const attn_sdpa_shape shape = {1, NH, 1, 1, TK, HS, 0};
    const unsigned threads[] = {0, 1, 2};
    for (size_t e = 0; e < N_OF(threads); e++) {
        attn_plan *plan = NULL;
        check_true(attn_sdpa_plan_create(&plan, ATTN_F64, &shape, 0.0, 0, 0) == ATTN_OK,
                   "create");
        if (plan == NULL)
            continue;
        check_true(attn_plan_set_threads(plan, threads[e]) == ATTN_OK, "threads %u", threads[e]);
        const attn_sdpa_args_f64 a = {.Q = Q, .K = K, .V = V, .out = out, .lse = lse};
        check_true(attn_sdpa_forward_f64(plan, &a) == ATTN_OK, "forward");
        check_true(attn_sdpa_backward_f64(plan, &a, dout, dQ, dK, dV) == ATTN_OK, "backward");
        for (int i = 0; i < NH * HS; i++)
            check_true(isfinite(out[i]) && isfinite(dQ[i]), "threads %u: out[%d] %g dQ[%d] %g",
                       threads[e], i, out[i], i, dQ[i]);
        for (int i = 0; i < TK * HS; i++)
            check_true(isfinite(dK[i]) && isfinite(dV[i]), "threads %u: dK[%d] %g dV[%d] %g",
                       threads[e], i, dK[i], i, dV[i]);
        attn_plan_destroy(plan);
    }
    test_leave("huge scores in the backward");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    under_valgrind = sdpa_short_run();
    const struct CMUnitTest tests[] = {
        SDPA_CASE("heads", heads, NULL),
        SDPA_CASE("windows_and_lengths", windows_and_lengths, NULL),
        SDPA_CASE("masks", masks, NULL),
        SDPA_CASE("layouts", layouts, NULL),
        SDPA_CASE("large_shapes", large_shapes, NULL),
        SDPA_CASE("finite_differences", finite_differences, NULL),
        SDPA_CASE("decode_split", decode_split, NULL),
        SDPA_CASE("nan_confinement", nan_confinement, NULL),
        SDPA_CASE("special_scores", special_scores, NULL),
        SDPA_PREC_CASES(create_errors),
        SDPA_PREC_CASES(forward_errors),
        SDPA_PREC_CASES(backward_errors),
        SDPA_PREC_CASES(one_shot_errors),
        SDPA_PREC_CASES(one_shot_equals_plan),
        SDPA_PREC_CASES(defaults_are_exact),
        /* last: cases that crashed the library when written (a crash ends a
         * sanitizer build's run) */
        SDPA_CASE("huge_windows", huge_windows, NULL),
        SDPA_PREC_CASES(create_wrapping_products),
        SDPA_CASE("huge_scores_backward", huge_scores_backward, NULL),
    };
    return cmocka_run_group_tests_name("sdpa", tests, NULL, NULL);
}
