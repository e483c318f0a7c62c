/* AVX-512F vocabulary; see README.md. */
#ifndef ATTN_SIMD_AVX512_H
#define ATTN_SIMD_AVX512_H

#include <immintrin.h>

#include "../real.h"

#if ATTN_REAL_BITS == 32

typedef __m512 vec;
#define VLEN 16

static inline __mmask16 attn_lane_mask(size_t n) { return (__mmask16)((1u << n) - 1u); }
static inline vec v_set1(real x) { return _mm512_set1_ps(x); }
static inline vec v_load(const real *p) { return _mm512_loadu_ps(p); }
static inline void v_store(real *p, vec v) { _mm512_storeu_ps(p, v); }
static inline vec v_load_part(const real *p, size_t n, real fill)
{
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), attn_lane_mask(n), p);
}
static inline void v_store_part(real *p, vec v, size_t n) { _mm512_mask_storeu_ps(p, attn_lane_mask(n), v); }
static inline vec v_add(vec a, vec b) { return _mm512_add_ps(a, b); }
static inline vec v_sub(vec a, vec b) { return _mm512_sub_ps(a, b); }
static inline vec v_mul(vec a, vec b) { return _mm512_mul_ps(a, b); }
static inline vec v_fmadd(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
static inline vec v_min(vec a, vec b) { return _mm512_min_ps(a, b); }
static inline vec v_max(vec a, vec b) { return _mm512_max_ps(a, b); }
static inline vec v_round(vec a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
/* scalef computes p * 2^floor(n) with correct overflow and gradual underflow. */
static inline vec v_scale2(vec p, vec n) { return _mm512_scalef_ps(p, n); }
static inline real v_hmax(vec v) { return _mm512_reduce_max_ps(v); }
static inline real v_hsum(vec v) { return _mm512_reduce_add_ps(v); }

#else /* double */

typedef __m512d vec;
#define VLEN 8

static inline __mmask8 attn_lane_mask(size_t n) { return (__mmask8)((1u << n) - 1u); }
static inline vec v_set1(real x) { return _mm512_set1_pd(x); }
static inline vec v_load(const real *p) { return _mm512_loadu_pd(p); }
static inline void v_store(real *p, vec v) { _mm512_storeu_pd(p, v); }
static inline vec v_load_part(const real *p, size_t n, real fill)
{
    return _mm512_mask_loadu_pd(_mm512_set1_pd(fill), attn_lane_mask(n), p);
}
static inline void v_store_part(real *p, vec v, size_t n) { _mm512_mask_storeu_pd(p, attn_lane_mask(n), v); }
static inline vec v_add(vec a, vec b) { return _mm512_add_pd(a, b); }
static inline vec v_sub(vec a, vec b) { return _mm512_sub_pd(a, b); }
static inline vec v_mul(vec a, vec b) { return _mm512_mul_pd(a, b); }
static inline vec v_fmadd(vec a, vec b, vec c) { return _mm512_fmadd_pd(a, b, c); }
static inline vec v_min(vec a, vec b) { return _mm512_min_pd(a, b); }
static inline vec v_max(vec a, vec b) { return _mm512_max_pd(a, b); }
static inline vec v_round(vec a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vec v_scale2(vec p, vec n) { return _mm512_scalef_pd(p, n); }
static inline real v_hmax(vec v) { return _mm512_reduce_max_pd(v); }
static inline real v_hsum(vec v) { return _mm512_reduce_add_pd(v); }

#endif
#endif /* ATTN_SIMD_AVX512_H */
