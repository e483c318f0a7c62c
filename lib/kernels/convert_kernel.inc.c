/*
 * bfloat16 and float16 to and from float over n elements (kernels.h,
 * attn_half_kernels), written once over a kernel set's vocabulary:
 *   HALF_LANES                     elements per block
 *   bf16_widen_block(src, dst)     HALF_LANES uint16 -> float, and so
 *   bf16_narrow_block(src, dst)    f16_widen_block, f16_narrow_block
 * with the same results as half_bits.h's, which does the tail.
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

ATTN_CONVERT_LOOPS(bf16_widen, bf16_widen_block, attn_bf16_bits_to_f32, uint16_t, float)
ATTN_CONVERT_LOOPS(bf16_narrow, bf16_narrow_block, attn_bf16_bits_from_f32, float, uint16_t)
ATTN_CONVERT_LOOPS(f16_widen, f16_widen_block, attn_f16_bits_to_f32, uint16_t, float)
ATTN_CONVERT_LOOPS(f16_narrow, f16_narrow_block, attn_f16_bits_from_f32, float, uint16_t)

#undef ATTN_CONVERT_LOOPS
#undef CONVERT_NAME
