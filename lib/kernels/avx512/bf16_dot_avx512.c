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

/* A word of the pack whose half (a bf16) is not finite: its exponent all
 * ones carries into its sign bit. */
static __mmask16 not_finite16(__m512i w)
{
    return _mm512_test_epi32_mask(
        _mm512_add_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x7f807f80)),
                         _mm512_set1_epi32(0x00800080)),
        _mm512_set1_epi32((int)0x80008000u));
}

/* kernels.h, attn_bf16_pack and attn_bf16_pack_bf16 (bits16: X holds bf16
 * bits): a pair of rows of X at a time, 16 columns of each, interleaved
 * into 16 words (X[k][j], X[k + 1][j]); rows past K and columns past N
 * zero. Floats give their top halves (exact for bf16 values). */
static int pack_rows(size_t K, size_t N, const void *X, size_t ldx, int bits16, uint16_t *B)
{
    const size_t Kp = (K + ATTN_BF16_K_STEP - 1) / ATTN_BF16_K_STEP * ATTN_BF16_K_STEP;
    const size_t size = bits16 ? sizeof(uint16_t) : sizeof(float);
    /* words 2i, 2i + 1 from lo's and hi's element i: the floats' top halves
     * (16-bit elements 2i + 1), or the bf16s themselves (16 + i: hi in the
     * upper half of one vector) */
    const __m512i tops = _mm512_set_epi16(63, 31, 61, 29, 59, 27, 57, 25, 55, 23, 53, 21, 51,
                                          19, 49, 17, 47, 15, 45, 13, 43, 11, 41, 9, 39, 7, 37,
                                          5, 35, 3, 33, 1);
    const __m512i pairs = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25,
                                           9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2,
                                           17, 1, 16, 0);
    __mmask16 bad = 0;
    for (size_t p = 0; p * NR < N; p++) {
        uint16_t *panel = B + p * Kp * NR;
        for (size_t k = 0; k < Kp; k += 2)
            for (size_t v = 0; v < NR / 16; v++) {
                const size_t j = p * NR + 16 * v, n = j >= N ? 0 : N - j < 16 ? N - j : 16;
                const __mmask16 m = (__mmask16)(n == 16 ? 0xFFFFu : (1u << n) - 1u);
                const char *lo = k < K ? (const char *)X + (k * ldx + j) * size : NULL;
                const char *hi = k + 1 < K ? (const char *)X + ((k + 1) * ldx + j) * size : NULL;
                __m512i w;
                if (bits16) {
                    const __m256i l = lo ? _mm256_maskz_loadu_epi16(m, lo) : _mm256_setzero_si256();
                    const __m256i h = hi ? _mm256_maskz_loadu_epi16(m, hi) : _mm256_setzero_si256();
                    w = _mm512_permutexvar_epi16(
                        pairs, _mm512_inserti64x4(_mm512_castsi256_si512(l), h, 1));
                } else {
                    const __m512i l = lo ? _mm512_maskz_loadu_epi32(m, lo) : _mm512_setzero_si512();
                    const __m512i h = hi ? _mm512_maskz_loadu_epi32(m, hi) : _mm512_setzero_si512();
                    w = _mm512_permutex2var_epi16(l, tops, h);
                }
                bad |= not_finite16(w);
                _mm512_storeu_si512(panel + k * NR + 32 * v, w);
            }
    }
    return bad == 0;
}

int attn_bf16_pack_avx512_bf16(size_t K, size_t N, const float *X, size_t ldx, uint16_t *B)
{
    return pack_rows(K, N, X, ldx, 0, B);
}

int attn_bf16_pack16_avx512_bf16(size_t K, size_t N, const uint16_t *X, size_t ldx,
                                 uint16_t *B)
{
    return pack_rows(K, N, X, ldx, 1, B);
}

/* 16 bf16 numbers (masked) as floats, exact. */
static __m512 widen16(const uint16_t *p, __mmask16 m)
{
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}

/* The upper 8 floats of x. */
static __m256 upper8(__m512 x)
{
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
}

/* kernels.h, attn_bf16_dot_fn: 16 products a step, widened to double
 * (exact), in two chains (lower and upper halves); the tail masked. */
double attn_bf16_dot_avx512_bf16(const uint16_t *x, const uint16_t *y, size_t n)
{
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = (__mmask16)(n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1u);
        const __m512 a = widen16(x + i, m), b = widen16(y + i, m);
        lo = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(a)),
                             _mm512_cvtps_pd(_mm512_castps512_ps256(b)), lo);
        hi = _mm512_fmadd_pd(_mm512_cvtps_pd(upper8(a)), _mm512_cvtps_pd(upper8(b)), hi);
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
}

