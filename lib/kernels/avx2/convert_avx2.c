/* The half-precision conversions of the avx2 set: 8 elements a block;
 * float16 by F16C's vcvtph2ps / vcvtps2ph, bfloat16 by integer shifts and
 * the round-to-nearest-even carry of half_bits.h. */
#include <immintrin.h>

#include "kernels/half_bits.h"

#define HALF_LANES 8

static inline void bf16_widen_block(const uint16_t *s, float *d)
{
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)s));
    _mm256_storeu_si256((__m256i *)d, _mm256_slli_epi32(h, 16));
}

static inline void bf16_narrow_block(const float *s, uint16_t *d)
{
    const __m256 x = _mm256_loadu_ps(s);
    const __m256i u = _mm256_castps_si256(x);
    const __m256i top = _mm256_srli_epi32(u, 16);
    const __m256i bias = _mm256_add_epi32(_mm256_and_si256(top, _mm256_set1_epi32(1)),
                                          _mm256_set1_epi32(0x7fff));
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    const __m256i q = _mm256_or_si256(top, _mm256_set1_epi32(0x40));
    /* every lane at most 0xffff: the unsigned saturating pack is exact */
    const __m256i packed = _mm256_packus_epi32(_mm256_blendv_epi8(r, q, nan), _mm256_setzero_si256());
    _mm_storeu_si128((__m128i *)d,
                     _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08)));
}

static inline void f16_widen_block(const uint16_t *s, float *d)
{
    _mm256_storeu_ps(d, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)s)));
}

static inline void f16_narrow_block(const float *s, uint16_t *d)
{
    _mm_storeu_si128((__m128i *)d, _mm256_cvtps_ph(_mm256_loadu_ps(s), _MM_FROUND_TO_NEAREST_INT |
                                                                          _MM_FROUND_NO_EXC));
}

#define CONVERT_NAME(op) attn_##op##_avx2
#include "kernels/convert_kernel.inc.c"
