/* AVX2 + FMA vocabulary; see README.md. The arithmetic is one definition for
 * both element types (ATTN_V(name) picks _ps or _pd); lane masks, exponent
 * bits and horizontal reductions differ per type and come first. */
#ifndef ATTN_SIMD_AVX2_H
#define ATTN_SIMD_AVX2_H

#include <immintrin.h>
#include <stdint.h>

#include "core/real.h"

#if ATTN_REAL_BITS == 32

typedef __m256 vec;
#define VLEN 8
#define ATTN_V(name) name##_ps

static inline __m256i attn_lane_mask(size_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
/* 2^e for e in the normal exponent range. */
static inline vec attn_pow2_normal(__m256i e)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23));
}
/* p * 2^n in two exact steps 2^floor(n/2) * 2^ceil(n/2), each a normal number. */
static inline vec v_scale2(vec p, vec n)
{
    __m256i k = _mm256_cvtps_epi32(n);
    __m256i half = _mm256_srai_epi32(k, 1);
    return _mm256_mul_ps(_mm256_mul_ps(p, attn_pow2_normal(half)),
                         attn_pow2_normal(_mm256_sub_epi32(k, half)));
}
static inline vec v_scale2_normal(vec p, vec n)
{
    return _mm256_mul_ps(p, attn_pow2_normal(_mm256_cvtps_epi32(n)));
}
static inline real v_hmax(vec v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}
static inline real v_hsum(vec v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
/* r[i] lane j <- r[j] lane i (8 x 8): rows interleaved within 128-bit
 * lanes until lane L of v[4q + c] holds column 4L + c of rows 4q .. 4q+3,
 * then the lanes of v[c] and v[4 + c] paired. */
static inline void v_transpose(vec r[VLEN])
{
    vec u[VLEN], v[VLEN];
    for (int i = 0; i < VLEN; i += 2) {
        u[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        u[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < VLEN; i += 4)
        for (int h = 0; h < 2; h++) {
            const __m256d x = _mm256_castps_pd(u[i + h]), y = _mm256_castps_pd(u[i + h + 2]);
            v[i + 2 * h] = _mm256_castpd_ps(_mm256_unpacklo_pd(x, y));
            v[i + 2 * h + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(x, y));
        }
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_permute2f128_ps(v[c], v[4 + c], 0x20);
        r[4 + c] = _mm256_permute2f128_ps(v[c], v[4 + c], 0x31);
    }
}

#else /* double */

typedef __m256d vec;
#define VLEN 4
#define ATTN_V(name) name##_pd

static inline __m256i attn_lane_mask(size_t n)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)n), _mm256_setr_epi64x(0, 1, 2, 3));
}
static inline vec attn_pow2_normal(__m256i e)
{
    return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(e, _mm256_set1_epi64x(1023)), 52));
}
/* The integer of an integral n (|n| < 2^51), through the round-to-integer
 * magic constant: AVX2 has no 64-bit float-to-int conversion. */
static inline __m256i attn_integral_bits(vec n)
{
    const vec magic = _mm256_set1_pd(0x1.8p52);
    return _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(n, magic)),
                            _mm256_castpd_si256(magic));
}
/* As for float, but AVX2 has no 64-bit arithmetic shift either: floor(k/2)
 * is taken on k + 2^11 >= 0. */