/* kernels.h: bf16(scale src), the product in float (exact for scale 1). */
void attn_bf16_round_scaled_avx512_bf16(const float *src, float scale, uint16_t *dst, size_t n)
{
    const __m512 s = _mm512_set1_ps(scale);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512bh r = _mm512_cvtne2ps_pbh(_mm512_mul_ps(_mm512_loadu_ps(src + i + 16), s),
                                               _mm512_mul_ps(_mm512_loadu_ps(src + i), s));
        _mm512_storeu_si512(dst + i, (__m512i)r);
    }
    for (; i < n; i += 16) { /* the tail, 16 lanes at a time, masked */
        const size_t m = n - i < 16 ? n - i : 16;
        const __mmask16 k = (__mmask16)((1u << m) - 1u);
        const __m256bh r = _mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, src + i), s));
        _mm256_mask_storeu_epi16(dst + i, k, (__m256i)r);
    }
}

void attn_bf16_round_avx512_bf16(const float *src, uint16_t *dst, size_t n)
{
    attn_bf16_round_scaled_avx512_bf16(src, 1.0f, dst, n);
}

/* The 16 x 16 matrix of 32-bit words r transposed in place: r[c] lane i
 * becomes r[i] lane c (stages of 32-bit, 64-bit and 128-bit interleaves). */
static void transpose_words(__m512i r[16])
{
    __m512i t[16], u[16];
    for (size_t i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (size_t i = 0; i < 16; i += 4) { /* u[i + k] lane L: rows i..i+3 of column 4L + k */
        u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (size_t k = 0; k < 4; k++) {
        const __m512i v = _mm512_shuffle_i32x4(u[k], u[4 + k], 0x88);
        const __m512i w = _mm512_shuffle_i32x4(u[k], u[4 + k], 0xDD);
        const __m512i v2 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0x88);
        const __m512i w2 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0xDD);
        r[k] = _mm512_shuffle_i32x4(v, v2, 0x88);
        r[4 + k] = _mm512_shuffle_i32x4(w, w2, 0x88);
        r[8 + k] = _mm512_shuffle_i32x4(v, v2, 0xDD);
        r[12 + k] = _mm512_shuffle_i32x4(w, w2, 0xDD);
    }
}

/* Columns [j, j + cols) (cols <= 16) of rows [q0, q0 + 32) of X, scaled
 * and rounded, as words (X[q][j], X[q + 1][j]) of the pairs q = q0 + 2 p:
 * loaded as rows, the pairs interleaved, the words transposed; rows past
 * `rows` read as zeros. Stored at dst row j + c, word q0 / 2 on. */
static void pairs_block(const float *X, size_t ldx, size_t rows, size_t q0, size_t j,
                        size_t cols, __m512 scale, uint16_t *dst, size_t np)
{
    const __mmask16 m = (__mmask16)(cols >= 16 ? 0xFFFFu : (1u << cols) - 1u);
    const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10,
                                                25, 9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3,
                                                18, 2, 17, 1, 16, 0);
    __m512i w[16];
    for (size_t p = 0; p < 16; p++) {
        const size_t q = q0 + 2 * p;
        const __m512 even = q < rows ? _mm512_maskz_loadu_ps(m, X + q * ldx + j)
                                     : _mm512_setzero_ps();
        const __m512 odd = q + 1 < rows ? _mm512_maskz_loadu_ps(m, X + (q + 1) * ldx + j)
                                        : _mm512_setzero_ps();
        const __m512bh r =
            _mm512_cvtne2ps_pbh(_mm512_mul_ps(odd, scale), _mm512_mul_ps(even, scale));
        w[p] = _mm512_permutexvar_epi16(interleave, (__m512i)r);
    }
    transpose_words(w);
    for (size_t c = 0; c < cols; c++)
        _mm512_storeu_si512(dst + (j + c) * np + q0, w[c]);
}

/* np, the rows rounded up to ATTN_BF16_K_STEP (a multiple of 32), is
 * covered by whole blocks of 32 rows. */
_Static_assert(ATTN_BF16_K_STEP % 32 == 0, "blocks of 32 rows fill a row of dst");

void attn_bf16_round_transposed_avx512_bf16(size_t rows, size_t kc, const float *X, size_t ldx,
                                            float scale, uint16_t *dst)
{
    const size_t np = (rows + ATTN_BF16_K_STEP - 1) / ATTN_BF16_K_STEP * ATTN_BF16_K_STEP;
    const size_t kp = (kc + ATTN_BF16_M_STEP - 1) / ATTN_BF16_M_STEP * ATTN_BF16_M_STEP;
    const __m512 s = _mm512_set1_ps(scale);
    for (size_t j = 0; j < kc; j += 16) /* rows j.. of dst, 32 words of each at a time */
        for (size_t q0 = 0; q0 < np; q0 += 32)
            pairs_block(X, ldx, rows, q0, j, kc - j < 16 ? kc - j : 16, s, dst, np);
    memset(dst + kc * np, 0, (kp - kc) * np * sizeof(uint16_t));
}
