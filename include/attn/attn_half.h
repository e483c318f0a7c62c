/*
 * attn — the half-precision part of attn.h (which includes this header;
 * include <attn/attn.h>). The conventions of attn.h hold.
 */
#ifndef ATTN_ATTN_HALF_H
#define ATTN_ATTN_HALF_H

#include <attn/attn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- half precision (sdpa): bfloat16 and float16 ---------------------------
 * The sdpa calls again with Q, K, V, out (and the backward's dout, dQ, dK,
 * dV) stored in 16 bits: attn_bf16 (bfloat16: float's sign, 8-bit exponent
 * and top 7 fraction bits) or attn_f16 (IEEE 754 binary16), each a struct
 * around its bits so that a compiler refuses one passed for the other or
 * for a uint16_t. The mask and lse stay float. A plan made with
 * attn_sdpa_plan_create(&plan, ATTN_BF16 or ATTN_F16, ...) takes only the
 * calls of its type (else ATTN_ERR_DTYPE_MISMATCH); every semantic, rule,
 * stride and error of the float calls holds, with strides in elements of
 * the half type.
 *
 * Arithmetic: the inputs are widened to float exactly; the products
 * accumulate in float; the softmax, its row statistics and lse are float;
 * each output element is rounded once to the half type, to nearest even
 * (overflow gives +-INFINITY, NaN stays NaN). Kernels that multiply in the
 * half type round the weights P to it before P V (the flash kernels of
 * PyTorch and oneDNN do the same); the bound below covers that. With
 * x the exact result of the same half inputs in real arithmetic, n a row's
 * visible keys, d = hs, u = 2^-8 (bf16) or 2^-11 (f16) and
 *   g = 2^-24 (n + d + 16) + 2^-23 d scale max_j sum_i |Q_i K_ji|,
 * every element c of out satisfies
 *   |out - x| <= u |x| + (u_P + 4 g) max_j |V_jc| + eta,
 * u_P = u (bf16), 0 (f16), the max over the row's visible keys, eta half
 * the smallest subnormal of the type (2^-134 bf16, 2^-25 f16: results in
 * the subnormal range round on its absolute grid); lse within
 * 4 g + 2^-23 |lse| of its exact value. Where the products are made in
 * bf16 (below), the instructions take subnormal inputs and sums for zero,
 * and the forward's weights are exponentials 2^t of a rounded t (up to
 * 2^11 relative to the row's first shift), written in bf16 as they are
 * made: g then gains 2^-24 (n + 16) + 2^-126 d scale (1 + max|Q| +
 * max|K|), and the bound (n + 1) 2^-126 (1 + max_j |V_jc|). The scale's limit is float's
 * (FLT_MAX): the scores are floats. The backward computes in float from
 * the half inputs and dout: out recomputed in float (a->out is checked,
 * not read), so the row sums <dout, out> carry no rounding of out; each
 * gradient rounded once. Where its products are made in bf16 (below), P
 * and dS are rounded to bf16 before them and the row sums are taken from
 * a->out as given (read, not recomputed), as the flash backward of
 * PyTorch and FlashAttention do: each gradient element gains 2 u_P times
 * the sum of the magnitudes of its terms (those of <dout, out> counted as
 * sum_c |dout_c| sum_j P_j |V_jc|).
 *
 * Kernels: a call of one query (a decode step) reads K and V in place in
 * 16 bits, widened in registers by the few-row kernels; other calls widen
 * the half inputs they read (keys below each key length only) into the
 * plan's float copies, on the plan's threads, and the gradients are
 * rounded back from float ones; a forward rounds each row of out into the
 * caller's as it finishes it. A bf16 forward or backward of 128 queries
 * or more on attn's own threads, hs (and, backward, hs_v) a multiple of 32,
 * makes its products in bf16 with float sums where attn_simd_name() is
 * "amx" (AMX-BF16 tiles: Intel
 * Sapphire Rapids on) or "avx512-bf16" (vdpbf16ps: the default on AMD Zen
 * 4/5; Intel issues it at half its float FMA rate); a (b, g) with a value
 * (V, backward K too) that is not finite takes the float products. Such a
 * forward without a window reads Q, K and V in place in bf16 (no float
 * copies) and writes P in bf16 from its softmax; such a backward reads Q,
 * K, V, out and dout in place (no float copies but of a (b, g) taking the
 * float products).
 * Everything else runs on the float engine. A half plan holds, beside a float plan's memory, float
 * copies of Q, K, V and out (B*(NH*Tq*(hs+hs_v) + NH_kv*Tk*(hs+hs_v))
 * floats), in training twice that. */
