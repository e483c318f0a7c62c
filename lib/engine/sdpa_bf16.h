/*
 * A bf16 plan's forward products on a CPU with bf16 products (kernels.h,
 * attn_bf16_products: the avx512-bf16 and amx sets): the float engine of
 * sdpa_forward.c with its two products in bf16. Shapes, per item and key
 * tile [k0, k0 + kc):
 *   S (queries, kc) = Q_h (queries, hs) K[k0:k0+kc]^T   per head; Q rows
 *                     rounded to bf16 (exact but for subnormals, which the
 *                     instructions take for zero anyway), K^T packed in bf16
 *                     once per call
 *   Y (rows, hs_v) += P (rows, n) V[key:key+n]          P rounded to bf16
 *                     (nearest even: attn.h's u_P), V packed in bf16 in the
 *                     float pack's K blocks of ATTN_GEMM_KC keys
 * with float sums. The packs take the place of the float ones (half their
 * size; sdpa_layout.h sizes them); the last element of each (b, g)'s V
 * region, which they leave free, holds whether its values below L_b are
 * all finite. An item's Q rows are rounded once (each head's rows padded
 * to ATTN_BF16_M_STEP) when they fit ATTN_SDPA_BF16_Q, else per tile. The
 * products read whole tiles: P's columns are padded with zeros to
 * ATTN_BF16_K_STEP keys, and those keys' values (below L_b) must be finite
 * (0 x inf would make a NaN no key of the row's put there); the causal
 * diagonal's keys too, to be multiplied by the zero weights of the queries
 * before them in one product. Where a (b, g) has a value that is not, the
 * float path of sdpa_forward.c runs on the widened copies.
 * Used when run_args.bf16.gemm is set (sdpa_exec.c: a bf16 plan's forward
 * of several queries on its own threads, hs a multiple of
 * ATTN_BF16_K_STEP). Compiled into the float engine only: the double one
 * has no bf16 plans (bf16.gemm is NULL there).
 */
#ifndef ATTN_SDPA_BF16_H
#define ATTN_SDPA_BF16_H

#include <string.h>

#include "engine/sdpa.h"

_Static_assert(ATTN_GEMM_KC % ATTN_BF16_K_STEP == 0 && ATTN_QUERY_BLOCK % ATTN_BF16_M_STEP == 0,
               "K blocks and query blocks hold whole tiles of the bf16 products");

