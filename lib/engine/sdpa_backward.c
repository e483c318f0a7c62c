/*
 * Backward of attention on given Q, K, V (attn.h, "sdpa"): the gradients of
 * sum(out o dout) from the forward's out and lse, the weights recomputed
 * tile by tile (FlashAttention-2), nothing of size Tq x Tk formed.
 *
 * Shapes, per sequence b (sdpa.h: rows ld apart, heads sh apart): Q, dQ
 * (NH, Tq, hs); K, dK (NH_kv, Tk, hs); V, dV (NH_kv, Tk, hs_v); out, dout
 * (NH, Tq, hs_v); lse, rowdot (NH, Tq). Tiles P, dS of at most ATTN_QUERY_BLOCK x
 * ATTN_SDPA_BACKWARD_KEYS (ld ATTN_SDPA_BACKWARD_LD) in the worker's scratch.
 *
 * For each key block j (keys [k0, k0+kc), kc <= ATTN_SDPA_BACKWARD_KEYS) of
 * key/value head g, each query head h reading g and each query block i
 * that sees any of its keys (the forward formula each step differentiates
 * on the right):
 *   P  = exp(scale Q_i K_j^T + mask - lse)       (P = softmax(s), lse its log-sum)
 *   dP = (dout_i V_j^T) o Md                     (out = (P o Md) V; dropout's
 *                                                 Md = M/(1-p), else 1)
 *   dS = P o (dP - rowdot),  rowdot_t = <dout_t, out_t>   (softmax)
 *   dV_j += (P o Md)^T dout_i                    (out = (P o Md) V)
 * (rowdot_t = sum_j P_tj dP_tj = sum_j (P o Md)_tj <dout_t, V_j> = <dout_t,
 * out_t> holds with dropout too, as in FlashAttention-2; Md is regenerated
 * from the plan's seed and offset, never stored)
 *   dK_j += scale dS^T Q_i,  dQ_i += scale dS K_j         (s = scale Q K^T)
 * over each query's visible keys only (P and dS are 0 elsewhere; a tile's
 * products end at the last key any of its queries sees). Phases:
 * rowdot of every (b, h); the items of sdpa_layout.h (one (b, g) and one
 * group of its key blocks; dK, dV of those keys zeroed first, dQ of the
 * group's heads too, or the group's dQ part); the sum of the dQ parts.
 * A bf16 plan on a CPU with bf16 products makes the five products in bf16
 * (sdpa_bf16_backward.h).
 */
#include <math.h>
#include <string.h>

#include "engine/sdpa.h"
#include "engine/sdpa_bf16_backward.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define TILE_LD ATTN_SDPA_BACKWARD_LD
#define KEYS ATTN_SDPA_BACKWARD_KEYS

typedef struct FN(sdpa_backward_phase) {
    const FN(attn_sdpa_run_args) *a;
    const FN(attn_engine) *e;
} FN(sdpa_backward_phase);

/* Where one item's dQ goes: the gradient itself (ld ldq, groups = 1) or the
 * item's part (B,NH,groups,Tq,hs) (ld hs). */
typedef struct FN(dq_target) {
    real *base;
    size_t ld;
} FN(dq_target);

static real *FN(dq_rows)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h, size_t group,
                         size_t t, size_t *ld)
{
    const attn_sdpa_shape *s = &a->layout.shape;
    if (a->layout.groups == 1) {
        *ld = a->ldq;
        return FN(attn_sdpa_dq)(a, b, h, t);
    }
    *ld = s->hs;
    return a->dQ_parts + (((b * s->NH + h) * a->layout.groups + group) * s->Tq + t) * s->hs;
}

/* Columns [lo, hi) of key block [k0, k0+kc) that query t of sequence b
 * sees (lo >= hi: none). */
static void FN(visible_columns)(const FN(attn_sdpa_run_args) *a, size_t b, size_t t, size_t k0,
                                size_t kc, size_t *lo, size_t *hi)
{
    const attn_key_range r = FN(attn_sdpa_visible)(a, b, t);
    *lo = (size_t)MIN(MAX(r.lo - (ptrdiff_t)k0, 0), (ptrdiff_t)kc);
    *hi = (size_t)MIN(MAX(r.hi - (ptrdiff_t)k0, 0), (ptrdiff_t)kc);
}

/* The columns [0, n) of key block [k0, k0+kc) that hold every key some
 * query of block [t0, t0+rows) sees (0: none). With a causal mask the
 * block's keys past its last query are seen by none: the first query block
 * of a key block of 256 sees its first 128 keys only. */
