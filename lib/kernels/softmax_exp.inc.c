/*
 * The pieces of the softmax kernels that are written once for every output
 * type (softmax_kernel.inc.c's float or double rows; the bf16 products'
 * online block, avx512/softmax_bf16_avx512.c, which writes bf16 weights):
 * the polynomial exp, the scaled max, the row of shifted exponentials and
 * the online block. The including file has included one vocabulary header
 * and may define
 *   EXP_OUT                     the weights' element type (default: real)
 *   exp_store_pair(y, e0, e1, n)  stores the first n <= 2 VLEN lanes of
 *                               (e0, e1) at y (it defines it with EXP_OUT)
 *   EXP_OF_SCORE_DEFINED        it defines exp_of_score(x, scale, shift,
 *                               shift2), the weights' exp, itself
 *
 * exp(x): n = round(x / ln 2), r = x - n ln 2 (Cody-Waite, two steps) so
 * |r| <= ln2/2; exp(r) = 1 + (r + r^2 * tail(r)) with the Taylor tail
 * 1/2! + r/3! + ... up to r^7/7! (f32: truncation 5e-9 relative) or r^12/12!
 * (f64: 2e-16); then scaled by 2^n. Adding 1 and r last keeps the rounding
 * error near half an ulp without relying on FMA. Inputs are clamped to
 * [EXP_LO_NORMAL, EXP_HI] first and the result is 0 where x < EXP_LO_NORMAL,
 * whose exp is just above the smallest normal number (so exp(-inf) and very
 * negative x give exactly 0, and no subnormal result is ever formed);
 * EXP_HI is above the largest finite value's log (so +inf and large x give
 * +inf); a NaN passes the clamp (v_min/v_max return their second operand on
 * NaN) and the flush, and stays NaN.
 *
 */
#ifndef ATTN_SOFTMAX_EXP_INC_C
#define ATTN_SOFTMAX_EXP_INC_C

#include <math.h>
#include <stddef.h>
#include <string.h>

#if ATTN_REAL_BITS == 32
#define EXP_LO_NORMAL (-0x1.5d589ep+6f) /* the least x whose exp is at least FLT_MIN */
#define EXP_HI 89.0f
#define EXP_SCORE_HI 88.375f /* the largest x with round(x / ln 2) = 127 is near 88.38 */
#define LOG2E 0x1.715476p+0f
#define LN2_HI 0x1.62e400p-1f /* few bits, so n * LN2_HI is exact */
#define LN2_LO 0x1.7f7d1cp-20f
#else
#define EXP_LO_NORMAL (-0x1.6232bdd7abcd2p+9) /* the least x whose exp is at least DBL_MIN */
#define EXP_HI 710.0
#define EXP_SCORE_HI 709.0 /* the largest x with round(x / ln 2) = 1023 is near 709.43 */
#define LOG2E 0x1.71547652b82fep+0
#define LN2_HI 0x1.62e42fee00000p-1
#define LN2_LO 0x1.a39ef35793c76p-33
#endif

/* Elements summed in the vector lanes before the partial sum is merged into
 * the row's double total: bounds the f32 rounding error of long rows (with one
 * lane, as in the scalar kernel, by ~SUM_CHUNK ulps instead of ~n). A
 * multiple of 2 * VLEN for every vocabulary. */
#define SUM_CHUNK 256

static inline vec exp_tail(vec r)
{
#if ATTN_REAL_BITS == 32
    vec t = v_set1(1.0f / 5040.0f);
    t = v_fmadd(t, r, v_set1(1.0f / 720.0f));
    t = v_fmadd(t, r, v_set1(1.0f / 120.0f));
    t = v_fmadd(t, r, v_set1(1.0f / 24.0f));
    t = v_fmadd(t, r, v_set1(1.0f / 6.0f));
    t = v_fmadd(t, r, v_set1(0.5f));
#else
    vec t = v_set1(1.0 / 479001600.0);
    t = v_fmadd(t, r, v_set1(1.0 / 39916800.0));
    t = v_fmadd(t, r, v_set1(1.0 / 3628800.0));
    t = v_fmadd(t, r, v_set1(1.0 / 362880.0));
    t = v_fmadd(t, r, v_set1(1.0 / 40320.0));
    t = v_fmadd(t, r, v_set1(1.0 / 5040.0));
    t = v_fmadd(t, r, v_set1(1.0 / 720.0));
    t = v_fmadd(t, r, v_set1(1.0 / 120.0));
    t = v_fmadd(t, r, v_set1(1.0 / 24.0));
    t = v_fmadd(t, r, v_set1(1.0 / 6.0));
    t = v_fmadd(t, r, v_set1(0.5));
#endif
    return t;
}