static inline size_t FN(bf16_round_up)(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

/* The first 64-byte boundary at or after p (sdpa_layout.h's slack). */
static inline uint16_t *FN(attn_sdpa_bf16_aligned)(void *p)
{
    return (uint16_t *)((uintptr_t)p + (64 - (uintptr_t)p % 64) % 64);
}

static inline size_t FN(bf16_length)(const FN(attn_sdpa_run_args) *a, size_t b)
{
    return a->key_lengths != NULL ? a->key_lengths[b] : a->layout.shape.Tk;
}

/* The bf16 pack of the K block from key k0 of (b, g) in the V region
 * (the forward's V, the backward's K: width columns), and its packed K. */
static inline const uint16_t *FN(bf16_block)(const FN(attn_sdpa_run_args) *a, size_t b,
                                             size_t g, size_t k0, size_t width, size_t *kb)
{
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t L = FN(bf16_length)(a, b);
    *kb = FN(bf16_round_up)(L - k0 < ATTN_GEMM_KC ? L - k0 : ATTN_GEMM_KC, ATTN_BF16_K_STEP);
    return (const uint16_t *)(const void *)(FN(attn_sdpa_packed_v)(a, b * s->NH_kv + g) +
                                            k0 * FN(bf16_round_up)(width, a->panel));
}
static inline const uint16_t *FN(bf16_v_block)(const FN(attn_sdpa_run_args) *a, size_t b,
                                               size_t g, size_t k0, size_t *kb)
{
    return FN(bf16_block)(a, b, g, k0, a->layout.shape.hs_v, kb);
}
static inline const uint16_t *FN(bf16_k_block)(const FN(attn_sdpa_run_args) *a, size_t b,
                                               size_t g, size_t k0, size_t *kb)
{
    return FN(bf16_block)(a, b, g, k0, a->layout.shape.hs, kb);
}

/* The flag of (b, g): whether its values below L_b are all finite. */
static inline real *FN(bf16_finite_flag)(const FN(attn_sdpa_run_args) *a, size_t b, size_t g)
{
    return FN(attn_sdpa_packed_v)(a, b * a->layout.shape.NH_kv + g) + a->packs.v_each - 1;
}

/* The rows of (b, g) that its float products read, widened from the
 * bf16 arrays (keys below L): V; in the backward also K, and Q and dout
 * of the heads that read g. */
static inline void FN(bf16_widen_item)(const FN(attn_sdpa_run_args) *a, size_t b, size_t g,
                                       size_t L, int backward)
{
#if ATTN_REAL_BITS == 32
    const attn_sdpa_shape *s = &a->layout.shape;
    for (size_t j = 0; j < L; j++) {
        a->widen_half(a->V16 + b * a->sbv16 + g * a->shv16 + j * a->ldv16,
                      (real *)(uintptr_t)FN(attn_sdpa_v)(a, b, g, j), s->hs_v);
        if (backward)
            a->widen_half(a->K16 + b * a->sbk16 + g * a->shk16 + j * a->ldk16,
                          (real *)(uintptr_t)FN(attn_sdpa_k)(a, b, g, j), s->hs);
    }
    for (size_t h = g * a->layout.group; backward && h < (g + 1) * a->layout.group; h++)
        for (size_t t = 0; t < s->Tq; t++) {
            a->widen_half(a->Q_half + b * a->sbq_half + h * a->shq_half + t * a->ldq_half,
                          (real *)(uintptr_t)FN(attn_sdpa_q)(a, b, h, t), s->hs);
            a->widen_half(a->dout_bf16 + b * a->sbo_bf16 + h * a->sho_bf16 + t * a->ldo_bf16,
                          (real *)(uintptr_t)FN(attn_sdpa_dout)(a, b, h, t), s->hs_v);
        }
#else
    (void)a, (void)b, (void)g, (void)L, (void)backward;
#endif
}

/* Item: the bf16 packs of (b, g) = item, keys below L_b. Forward: K^T
 * from key 0 (the panel of key j at j * hs) in the kt region, V in K
 * blocks in the V region, the flag: V finite. Backward
 * (sdpa_bf16_backward.h): K^T likewise, V^T in the vt region, K in K
 * blocks in the V region, the flag: K and V finite. */
static inline void FN(attn_sdpa_pack_bf16)(const FN(attn_sdpa_run_args) *a, size_t item,
                                           int backward)
{
#if ATTN_REAL_BITS == 32
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t b = item / s->NH_kv, g = item % s->NH_kv, L = FN(bf16_length)(a, b);
    if (a->K16 != NULL) { /* K and V in bf16 in place (sdpa.h) */
        const uint16_t *K16 = a->K16 + b * a->sbk16 + g * a->shk16;
        const uint16_t *V16 = a->V16 + b * a->sbv16 + g * a->shv16;
        const int k_finite = attn_bf16_pack_transposed_bf16(
            L, s->hs, K16, a->ldk16, (uint16_t *)(void *)FN(attn_sdpa_packed_kt)(a, item));
        const int v_finite =
            !backward || attn_bf16_pack_transposed_bf16(
                             L, s->hs_v, V16, a->ldv16,
                             (uint16_t *)(void *)FN(attn_sdpa_packed_vt)(a, item));
        const uint16_t *X16 = backward ? K16 : V16; /* the K blocks' array */
        const size_t ld16 = backward ? a->ldk16 : a->ldv16, width = backward ? s->hs : s->hs_v;
        int blocks_finite = 1;
        for (size_t k0 = 0; k0 < L; k0 += ATTN_GEMM_KC) {
            size_t kb;
            uint16_t *block = (uint16_t *)(uintptr_t)FN(bf16_block)(a, b, g, k0, width, &kb);
            blocks_finite &= a->bf16.pack16(L - k0 < ATTN_GEMM_KC ? L - k0 : ATTN_GEMM_KC, width,
                                            X16 + k0 * ld16, ld16, block);
        }
        const int finite = backward ? k_finite && v_finite : blocks_finite;
        /* a value not finite: this (b, g) takes the float products, on its
         * rows widened into the plan's float copies (its own rows): V, and
         * in the backward K and its heads' Q and dout too */
        if (!finite)
            FN(bf16_widen_item)(a, b, g, L, backward);
        *FN(bf16_finite_flag)(a, b, g) = finite ? REAL_C(1.0) : REAL_C(0.0);
        return;
    }
    const real *K = FN(attn_sdpa_k)(a, b, g, 0), *V = FN(attn_sdpa_v)(a, b, g, 0);
    const int k_finite = attn_bf16_pack_transposed(
        L, s->hs, K, a->ldk, (uint16_t *)(void *)FN(attn_sdpa_packed_kt)(a, item));
    int v_finite = 1;
    if (backward)
        v_finite = attn_bf16_pack_transposed(
            L, s->hs_v, V, a->ldv, (uint16_t *)(void *)FN(attn_sdpa_packed_vt)(a, item));
    const real *X = backward ? K : V; /* the K blocks' array */
    const size_t ld = backward ? a->ldk : a->ldv, width = backward ? s->hs : s->hs_v;
    int blocks_finite = 1;
    for (size_t k0 = 0; k0 < L; k0 += ATTN_GEMM_KC) {
        size_t kb;
        uint16_t *block = (uint16_t *)(uintptr_t)FN(bf16_block)(a, b, g, k0, width, &kb);
        blocks_finite &= a->bf16.pack(L - k0 < ATTN_GEMM_KC ? L - k0 : ATTN_GEMM_KC, width,
                                      X + k0 * ld, ld, block);
    }
    /* forward: V finite (the blocks); backward: K and V (K^T, V^T) */
    const int finite = backward ? k_finite && v_finite : blocks_finite;
    *FN(bf16_finite_flag)(a, b, g) = finite ? REAL_C(1.0) : REAL_C(0.0);
#else
    (void)a, (void)item, (void)backward;
#endif
}

/* rows x n of scale x (rows ldx apart; scale 1: x itself) as bf16 rows
 * np = n rounded up to ATTN_BF16_K_STEP apart, zero past n and in the rows
 * after `rows` up to ATTN_BF16_M_STEP. */
static inline void FN(bf16_rows_scaled)(const FN(attn_sdpa_run_args) *a, size_t rows, size_t n,
                                        const real *x, size_t ldx, float scale, uint16_t *dst)
{
#if ATTN_REAL_BITS == 32
    const size_t np = FN(bf16_round_up)(n, ATTN_BF16_K_STEP);
    for (size_t r = 0; r < rows; r++) {
        a->bf16.round_scaled(x + r * ldx, scale, dst + r * np, n);
        memset(dst + r * np + n, 0, (np - n) * sizeof(uint16_t));
    }
    const size_t padded = FN(bf16_round_up)(rows, ATTN_BF16_M_STEP);
    memset(dst + rows * np, 0, (padded - rows) * np * sizeof(uint16_t));
#else
    (void)a, (void)rows, (void)n, (void)x, (void)ldx, (void)scale, (void)dst;
#endif
}

static inline void FN(bf16_rows)(const FN(attn_sdpa_run_args) *a, size_t rows, size_t n,
                                 const real *x, size_t ldx, uint16_t *dst)
{
    FN(bf16_rows_scaled)(a, rows, n, x, ldx, 1.0f, dst);
}

/* bf16_rows of rows already in bf16 (x16, rows ld16 apart): copied. */
static inline void FN(bf16_copy_rows)(size_t rows, size_t n, const uint16_t *x16, size_t ld16,
                                      uint16_t *dst)
{
    const size_t np = FN(bf16_round_up)(n, ATTN_BF16_K_STEP);
    for (size_t r = 0; r < rows; r++) {
        memcpy(dst + r * np, x16 + r * ld16, n * sizeof(uint16_t));
        memset(dst + r * np + n, 0, (np - n) * sizeof(uint16_t));
    }
    const size_t padded = FN(bf16_round_up)(rows, ATTN_BF16_M_STEP);
    memset(dst + rows * np, 0, (padded - rows) * np * sizeof(uint16_t));
}

/* Rows [t0, t0 + queries) of head h of sequence b's Q in bf16 (hs wide,
 * rows hs apart, zero rows up to ATTN_BF16_M_STEP): copied from Q_half, or
 * rounded from Q. */
static inline void FN(bf16_query_rows)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h,
                                       size_t t0, size_t queries, uint16_t *dst)
{
    const size_t hs = a->layout.shape.hs;
    if (a->Q_half == NULL)
        FN(bf16_rows)(a, queries, hs, FN(attn_sdpa_q)(a, b, h, t0), a->ldq, dst);
    else
        FN(bf16_copy_rows)(queries, hs,
                           a->Q_half + b * a->sbq_half + h * a->shq_half + t0 * a->ldq_half,
                           a->ldq_half, dst);
}