typedef struct attn_bf16 {
    uint16_t bits;
} attn_bf16;
typedef struct attn_f16 {
    uint16_t bits;
} attn_f16;

typedef struct attn_sdpa_args_bf16 {
    const attn_bf16 *Q; size_t ldq;
    const attn_bf16 *K; size_t ldk;
    const attn_bf16 *V; size_t ldv;
    const float *mask;
    size_t mask_ld, mask_sb, mask_sh;
    const size_t *key_lengths;
    attn_bf16 *out; size_t ldo;
    float *lse;
    size_t sbq, shq;
    size_t sbk, shk;
    size_t sbv, shv;
    size_t sbo, sho;
} attn_sdpa_args_bf16;

typedef struct attn_sdpa_args_f16 {
    const attn_f16 *Q; size_t ldq;
    const attn_f16 *K; size_t ldk;
    const attn_f16 *V; size_t ldv;
    const float *mask;
    size_t mask_ld, mask_sb, mask_sh;
    const size_t *key_lengths;
    attn_f16 *out; size_t ldo;
    float *lse;
    size_t sbq, shq;
    size_t sbk, shk;
    size_t sbv, shv;
    size_t sbo, sho;
} attn_sdpa_args_f16;

/* As attn_sdpa_forward_f32, attn_sdpa_backward_f32 and attn_sdpa_f32. */
ATTN_API attn_status attn_sdpa_forward_bf16(attn_plan *plan, const attn_sdpa_args_bf16 *a);
ATTN_API attn_status attn_sdpa_forward_f16(attn_plan *plan, const attn_sdpa_args_f16 *a);
ATTN_API attn_status attn_sdpa_backward_bf16(attn_plan *plan, const attn_sdpa_args_bf16 *a,
                                             const attn_bf16 *dout, attn_bf16 *dQ,
                                             attn_bf16 *dK, attn_bf16 *dV);
ATTN_API attn_status attn_sdpa_backward_f16(attn_plan *plan, const attn_sdpa_args_f16 *a,
                                            const attn_f16 *dout, attn_f16 *dQ, attn_f16 *dK,
                                            attn_f16 *dV);
ATTN_API attn_status attn_sdpa_bf16(const attn_sdpa_shape *shape, double scale, unsigned flags,
                                    size_t window, const attn_sdpa_args_bf16 *a);
ATTN_API attn_status attn_sdpa_f16(const attn_sdpa_shape *shape, double scale, unsigned flags,
                                   size_t window, const attn_sdpa_args_f16 *a);

/* Conversions, as the calls above do them: widening is exact; narrowing
 * rounds to nearest even, overflows to +-INFINITY and keeps NaN a NaN
 * (quiet, sign kept). n elements; no overlap between src and dst. */
ATTN_API void attn_bf16_from_f32(const float *src, attn_bf16 *dst, size_t n);
ATTN_API void attn_bf16_to_f32(const attn_bf16 *src, float *dst, size_t n);
ATTN_API void attn_f16_from_f32(const float *src, attn_f16 *dst, size_t n);
ATTN_API void attn_f16_to_f32(const attn_f16 *src, float *dst, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_ATTN_HALF_H */
