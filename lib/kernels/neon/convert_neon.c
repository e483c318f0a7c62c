/* The half-precision conversions of the neon set: 4 elements a block;
 * float16 by fcvtl / fcvtn, bfloat16 by integer shifts and the
 * round-to-nearest-even carry of half_bits.h. */
#include <arm_neon.h>

#include "kernels/half_bits.h"

#define HALF_LANES 4

static inline void bf16_widen_block(const uint16_t *s, float *d)
{
    vst1q_f32(d, vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(s), 16)));
}

static inline void bf16_narrow_block(const float *s, uint16_t *d)
{
    const float32x4_t x = vld1q_f32(s);
    const uint32x4_t u = vreinterpretq_u32_f32(x);
    const uint32x4_t top = vshrq_n_u32(u, 16);
    const uint32x4_t bias = vaddq_u32(vandq_u32(top, vdupq_n_u32(1)), vdupq_n_u32(0x7fff));
    const uint32x4_t r = vshrq_n_u32(vaddq_u32(u, bias), 16);
    const uint32x4_t number = vceqq_f32(x, x); /* all ones unless NaN */
    const uint32x4_t q = vorrq_u32(top, vdupq_n_u32(0x40));
    vst1_u16(d, vmovn_u32(vbslq_u32(number, r, q)));
}

static inline void f16_widen_block(const uint16_t *s, float *d)
{
    vst1q_f32(d, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(s))));
}

static inline void f16_narrow_block(const float *s, uint16_t *d)
{
    vst1_u16(d, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(s))));
}

#define CONVERT_NAME(op) attn_##op##_neon
#include "kernels/convert_kernel.inc.c"