static size_t FN(seen_columns)(const FN(attn_sdpa_run_args) *a, size_t b, size_t t0, size_t rows,
                               size_t k0, size_t kc)
{
    size_t lo, hi, n = 0;
    for (size_t r = 0; r < rows && n < kc; r++) {
        FN(visible_columns)(a, b, t0 + r, k0, kc, &lo, &hi);
        if (hi > lo && hi > n)
            n = hi;
    }
    return n;
}

/* Row t0 of head h of sequence b of the call's bf16 Q and dout (sdpa.h:
 * Q_half, dout_bf16), or NULL: Q and dout in `real`. */
static const uint16_t *FN(q16_rows)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h,
                                    size_t t0)
{
    return a->Q_half == NULL ? NULL
                             : a->Q_half + b * a->sbq_half + h * a->shq_half + t0 * a->ldq_half;
}
static const uint16_t *FN(dout16_rows)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h,
                                       size_t t0)
{
    return a->dout_bf16 == NULL
               ? NULL
               : a->dout_bf16 + b * a->sbo_bf16 + h * a->sho_bf16 + t0 * a->ldo_bf16;
}

/* P of query block [t0, t0+rows) of head h against keys [k0, k0+kc),
 * recomputed from lse. */
static void FN(recompute_weights)(const FN(attn_sdpa_run_args) *a, const FN(attn_mm) *mm,
                                  size_t b, size_t h, size_t t0, size_t rows, size_t k0,
                                  size_t kc, real *P, uint16_t *a16)
{
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t g = h / a->layout.group;
    size_t lo, hi;
    const uint64_t start = attn_profile_begin(mm->profile);
    const real *Q = FN(attn_sdpa_q)(a, b, h, t0);
    /* key blocks start on panels of the packed K^T (sdpa_layout.h) */
    const real *kt = FN(attn_sdpa_packed_kt)(a, b * s->NH_kv + g);
    double flops = attn_product_flops(rows, kc, s->hs);
    if (a->bf16.gemm != NULL) /* bf16 products (sdpa_bf16_backward.h) */
        FN(attn_sdpa_bf16_by_keys)(a, rows, kc, s->hs, Q, a->ldq, FN(q16_rows)(a, b, h, t0),
                                   a->ldq_half, kt, k0, P, TILE_LD, a16);
    else /* a causal diagonal's rows up to the keys they see (matmul.h) */
        flops = FN(attn_mm_gemm_staircase)(mm, ATTN_TRANS, rows, kc, s->hs,
                                           FN(attn_sdpa_staircase_n0)(a, b, t0, k0), Q, a->ldq,
                                           FN(attn_sdpa_k)(a, b, g, k0), a->ldk,
                                           kt != NULL ? kt + k0 * s->hs : NULL, P, TILE_LD);
    for (size_t r = 0; r < rows; r++) {
        const size_t t = t0 + r;
        real *p = P + r * TILE_LD;
        const real lse = a->lse[(b * s->NH + h) * s->Tq + t];
        const real *mask = FN(attn_sdpa_mask_row)(a, b, h, t);
        FN(visible_columns)(a, b, t, k0, kc, &lo, &hi);
        /* p = exp((scale s - max) - log_sum) with max 0 and log_sum lse (the
         * kernel's limit for a row that reached +inf; zeros for -inf) */
        const real max = lse == (real)INFINITY ? (real)INFINITY : REAL_C(0.0);
        if (hi <= lo) {
            memset(p, 0, kc * sizeof(real));
        } else if (lo == 0 && mask == NULL) {
            a->softmax_from_lse(p, p, hi, kc, a->scale, max, lse);
        } else {
            FN(attn_sdpa_prepare_row)(p, kc, k0, FN(attn_sdpa_visible)(a, b, t), a->scale, mask);
            a->softmax_from_lse(p, p, hi, kc, REAL_C(1.0), max, lse);
            memset(p, 0, lo * sizeof(real));
        }
    }
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_RECOMPUTE, start, flops);
}

/* The products of key block [k0, k0+block) of head g with query block
 * [t0, t0+rows) of head h, over the block's first kc keys, those some query
 * of the block sees (seen_columns: the others have P = dS = 0); dK, dV, dQ
 * accumulated. */
