/*
 * Fused scale / mask / softmax of one row, and the polynomial exp under it,
 * written once over the SIMD vocabulary of lib/simd/ (see its README). The
 * including file has already included one vocabulary header and defines
 *   SOFTMAX_ROW_NAME     the row kernel's symbol, e.g. attn_softmax_row_avx2_f32
 *   SOFTMAX_ROWS_NAME    the block-of-rows kernel's, e.g. attn_softmax_rows_avx2_f32
 *   SOFTMAX_ONLINE_NAME  the online block kernel's, e.g. attn_softmax_online_avx2_f32
 *   SOFTMAX_BACKWARD_NAME  the softmax backward row's, e.g. attn_softmax_backward_avx2_f32
 *   SOFTMAX_FROM_LSE_NAME  the weights recomputed from a row's log-sum-exp, e.g.
 *                        attn_softmax_from_lse_avx2_f32
 *   EXP_ARRAY_NAME       the array exp's symbol,  e.g. attn_exp_avx2_f32
 * All follow the contracts in kernels.h.
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
 * Row softmax, three sweeps over the row (XNNPACK's split):
 *   1. read-only: the max M of scale*x, in MAX_CHAINS independent lane-wise
 *      maxima (one v_max chain would wait on its latency every vector);
 *   2. y = exp(scale*x - M) for j < n_valid and its sum S, summed in the
 *      lanes of two vectors a SUM_CHUNK at a time and merged in double (so
 *      each element costs one exp);
 *   3. y *= 1/S; y = 0 from n_valid to n_total.
 * Every max starts at -REAL_MAX instead of -inf, so that an all-masked
 * row never forms (-inf) - (-inf).
 *
 * Online block (the tiled path's step over one key block), two sweeps:
 *   1. read-only: the block's max, folded into the row's running max;
 *   2. p = exp(scale*s - max) and its sum; the row's running sum is rescaled.
 */
#include <math.h>
#include <stddef.h>

#include "kernels/kernels.h"

#if ATTN_REAL_BITS == 32
#define EXP_LO_NORMAL (-0x1.5d589ep+6f) /* the least x whose exp is at least FLT_MIN */
#define EXP_HI 89.0f
#define LOG2E 0x1.715476p+0f
#define LN2_HI 0x1.62e400p-1f /* few bits, so n * LN2_HI is exact */
#define LN2_LO 0x1.7f7d1cp-20f
#else
#define EXP_LO_NORMAL (-0x1.6232bdd7abcd2p+9) /* the least x whose exp is at least DBL_MIN */
#define EXP_HI 710.0
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

static inline vec v_exp(vec x)
{
    /* Results below the normal range are flushed to 0: making them (the
     * masked -inf lanes of every row among them) costs Intel CPUs a
     * microcode assist each, which took a third of a softmax row's time on
     * a Sapphire Rapids core. */
    const vec below_normal = v_set1(EXP_LO_NORMAL), input = x;
    x = v_max(below_normal, v_min(v_set1(EXP_HI), x));
    vec n = v_round(v_mul(x, v_set1(LOG2E)));
    vec r = v_fmadd(n, v_set1(-LN2_HI), x);
    r = v_fmadd(n, v_set1(-LN2_LO), r);
    vec p = v_add(v_set1(REAL_C(1.0)), v_add(r, v_mul(v_mul(r, r), exp_tail(r))));
    return v_zero_below(v_scale2(p, n), input, below_normal);
}

void EXP_ARRAY_NAME(const real *x, real *y, size_t n);
void EXP_ARRAY_NAME(const real *x, real *y, size_t n)
{
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN)
        v_store(y + i, v_exp(v_load(x + i)));
    if (i < n)
        v_store_part(y + i, v_exp(v_load_part(x + i, n - i, REAL_C(0.0))), n - i);
}

/* y[j] = 0 for n_valid <= j < n_total. */
static inline void zero_tail(real *y, size_t n_valid, size_t n_total)
{
    size_t j = n_valid;
    for (; j < n_total && j % VLEN != 0; j++)
        y[j] = REAL_C(0.0);
    for (; j + VLEN <= n_total; j += VLEN)
        v_store(y + j, v_set1(REAL_C(0.0)));
    for (; j < n_total; j++)
        y[j] = REAL_C(0.0);
}