/* The range reduction of every exp here: x clamped to [EXP_LO_NORMAL, hi]
 * (a NaN passes: v_min's and v_max's second operand), *n = round(x / ln 2)
 * and the returned r = x - n ln 2 in two steps (Cody-Waite), |r| <= ln2/2. */
static inline vec exp_reduce(vec x, real hi, vec *n)
{
    const vec clamped = v_max(v_set1(EXP_LO_NORMAL), v_min(v_set1(hi), x));
    *n = v_round(v_mul(clamped, v_set1(LOG2E)));
    const vec r = v_fmadd(*n, v_set1(-LN2_HI), clamped);
    return v_fmadd(*n, v_set1(-LN2_LO), r);
}

/* exp(x) with x clamped to [EXP_LO_NORMAL, hi]; 2^n applied by v_scale2,
 * or with one_product (hi at most EXP_SCORE_HI, so that 2^n is normal) by
 * v_scale2_normal's one product. */
static inline vec exp_clamped(vec x, real hi, int one_product)
{
    /* Results below the normal range are flushed to 0: making them (the
     * masked -inf lanes of every row among them) costs Intel CPUs a
     * microcode assist each, which took a third of a softmax row's time on
     * a Sapphire Rapids core. */
    vec n;
    const vec r = exp_reduce(x, hi, &n);
    const vec p = v_add(v_set1(REAL_C(1.0)), v_add(r, v_mul(v_mul(r, r), exp_tail(r))));
    const vec scaled = one_product ? v_scale2_normal(p, n) : v_scale2(p, n);
    return v_zero_below(scaled, x, v_set1(EXP_LO_NORMAL));
}

static inline vec v_exp(vec x) { return exp_clamped(x, EXP_HI, 0); }

#ifndef EXP_OUT
#define EXP_OUT real
static inline void exp_store_pair(real *y, vec e0, vec e1, size_t n)
{
    if (n >= VLEN) {
        v_store(y, e0);
        if (n == 2 * VLEN)
            v_store(y + VLEN, e1);
        else if (n > VLEN)
            v_store_part(y + VLEN, e1, n - VLEN);
    } else {
        v_store_part(y, e0, n);
    }
}
#endif

#ifndef EXP_OF_SCORE_DEFINED
#if ATTN_REAL_BITS == 32
/* The weight of the scores x: exp((scale x - shift) - shift2), in 17
 * operations where v_exp of the same argument took 22 (the softmax was a
 * fifth of an f32 prefill forward at hs 64): v_exp's range reduction and
 * clamps, with exp(r), |r| <= ln2/2, a polynomial of degree 6 fitted to
 * relative error (1.9e-9; 7.0e-8 in float Horner with FMA) instead of its
 * Taylor tail of degree 7 and the additions it kept apart. 2^n is applied
 * in one product (v_scale2_normal; v_exp's two took 8 AVX2 operations of
 * the 22, now 4): the clamp to [EXP_LO_NORMAL, EXP_SCORE_HI] keeps n in
 * [-126, 127], where 2^n is normal. The argument below EXP_LO_NORMAL gives
 * 0 (no subnormal is formed: the clamp keeps 2^n p normal), -inf 0, NaN
 * NaN; above EXP_SCORE_HI it gives exp(EXP_SCORE_HI), 2.4e38, not +inf:
 * every caller's argument is a score less its row's max (and log-sum), at
 * most 0. (AMD EPYC Zen 3, attn's avx2 set, 1 thread, causal T = 1024, 12
 * heads, hs 64: the softmax phase 16.7-17.1% of the call's time -> 14.1-14.7%
 * with the one product, attn-bench sdpa --profile.) */
