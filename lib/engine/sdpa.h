/*
 * The sdpa engines (templated over `real`, see real.h): attention on given
 * Q, K, V (attn.h, "sdpa"), forward in sdpa_forward.c, backward in
 * sdpa_backward.c, work items as sdpa_layout.h splits them. Arguments are
 * validated by the caller (sdpa_exec.c); strides are resolved (never 0
 * except the mask's broadcast ones). Element i of row t of head h of
 * sequence b of Q is Q[b*sbq + h*shq + t*ldq + i] (attn.h), and so for K,
 * V, out; dout takes out's strides, dQ, dK, dV those of Q, K, V.
 */
#ifndef ATTN_SDPA_H
#define ATTN_SDPA_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/dropout.h"
#include "engine/engine.h"
#include "kernels/kernels.h"
#include "core/real.h"
#include "engine/sdpa_layout.h"

typedef struct FN(attn_sdpa_run_args) {
    attn_sdpa_layout layout;
    real scale;
    int causal;
    size_t window; /* 0: none */
    attn_softmax_online_fn softmax_online;
    attn_softmax_row_fn softmax_row;
    attn_softmax_from_lse_fn softmax_from_lse;
    attn_softmax_backward_fn softmax_backward;
    attn_rows_dot_fn rows_dot;   /* a single query's products: its heads' rows */
    attn_rows_axpy_fn rows_axpy;
    /* A bf16 plan's forward products in bf16 (engine/sdpa_bf16.h), or
     * bf16.gemm NULL. */
    attn_bf16_products bf16;
    /* A half plan's forward (api/sdpa_half.inc.c): each row of out rounded
     * into out_half (strides sbo_half, sho_half, ldo_half in 16-bit
     * elements) as it is finished, from Y by narrow_scaled_half or from
     * its float row in out by narrow_half; or out_half NULL (out is the
     * result). */
    uint16_t *out_half;
    size_t sbo_half, sho_half, ldo_half;
    attn_half_narrow_fn narrow_half;
    attn_half_narrow_scaled_fn narrow_scaled_half;
    /* A bf16 forward whose scores are all bf16 products (bf16.gemm set, no
     * window: every key tile starts on a panel of the packed K^T): Q's rows
     * in bf16 (strides in 16-bit elements), which the products copy as
     * they are; Q (float) is then not filled, and a row recomputed alone
     * widens its own (widen_half). A bf16 backward on bf16 products
     * (sdpa_bf16_backward.h) reads Q's rows so too. Or NULL. */
    const uint16_t *Q_half;
    size_t sbq_half, shq_half, ldq_half;
    attn_half_widen_fn widen_half;
    /* K and V read in place in 16 bits (strides in 16-bit elements), or
     * NULL (K, V in `real`): a half plan's decode step, whose products all
     * go through the few-row kernels (these, on 16-bit rows), or the bf16
     * forward or backward of Q_half, which packs them and whose float
     * copies are not filled but for a (b, g) whose values are not all
     * finite (widened by the pack phase for the float products: V, in the
     * backward K, Q and dout too). Single-query
     * blocks and rows recomputed alone read them with the few-row kernels. */
    const uint16_t *K16, *V16;
    size_t sbk16, shk16, ldk16, sbv16, shv16, ldv16;
    /* A bf16 backward's row sums <dout, out> from the caller's bf16 out
     * and dout (out's strides, in 16-bit elements), or NULL: from out and
     * dout in `real`. */
    const uint16_t *out_bf16, *dout_bf16;
    size_t sbo_bf16, sho_bf16, ldo_bf16;
    attn_rows_dot_half_fn rows_dot_half;
    attn_rows_axpy_half_fn rows_axpy_half;
    const real *Q, *K, *V; /* (B,NH,Tq,hs), (B,NH_kv,Tk,hs), (B,NH_kv,Tk,hs_v) by strides */
    size_t ldq, ldk, ldv;  /* row strides: handed to BLAS */
    size_t sbq, shq, sbk, shk, sbv, shv, sbo, sho; /* sequence and head strides */
    const real *mask;      /* or NULL */
    size_t mask_ld, mask_sb, mask_sh;
    const size_t *key_lengths; /* (B) or NULL */
    real *out;             /* (B,NH,Tq,hs_v) ld ldo: written by the forward, read by the backward */
    size_t ldo;
    real *lse;             /* (B,NH,Tq) or NULL (forward) */
    const attn_dropout *dropout; /* the plan's (off: p = 0), or NULL: none */
    attn_dropout_mask_fn dropout_mask; /* its draws (kernels.h); with dropout on */
    /* backward */
    const real *dout;      /* out's strides */
    real *dQ, *dK, *dV;    /* Q's, K's, V's strides */
    /* workspace */
    attn_sdpa_packs packs; /* where each (b, g)'s packed K^T, V or K, V^T lie in packed */
    real *packed;          /* own threads (attn_sdpa_prepacks): the packed operands, or NULL */
    size_t panel;          /* the kernel's NR (kernels.h) */
    real *partials;        /* forward: (splits,B,NH,Tq,hs_v+2) when splits > 1 */
    real *rowdot;          /* backward: (B,NH,Tq) */
    real *dQ_parts;        /* backward: (B,NH,groups,Tq,hs) when groups > 1 */
} FN(attn_sdpa_run_args);

