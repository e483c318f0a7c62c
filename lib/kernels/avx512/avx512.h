/* AVX-512F vocabulary; see README.md. One definition serves both element
 * types: ATTN_V(name) picks the _ps (float) or _pd (double) intrinsic. */
#ifndef ATTN_SIMD_AVX512_H
#define ATTN_SIMD_AVX512_H

#include <immintrin.h>
#include <stdint.h>

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
static inline vec v_scale2_normal(vec p, vec n) { return v_scale2(p, n); }
static inline real v_hmax(vec v) { return ATTN_V(_mm512_reduce_max)(v); }
static inline real v_hsum(vec v) { return ATTN_V(_mm512_reduce_add)(v); }

/* r[i] lane j <- r[j] lane i: a VLEN x VLEN block transposed in registers.
 * Rows interleaved within 128-bit lanes until 128-bit lane L of v[S*q + c]
 * (q < 4, S = VLEN / 4) holds column S*L + c of rows S*q .. S*q + S - 1;
 * then column S*L + c is lane L of v[c], v[S+c], v[2S+c], v[3S+c]. 64
 * shuffles for f32's 16 x 16, 32 for f64's 8 x 8. */
#if ATTN_REAL_BITS == 32
#define ATTN_LANES4(a, b, imm) _mm512_shuffle_f32x4((a), (b), (imm))
#else
#define ATTN_LANES4(a, b, imm) _mm512_shuffle_f64x2((a), (b), (imm))
#endif
static inline void v_transpose(vec r[VLEN])
{
    enum { S = VLEN / 4 };
    vec v[VLEN];
#if ATTN_REAL_BITS == 32
    vec u[VLEN];
    for (int i = 0; i < VLEN; i += 2) {
        u[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);     /* columns 4L, 4L+1 of rows i, i+1 */
        u[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]); /* columns 4L+2, 4L+3 */
    }
    for (int i = 0; i < VLEN; i += 4)
        for (int h = 0; h < 2; h++) {
            const __m512d x = _mm512_castps_pd(u[i + h]), y = _mm512_castps_pd(u[i + h + 2]);
            v[i + 2 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(x, y));     /* column 4L+2h */
            v[i + 2 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)); /* 4L+2h+1 */
        }
#else
    for (int i = 0; i < VLEN; i += 2) {
        v[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);     /* column 2L of rows i, i+1 */
        v[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]); /* column 2L+1 */
    }
#endif
    for (int c = 0; c < S; c++) {
        const vec a = ATTN_LANES4(v[c], v[S + c], 0x44);         /* lanes 0, 1 of each */
        const vec b = ATTN_LANES4(v[c], v[S + c], 0xEE);         /* lanes 2, 3 */
        const vec d = ATTN_LANES4(v[2 * S + c], v[3 * S + c], 0x44);
        const vec e = ATTN_LANES4(v[2 * S + c], v[3 * S + c], 0xEE);
        r[c] = ATTN_LANES4(a, d, 0x88);         /* lane 0 of the four */
        r[S + c] = ATTN_LANES4(a, d, 0xDD);     /* lane 1 */
        r[2 * S + c] = ATTN_LANES4(b, e, 0x88); /* lane 2 */
        r[3 * S + c] = ATTN_LANES4(b, e, 0xDD); /* lane 3 */
    }
}
#undef ATTN_LANES4

/* The 32-bit integer lanes of attention dropout's Philox
 * (dropout_kernel.inc.c; README.md): 16 counters at once. */
typedef __m512i uvec;
#define ULEN 16
static inline uvec u_set1(uint32_t x) { return _mm512_set1_epi32((int)x); }
static inline uvec u_iota(uint32_t base)
{
    return _mm512_add_epi32(u_set1(base), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                                             11, 12, 13, 14, 15));
}
static inline uvec u_xor(uvec a, uvec b) { return _mm512_xor_si512(a, b); }
/* (hi, lo) = m * a lane-wise, 32 x 32 -> 64 bits (even and odd lanes
 * apart, as in avx2.h). */
static inline void u_mulhilo(uvec a, uint32_t m, uvec *hi, uvec *lo)
{
    const __m512i mv = u_set1(m);
    const __m512i even = _mm512_mul_epu32(a, mv);
    const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), mv);
    *lo = _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, _mm512_slli_epi64(odd, 32));
    *hi = _mm512_mask_blend_epi32((__mmask16)0xAAAA, _mm512_srli_epi64(even, 32), odd);
}
/* w[4*i + k] = lane i of ck: pairs p[i] = (c0[i], c1[i]) and q[i] = (c2[i],
 * c3[i]) as 64-bit lanes (index 16 + i: the second operand), then p and q
 * interleaved (index 8 + i: the second). */
static inline void u_store4(uint32_t *w, uvec c0, uvec c1, uvec c2, uvec c3)
{
    const __m512i pair_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22,
                                              7, 23);
    const __m512i pair_hi = _mm512_add_epi32(pair_lo, _mm512_set1_epi32(8));
    const __m512i quad_lo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    const __m512i quad_hi = _mm512_add_epi64(quad_lo, _mm512_set1_epi64(4));
    const __m512i p_lo = _mm512_permutex2var_epi32(c0, pair_lo, c1);
    const __m512i p_hi = _mm512_permutex2var_epi32(c0, pair_hi, c1);
    const __m512i q_lo = _mm512_permutex2var_epi32(c2, pair_lo, c3);
    const __m512i q_hi = _mm512_permutex2var_epi32(c2, pair_hi, c3);
    _mm512_storeu_si512(w, _mm512_permutex2var_epi64(p_lo, quad_lo, q_lo));
    _mm512_storeu_si512(w + 16, _mm512_permutex2var_epi64(p_lo, quad_hi, q_lo));
    _mm512_storeu_si512(w + 32, _mm512_permutex2var_epi64(p_hi, quad_lo, q_hi));
    _mm512_storeu_si512(w + 48, _mm512_permutex2var_epi64(p_hi, quad_hi, q_hi));
}
/* Lane i: keep where w[i] >= threshold (unsigned), else 0. */
static inline vec v_keep(const uint32_t *w, uint32_t threshold, vec keep)
{
#if ATTN_REAL_BITS == 32
    const __mmask16 kept = _mm512_cmpge_epu32_mask(_mm512_loadu_si512(w), u_set1(threshold));
    return _mm512_maskz_mov_ps(kept, keep);
#else
    const __m512i u = _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)w));
    const __mmask16 kept = _mm512_cmpge_epu32_mask(u, u_set1(threshold));
    return _mm512_maskz_mov_pd((__mmask8)(kept & 0xFFu), keep);
#endif
}

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

#if ATTN_REAL_BITS == 32
/* VLEN bfloat16 or float16 elements (16-bit storage) widened to floats:
 * the few-row products on half keys and values (rows_half.inc.c). */
static inline vec v_load_bf16(const uint16_t *p)
{
    const __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
}
static inline vec v_load_f16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
#endif

#endif /* ATTN_SIMD_AVX512_H */