static inline vec exp_of_score(vec x, vec vscale, vec vshift, vec vshift2)
{
    const vec y = v_sub(v_sub(v_mul(x, vscale), vshift), vshift2);
    vec n;
    const vec r = exp_reduce(y, EXP_SCORE_HI, &n);
    vec p = v_set1(0x1.6ab956p-10f);
    p = v_fmadd(p, r, v_set1(0x1.126d06p-7f));
    p = v_fmadd(p, r, v_set1(0x1.55589ap-5f));
    p = v_fmadd(p, r, v_set1(0x1.55540ap-3f));
    p = v_fmadd(p, r, v_set1(0x1.fffffap-2f));
    p = v_fmadd(p, r, v_set1(1.0f));
    p = v_fmadd(p, r, v_set1(1.0f));
    return v_zero_below(v_scale2_normal(p, n), y, v_set1(EXP_LO_NORMAL));
}
#else
/* The weight of the scores x: exp((scale x - shift) - shift2), v_exp's
 * but for 2^n in one product (as for f32, above EXP_SCORE_HI the argument
 * gives exp(EXP_SCORE_HI), not +inf). */
static inline vec exp_of_score(vec x, vec vscale, vec vshift, vec vshift2)
{
    return exp_clamped(v_sub(v_sub(v_mul(x, vscale), vshift), vshift2), EXP_SCORE_HI, 1);
}
#endif
#endif

/* y[j] = 0 for n_valid <= j < n_total. */
static inline void zero_tail(EXP_OUT *y, size_t n_valid, size_t n_total)
{
    if (n_total > n_valid)
        memset(y + n_valid, 0, (n_total - n_valid) * sizeof *y);
}

/* max(-REAL_MAX, max_{j<n} scale*x[j]), in MAX_CHAINS chains. With scale
 * > 0 (every attention scale) it is scale * max x[j]: the rounded product
 * is monotonic in x, so the same number, one operation per vector fewer. */
#define MAX_CHAINS 4
static inline real scaled_max(const real *x, size_t n, real scale)
{
    const int positive = scale > REAL_C(0.0);
    const vec vscale = v_set1(positive ? REAL_C(1.0) : scale);
    vec max[MAX_CHAINS];
    for (int c = 0; c < MAX_CHAINS; c++)
        max[c] = v_set1((real)-INFINITY);
    size_t j = 0;
    if (positive)
        for (; j + MAX_CHAINS * VLEN <= n; j += MAX_CHAINS * VLEN)
            for (int c = 0; c < MAX_CHAINS; c++)
                max[c] = v_max(max[c], v_load(x + j + (size_t)c * VLEN));
    for (; j + MAX_CHAINS * VLEN <= n; j += MAX_CHAINS * VLEN)
        for (int c = 0; c < MAX_CHAINS; c++)
            max[c] = v_max(max[c], v_mul(v_load(x + j + (size_t)c * VLEN), vscale));
    for (; j + VLEN <= n; j += VLEN)
        max[0] = v_max(max[0], v_mul(v_load(x + j), vscale));
    if (j < n)
        max[1] = v_max(max[1], v_mul(v_load_part(x + j, n - j, (real)-INFINITY), vscale));
    for (int c = 1; c < MAX_CHAINS; c++)
        max[0] = v_max(max[0], max[c]);
    const real top = positive ? v_hmax(max[0]) * scale : v_hmax(max[0]);
    return top < -ATTN_REAL_MAX ? -ATTN_REAL_MAX : top; /* a NaN stays, as the chains left it */
}

/* exp((scale*x - shift) - shift2) of the n <= VLEN elements at x, the other
 * lanes 0. */
static inline vec exp_shifted_part(const real *x, size_t n, vec vscale, vec vshift, vec vshift2)
{
    return exp_of_score(v_load_part(x, n, (real)-INFINITY), vscale, vshift, vshift2);
}

/* y[j] = exp((scale*x[j] - shift) - shift2) for j < n_valid, 0 up to
 * n_total; returns the sum of the y[j] (before a bf16 EXP_OUT rounds them),
 * two vectors of lanes a SUM_CHUNK at a time, merged in double, and when
 * `largest` is not NULL the largest y[j] in it. shift2 is 0 (a constant
 * once inlined) but for weights recomputed from a row's max and log-sum. */