/* The item's Q rows, heads [h0, h0 + heads) of queries [t0, t0 + queries)
 * of sequence b, into q16 (head i's rows at i * rows_each * hs), or false
 * when they do not fit. */
static inline int FN(attn_sdpa_bf16_queries)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h0,
                                             size_t heads, size_t t0, size_t queries,
                                             uint16_t *q16)
{
    const size_t hs = a->layout.shape.hs;
    const size_t each = FN(bf16_round_up)(queries, ATTN_BF16_M_STEP) * hs;
    if (heads * each > ATTN_SDPA_BF16_Q)
        return 0;
    for (size_t i = 0; i < heads; i++)
        FN(bf16_query_rows)(a, b, h0 + i, t0, queries, q16 + i * each);
    return 1;
}

/* S (queries, kc) of head h0 + i = Q rows K[k0, k0 + kc)^T from the bf16
 * pack (k0 a multiple of the panel); Q's rows from q16 (converted: `ready`)
 * or rounded now into it. */
static inline void FN(attn_sdpa_bf16_scores)(const FN(attn_sdpa_run_args) *a, size_t b,
                                             size_t g, size_t h, size_t t0, size_t queries,
                                             size_t k0, size_t kc, real *S, uint16_t *q16,
                                             int ready)
{
    const attn_sdpa_shape *s = &a->layout.shape;
    const uint16_t *kt =
        (const uint16_t *)(const void *)FN(attn_sdpa_packed_kt)(a, b * s->NH_kv + g);
    if (!ready)
        FN(bf16_query_rows)(a, b, h, t0, queries, q16);
    a->bf16.gemm(queries, kc, s->hs, q16, s->hs, kt + k0 * s->hs, s->hs, 0, (float *)S, kc);
}

