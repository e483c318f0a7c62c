/*
 * The avx512-bf16 set's bf16 products (kernels.h, attn_bf16_gemm_fn) on
 * AVX512-BF16's vdpbf16ps: each instruction adds to 16 float sums the
 * products of two pairs of bf16 numbers. Shapes:
 *   C (M, N) (+)= A (M, K) B (K, N), B packed in panels of NR = 64 columns
 * Micro-tile: MR = 6 rows of C x 4 vectors of 16 columns (one panel), 24
 * accumulators; per pair of k, 4 loads of B and 6 broadcasts of a pair of
 * A. Each sum runs over k in pairs, in increasing k. Also the products'
 * rounding of P to bf16 (vcvtne2ps2bf16), for both sets. Compiled with
 * -mavx512f -mavx512bf16; entered only through attn_bf16_products_of.
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/kernels.h"

enum { MR = 6, NV = 4, NR = ATTN_BF16_NR };
_Static_assert(NV * 16 == NR, "one micro-tile spans one panel");

/* C rows [i, i + rows) x the panel's cols [0, cols), rows <= MR. */
static void tile(size_t rows, size_t cols, size_t K, const uint16_t *A, size_t lda,
                 const uint16_t *panel, int accumulate, float *C, size_t ldc)
{
    const uint16_t *a[MR];
    for (size_t r = 0; r < MR; r++) /* rows past the last repeat it, unstored */
        a[r] = A + (r < rows ? r : rows - 1) * lda;
    __m512 acc[MR][NV];
    for (size_t r = 0; r < MR; r++)
        for (size_t v = 0; v < NV; v++)
            acc[r][v] = _mm512_setzero_ps();
    for (size_t k = 0; k < K; k += 2, panel += 2 * NR) {
        __m512bh b[NV];
        for (size_t v = 0; v < NV; v++)
            b[v] = (__m512bh)_mm512_loadu_si512(panel + 32 * v);
        for (size_t r = 0; r < MR; r++) {
            int32_t pair;
            memcpy(&pair, a[r] + k, sizeof pair);
            const __m512bh x = (__m512bh)_mm512_set1_epi32(pair);
            for (size_t v = 0; v < NV; v++)
                acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, b[v]);
        }
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t v = 0; v < NV && 16 * v < cols; v++) {
            const size_t n = cols - 16 * v < 16 ? cols - 16 * v : 16;
            const __mmask16 m = (__mmask16)((1u << n) - 1u);
            float *c = C + r * ldc + 16 * v;
            const __m512 sum =
                accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(m, c), acc[r][v]) : acc[r][v];
            _mm512_mask_storeu_ps(c, m, sum);
        }
}

void attn_bf16_gemm_avx512_bf16(size_t M, size_t N, size_t K, const uint16_t *A, size_t lda,
                                const uint16_t *B, size_t kb, int accumulate, float *C,
                                size_t ldc)
{
    for (size_t p = 0; p * NR < N; p++) {
        const size_t cols = N - p * NR < NR ? N - p * NR : NR;
        for (size_t i = 0; i < M; i += MR)
            tile(M - i < MR ? M - i : MR, cols, K, A + i * lda, lda, B + p * kb * NR,
                 accumulate, C + i * ldc + p * NR, ldc);
    }
}

void attn_bf16_round_avx512_bf16(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512bh r = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + i + 16),
                                               _mm512_loadu_ps(src + i));
        _mm512_storeu_si512(dst + i, (__m512i)r);
    }
    for (; i < n; i += 16) { /* the tail, 16 lanes at a time, masked */
        const size_t m = n - i < 16 ? n - i : 16;
        const __mmask16 k = (__mmask16)((1u << m) - 1u);
        const __m256bh r = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(k, src + i));
        _mm256_mask_storeu_epi16(dst + i, k, (__m256i)r);
    }
}

/* 16 columns' words (X[q][j], X[q + 1][j]) rounded, for the 16 pairs of
 * rows q = 2 p from row 2 p0, masked to the rows that exist. */
static __m512i pair_words(const float *X, size_t ldx, size_t j, size_t rows, size_t p0,
                          __m512 scale)
{
    const __m512i pair = _mm512_mullo_epi32(_mm512_set1_epi32((int)(2 * ldx)),
                                            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                                              11, 12, 13, 14, 15));
    const __m512i q = _mm512_add_epi32(_mm512_set1_epi32((int)(2 * p0)),
                                       _mm512_slli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7,
                                                                           8, 9, 10, 11, 12, 13,
                                                                           14, 15),
                                                         1));
    const __mmask16 even = _mm512_cmplt_epu32_mask(q, _mm512_set1_epi32((int)rows));
    const __mmask16 odd =
        _mm512_cmplt_epu32_mask(_mm512_add_epi32(q, _mm512_set1_epi32(1)),
                                _mm512_set1_epi32((int)rows));
    const float *base = X + 2 * p0 * ldx + j;
    const __m512 lo = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), even, pair, base, 4);
    const __m512 hi = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), odd, pair, base + ldx, 4);
    const __m512i l = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(lo, scale)));
    const __m512i h = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(hi, scale)));
    return _mm512_or_si512(l, _mm512_slli_epi32(h, 16));
}

void attn_bf16_round_transposed_avx512_bf16(size_t rows, size_t kc, const float *X, size_t ldx,
                                            float scale, uint16_t *dst)
{
    const size_t np = (rows + ATTN_BF16_K_STEP - 1) / ATTN_BF16_K_STEP * ATTN_BF16_K_STEP;
    const size_t kp = (kc + ATTN_BF16_M_STEP - 1) / ATTN_BF16_M_STEP * ATTN_BF16_M_STEP;
    const __m512 s = _mm512_set1_ps(scale);
    for (size_t j = 0; j < kc; j++) /* row j of dst: np / 2 words, 16 at a time */
        for (size_t p0 = 0; 2 * p0 < np; p0 += 16)
            _mm512_storeu_si512(dst + j * np + 2 * p0,
                                2 * p0 < rows ? pair_words(X, ldx, j, rows, p0, s)
                                              : _mm512_setzero_si512());
    memset(dst + kc * np, 0, (kp - kc) * np * sizeof(uint16_t));
}