/* max(-REAL_MAX, max_{j<n} scale*x[j]), in MAX_CHAINS chains. */
#define MAX_CHAINS 4
static inline real scaled_max(const real *x, size_t n, real scale)
{
    const vec vscale = v_set1(scale);
    vec max[MAX_CHAINS];
    for (int c = 0; c < MAX_CHAINS; c++)
        max[c] = v_set1(-ATTN_REAL_MAX);
    size_t j = 0;
    for (; j + MAX_CHAINS * VLEN <= n; j += MAX_CHAINS * VLEN)
        for (int c = 0; c < MAX_CHAINS; c++)
            max[c] = v_max(max[c], v_mul(v_load(x + j + (size_t)c * VLEN), vscale));
    for (; j + VLEN <= n; j += VLEN)
        max[0] = v_max(max[0], v_mul(v_load(x + j), vscale));
    if (j < n)
        max[1] = v_max(max[1], v_mul(v_load_part(x + j, n - j, (real)-INFINITY), vscale));
    for (int c = 1; c < MAX_CHAINS; c++)
        max[0] = v_max(max[0], max[c]);
    return v_hmax(max[0]);
}

/* y[j] = exp((scale*x[j] - shift) - shift2) for j < n_valid, 0 up to
 * n_total; returns the sum of the y[j], two vectors of lanes a SUM_CHUNK at
 * a time, merged in double. shift2 is 0 (a constant once inlined) but for
 * weights recomputed from a row's max and log-sum. */
static inline double exp_shifted_row(const real *x, real *y, size_t n_valid, size_t n_total,
                                     real scale, real shift, real shift2)
{
    const vec vscale = v_set1(scale), vshift = v_set1(shift), vshift2 = v_set1(shift2);
    double total = 0.0;
    size_t j = 0;
    for (size_t chunk = 0; chunk < n_valid; chunk += SUM_CHUNK) {
        const size_t end = n_valid - chunk < SUM_CHUNK ? n_valid : chunk + SUM_CHUNK;
        vec sum0 = v_set1(REAL_C(0.0)), sum1 = v_set1(REAL_C(0.0));
        for (; j + 2 * VLEN <= end; j += 2 * VLEN) {
            const vec e0 = v_exp(v_sub(v_sub(v_mul(v_load(x + j), vscale), vshift), vshift2));
            const vec e1 =
                v_exp(v_sub(v_sub(v_mul(v_load(x + j + VLEN), vscale), vshift), vshift2));
            sum0 = v_add(sum0, e0);
            sum1 = v_add(sum1, e1);
            v_store(y + j, e0);
            v_store(y + j + VLEN, e1);
        }
        for (; j + VLEN <= end; j += VLEN) {
            const vec e = v_exp(v_sub(v_sub(v_mul(v_load(x + j), vscale), vshift), vshift2));
            sum0 = v_add(sum0, e);
            v_store(y + j, e);
        }
        if (j < end) {
            const size_t rest = end - j;
            const vec e = v_exp(v_sub(
                v_sub(v_mul(v_load_part(x + j, rest, (real)-INFINITY), vscale), vshift), vshift2));
            sum1 = v_add(sum1, e);
            v_store_part(y + j, e, rest);
            j = end;
        }
        total += (double)v_hsum(v_add(sum0, sum1));
    }
    zero_tail(y, n_valid, n_total);
    return total;
}

/* y[j] *= factor for j < n. */
static inline void scale_row(real *y, size_t n, real factor)
{
    const vec vfactor = v_set1(factor);
    size_t j = 0;
    for (; j + VLEN <= n; j += VLEN)
        v_store(y + j, v_mul(v_load(y + j), vfactor));
    if (j < n)
        v_store_part(y + j, v_mul(v_load_part(y + j, n - j, REAL_C(0.0)), vfactor), n - j);
}

/* Rows holding +inf (after scaling): the limit of softmax gives the +inf
 * entries equal shares; NaN anywhere still wins. Rare, so scalar. */
static void softmax_row_with_infinity(const real *x, real *y, size_t n_valid, size_t n_total,
                                      real scale)
{
    size_t infinite = 0;
    int has_nan = 0;
    for (size_t j = 0; j < n_valid; j++) {
        real s = x[j] * scale;
        infinite += (s == (real)INFINITY);
        has_nan |= (s != s);
    }
    real share = has_nan ? (real)NAN : REAL_C(1.0) / (real)infinite;
    for (size_t j = 0; j < n_valid; j++) {
        real s = x[j] * scale;
        y[j] = has_nan ? (real)NAN : (s == (real)INFINITY ? share : REAL_C(0.0));
    }
    for (size_t j = n_valid; j < n_total; j++)
        y[j] = REAL_C(0.0);
}