static inline vec v_scale2(vec p, vec n)
{
    __m256i k = attn_integral_bits(n);
    const __m256i bias = _mm256_set1_epi64x(1 << 11);
    __m256i half = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_add_epi64(k, bias), 1), _mm256_set1_epi64x(1 << 10));
    return _mm256_mul_pd(_mm256_mul_pd(p, attn_pow2_normal(half)),
                         attn_pow2_normal(_mm256_sub_epi64(k, half)));
}
static inline vec v_scale2_normal(vec p, vec n)
{
    return _mm256_mul_pd(p, attn_pow2_normal(attn_integral_bits(n)));
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
/* r[i] lane j <- r[j] lane i (4 x 4): pairs interleaved within 128-bit
 * lanes, then the lanes paired. */
static inline void v_transpose(vec r[VLEN])
{
    const vec t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const vec t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

#endif

static inline vec v_set1(real x) { return ATTN_V(_mm256_set1)(x); }
static inline vec v_load(const real *p) { return ATTN_V(_mm256_loadu)(p); }
static inline void v_store(real *p, vec v) { ATTN_V(_mm256_storeu)(p, v); }
static inline vec v_load_part(const real *p, size_t n, real fill)
{
    __m256i m = attn_lane_mask(n);
    return ATTN_V(_mm256_blendv)(v_set1(fill), ATTN_V(_mm256_maskload)(p, m),
                                 ATTN_V(_mm256_castsi256)(m));
}
static inline void v_store_part(real *p, vec v, size_t n)
{
    ATTN_V(_mm256_maskstore)(p, attn_lane_mask(n), v);
}
static inline vec v_add(vec a, vec b) { return ATTN_V(_mm256_add)(a, b); }
static inline vec v_sub(vec a, vec b) { return ATTN_V(_mm256_sub)(a, b); }
static inline vec v_mul(vec a, vec b) { return ATTN_V(_mm256_mul)(a, b); }
static inline vec v_fmadd(vec a, vec b, vec c) { return ATTN_V(_mm256_fmadd)(a, b, c); }
static inline vec v_min(vec a, vec b) { return ATTN_V(_mm256_min)(a, b); }
static inline vec v_max(vec a, vec b) { return ATTN_V(_mm256_max)(a, b); }
/* Lanes of v where x < t (ordered: a NaN x keeps its lane) set to 0. */
static inline vec v_zero_below(vec v, vec x, vec t)
{
    return ATTN_V(_mm256_and)(ATTN_V(_mm256_cmp)(x, t, _CMP_NLT_UQ), v);
}
static inline vec v_round(vec a)
{
    return ATTN_V(_mm256_round)(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* The 32-bit integer lanes of attention dropout's Philox
 * (dropout_kernel.inc.c; README.md): 8 counters at once. */
typedef __m256i uvec;
#define ULEN 8
static inline uvec u_set1(uint32_t x) { return _mm256_set1_epi32((int)x); }
static inline uvec u_iota(uint32_t base)
{
    return _mm256_add_epi32(u_set1(base), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline uvec u_xor(uvec a, uvec b) { return _mm256_xor_si256(a, b); }
/* (hi, lo) = m * a lane-wise, 32 x 32 -> 64 bits: the even lanes' products
 * from _mm256_mul_epu32 on a, the odd lanes' on a shifted down. */
static inline void u_mulhilo(uvec a, uint32_t m, uvec *hi, uvec *lo)
{
    const __m256i mv = u_set1(m);
    const __m256i even = _mm256_mul_epu32(a, mv);
    const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), mv);
    *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}
/* w[4*i + k] = lane i of ck: a 4 x 4 transpose in each 128-bit half
 * (lanes i and i + 4), then the halves put in order. */
static inline void u_store4(uint32_t *w, uvec c0, uvec c1, uvec c2, uvec c3)
{
    const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpacklo_epi32(c2, c3);
    const __m256i t2 = _mm256_unpackhi_epi32(c0, c1), t3 = _mm256_unpackhi_epi32(c2, c3);
    const __m256i r0 = _mm256_unpacklo_epi64(t0, t1), r1 = _mm256_unpackhi_epi64(t0, t1);
    const __m256i r2 = _mm256_unpacklo_epi64(t2, t3), r3 = _mm256_unpackhi_epi64(t2, t3);
    _mm256_storeu_si256((__m256i *)w, _mm256_permute2x128_si256(r0, r1, 0x20));
    _mm256_storeu_si256((__m256i *)(w + 8), _mm256_permute2x128_si256(r2, r3, 0x20));
    _mm256_storeu_si256((__m256i *)(w + 16), _mm256_permute2x128_si256(r0, r1, 0x31));
    _mm256_storeu_si256((__m256i *)(w + 24), _mm256_permute2x128_si256(r2, r3, 0x31));
}
/* Lane i: keep where w[i] >= threshold (unsigned), else 0. */
static inline vec v_keep(const uint32_t *w, uint32_t threshold, vec keep)
{
#if ATTN_REAL_BITS == 32
    const __m256i u = _mm256_loadu_si256((const __m256i *)w);
    const __m256i kept = _mm256_cmpeq_epi32(_mm256_max_epu32(u, u_set1(threshold)), u);
    return _mm256_and_ps(_mm256_castsi256_ps(kept), keep);
#else
    const __m128i u = _mm_loadu_si128((const __m128i *)w);
    const __m128i kept = _mm_cmpeq_epi32(_mm_max_epu32(u, _mm_set1_epi32((int)threshold)), u);
    return _mm256_and_pd(_mm256_castsi256_pd(_mm256_cvtepi32_epi64(kept)), keep);
#endif
}

/* The matrix product's micro-tile (gemm_kernel.inc.c): MR rows x NV vectors,
 * 12 accumulators of the 16 registers. */
/* Rows of C per group of its unpacked path (two accumulators per row). */
#define ATTN_GEMM_DIRECT_ROWS 4
/* Rows shorter than a vector that the softmax takes at once
 * (16 registers: 8 rows spilled, 4 do not). */
#define ATTN_SOFTMAX_SHORT_ROWS 4
#define ATTN_GEMM_MR 6
#define ATTN_GEMM_NV 2

#if ATTN_REAL_BITS == 32
/* VLEN bfloat16 or float16 elements (16-bit storage) widened to floats:
 * the few-row products on half keys and values (rows_half.inc.c). */
static inline vec v_load_bf16(const uint16_t *p)
{
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}
static inline vec v_load_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
#endif

#endif /* ATTN_SIMD_AVX2_H */
