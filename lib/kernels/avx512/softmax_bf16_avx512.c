/*
 * The online softmax block of a bf16 plan's forward with its weights
 * written in bf16 (kernels.h, attn_bf16_softmax_online_fn): the products'
 * A operand P straight from the exponentials, with no float copy of P and
 * no second pass to round it. The exp, the max and the sums are
 * softmax_exp.inc.c's, the float kernels' own, so the running max and sum
 * (and lse) are those of the float engine; each weight is then rounded to
 * bf16, nearest even (vcvtne2ps2bf16). Shapes: one row of a key tile,
 *   s (n_valid of n_total) float -> p (n_total) bf16, zero past n_valid.
 * Compiled with -mavx512f -mavx512bw -mavx512bf16 -mfma (both sets with
 * bf16 products have AVX512-BF16); entered only through
 * attn_bf16_products_of.
 */
#define ATTN_REAL_BITS 32
#include <stdint.h>

#include "kernels/avx512/avx512.h"
#include "kernels/kernels.h"

#define EXP_OUT uint16_t
/* The first n <= 32 lanes of (e0, e1) rounded to bf16 at y. */
static inline void exp_store_pair(uint16_t *y, __m512 e0, __m512 e1, size_t n)
{
    const __m512i pair = (__m512i)_mm512_cvtne2ps_pbh(e1, e0); /* e0 in the low lanes */
    if (n == 32)
        _mm512_storeu_si512(y, pair);
    else
        _mm512_mask_storeu_epi16(y, (__mmask32)((1ull << n) - 1u), pair);
}
/* The weights' exp in fewer instructions than v_exp's (11 against 17): as
 * 2^t, t = x log2(e), t = n + f with n = round(t), 2^f a polynomial of
 * degree 5 fitted to relative error (2.2e-7 on |f| <= 1/2 in float
 * Horner), scaled by 2^n. The rounding of t adds to a weight w = e^x an
 * error of at most 2^-24 |x| w <= 2^-24 / e absolute: nothing against the
 * bf16 rounding of P (2^-9) and within the 2^-24 n of the row sum that
 * attn_half.h's bound allows. x below the normal range's log gives 0 (no
 * subnormal result: see v_exp), -inf 0, NaN NaN; +inf never comes (the
 * kernel's rows stop at a +inf max). */
#define EXP_OF_SCORE_DEFINED
static inline __m512 exp_of_score(__m512 s, __m512 vscale, __m512 vshift, __m512 vshift2)
{
    const __m512 x = _mm512_sub_ps(_mm512_sub_ps(_mm512_mul_ps(s, vscale), vshift), vshift2);
    const __m512 lowest = _mm512_set1_ps(-0x1.f8p6f); /* -126: 2^t normal above it */
    const __m512 t = _mm512_max_ps(lowest, _mm512_mul_ps(x, _mm512_set1_ps(0x1.715476p+0f)));
    const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(t, n);
    __m512 p = _mm512_set1_ps(0x1.5bc922p-10f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.3d0ba4p-7f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.c6b782p-5f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.ebf91ap-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.62e428p-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.000002p+0f));
    /* t = -126 (clamped, or exact) keeps 0; a NaN t (unordered) stays */
    return _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(t, lowest, _CMP_NLE_UQ), p, n);
}
/* A block after the first keeps the running max as its shift when no
 * weight exceeds 2^11 (its scores at most ln 2^11 = 7.6 above it): one
 * sweep over the scores instead of two (softmax_exp.inc.c). The weights
 * then reach 2^11 and their exp's rounding of t adds up to 2^-23 7.6 <
 * 2^-20 relative to the largest: attn_half.h's g gains 2^-24 (n + 16). */
#define ONLINE_LAZY_LIMIT 0x1p11f
#include "kernels/softmax_exp.inc.c"

float attn_bf16_softmax_online_avx512_bf16(const float *s, uint16_t *p, size_t n_valid,
                                           size_t n_total, float scale, float *running_max,
                                           float *running_sum)
{
    return softmax_online_block(s, p, n_valid, n_total, scale, running_max, running_sum);
}