static void FN(tile_backward)(const FN(attn_sdpa_run_args) *a, const FN(attn_mm) *mm, size_t b,
                              size_t h, size_t group, size_t t0, size_t rows, size_t k0,
                              size_t block, real *P, real *dS)
{
    const attn_bf16_rows w = FN(attn_sdpa_bf16_backward_rows)(P);
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t g = h / a->layout.group, hs = s->hs, hs_v = s->hs_v;
    const size_t kc = FN(seen_columns)(a, b, t0, rows, k0, block);
    if (kc == 0)
        return;
    FN(recompute_weights)(a, mm, b, h, t0, rows, k0, kc, P, w.a);
    const real *dout = FN(attn_sdpa_dout)(a, b, h, t0);
    const real *Q = FN(attn_sdpa_q)(a, b, h, t0);
    const real *K = FN(attn_sdpa_k)(a, b, g, k0);
    const real *V = FN(attn_sdpa_v)(a, b, g, k0);
    real *dK = FN(attn_sdpa_dk)(a, b, g, k0);
    real *dV = FN(attn_sdpa_dv)(a, b, g, k0);
    size_t ldq;
    real *dQ = FN(dq_rows)(a, b, h, group, t0, &ldq);
    uint64_t start = attn_profile_begin(mm->profile);
    const real *vt = FN(attn_sdpa_packed_vt)(a, b * s->NH_kv + g);
    double flops = attn_product_flops(rows, kc, hs_v);
    if (a->bf16.gemm != NULL)
        FN(attn_sdpa_bf16_by_keys)(a, rows, kc, hs_v, dout, a->ldo, FN(dout16_rows)(a, b, h, t0),
                                   a->ldo_bf16, vt, k0, dS, TILE_LD, w.a);
    else /* dP: read, as P, up to each row's last visible key */
        flops = FN(attn_mm_gemm_staircase)(mm, ATTN_TRANS, rows, kc, hs_v,
                                           FN(attn_sdpa_staircase_n0)(a, b, t0, k0), dout, a->ldo, V,
                                           a->ldv, vt != NULL ? vt + k0 * hs_v : NULL, dS,
                                           TILE_LD);
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_WEIGHTS, start, flops);
    start = attn_profile_begin(mm->profile);
    real factors[KEYS]; /* a row's dropout factors */
    for (size_t r = 0; r < rows; r++) {
        size_t lo, hi;
        FN(visible_columns)(a, b, t0 + r, k0, kc, &lo, &hi);
        real *ds = dS + r * TILE_LD;
        if (hi <= lo) {
            memset(ds, 0, kc * sizeof(real));
            continue;
        }
        /* the row's draws made once: dP o Md, then P o Md (for dV) after
         * the softmax backward has used the undropped P */
        FN(attn_dropout_row)(a->dropout, a->dropout_mask, b, h, t0 + r, k0 + lo, hi - lo, ds + lo,
                             factors);
        a->softmax_backward(P + r * TILE_LD + lo, ds + lo, hi - lo, kc - lo,
                            a->rowdot + (b * s->NH + h) * s->Tq + t0 + r);
        FN(attn_dropout_scale)(a->dropout, factors, hi - lo, P + r * TILE_LD + lo);
        memset(ds, 0, lo * sizeof(real));
    }
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_SOFTMAX, start, 0.0);
    if (a->bf16.gemm != NULL) { /* scale dS rounded for dK and for dQ */
        ATTN_PROFILED(mm->profile, ATTN_PHASE_BACKWARD_VALUES,
                      attn_product_flops(kc, hs_v, rows),
                      FN(attn_sdpa_bf16_by_queries)(a, rows, kc, hs_v, P, TILE_LD, REAL_C(1.0),
                                                    dout, a->ldo, FN(dout16_rows)(a, b, h, t0),
                                                    a->ldo_bf16, dV, a->ldv, &w));
        start = attn_profile_begin(mm->profile);
        FN(attn_sdpa_bf16_by_queries)(a, rows, kc, hs, dS, TILE_LD, a->scale, Q, a->ldq,
                                      FN(q16_rows)(a, b, h, t0), a->ldq_half, dK, a->ldk, &w);
        FN(attn_sdpa_bf16_dq)(a, b, g, rows, k0, kc, dS, TILE_LD, dQ, ldq, w.a);
        attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_SCORES, start,
                         2.0 * attn_product_flops(rows, hs, kc));
        return;
    }
    ATTN_PROFILED(mm->profile, ATTN_PHASE_BACKWARD_VALUES, attn_product_flops(kc, hs_v, rows),
                  FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, kc, hs_v, rows, REAL_C(1.0), P,
                                   TILE_LD, dout, a->ldo, REAL_C(1.0), dV, a->ldv));
    start = attn_profile_begin(mm->profile);
    FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, kc, hs, rows, a->scale, dS, TILE_LD, Q,
                     a->ldq, REAL_C(1.0), dK, a->ldk);
    /* dQ_i (rows, hs) += scale dS (rows, kc) K_j (kc, hs), K_j one K block of
     * the packed K (sdpa_layout.h) when the tile has the whole block:
     * packing it for every query block and head cost 9% of this product
     * (T = 2048, hs = 128, Xeon model 207) */
    const real *kp = kc == block ? FN(attn_sdpa_packed_k)(a, b * s->NH_kv + g) : NULL;
    FN(attn_mm_gemm_prepacked)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, kc, a->scale, dS,
                               TILE_LD, K, a->ldk,
                               kp != NULL ? kp + k0 * attn_sdpa_round_up(hs, a->panel) : NULL,
                               REAL_C(1.0), dQ, ldq);
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_SCORES, start,
                     2.0 * attn_product_flops(rows, hs, kc));
}