static inline double exp_shifted_row(const real *x, EXP_OUT *y, size_t n_valid, size_t n_total,
                                     real scale, real shift, real shift2, real *largest)
{
    const vec vscale = v_set1(scale), vshift = v_set1(shift), vshift2 = v_set1(shift2);
    vec top = v_set1(REAL_C(0.0));
    double total = 0.0;
    size_t j = 0;
    for (size_t chunk = 0; chunk < n_valid; chunk += SUM_CHUNK) {
        const size_t end = n_valid - chunk < SUM_CHUNK ? n_valid : chunk + SUM_CHUNK;
        vec sum0 = v_set1(REAL_C(0.0)), sum1 = v_set1(REAL_C(0.0));
        for (; j + 2 * VLEN <= end; j += 2 * VLEN) {
            const vec e0 = exp_of_score(v_load(x + j), vscale, vshift, vshift2);
            const vec e1 = exp_of_score(v_load(x + j + VLEN), vscale, vshift, vshift2);
            sum0 = v_add(sum0, e0);
            sum1 = v_add(sum1, e1);
            if (largest != NULL)
                top = v_max(top, v_max(e0, e1));
            exp_store_pair(y + j, e0, e1, 2 * VLEN);
        }
        if (j < end) { /* a whole vector into sum0, a part into sum1 */
            const size_t rest = end - j, first = rest < VLEN ? rest : VLEN;
            const vec e0 = exp_shifted_part(x + j, first, vscale, vshift, vshift2);
            const vec e1 = rest > VLEN
                               ? exp_shifted_part(x + j + VLEN, rest - VLEN, vscale, vshift, vshift2)
                               : v_set1(REAL_C(0.0));
            if (rest >= VLEN)
                sum0 = v_add(sum0, e0);
            else
                sum1 = v_add(sum1, e0);
            if (rest > VLEN)
                sum1 = v_add(sum1, e1);
            if (largest != NULL)
                top = v_max(top, v_max(e0, e1));
            exp_store_pair(y + j, e0, e1, rest);
            j = end;
        }
        total += (double)v_hsum(v_add(sum0, sum1));
    }
    zero_tail(y, n_valid, n_total);
    if (largest != NULL)
        *largest = v_hmax(top);
    return total;
}

/* The online block of kernels.h (attn_softmax_online_f32_fn) with weights
 * of type EXP_OUT. Where the including file defines ONLINE_LAZY_LIMIT (its
 * p never the scores' own storage: the redo reads them again), a block
 * after the first is first shifted by the running max as it is, in one
 * sweep that also finds its largest weight: kept (alpha 1, the max
 * unchanged: it is a shift, not always the max) when no weight exceeds
 * the limit, else redone as below. (The float kernels work in place, and
 * so do without.) */
static inline real softmax_online_block(const real *s, EXP_OUT *p, size_t n_valid, size_t n_total,
                                        real scale, real *running_max, real *running_sum)
{
#ifdef ONLINE_LAZY_LIMIT
    if (*running_max > -ATTN_REAL_MAX) {
        real largest;
        const double sum =
            exp_shifted_row(s, p, n_valid, n_total, scale, *running_max, REAL_C(0.0), &largest);
        if (largest <= ONLINE_LAZY_LIMIT) { /* false for NaN: redone */
            *running_sum += (real)sum;
            return REAL_C(1.0);
        }
    }
#endif
    const real old_max = *running_max, block_max = scaled_max(s, n_valid, scale);
    const real new_max = block_max > old_max ? block_max : old_max;
    if (new_max == (real)INFINITY) {
        zero_tail(p, 0, n_total);
        *running_max = new_max;
        return REAL_C(-1.0);
    }
    const real block_sum =
        (real)exp_shifted_row(s, p, n_valid, n_total, scale, new_max, REAL_C(0.0), NULL);
    const real alpha = v_hmax(v_exp(v_set1(old_max - new_max)));
    *running_sum = *running_sum * alpha + block_sum;
    *running_max = new_max;
    return alpha;
}

#endif /* ATTN_SOFTMAX_EXP_INC_C */