/* Worker tiles hold attn_sdpa_tile_elements(layout) elements. */
void FN(attn_sdpa_forward_run)(const FN(attn_sdpa_run_args) *a, const FN(attn_engine) *e);
void FN(attn_sdpa_backward_run)(const FN(attn_sdpa_run_args) *a, const FN(attn_engine) *e);

/* Row t of head h of sequence b (key/value head g) of each array. */
static inline const real *FN(attn_sdpa_q)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h,
                                          size_t t)
{
    return a->Q + b * a->sbq + h * a->shq + t * a->ldq;
}
static inline const real *FN(attn_sdpa_k)(const FN(attn_sdpa_run_args) *a, size_t b, size_t g,
                                          size_t j)
{
    return a->K + b * a->sbk + g * a->shk + j * a->ldk;
}
static inline const real *FN(attn_sdpa_v)(const FN(attn_sdpa_run_args) *a, size_t b, size_t g,
                                          size_t j)
{
    return a->V + b * a->sbv + g * a->shv + j * a->ldv;
}
static inline real *FN(attn_sdpa_out)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h,
                                      size_t t)
{
    return a->out + b * a->sbo + h * a->sho + t * a->ldo;
}
static inline const real *FN(attn_sdpa_dout)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h,
                                             size_t t)
{
    return a->dout + b * a->sbo + h * a->sho + t * a->ldo;
}
static inline real *FN(attn_sdpa_dq)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h,
                                     size_t t)
{
    return a->dQ + b * a->sbq + h * a->shq + t * a->ldq;
}
static inline real *FN(attn_sdpa_dk)(const FN(attn_sdpa_run_args) *a, size_t b, size_t g,
                                     size_t j)
{
    return a->dK + b * a->sbk + g * a->shk + j * a->ldk;
}
static inline real *FN(attn_sdpa_dv)(const FN(attn_sdpa_run_args) *a, size_t b, size_t g,
                                     size_t j)
{
    return a->dV + b * a->sbv + g * a->shv + j * a->ldv;
}

/* The few-row products (kernels.h) of R rows of A (G groups, lda apart)
 * against the keys [j, j + n) of (b, g): S = A K^T; C += P V. On the
 * call's K, V in `real`, or on its 16-bit ones (K16, V16). */
static inline void FN(attn_sdpa_rows_dot)(const FN(attn_sdpa_run_args) *a, size_t G, size_t R,
                                          size_t n, const real *A, size_t lda, size_t b,
                                          size_t g, size_t j, real *S, size_t lds)
{
#if ATTN_REAL_BITS == 32
    if (a->K16 != NULL) {
        a->rows_dot_half(G, R, n, a->layout.shape.hs, A, lda,
                         a->K16 + b * a->sbk16 + g * a->shk16 + j * a->ldk16, a->ldk16,
                         a->shk16, S, lds);
        return;
    }
#endif
    a->rows_dot(G, R, n, a->layout.shape.hs, A, lda, FN(attn_sdpa_k)(a, b, g, j), a->ldk,
                a->shk, S, lds);
}
static inline void FN(attn_sdpa_rows_axpy)(const FN(attn_sdpa_run_args) *a, size_t G, size_t R,
                                           size_t n, const real *P, size_t ldp, size_t b,
                                           size_t g, size_t j, real *C, size_t ldc)
{
#if ATTN_REAL_BITS == 32
    if (a->V16 != NULL) {
        a->rows_axpy_half(G, R, n, a->layout.shape.hs_v, P, ldp,
                          a->V16 + b * a->sbv16 + g * a->shv16 + j * a->ldv16, a->ldv16,
                          a->shv16, C, ldc);
        return;
    }
#endif
    a->rows_axpy(G, R, n, a->layout.shape.hs_v, P, ldp, FN(attn_sdpa_v)(a, b, g, j), a->ldv,
                 a->shv, C, ldc);
}

/* The packed K^T, V (forward) or K (backward, the same place) and V^T of
 * (b, g) = bg (sdpa_layout.h), or NULL. */
static inline real *FN(attn_sdpa_packed_kt)(const FN(attn_sdpa_run_args) *a, size_t bg)
{
    return a->packed != NULL ? a->packed + a->packs.kt + bg * a->packs.kt_each : NULL;
}
static inline real *FN(attn_sdpa_packed_v)(const FN(attn_sdpa_run_args) *a, size_t bg)
{
    return a->packed != NULL ? a->packed + a->packs.v + bg * a->packs.v_each : NULL;
}
static inline real *FN(attn_sdpa_packed_k)(const FN(attn_sdpa_run_args) *a, size_t bg)
{
    return FN(attn_sdpa_packed_v)(a, bg);
}
static inline real *FN(attn_sdpa_packed_vt)(const FN(attn_sdpa_run_args) *a, size_t bg)
{
    return a->packed != NULL ? a->packed + a->packs.vt + bg * a->packs.vt_each : NULL;
}

