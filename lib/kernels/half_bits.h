/*
 * One element of bfloat16 or float16 to and from float, in portable C: the
 * scalar kernel set's conversions and the other sets' tails (attn.h, "half
 * precision": widening exact; narrowing to nearest even, overflow to
 * +-INFINITY, NaN kept a quiet NaN of the same sign, as the F16C and NEON
 * instructions give it).
 */
#ifndef ATTN_HALF_BITS_H
#define ATTN_HALF_BITS_H

#include <stdint.h>
#include <string.h>

static inline uint32_t attn_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float attn_f32_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float attn_bf16_bits_to_f32(uint16_t h)
{
    return attn_f32_of_bits((uint32_t)h << 16);
}

static inline uint16_t attn_bf16_bits_from_f32(float f)
{
    const uint32_t u = attn_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: quiet, top of its payload */
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline float attn_f16_bits_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) /* Inf, NaN */
        return attn_f32_of_bits(sign | 0x7f800000u | (m << 13));
    if (e == 0) { /* zero, subnormal: m 2^-24, exact in float */
        const float v = (float)m * 0x1p-24f;
        return sign != 0 ? -v : v;
    }
    return attn_f32_of_bits(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t attn_f16_bits_from_f32(float f)
{
    const uint32_t u = attn_f32_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: quiet, top of its payload */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* 65520 and above (and Inf) round to Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a < 0x38800000u) { /* below 2^-14: a multiple of 2^-24, the ulp of 0.5f */
        const float rounded = attn_f32_of_bits(a) + 0.5f; /* rounds to nearest even */
        return (uint16_t)(sign | (attn_f32_bits(rounded) - 0x3f000000u));
    }
    const uint32_t r = a - (112u << 23); /* rebias the exponent, 13 bits to drop */
    return (uint16_t)(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
}

#endif /* ATTN_HALF_BITS_H */
