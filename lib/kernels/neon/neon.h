/* AArch64 NEON (Advanced SIMD) vocabulary; see README.md. NEON is part of
 * the AArch64 baseline: no compiler flag, no CPU check beyond isa.c's. The
 * arithmetic is one definition for both element types (ATTN_V(name) picks
 * the _f32 or _f64 intrinsic, ATTN_I(name) the matching integer lanes, _s32
 * or _s64); only the types and the exponent constants differ per type.
 *
 * Shapes: vec holds VLEN reals (float32x4_t: 4 floats, float64x2_t: 2
 * doubles) in 128 bits; 32 such registers. NEON has no masked loads or
 * stores: the partial accesses go through a VLEN-element array, reading and
 * writing exactly the n elements asked for. min, max and the horizontal max
 * follow x86's rules (the second operand when either is NaN), not NEON's
 * fmin/fmax, so that the kernels' NaN handling is that of the other sets. */
#ifndef ATTN_SIMD_NEON_H
#define ATTN_SIMD_NEON_H

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "core/real.h"

#if ATTN_REAL_BITS == 32
typedef float32x4_t vec;
typedef int32x4_t attn_ints; /* the integer lanes of a vec */
#define VLEN 4
#define ATTN_V(name) name##_f32
#define ATTN_I(name) name##_s32
#define ATTN_MANT_BITS 23
#define ATTN_EXP_BIAS 127
#define attn_bits_as_vec vreinterpretq_f32_s32
#define attn_round_to_ints vcvtnq_s32_f32
#else
typedef float64x2_t vec;
typedef int64x2_t attn_ints;
#define VLEN 2
#define ATTN_V(name) name##_f64
#define ATTN_I(name) name##_s64
#define ATTN_MANT_BITS 52
#define ATTN_EXP_BIAS 1023
#define attn_bits_as_vec vreinterpretq_f64_s64
#define attn_round_to_ints vcvtnq_s64_f64
#endif

static inline vec v_set1(real x) { return ATTN_V(vdupq_n)(x); }
static inline vec v_load(const real *p) { return ATTN_V(vld1q)(p); }
static inline void v_store(real *p, vec v) { ATTN_V(vst1q)(p, v); }
/* Lanes < n (0 <= n <= VLEN) from p, the rest fill: p[n] and on never read. */
static inline vec v_load_part(const real *p, size_t n, real fill)
{
    real lanes[VLEN];
    for (size_t i = 0; i < VLEN; i++)
        lanes[i] = i < n ? p[i] : fill;
    return v_load(lanes);
}
/* Lanes < n (0 <= n <= VLEN) to p; p[n] and on untouched. */
static inline void v_store_part(real *p, vec v, size_t n)
{
    real lanes[VLEN];
    v_store(lanes, v);
    for (size_t i = 0; i < n && i < VLEN; i++)
        p[i] = lanes[i];
}
static inline vec v_add(vec a, vec b) { return ATTN_V(vaddq)(a, b); }
static inline vec v_sub(vec a, vec b) { return ATTN_V(vsubq)(a, b); }
static inline vec v_mul(vec a, vec b) { return ATTN_V(vmulq)(a, b); }
/* a*b + c, fused (vfmaq takes the addend first). */
static inline vec v_fmadd(vec a, vec b, vec c) { return ATTN_V(vfmaq)(c, a, b); }
/* x86 semantics: a < b ? a : b and a > b ? a : b, so b when either is NaN. */
static inline vec v_min(vec a, vec b) { return ATTN_V(vbslq)(ATTN_V(vcltq)(a, b), a, b); }
static inline vec v_max(vec a, vec b) { return ATTN_V(vbslq)(ATTN_V(vcgtq)(a, b), a, b); }
/* Lanes of v where x < t (ordered: a NaN x keeps its lane) set to 0. */
static inline vec v_zero_below(vec v, vec x, vec t)
{
    return ATTN_V(vbslq)(ATTN_V(vcltq)(x, t), v_set1(REAL_C(0.0)), v);
}
/* Round to nearest, ties to even (FRINTN). */
static inline vec v_round(vec a) { return ATTN_V(vrndnq)(a); }

/* 2^e for e in the normal exponent range. */
static inline vec attn_pow2_normal(attn_ints e)
{
    return attn_bits_as_vec(
        ATTN_I(vshlq_n)(ATTN_I(vaddq)(e, ATTN_I(vdupq_n)(ATTN_EXP_BIAS)), ATTN_MANT_BITS));
}
/* p * 2^n in two exact steps 2^floor(n/2) * 2^ceil(n/2), each a normal
 * number (as avx2.h): overflow to inf, gradual underflow in the second
 * product. n is integral; a NaN n converts to 0 but only comes with a NaN p,
 * which the product keeps. */
static inline vec v_scale2(vec p, vec n)
{
    const attn_ints k = attn_round_to_ints(n);
    const attn_ints half = ATTN_I(vshrq_n)(k, 1); /* arithmetic: floor(k/2) */
    return v_mul(v_mul(p, attn_pow2_normal(half)), attn_pow2_normal(ATTN_I(vsubq)(k, half)));
}
/* p * 2^n for integral n whose 2^n is normal: one product. */
static inline vec v_scale2_normal(vec p, vec n)
{
    return v_mul(p, attn_pow2_normal(attn_round_to_ints(n)));
}