/* Item: the packed operands of (b, g) = item, its keys below L_b only: K^T,
 * and V (forward) or V^T and K (backward). */
static inline void FN(attn_sdpa_pack_item)(const FN(attn_sdpa_run_args) *a,
                                           const FN(attn_engine) *e, size_t item, int backward)
{
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t b = item / s->NH_kv, g = item % s->NH_kv;
    const size_t L = a->key_lengths != NULL ? a->key_lengths[b] : s->Tk;
    const real *K = FN(attn_sdpa_k)(a, b, g, 0);
    const real *V = FN(attn_sdpa_v)(a, b, g, 0);
    if (L == 0)
        return;
    e->own_pack_b(1, s->hs, L, K, a->ldk, 0, FN(attn_sdpa_packed_kt)(a, item));
    if (backward) {
        e->own_pack_b(1, s->hs_v, L, V, a->ldv, 0, FN(attn_sdpa_packed_vt)(a, item));
        for (size_t k0 = 0; k0 < L; k0 += ATTN_GEMM_KC)
            e->own_pack_b(0, L, s->hs, K, a->ldk, k0, FN(attn_sdpa_packed_k)(a, item));
    } else
        for (size_t k0 = 0; k0 < L; k0 += ATTN_GEMM_KC)
            e->own_pack_b(0, L, s->hs_v, V, a->ldv, k0, FN(attn_sdpa_packed_v)(a, item));
}

/* ---- what a query sees (shared by both engines) ---------------------------- */

typedef struct attn_key_range {
    ptrdiff_t lo, hi; /* keys [lo, hi), empty when hi <= lo */
} attn_key_range;

/* The keys query t of sequence b sees: j < L_b, j <= p with a causal mask,
 * j > p - window with a window, p = L_b - Tq + t. */
static inline attn_key_range FN(attn_sdpa_visible)(const FN(attn_sdpa_run_args) *a, size_t b,
                                                   size_t t)
{
    const ptrdiff_t L =
        (ptrdiff_t)(a->key_lengths != NULL ? a->key_lengths[b] : a->layout.shape.Tk);
    const ptrdiff_t p = L - (ptrdiff_t)a->layout.shape.Tq + (ptrdiff_t)t;
    attn_key_range r = {0, L};
    if (a->causal && p + 1 < r.hi)
        r.hi = p + 1;
    /* j > p - window, without forming p - window (a window may be any size_t) */
    if (a->window > 0 && p >= 0 && (size_t)p + 1 > a->window)
        r.lo = (ptrdiff_t)((size_t)p + 1 - a->window);
    return r;
}

/* Row i of a block of queries from t0 sees the keys below hi(t0) + i (up
 * to L: the causal mask's bottom-right diagonal), so the scores of a key
 * block from k0 are wanted in their first n0 + i columns: the n0 of
 * attn_mm_gemm_staircase (matmul.h). */
static inline ptrdiff_t FN(attn_sdpa_staircase_n0)(const FN(attn_sdpa_run_args) *a, size_t b,
                                                   size_t t0, size_t k0)
{
    return FN(attn_sdpa_visible)(a, b, t0).hi - (ptrdiff_t)k0;
}

/* Mask row (t) of (b, h): entry j at [j], or NULL without a mask. */
static inline const real *FN(attn_sdpa_mask_row)(const FN(attn_sdpa_run_args) *a, size_t b,
                                                 size_t h, size_t t)
{
    return a->mask != NULL ? a->mask + b * a->mask_sb + h * a->mask_sh + t * a->mask_ld : NULL;
}

/* Scores s[0, n) of keys [k0, k0+n) for a query that sees keys [lo, hi),
 * made ready for a softmax kernel called with scale 1: scale*s + mask for
 * visible keys, -inf for keys below lo (keys from hi on are the kernel's
 * n_valid cut). Only rows with a mask or a window's lower bound need it. */
static inline void FN(attn_sdpa_prepare_row)(real *s, size_t n, size_t k0, attn_key_range r,
                                             real scale, const real *mask_row)
{
    const ptrdiff_t start = r.lo - (ptrdiff_t)k0, end = r.hi - (ptrdiff_t)k0;
    const size_t a = start <= 0 ? 0 : (size_t)start;
    const size_t e = end <= 0 ? 0 : (size_t)end < n ? (size_t)end : n;
    for (size_t j = 0; j < a && j < n; j++)
        s[j] = (real)-INFINITY;
    if (mask_row != NULL)
        for (size_t j = a; j < e; j++)
            s[j] = scale * s[j] + mask_row[k0 + j];
    else
        for (size_t j = a; j < e; j++)
            s[j] *= scale;
}

#endif /* ATTN_SDPA_H */
