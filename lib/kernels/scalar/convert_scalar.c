/* The half-precision conversions of the scalar set: half_bits.h element by
 * element (every CPU). */
#include "kernels/half_bits.h"

#define HALF_LANES 1
#define bf16_widen_block(s, d) (*(d) = attn_bf16_bits_to_f32(*(s)))
#define bf16_narrow_block(s, d) (*(d) = attn_bf16_bits_from_f32(*(s)))
#define f16_widen_block(s, d) (*(d) = attn_f16_bits_to_f32(*(s)))
#define f16_narrow_block(s, d) (*(d) = attn_f16_bits_from_f32(*(s)))
#define CONVERT_NAME(op) attn_##op##_scalar
#include "kernels/convert_kernel.inc.c"