static void FN(zero_rows)(real *x, size_t rows, size_t cols, size_t ld)
{
    for (size_t r = 0; r < rows; r++)
        memset(x + r * ld, 0, cols * sizeof(real));
}

/* Item: key blocks group, group + groups, ... of (b, g) = item / groups. */
static void FN(backward_item)(void *context, size_t item, unsigned worker)
{
    const FN(sdpa_backward_phase) *f = context;
    const FN(attn_sdpa_run_args) *a = f->a;
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t groups = a->layout.groups, group = item % groups, bg = item / groups;
    const size_t b = bg / s->NH_kv, g = bg % s->NH_kv, heads = a->layout.group;
    FN(attn_sdpa_run_args) plain; /* a (b, g) with bf16 packs but values not finite */
    if (a->bf16.gemm != NULL && !FN(attn_sdpa_bf16_backward_on)(a, b, g)) {
        plain = *a;
        plain.packed = NULL;
        plain.bf16.gemm = NULL;
        a = &plain;
    }
    const size_t L = a->key_lengths != NULL ? a->key_lengths[b] : s->Tk;
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    real *P = FN(attn_engine_tile)(f->e, worker), *dS = P + ATTN_QUERY_BLOCK * TILE_LD;
    const size_t blocks = attn_sdpa_ceil_div(L, KEYS);
    for (size_t h = g * heads; h < (g + 1) * heads; h++) {
        size_t ld;
        real *dQ = FN(dq_rows)(a, b, h, group, 0, &ld);
        FN(zero_rows)(dQ, s->Tq, s->hs, ld);
    }
    for (size_t j = group; j < blocks; j += groups) {
        const size_t k0 = j * KEYS, kc = MIN((size_t)KEYS, L - k0);
        FN(zero_rows)(FN(attn_sdpa_dk)(a, b, g, k0), kc, s->hs, a->ldk);
        FN(zero_rows)(FN(attn_sdpa_dv)(a, b, g, k0), kc, s->hs_v, a->ldv);
        for (size_t h = g * heads; h < (g + 1) * heads; h++)
            for (size_t t0 = 0; t0 < s->Tq; t0 += ATTN_QUERY_BLOCK)
                FN(tile_backward)(a, &mm, b, h, group, t0, MIN((size_t)ATTN_QUERY_BLOCK, s->Tq - t0),
                                  k0, kc, P, dS);
    }
    if (group == 0) { /* keys that do not exist get no gradient */
        FN(zero_rows)(FN(attn_sdpa_dk)(a, b, g, L), s->Tk - L, s->hs, a->ldk);
        FN(zero_rows)(FN(attn_sdpa_dv)(a, b, g, L), s->Tk - L, s->hs_v, a->ldv);
    }
}

/* Queries of one rowdot item, of every head: read in the order of the
 * layout, heads inside queries where a query's heads lie side by side
 * ((B,T,NH,hs)-like), else queries inside heads (items of one head's
 * queries, rows NH hs apart and so a page apart or more, waited on memory:
 * 4.5 ms for T 2048, 32 heads of 128 in bf16 on the Zen 5, 1.8 now). */
#define ROWDOT_QUERIES 64

