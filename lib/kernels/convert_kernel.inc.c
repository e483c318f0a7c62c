/*
 * bfloat16 and float16 to and from float over n elements (kernels.h,
 * attn_half_kernels), written once over a kernel set's vocabulary:
 *   HALF_LANES                     elements per block
 *   bf16_widen_block(src, dst)     HALF_LANES uint16 -> float, and so
 *   bf16_narrow_block(src, dst)    f16_widen_block, f16_narrow_block
 * with the same results as half_bits.h's, which does the tail; and
 * narrow_scaled, the narrowing of scale times each element.
 * Names: CONVERT_NAME(op), e.g. CONVERT_NAME(bf16_widen).
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels/half_bits.h"

#define ATTN_CONVERT_LOOPS(op, block, one, src_t, dst_t)                 \
    void CONVERT_NAME(op)(const src_t *src, dst_t *dst, size_t n);       \
    void CONVERT_NAME(op)(const src_t *src, dst_t *dst, size_t n)        \
    {                                                                    \
        size_t i = 0;                                                    \
        for (; i + HALF_LANES <= n; i += HALF_LANES)                     \
            block(src + i, dst + i);                                     \
        for (; i < n; i++)                                               \
            dst[i] = one(src[i]);                                        \
    }

/* dst = narrow(scale src): each block scaled into a buffer the compiler
 * keeps in registers, then narrowed as narrow does (one pass: a half
 * forward's rows of out, normalized and rounded at once). */
#define ATTN_NARROW_SCALED(op, block, one)                                          \
    void CONVERT_NAME(op)(const float *src, float scale, uint16_t *dst, size_t n);  \
    void CONVERT_NAME(op)(const float *src, float scale, uint16_t *dst, size_t n)   \
    {                                                                               \
        size_t i = 0;                                                               \
        for (; i + HALF_LANES <= n; i += HALF_LANES) {                              \
            float scaled[HALF_LANES];                                               \
            for (size_t k = 0; k < HALF_LANES; k++)                                 \
                scaled[k] = src[i + k] * scale;                                     \
            block(scaled, dst + i);                                                 \
        }                                                                           \
        for (; i < n; i++)                                                          \
            dst[i] = one(src[i] * scale);                                           \
    }

ATTN_CONVERT_LOOPS(bf16_widen, bf16_widen_block, attn_bf16_bits_to_f32, uint16_t, float)
ATTN_CONVERT_LOOPS(bf16_narrow, bf16_narrow_block, attn_bf16_bits_from_f32, float, uint16_t)
ATTN_CONVERT_LOOPS(f16_widen, f16_widen_block, attn_f16_bits_to_f32, uint16_t, float)
ATTN_CONVERT_LOOPS(f16_narrow, f16_narrow_block, attn_f16_bits_from_f32, float, uint16_t)
ATTN_NARROW_SCALED(bf16_narrow_scaled, bf16_narrow_block, attn_bf16_bits_from_f32)
ATTN_NARROW_SCALED(f16_narrow_scaled, f16_narrow_block, attn_f16_bits_from_f32)

#undef ATTN_NARROW_SCALED
#undef ATTN_CONVERT_LOOPS
#undef CONVERT_NAME
