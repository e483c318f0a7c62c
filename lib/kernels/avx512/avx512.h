/* AVX-512F vocabulary; see README.md. One definition serves both element
 * types: ATTN_V(name) picks the _ps (float) or _pd (double) intrinsic. */
#ifndef ATTN_SIMD_AVX512_H
#define ATTN_SIMD_AVX512_H

#include <immintrin.h>

#include "core/real.h"

#if ATTN_REAL_BITS == 32
typedef __m512 vec;
typedef __mmask16 attn_lanes;
#define VLEN 16
#define ATTN_V(name) name##_ps
#else
typedef __m512d vec;
typedef __mmask8 attn_lanes;
#define VLEN 8
#define ATTN_V(name) name##_pd
#endif

static inline attn_lanes attn_lane_mask(size_t n) { return (attn_lanes)((1u << n) - 1u); }
static inline vec v_set1(real x) { return ATTN_V(_mm512_set1)(x); }
static inline vec v_load(const real *p) { return ATTN_V(_mm512_loadu)(p); }
static inline void v_store(real *p, vec v) { ATTN_V(_mm512_storeu)(p, v); }
static inline vec v_load_part(const real *p, size_t n, real fill)
{
    return ATTN_V(_mm512_mask_loadu)(v_set1(fill), attn_lane_mask(n), p);
}
static inline void v_store_part(real *p, vec v, size_t n)
{
    ATTN_V(_mm512_mask_storeu)(p, attn_lane_mask(n), v);
}
static inline vec v_add(vec a, vec b) { return ATTN_V(_mm512_add)(a, b); }
static inline vec v_sub(vec a, vec b) { return ATTN_V(_mm512_sub)(a, b); }
static inline vec v_mul(vec a, vec b) { return ATTN_V(_mm512_mul)(a, b); }
static inline vec v_fmadd(vec a, vec b, vec c) { return ATTN_V(_mm512_fmadd)(a, b, c); }
static inline vec v_min(vec a, vec b) { return ATTN_V(_mm512_min)(a, b); }
static inline vec v_max(vec a, vec b) { return ATTN_V(_mm512_max)(a, b); }
/* Lanes of v where x < t (ordered: a NaN x keeps its lane) set to 0. */
static inline vec v_zero_below(vec v, vec x, vec t)
{
#if ATTN_REAL_BITS == 32
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, t, _CMP_NLT_UQ), v);
#else
    return _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(x, t, _CMP_NLT_UQ), v);
#endif
}
static inline vec v_round(vec a)
{
    return ATTN_V(_mm512_roundscale)(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* scalef computes p * 2^floor(n) with correct overflow and gradual underflow. */
static inline vec v_scale2(vec p, vec n) { return ATTN_V(_mm512_scalef)(p, n); }
static inline real v_hmax(vec v) { return ATTN_V(_mm512_reduce_max)(v); }
static inline real v_hsum(vec v) { return ATTN_V(_mm512_reduce_add)(v); }

/* The matrix product's micro-tile (gemm_kernel.inc.c): MR rows x NV vectors,
 * 24 accumulators of the 32 registers. 6 x 4 vectors (64 columns in f32:
 * one head of 64 in one panel) measured 2-5% faster than 12 x 2 and 8 x 3
 * on a Sapphire Rapids core (f32 NN 144x768x768: 201 vs 194 GFLOP/s; TN
 * 1024x64x128: 218 vs 192). */
/* Rows of C per group of its unpacked path (two accumulators per row). */
#define ATTN_GEMM_DIRECT_ROWS 8
/* Rows shorter than a vector that the softmax takes at once
 * (32 registers: 8 rows of two vectors each fit). */
#define ATTN_SOFTMAX_SHORT_ROWS 8
#define ATTN_GEMM_MR 6
#define ATTN_GEMM_NV 4

#endif /* ATTN_SIMD_AVX512_H */
