/*
 * The B operand of the bf16 products (kernels.h, attn_bf16_gemm_fn) from
 * float copies of bf16 numbers. Shapes:
 *   attn_bf16_pack_transposed  B (K, N) = X^T, X (N, K) rows ldx apart: K^T
 *                              of the scores, X = K
 *   attn_bf16_pack             B (K, N) = X,   X (K, N) rows ldx apart: the
 *                              values V of P V
 * From float copies of bf16 numbers, or (the _bf16 twins) from bf16 bits
 * themselves, one source for both (bf16_pack.inc.c).
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

#define PACK_SOURCE float
#define PACK_BITS(x) top(x)
#define PACK_NAME(name) name
#include "kernels/bf16_pack.inc.c"

#define PACK_SOURCE uint16_t
#define PACK_BITS(x) ((uint32_t)(x))
#define PACK_NAME(name) name##_bf16
#include "kernels/bf16_pack.inc.c"