void SOFTMAX_ROW_NAME(const real *x, real *y, size_t n_valid, size_t n_total, real scale);
/* A row of at most VLEN entries: one register, one sweep. */
static inline void softmax_short_row(const real *x, real *y, size_t n_valid, size_t n_total,
                                     real scale)
{
    const vec s = v_mul(v_load_part(x, n_valid, (real)-INFINITY), v_set1(scale));
    real max = v_hmax(v_max(v_set1(-ATTN_REAL_MAX), s));
    if (max == (real)INFINITY) {
        softmax_row_with_infinity(x, y, n_valid, n_total, scale);
        return;
    }
    const vec e = v_exp(v_sub(s, v_set1(max)));
    const real sum = v_hsum(e);
    const real inv = sum == REAL_C(0.0) ? REAL_C(0.0) : REAL_C(1.0) / sum;
    v_store_part(y, v_mul(e, v_set1(inv)), n_valid);
    for (size_t j = n_valid; j < n_total; j++)
        y[j] = REAL_C(0.0);
}

void SOFTMAX_ROW_NAME(const real *x, real *y, size_t n_valid, size_t n_total, real scale)
{
    if (n_valid < VLEN) {
        softmax_short_row(x, y, n_valid, n_total, scale);
        return;
    }
    const real row_max = scaled_max(x, n_valid, scale);
    if (row_max == (real)INFINITY) {
        softmax_row_with_infinity(x, y, n_valid, n_total, scale);
        return;
    }
    const double row_sum = exp_shifted_row(x, y, n_valid, n_total, scale, row_max, REAL_C(0.0));
    /* a fully masked row (sum 0) gives zeros */
    scale_row(y, n_valid, row_sum == 0.0 ? REAL_C(0.0) : (real)(1.0 / row_sum));
}

void SOFTMAX_ROWS_NAME(const real *x, real *y, size_t rows, size_t ld, size_t n_valid,
                       size_t n_valid_step, size_t n_total, real scale);
/* Short rows (all shorter than a vector, none reaching +inf), up to
 * SHORT_GROUP at a time: their dependency chains (max, exp, sum) are
 * independent and interleave. Row r has n_valid[r] entries of n_total.
 * 8 rows at once took the course shape's forward (6 rows of 6) from 0.91
 * to 0.84 us against 4 on AVX-512; on AVX2 (16 registers) 8 spilled and
 * took it from 1.07 to 1.15 us (Xeon, model 207). */
#define SHORT_GROUP ATTN_SOFTMAX_SHORT_ROWS
static inline int softmax_short_group(const real *x, real *y, size_t rows, size_t ld,
                                      const size_t *n_valid, size_t n_total, real scale)
{
    vec s[SHORT_GROUP], e[SHORT_GROUP];
    real max[SHORT_GROUP], sum[SHORT_GROUP];
    for (size_t r = 0; r < SHORT_GROUP; r++) {
        const size_t row = r < rows ? r : 0;
        s[r] = v_mul(v_load_part(x + row * ld, n_valid[row], (real)-INFINITY), v_set1(scale));
        max[r] = v_hmax(v_max(v_set1(-ATTN_REAL_MAX), s[r]));
    }
    for (size_t r = 0; r < rows; r++)
        if (max[r] == (real)INFINITY)
            return 0;
    for (size_t r = 0; r < SHORT_GROUP; r++) {
        e[r] = v_exp(v_sub(s[r], v_set1(max[r])));
        sum[r] = v_hsum(e[r]);
    }
    for (size_t r = 0; r < rows; r++) {
        const real inv = sum[r] == REAL_C(0.0) ? REAL_C(0.0) : REAL_C(1.0) / sum[r];
        v_store_part(y + r * ld, v_mul(e[r], v_set1(inv)), n_valid[r]);
        for (size_t j = n_valid[r]; j < n_total; j++)
            y[r * ld + j] = REAL_C(0.0);
    }
    return 1;
}

/* Rows r < rows of x (ld), row r with n_valid + r * n_valid_step entries
 * (n_valid_step 1: a causal block's rows), each the row kernel's result. */
