/*
 * The B operand of the bf16 products (kernels.h, attn_bf16_gemm_fn) from
 * float copies of bf16 numbers. Shapes:
 *   attn_bf16_pack_transposed  B (K, N) = X^T, X (N, K) rows ldx apart: K^T
 *                              of the scores, X = K
 *   attn_bf16_pack             B (K, N) = X,   X (K, N) rows ldx apart: the
 *                              values V of P V
 * Layout: panels of ATTN_BF16_NR columns, each (Kp / 2) rows of NR pairs
 * (B(k, j), B(k + 1, j)) for even k, Kp = K rounded up to ATTN_BF16_K_STEP;
 * zero past K and past N. Portable C (the loops over a row of pairs
 * vectorize): packing is O(K N), the products that read it O(M K N).
 */
#include <stdint.h>
#include <string.h>

#include "kernels/kernels.h"

enum { NR = ATTN_BF16_NR, KP_MAX = ATTN_GEMM_KC }; /* the engine's hs <= ATTN_GEMM_KC */

/* The bf16 bits of a float holding a bf16 number: its top half, exact. */
static uint32_t top(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u >> 16;
}

static size_t padded_k(size_t K)
{
    return (K + ATTN_BF16_K_STEP - 1) / ATTN_BF16_K_STEP * ATTN_BF16_K_STEP;
}

/* Pair row w[j] = (lo[j], hi[j]) for j < n, 0 up to NR; a NULL row is 0. */
static void pair_row(const float *lo, const float *hi, size_t n, uint32_t w[NR])
{
    size_t j = 0;
    if (lo != NULL && hi != NULL)
        for (; j < n; j++)
            w[j] = top(lo[j]) | top(hi[j]) << 16;
    else if (lo != NULL)
        for (; j < n; j++)
            w[j] = top(lo[j]);
    for (; j < NR; j++)
        w[j] = 0;
}

void attn_bf16_pack(size_t K, size_t N, const float *X, size_t ldx, uint16_t *B)
{
    const size_t Kp = padded_k(K);
    for (size_t p = 0; p * NR < N; p++) {
        const size_t cols = N - p * NR < NR ? N - p * NR : NR;
        uint16_t *panel = B + p * Kp * NR;
        for (size_t k = 0; k < Kp; k += 2) {
            uint32_t w[NR];
            pair_row(k < K ? X + k * ldx + p * NR : NULL,
                     k + 1 < K ? X + (k + 1) * ldx + p * NR : NULL, cols, w);
            memcpy(panel + k * NR, w, sizeof w);
        }
    }
}

void attn_bf16_pack_transposed(size_t N, size_t K, const float *X, size_t ldx, uint16_t *B)
{
    const size_t Kp = padded_k(K);
    if (Kp > KP_MAX) /* not a shape of the engine's (hs <= ATTN_GEMM_KC) */
        return;
    for (size_t p = 0; p * NR < N; p++) {
        const size_t cols = N - p * NR < NR ? N - p * NR : NR;
        uint16_t *panel = B + p * Kp * NR;
        uint32_t words[NR][KP_MAX / 2]; /* the panel's rows of X as pairs: 32 KiB */
        for (size_t j = 0; j < NR; j++) {
            const float *x = j < cols ? X + (p * NR + j) * ldx : NULL;
            size_t k = 0;
            for (; x != NULL && k + 1 < K; k += 2)
                words[j][k / 2] = top(x[k]) | top(x[k + 1]) << 16;
            for (; x != NULL && k < K; k += 2) /* K odd: the last alone */
                words[j][k / 2] = top(x[k]);
            for (; k < Kp; k += 2)
                words[j][k / 2] = 0;
        }
        for (size_t k2 = 0; k2 < Kp / 2; k2++) {
            uint32_t w[NR];
            for (size_t j = 0; j < NR; j++)
                w[j] = words[j][k2];
            memcpy(panel + 2 * k2 * NR, w, sizeof w);
        }
    }
}
