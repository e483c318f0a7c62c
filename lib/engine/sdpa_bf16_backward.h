/*
 * A bf16 plan's backward products on a CPU with bf16 products (kernels.h,
 * attn_bf16_products: the amx and avx512-bf16 sets): sdpa_backward.c's
 * five products of a tile in bf16 with float sums, its softmax steps in
 * float as before. Shapes, per tile of query block [t0, t0 + rows) of head
 * h and keys [k0, k0 + kc) of (b, g), k0 starting a K block:
 *   S  (rows, kc)   = Q (rows, hs) K^T              K^T packed once per call
 *   dP (rows, kc)   = dout (rows, hs_v) V^T         V^T packed once per call
 *   dV (kc, hs_v)  += P^T (kc, rows) dout           P^T rounded, dout packed
 *   dK (kc, hs)    += (scale dS)^T Q                per tile
 *   dQ (rows, hs)  += (scale dS) K                  K packed in K blocks once
 * Q and dout hold bf16 numbers (the call's: read from its bf16 arrays,
 * Q_half and dout_bf16, when the half call gives them, else from float
 * copies), so only P and dS are rounded (to nearest even), as PyTorch's and
 * oneDNN's flash backward round them; attn_half.h states the bound. The padding to whole tiles
 * multiplies zeros by keys past kc: a (b, g) whose K or V has a value that
 * is not finite runs the float products (sdpa_backward.c), its flag set at
 * packing. The bf16 rows live in the worker's tile after P and dS
 * (ATTN_SDPA_SCORES_ELEMENTS on): A rows, transposed A rows and a B pack,
 * ATTN_QUERY_BLOCK ATTN_SDPA_BACKWARD_KEYS numbers each.
 */
#ifndef ATTN_SDPA_BF16_BACKWARD_H
#define ATTN_SDPA_BF16_BACKWARD_H

#include "engine/sdpa_bf16.h"

#define ATTN_SDPA_BF16_PART ((size_t)ATTN_QUERY_BLOCK * ATTN_SDPA_BACKWARD_KEYS)
_Static_assert(3 * ATTN_SDPA_BF16_PART <= 2 * ATTN_SDPA_BF16_ELEMENTS,
               "the backward's bf16 rows fit the tile's bf16 area");

typedef struct attn_bf16_rows {
    uint16_t *a, *at, *b; /* A rows, transposed A rows, a B pack */
} attn_bf16_rows;

static inline attn_bf16_rows FN(attn_sdpa_bf16_backward_rows)(real *tile)
{
    uint16_t *base = FN(attn_sdpa_bf16_aligned)(tile + ATTN_SDPA_SCORES_ELEMENTS);
    const attn_bf16_rows r = {base, base + ATTN_SDPA_BF16_PART, base + 2 * ATTN_SDPA_BF16_PART};
    return r;
}

/* Whether the tile of (b, g) runs in bf16. */
static inline int FN(attn_sdpa_bf16_backward_on)(const FN(attn_sdpa_run_args) *a, size_t b,
                                                 size_t g)
{
    return a->bf16.gemm != NULL && *FN(bf16_finite_flag)(a, b, g) != REAL_C(0.0);
}

/* C (rows, n) = X (rows, d; ldx) Y^T from the transposed pack yt of
 * (b, g) (K^T or V^T, key k0 on): S = Q K^T, dP = dout V^T. X's rows
 * copied from its bf16 rows x16 (ld16 apart) when given, else rounded. */
static inline void FN(attn_sdpa_bf16_by_keys)(const FN(attn_sdpa_run_args) *a, size_t rows,
                                              size_t n, size_t d, const real *X, size_t ldx,
                                              const uint16_t *x16, size_t ld16,
                                              const real *packed, size_t k0, real *C, size_t ldc,
                                              uint16_t *a16)
{
    if (x16 != NULL)
        FN(bf16_copy_rows)(rows, d, x16, ld16, a16);
    else
        FN(bf16_rows)(a, rows, d, X, ldx, a16);
    a->bf16.gemm(rows, n, d, a16, d, (const uint16_t *)(const void *)packed + k0 * d, d, 0,
                 (float *)C, ldc);
}

/* G (kc, n) += (xs X)^T (kc, rows) Y (rows, n): dV += P^T dout (xs 1), dK
 * += (scale dS)^T Q; X (rows, kc; ldx) scaled, rounded and transposed by
 * the set's kernel, Y (rows, n; ldy) of bf16 numbers packed, from its
 * bf16 rows y16 (ld16 apart) when given. */
static inline void FN(attn_sdpa_bf16_by_queries)(const FN(attn_sdpa_run_args) *a, size_t rows,
                                                 size_t kc, size_t n, const real *X, size_t ldx,
                                                 real xs, const real *Y, size_t ldy,
                                                 const uint16_t *y16, size_t ld16, real *G,
                                                 size_t ldg, const attn_bf16_rows *w)
{
#if ATTN_REAL_BITS == 32
    const size_t np = FN(bf16_round_up)(rows, ATTN_BF16_K_STEP);
    a->bf16.round_transposed(rows, kc, X, ldx, xs, w->at);
    if (y16 != NULL)
        a->bf16.pack16(rows, n, y16, ld16, w->b);
    else
        a->bf16.pack(rows, n, Y, ldy, w->b);
    a->bf16.gemm(kc, n, np, w->at, np, w->b, np, 1, G, ldg);
#else
    (void)a, (void)rows, (void)kc, (void)n, (void)X, (void)ldx, (void)xs, (void)Y, (void)ldy,
        (void)y16, (void)ld16, (void)G, (void)ldg, (void)w;
#endif
}

/* dQ (rows, hs) += (scale D) (rows, kc; ldd) K[k0, k0 + kc) from the bf16
 * K blocks (D = dS; scale D rounded). */
static inline void FN(attn_sdpa_bf16_dq)(const FN(attn_sdpa_run_args) *a, size_t b, size_t g,
                                         size_t rows, size_t k0, size_t kc, const real *D,
                                         size_t ldd, real *dQ, size_t ldq, uint16_t *a16)
{
    size_t kb;
    const uint16_t *block = FN(bf16_k_block)(a, b, g, k0, &kb);
    FN(bf16_rows_scaled)(a, rows, kc, D, ldd, (float)a->scale, a16);
    const size_t kp = FN(bf16_round_up)(kc, ATTN_BF16_K_STEP);
    a->bf16.gemm(rows, a->layout.shape.hs, kp, a16, kp, block, kb, 1, (float *)dQ, ldq);
}

#endif /* ATTN_SDPA_BF16_BACKWARD_H */
