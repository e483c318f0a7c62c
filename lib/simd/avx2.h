/* AVX2 + FMA vocabulary; see README.md. */
#ifndef ATTN_SIMD_AVX2_H
#define ATTN_SIMD_AVX2_H

#include <immintrin.h>

#include "../real.h"

#if ATTN_REAL_BITS == 32

typedef __m256 vec;
#define VLEN 8

static inline vec v_set1(real x) { return _mm256_set1_ps(x); }
static inline vec v_load(const real *p) { return _mm256_loadu_ps(p); }
static inline void v_store(real *p, vec v) { _mm256_storeu_ps(p, v); }
static inline __m256i attn_lane_mask(size_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vec v_load_part(const real *p, size_t n, real fill)
{
    __m256i m = attn_lane_mask(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
static inline void v_store_part(real *p, vec v, size_t n) { _mm256_maskstore_ps(p, attn_lane_mask(n), v); }
static inline vec v_add(vec a, vec b) { return _mm256_add_ps(a, b); }
static inline vec v_sub(vec a, vec b) { return _mm256_sub_ps(a, b); }
static inline vec v_mul(vec a, vec b) { return _mm256_mul_ps(a, b); }
static inline vec v_fmadd(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
static inline vec v_min(vec a, vec b) { return _mm256_min_ps(a, b); }
static inline vec v_max(vec a, vec b) { return _mm256_max_ps(a, b); }
static inline vec v_round(vec a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vec attn_pow2_normal(__m256i e)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23));
}
static inline vec v_scale2(vec p, vec n)
{
    __m256i k = _mm256_cvtps_epi32(n);
    __m256i half = _mm256_srai_epi32(k, 1);
    return _mm256_mul_ps(_mm256_mul_ps(p, attn_pow2_normal(half)),
                         attn_pow2_normal(_mm256_sub_epi32(k, half)));
}
static inline real v_hmax(vec v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}
static inline real v_hsum(vec v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#else /* double */

typedef __m256d vec;
#define VLEN 4

static inline vec v_set1(real x) { return _mm256_set1_pd(x); }
static inline vec v_load(const real *p) { return _mm256_loadu_pd(p); }
static inline void v_store(real *p, vec v) { _mm256_storeu_pd(p, v); }
static inline __m256i attn_lane_mask(size_t n)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)n), _mm256_setr_epi64x(0, 1, 2, 3));
}
static inline vec v_load_part(const real *p, size_t n, real fill)
{
    __m256i m = attn_lane_mask(n);
    return _mm256_blendv_pd(_mm256_set1_pd(fill), _mm256_maskload_pd(p, m), _mm256_castsi256_pd(m));
}
static inline void v_store_part(real *p, vec v, size_t n) { _mm256_maskstore_pd(p, attn_lane_mask(n), v); }
static inline vec v_add(vec a, vec b) { return _mm256_add_pd(a, b); }
static inline vec v_sub(vec a, vec b) { return _mm256_sub_pd(a, b); }
static inline vec v_mul(vec a, vec b) { return _mm256_mul_pd(a, b); }
static inline vec v_fmadd(vec a, vec b, vec c) { return _mm256_fmadd_pd(a, b, c); }
static inline vec v_min(vec a, vec b) { return _mm256_min_pd(a, b); }
static inline vec v_max(vec a, vec b) { return _mm256_max_pd(a, b); }
static inline vec v_round(vec a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
/* 2^e for int64 lanes e in the normal range (AVX2 has no 64-bit convert, so
 * n (|n| < 2^51) goes through the round-to-integer magic constant). */
static inline vec attn_pow2_normal(__m256i e)
{
    return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(e, _mm256_set1_epi64x(1023)), 52));
}
static inline vec v_scale2(vec p, vec n)
{
    const vec magic = _mm256_set1_pd(0x1.8p52);
    __m256i k = _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(n, magic)), _mm256_castpd_si256(magic));
    /* k >> 1 arithmetically: AVX2 lacks a 64-bit arithmetic shift, so shift
     * the biased value (k + 2^11 >= 0 for our range) logically. */
    const __m256i bias = _mm256_set1_epi64x(1 << 11);
    __m256i half = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_add_epi64(k, bias), 1), _mm256_set1_epi64x(1 << 10));
    return _mm256_mul_pd(_mm256_mul_pd(p, attn_pow2_normal(half)),
                         attn_pow2_normal(_mm256_sub_epi64(k, half)));
}
static inline real v_hmax(vec v)
{
    __m128d m = _mm_max_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_max_sd(m, _mm_unpackhi_pd(m, m)));
}
static inline real v_hsum(vec v)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

#endif
#endif /* ATTN_SIMD_AVX2_H */
