/* The half-precision conversions of the avx512 set: 16 elements a block;
 * float16 by vcvtph2ps / vcvtps2ph, bfloat16 by integer shifts and the
 * round-to-nearest-even carry of half_bits.h. */
#include <immintrin.h>

#include "kernels/half_bits.h"

#define HALF_LANES 16

static inline void bf16_widen_block(const uint16_t *s, float *d)
{
    const __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)s));
    _mm512_storeu_si512(d, _mm512_slli_epi32(h, 16));
}

static inline void bf16_narrow_block(const float *s, uint16_t *d)
{
    const __m512 x = _mm512_loadu_ps(s);
    const __m512i u = _mm512_castps_si512(x);
    const __m512i top = _mm512_srli_epi32(u, 16);
    const __m512i bias = _mm512_add_epi32(_mm512_and_si512(top, _mm512_set1_epi32(1)),
                                          _mm512_set1_epi32(0x7fff));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(top, _mm512_set1_epi32(0x40)));
    _mm256_storeu_si256((__m256i *)d, _mm512_cvtepi32_epi16(r));
}

static inline void f16_widen_block(const uint16_t *s, float *d)
{
    _mm512_storeu_ps(d, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)s)));
}

static inline void f16_narrow_block(const float *s, uint16_t *d)
{
    _mm256_storeu_si256((__m256i *)d,
                        _mm512_cvtps_ph(_mm512_loadu_ps(s), _MM_FROUND_TO_NEAREST_INT |
                                                                _MM_FROUND_NO_EXC));
}

#define CONVERT_NAME(op) attn_##op##_avx512
#include "kernels/convert_kernel.inc.c"