void SOFTMAX_ROWS_NAME(const real *x, real *y, size_t rows, size_t ld, size_t n_valid,
                       size_t n_valid_step, size_t n_total, real scale)
{
    size_t r = 0;
    while (r < rows) {
        size_t valid[SHORT_GROUP];
        const size_t group = rows - r < SHORT_GROUP ? rows - r : SHORT_GROUP;
        size_t g = 0;
        for (; g < group; g++) {
            valid[g] = n_valid + (r + g) * n_valid_step;
            if (valid[g] >= VLEN)
                break;
        }
        if (g > 0 && softmax_short_group(x + r * ld, y + r * ld, g, ld, valid, n_total, scale)) {
            r += g;
            continue;
        }
        SOFTMAX_ROW_NAME(x + r * ld, y + r * ld, n_valid + r * n_valid_step, n_total, scale);
        r++;
    }
}
#undef SHORT_GROUP

real SOFTMAX_ONLINE_NAME(const real *s, real *p, size_t n_valid, size_t n_total, real scale,
                         real *running_max, real *running_sum);
real SOFTMAX_ONLINE_NAME(const real *s, real *p, size_t n_valid, size_t n_total, real scale,
                         real *running_max, real *running_sum)
{
    const real old_max = *running_max, block_max = scaled_max(s, n_valid, scale);
    const real new_max = block_max > old_max ? block_max : old_max;
    if (new_max == (real)INFINITY) {
        zero_tail(p, 0, n_total);
        *running_max = new_max;
        return REAL_C(-1.0);
    }
    const real block_sum =
        (real)exp_shifted_row(s, p, n_valid, n_total, scale, new_max, REAL_C(0.0));
    const real alpha = v_hmax(v_exp(v_set1(old_max - new_max)));
    *running_sum = *running_sum * alpha + block_sum;
    *running_max = new_max;
    return alpha;
}

void SOFTMAX_FROM_LSE_NAME(const real *s, real *p, size_t n_valid, size_t n_total, real scale,
                           real max, real log_sum);
void SOFTMAX_FROM_LSE_NAME(const real *s, real *p, size_t n_valid, size_t n_total, real scale,
                           real max, real log_sum)
{
    if (n_valid == 0 || log_sum == (real)-INFINITY) /* no key seen: weights 0 */
        zero_tail(p, 0, n_total);
    else if (max == (real)INFINITY) /* the row reached +inf: its limit */
        softmax_row_with_infinity(s, p, n_valid, n_total, scale);
    else
        (void)exp_shifted_row(s, p, n_valid, n_total, scale, max, log_sum);
}

real SOFTMAX_BACKWARD_NAME(const real *P, real *dP, size_t n_valid, size_t n_total,
                           const real *given_dot);
/* dS = P o (dP - <dP, P>) over the n_valid entries of a row, 0 up to n_total;
 * dP is overwritten by dS. The dot is summed in the vector lanes, a chunk of
 * SUM_CHUNK entries at a time merged in double (as the forward's row sum),
 * unless given_dot supplies it. Returns the dot. */
real SOFTMAX_BACKWARD_NAME(const real *P, real *dP, size_t n_valid, size_t n_total,
                           const real *given_dot)
{
    real dot;
    if (given_dot != NULL) {
        dot = *given_dot;
    } else {
        double total = 0.0;
        for (size_t chunk = 0; chunk < n_valid; chunk += SUM_CHUNK) {
            const size_t end = n_valid - chunk < SUM_CHUNK ? n_valid : chunk + SUM_CHUNK;
            vec sum = v_set1(REAL_C(0.0));
            size_t j = chunk;
            for (; j + VLEN <= end; j += VLEN)
                sum = v_fmadd(v_load(dP + j), v_load(P + j), sum);
            if (j < end)
                sum = v_fmadd(v_load_part(dP + j, end - j, REAL_C(0.0)),
                              v_load_part(P + j, end - j, REAL_C(0.0)), sum);
            total += (double)v_hsum(sum);
        }
        dot = (real)total;
    }
    const vec vdot = v_set1(dot);
    size_t j = 0;
    for (; j + VLEN <= n_valid; j += VLEN)
        v_store(dP + j, v_mul(v_load(P + j), v_sub(v_load(dP + j), vdot)));
    if (j < n_valid)
        v_store_part(dP + j,
                     v_mul(v_load_part(P + j, n_valid - j, REAL_C(0.0)),
                           v_sub(v_load_part(dP + j, n_valid - j, REAL_C(0.0)), vdot)),
                     n_valid - j);
    for (j = n_valid; j < n_total; j++)
        dP[j] = REAL_C(0.0);
    return dot;
}