/* <dout_t, out_t> of n elements in double. */
static real FN(row_dot)(const real *dout, const real *out, size_t n)
{
    double dot[4] = {0.0, 0.0, 0.0, 0.0}; /* four chains: the adds overlap */
    size_t c = 0;
    for (; c + 4 <= n; c += 4)
        for (size_t k = 0; k < 4; k++)
            dot[k] += (double)dout[c + k] * (double)out[c + k];
    for (; c < n; c++)
        dot[0] += (double)dout[c] * (double)out[c];
    return (real)((dot[0] + dot[1]) + (dot[2] + dot[3]));
}

/* Item: rowdot_t = <dout_t, out_t> of queries [t0, t0 + ROWDOT_QUERIES)
 * of sequence b, every head; from the bf16 rows by the set's dot where
 * the call gave them (out_bf16). */
static void FN(rowdot_item)(void *context, size_t item, unsigned worker)
{
    const FN(sdpa_backward_phase) *f = context;
    const FN(attn_sdpa_run_args) *a = f->a;
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t chunks = attn_sdpa_ceil_div(s->Tq, ROWDOT_QUERIES);
    const size_t b = item / chunks, t0 = item % chunks * ROWDOT_QUERIES;
    const size_t n = MIN((size_t)ROWDOT_QUERIES, s->Tq - t0);
    const int heads_inside = a->out_bf16 != NULL ? a->sho_bf16 <= a->ldo_bf16 : a->sho <= a->ldo;
    (void)worker;
    for (size_t i = 0; i < n * s->NH; i++) {
        const size_t t = t0 + (heads_inside ? i / s->NH : i % n);
        const size_t h = heads_inside ? i % s->NH : i / n;
        const size_t at = b * a->sbo_bf16 + h * a->sho_bf16 + t * a->ldo_bf16;
        a->rowdot[(b * s->NH + h) * s->Tq + t] =
            a->out_bf16 != NULL
                ? (real)a->bf16.dot(a->dout_bf16 + at, a->out_bf16 + at, s->hs_v)
                : FN(row_dot)(FN(attn_sdpa_dout)(a, b, h, t), FN(attn_sdpa_out)(a, b, h, t),
                              s->hs_v);
    }
}

/* Item: dQ of one (b, h), the sum of its groups' parts in group order. */
static void FN(dq_sum_item)(void *context, size_t item, unsigned worker)
{
    const FN(sdpa_backward_phase) *f = context;
    const FN(attn_sdpa_run_args) *a = f->a;
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t groups = a->layout.groups, b = item / s->NH, h = item % s->NH;
    const real *parts = a->dQ_parts + item * groups * s->Tq * s->hs;
    (void)worker;
    for (size_t t = 0; t < s->Tq; t++) {
        real *dQ = FN(attn_sdpa_dq)(a, b, h, t);
        for (size_t c = 0; c < s->hs; c++) {
            real sum = parts[t * s->hs + c];
            for (size_t gr = 1; gr < groups; gr++)
                sum += parts[(gr * s->Tq + t) * s->hs + c];
            dQ[c] = sum;
        }
    }
}

/* Item: the packed K^T and V^T of one (b, g). */
static void FN(pack_item)(void *context, size_t item, unsigned worker)
{
    const FN(sdpa_backward_phase) *f = context;
    if (f->a->bf16.gemm != NULL)
        ATTN_PROFILED(attn_profile_row(f->e->profile, worker), ATTN_PHASE_BACKWARD_PACK, 0.0,
                      FN(attn_sdpa_pack_bf16)(f->a, item, 1));
    else
        ATTN_PROFILED(attn_profile_row(f->e->profile, worker), ATTN_PHASE_BACKWARD_PACK, 0.0,
                      FN(attn_sdpa_pack_item)(f->a, f->e, item, 1));
}

void FN(attn_sdpa_backward_run)(const FN(attn_sdpa_run_args) *a, const FN(attn_engine) *e)
{
    const FN(sdpa_backward_phase) f = {a, e};
    const attn_sdpa_shape *s = &a->layout.shape;
    if (a->packed != NULL)
        attn_pool_run(e->pool, s->B * s->NH_kv, FN(pack_item), (void *)&f);
    attn_pool_run(e->pool, s->B * attn_sdpa_ceil_div(s->Tq, ROWDOT_QUERIES), FN(rowdot_item),
                  (void *)&f);
    attn_pool_run(e->pool, s->B * s->NH_kv * a->layout.groups, FN(backward_item), (void *)&f);
    if (a->layout.groups > 1)
        attn_pool_run(e->pool, s->B * s->NH, FN(dq_sum_item), (void *)&f);
}
