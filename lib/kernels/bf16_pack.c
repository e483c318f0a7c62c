/*
 * The B operand of the bf16 products (kernels.h, attn_bf16_gemm_fn) from
 * float copies of bf16 numbers. Shapes:
 *   attn_bf16_pack_transposed  B (K, N) = X^T, X (N, K) rows ldx apart: K^T
 *                              of the scores, X = K
 *   attn_bf16_pack             B (K, N) = X,   X (K, N) rows ldx apart: the
 *                              values V of P V
 * Layout: panels of ATTN_BF16_NR columns, each (Kp / 2) rows of NR pairs
 * (B(k, j), B(k + 1, j)) for even k, Kp = K rounded up to ATTN_BF16_K_STEP;
 * zero past K and past N. Both return whether every packed value is
 * finite (the engine's flag: sdpa_bf16.h). Portable C: packing is O(K N),
 * the products that read it O(M K N).
 */
#include <stdint.h>
#include <string.h>

#include "kernels/kernels.h"

enum { NR = ATTN_BF16_NR };

/* The bf16 bits of a float holding a bf16 number: its top half, exact. */
static uint32_t top(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u >> 16;
}

/* Nonzero when a half of the word is a bf16 that is not finite (its
 * exponent all ones: adding 1 to it carries into the half's top bit). */
static uint32_t not_finite(uint32_t w)
{
    return ((w & 0x7f807f80u) + 0x00800080u) & 0x80008000u;
}

static size_t padded_k(size_t K)
{
    return (K + ATTN_BF16_K_STEP - 1) / ATTN_BF16_K_STEP * ATTN_BF16_K_STEP;
}

/* Pair row w[j] = (lo[j], hi[j]) for j < n, 0 up to NR; a NULL row is 0.
 * Returns whether a value is not finite. */
static uint32_t pair_row(const float *lo, const float *hi, size_t n, uint32_t w[NR])
{
    uint32_t bad = 0;
    size_t j = 0;
    if (lo != NULL && hi != NULL)
        for (; j < n; j++) {
            w[j] = top(lo[j]) | top(hi[j]) << 16;
            bad |= not_finite(w[j]);
        }
    else if (lo != NULL)
        for (; j < n; j++) {
            w[j] = top(lo[j]);
            bad |= not_finite(w[j]);
        }
    for (; j < NR; j++)
        w[j] = 0;
    return bad;
}

int attn_bf16_pack(size_t K, size_t N, const float *X, size_t ldx, uint16_t *B)
{
    const size_t Kp = padded_k(K);
    uint32_t bad = 0;
    for (size_t p = 0; p * NR < N; p++) {
        const size_t cols = N - p * NR < NR ? N - p * NR : NR;
        uint16_t *panel = B + p * Kp * NR;
        for (size_t k = 0; k < Kp; k += 2) {
            uint32_t w[NR];
            bad |= pair_row(k < K ? X + k * ldx + p * NR : NULL,
                            k + 1 < K ? X + (k + 1) * ldx + p * NR : NULL, cols, w);
            memcpy(panel + k * NR, w, sizeof w);
        }
    }
    return !bad;
}

/* B = X^T: each row of X read once, in order, its pairs stored down the
 * panel's column (the panel, Kp / 2 rows of NR words, stays in L1). */
int attn_bf16_pack_transposed(size_t N, size_t K, const float *X, size_t ldx, uint16_t *B)
{
    const size_t Kp = padded_k(K), pairs = K / 2;
    uint32_t bad = 0;
    for (size_t p = 0; p * NR < N; p++) {
        const size_t cols = N - p * NR < NR ? N - p * NR : NR;
        uint32_t *panel = (uint32_t *)(void *)(B + p * Kp * NR);
        for (size_t j = 0; j < cols; j++) {
            const float *x = X + (p * NR + j) * ldx;
            for (size_t k2 = 0; k2 < pairs; k2++) {
                const uint32_t w = top(x[2 * k2]) | top(x[2 * k2 + 1]) << 16;
                bad |= not_finite(w);
                panel[k2 * NR + j] = w;
            }
            for (size_t k2 = pairs; k2 < Kp / 2; k2++) { /* K odd: the last alone */
                const uint32_t w = 2 * k2 < K ? top(x[2 * k2]) : 0;
                bad |= not_finite(w);
                panel[k2 * NR + j] = w;
            }
        }
        for (size_t k2 = 0; k2 < Kp / 2; k2++) /* columns past N */
            memset(panel + k2 * NR + cols, 0, (NR - cols) * sizeof(uint32_t));
    }
    return !bad;
}
