/* Portable scalar vocabulary (VLEN 1); see README.md. */
#ifndef ATTN_SIMD_SCALAR_H
#define ATTN_SIMD_SCALAR_H

#include <stdint.h>
#include <string.h>

#include "core/real.h"
#include "kernels/half_bits.h"

typedef real vec;
#define VLEN 1

static inline vec v_set1(real x) { return x; }
static inline vec v_load(const real *p) { return *p; }
static inline void v_store(real *p, vec v) { *p = v; }
static inline vec v_load_part(const real *p, size_t n, real fill) { return n ? *p : fill; }
static inline void v_store_part(real *p, vec v, size_t n) { if (n) *p = v; }
static inline vec v_add(vec a, vec b) { return a + b; }
static inline vec v_sub(vec a, vec b) { return a - b; }
static inline vec v_mul(vec a, vec b) { return a * b; }
/* Unfused on purpose: the portable reference must not depend on FMA hardware. */
static inline vec v_fmadd(vec a, vec b, vec c) { return a * b + c; }
static inline vec v_min(vec a, vec b) { return a < b ? a : b; }
static inline vec v_max(vec a, vec b) { return a > b ? a : b; }
/* v, or 0 where x < t (a NaN x keeps v). */
static inline vec v_zero_below(vec v, vec x, vec t) { return x < t ? REAL_C(0.0) : v; }
static inline real v_hmax(vec v) { return v; }
static inline real v_hsum(vec v) { return v; }
static inline void v_transpose(vec r[VLEN]) { (void)r; } /* 1 x 1 */

#if ATTN_REAL_BITS == 32
typedef int32_t attn_bits;
#define ATTN_MANT_BITS 23
#define ATTN_EXP_BIAS 127
#define ATTN_ROUND_MAGIC 0x1.8p23f
#else
typedef int64_t attn_bits;
#define ATTN_MANT_BITS 52
#define ATTN_EXP_BIAS 1023
#define ATTN_ROUND_MAGIC 0x1.8p52
#endif

/* Round to nearest, ties to even, for |a| < 2^(mantissa bits - 1). The
 * volatile keeps the compiler from folding (a + M) - M into a. */
static inline vec v_round(vec a)
{
    volatile real shifted = a + ATTN_ROUND_MAGIC;
    return shifted - ATTN_ROUND_MAGIC;
}

/* 2^e for e in the normal exponent range. */
static inline real attn_pow2_normal(attn_bits e)
{
    attn_bits bits = (e + ATTN_EXP_BIAS) << ATTN_MANT_BITS;
    real r;
    memcpy(&r, &bits, sizeof r);
    return r;
}

/* p * 2^n in two exact steps so that each factor is a normal number. A NaN n
 * only comes with a NaN p, which the product keeps. */
static inline vec v_scale2(vec p, vec n)
{
    if (n != n)
        return p + n;
    attn_bits k = (attn_bits)n;
    attn_bits half = k / 2;
    return p * attn_pow2_normal(half) * attn_pow2_normal(k - half);
}
/* p * 2^n for integral n whose 2^n is normal: one product (NaN as above). */
static inline vec v_scale2_normal(vec p, vec n)
{
    if (n != n)
        return p + n;
    return p * attn_pow2_normal((attn_bits)n);
}

/* The 32-bit integer lanes of attention dropout's Philox
 * (dropout_kernel.inc.c; README.md): the portable reference works lane-wise
 * on 8 counters, as core/dropout.h does (a compiler may vectorize it). */
#define ULEN 8
typedef struct uvec {
    uint32_t lane[ULEN];
} uvec;
static inline uvec u_set1(uint32_t x)
{
    uvec r;
    for (int i = 0; i < ULEN; i++)
        r.lane[i] = x;
    return r;
}
static inline uvec u_iota(uint32_t base)
{
    uvec r;
    for (int i = 0; i < ULEN; i++)
        r.lane[i] = base + (uint32_t)i;
    return r;
}
static inline uvec u_xor(uvec a, uvec b)
{
    for (int i = 0; i < ULEN; i++)
        a.lane[i] ^= b.lane[i];
    return a;
}
/* (hi, lo) = m * a lane-wise, 32 x 32 -> 64 bits. */
static inline void u_mulhilo(uvec a, uint32_t m, uvec *hi, uvec *lo)
{
    for (int i = 0; i < ULEN; i++) {
        const uint64_t p = (uint64_t)m * a.lane[i];
        hi->lane[i] = (uint32_t)(p >> 32);
        lo->lane[i] = (uint32_t)p;
    }
}
/* w[4*i + k] = lane i of ck. */
static inline void u_store4(uint32_t *w, uvec c0, uvec c1, uvec c2, uvec c3)
{
    for (int i = 0; i < ULEN; i++) {
        w[4 * i] = c0.lane[i];
        w[4 * i + 1] = c1.lane[i];
        w[4 * i + 2] = c2.lane[i];
        w[4 * i + 3] = c3.lane[i];
    }
}
/* keep where w[0] >= threshold, else 0. */
static inline vec v_keep(const uint32_t *w, uint32_t threshold, vec keep)
{
    return w[0] >= threshold ? keep : REAL_C(0.0);
}

/* The matrix product's micro-tile (gemm_kernel.inc.c): MR rows x NV vectors,
 * a small tile for the reference. */
/* Rows of C per group of its unpacked path (two accumulators per row). */
#define ATTN_GEMM_DIRECT_ROWS 4
/* Rows shorter than a vector that the softmax takes at once (none
 * here: a vector is one element). */
#define ATTN_SOFTMAX_SHORT_ROWS 4
#define ATTN_GEMM_MR 4
#define ATTN_GEMM_NV 2

#if ATTN_REAL_BITS == 32
/* VLEN bfloat16 or float16 elements (16-bit storage) widened to floats:
 * the few-row products on half keys and values (rows_half.inc.c). */
static inline vec v_load_bf16(const uint16_t *p) { return attn_bf16_bits_to_f32(*p); }
static inline vec v_load_f16(const uint16_t *p) { return attn_f16_bits_to_f32(*p); }
#endif

#endif /* ATTN_SIMD_SCALAR_H */