/* Y (rows, hs_v) += P16 (rows, n) V[key:key + n) from the bf16 pack: P16
 * bf16 rows ld16 apart, zero from n to n rounded up to ATTN_BF16_K_STEP and
 * readable up to rows rounded up to ATTN_BF16_M_STEP; key starts a K block
 * of the pack and (b, g)'s values are finite (the callers' checks). */
static inline void FN(attn_sdpa_bf16_rounded_values)(const FN(attn_sdpa_run_args) *a, size_t b,
                                                     size_t g, size_t key, size_t rows, size_t n,
                                                     const uint16_t *P16, size_t ld16, real *Y)
{
    for (size_t k = 0; k < n; k += ATTN_GEMM_KC) {
        size_t kb;
        const uint16_t *block = FN(bf16_v_block)(a, b, g, key + k, &kb);
        const size_t K = FN(bf16_round_up)(n - k < ATTN_GEMM_KC ? n - k : ATTN_GEMM_KC,
                                           ATTN_BF16_K_STEP);
        a->bf16.gemm(rows, a->layout.shape.hs_v, K, P16 + k, ld16, block, kb, 1, (float *)Y,
                     a->layout.shape.hs_v);
    }
}

/* Y (rows, hs_v) += P (rows, n; ldp) V[key, key + n) from the bf16 pack,
 * other keys' values below L_b multiplied by zeros of P as well (the
 * padding, a causal diagonal's). False, with nothing done, when key starts
 * no K block of the pack (a window's first tile) or (b, g) has a value that
 * is not finite. */
static inline int FN(attn_sdpa_bf16_values)(const FN(attn_sdpa_run_args) *a, size_t b, size_t g,
                                            size_t key, size_t rows, size_t n, const real *P,
                                            size_t ldp, real *Y, uint16_t *rows16)
{
    if (key % ATTN_GEMM_KC != 0 || *FN(bf16_finite_flag)(a, b, g) == REAL_C(0.0))
        return 0;
    FN(bf16_rows)(a, rows, n, P, ldp, rows16);
    FN(attn_sdpa_bf16_rounded_values)(a, b, g, key, rows, n, rows16,
                                      FN(bf16_round_up)(n, ATTN_BF16_K_STEP), Y);
    return 1;
}

/* The bf16 products' online softmax block (kernels.h): weights to p16. */
static inline real FN(attn_sdpa_bf16_softmax)(const FN(attn_sdpa_run_args) *a, const real *s,
                                              uint16_t *p16, size_t n_valid, size_t n_total,
                                              real scale, real *max, real *sum)
{
#if ATTN_REAL_BITS == 32
    return a->bf16.softmax_online(s, p16, n_valid, n_total, scale, max, sum);
#else
    (void)a, (void)s, (void)p16, (void)n_valid, (void)n_total, (void)scale, (void)max, (void)sum;
    return REAL_C(-1.0);
#endif
}

/* Whether the key tile from k0 of an item (b, g) of `queries` queries a
 * head takes its weights in bf16 from the softmax (bf16.softmax_online:
 * no float P, no rounding pass): its P V product runs in bf16 whole (k0
 * starts a K block, the values are finite, several queries) and nothing
 * acts on the float weights (dropout). */
static inline int FN(attn_sdpa_bf16_fused)(const FN(attn_sdpa_run_args) *a, size_t b, size_t g,
                                           size_t k0, size_t queries)
{
    return a->bf16.softmax_online != NULL && a->packed != NULL && queries > 1 &&
           k0 % ATTN_GEMM_KC == 0 && !attn_dropout_is_on(a->dropout) &&
           *FN(bf16_finite_flag)(a, b, g) != REAL_C(0.0);
}

#endif /* ATTN_SDPA_BF16_H */