/* Horizontal max folded as avx2.h folds it (lane i with lane i + VLEN/2,
 * halving), with v_max's NaN rule at every step. */
static inline real v_hmax(vec v)
{
    real lanes[VLEN];
    v_store(lanes, v);
    for (size_t width = VLEN / 2; width > 0; width /= 2)
        for (size_t i = 0; i < width; i++)
            lanes[i] = lanes[i] > lanes[i + width] ? lanes[i] : lanes[i + width];
    return lanes[0];
}
static inline real v_hsum(vec v) { return ATTN_V(vaddvq)(v); }
/* r[i] lane j <- r[j] lane i: f32 4 x 4 by pairs transposed (trn) and
 * their halves recombined; f64 2 x 2 by zip. */
static inline void v_transpose(vec r[VLEN])
{
#if ATTN_REAL_BITS == 32
    const float32x4x2_t a = vtrnq_f32(r[0], r[1]), b = vtrnq_f32(r[2], r[3]);
    r[0] = vcombine_f32(vget_low_f32(a.val[0]), vget_low_f32(b.val[0]));
    r[1] = vcombine_f32(vget_low_f32(a.val[1]), vget_low_f32(b.val[1]));
    r[2] = vcombine_f32(vget_high_f32(a.val[0]), vget_high_f32(b.val[0]));
    r[3] = vcombine_f32(vget_high_f32(a.val[1]), vget_high_f32(b.val[1]));
#else
    const vec lo = vzip1q_f64(r[0], r[1]), hi = vzip2q_f64(r[0], r[1]);
    r[0] = lo;
    r[1] = hi;
#endif
}

/* The 32-bit integer lanes of attention dropout's Philox
 * (dropout_kernel.inc.c; README.md): 4 counters at once. */
typedef uint32x4_t uvec;
#define ULEN 4
static inline uvec u_set1(uint32_t x) { return vdupq_n_u32(x); }
static inline uvec u_iota(uint32_t base)
{
    const uint32_t lanes[4] = {0, 1, 2, 3};
    return vaddq_u32(u_set1(base), vld1q_u32(lanes));
}
static inline uvec u_xor(uvec a, uvec b) { return veorq_u32(a, b); }
/* (hi, lo) = m * a lane-wise, 32 x 32 -> 64 bits: the low and high words
 * of the four products picked by unzipping. */
static inline void u_mulhilo(uvec a, uint32_t m, uvec *hi, uvec *lo)
{
    const uint32x4_t p01 = vreinterpretq_u32_u64(vmull_u32(vget_low_u32(a), vdup_n_u32(m)));
    const uint32x4_t p23 = vreinterpretq_u32_u64(vmull_high_u32(a, vdupq_n_u32(m)));
    *lo = vuzp1q_u32(p01, p23);
    *hi = vuzp2q_u32(p01, p23);
}
/* w[4*i + k] = lane i of ck (an interleaving store). */
static inline void u_store4(uint32_t *w, uvec c0, uvec c1, uvec c2, uvec c3)
{
    const uint32x4x4_t c = {{c0, c1, c2, c3}};
    vst4q_u32(w, c);
}
/* Lane i: keep where w[i] >= threshold (unsigned), else 0. */
static inline vec v_keep(const uint32_t *w, uint32_t threshold, vec keep)
{
#if ATTN_REAL_BITS == 32
    const uint32x4_t kept = vcgeq_u32(vld1q_u32(w), vdupq_n_u32(threshold));
    return vreinterpretq_f32_u32(vandq_u32(kept, vreinterpretq_u32_f32(keep)));
#else
    const uint32x2_t kept = vcge_u32(vld1_u32(w), vdup_n_u32(threshold));
    const uint64x2_t wide = vreinterpretq_u64_s64(vmovl_s32(vreinterpret_s32_u32(kept)));
    return vreinterpretq_f64_u64(vandq_u64(wide, vreinterpretq_u64_f64(keep)));
#endif
}

/* The matrix product's micro-tile (gemm_kernel.inc.c): MR rows x NV vectors,
 * 24 accumulators of the 32 registers, plus NV of op(B) and a broadcast of
 * op(A) (8 x 4 would need all 32 for the accumulators alone); NR = 16
 * columns in f32, 8 in f64, divisors of ATTN_GEMM_NR_MAX. Not tuned on
 * ARM hardware (none measured). */
/* Rows of C per group of its unpacked path (two accumulators per row). */
#define ATTN_GEMM_DIRECT_ROWS 8
/* Rows shorter than a vector that the softmax takes at once
 * (32 registers: 8 rows of two vectors each fit). */
#define ATTN_SOFTMAX_SHORT_ROWS 8
#define ATTN_GEMM_MR 6
#define ATTN_GEMM_NV 4

#if ATTN_REAL_BITS == 32
/* VLEN bfloat16 or float16 elements (16-bit storage) widened to floats:
 * the few-row products on half keys and values (rows_half.inc.c). */
static inline vec v_load_bf16(const uint16_t *p)
{
    return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16));
}
static inline vec v_load_f16(const uint16_t *p)
{
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}
#endif

#endif /* ATTN_SIMD_NEON_H */
