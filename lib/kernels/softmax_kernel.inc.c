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

#include "kernels/softmax_exp.inc.c"

void EXP_ARRAY_NAME(const real *x, real *y, size_t n);
void EXP_ARRAY_NAME(const real *x, real *y, size_t n)
{
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN)
        v_store(y + i, v_exp(v_load(x + i)));
    if (i < n)
        v_store_part(y + i, v_exp(v_load_part(x + i, n - i, REAL_C(0.0))), n - i);
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
    const double row_sum =
        exp_shifted_row(x, y, n_valid, n_total, scale, row_max, REAL_C(0.0), NULL);
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
    return softmax_online_block(s, p, n_valid, n_total, scale, running_max, running_sum);
}

/* Below this |max| and |log_sum|, a recomputed score's rounding against the
 * forward's (its ulp: 0.125 at 2^20 in f32) keeps exp within rounding of 1. */
#define FROM_LSE_EXACT 1048576.0

void SOFTMAX_FROM_LSE_NAME(const real *s, real *p, size_t n_valid, size_t n_total, real scale,
                           real max, real log_sum);
void SOFTMAX_FROM_LSE_NAME(const real *s, real *p, size_t n_valid, size_t n_total, real scale,
                           real max, real log_sum)
{
    if (n_valid == 0 || log_sum == (real)-INFINITY) { /* no key seen: weights 0 */
        zero_tail(p, 0, n_total);
    } else if (max == (real)INFINITY) { /* the row reached +inf: its limit */
        softmax_row_with_infinity(s, p, n_valid, n_total, scale);
    } else {
        (void)exp_shifted_row(s, p, n_valid, n_total, scale, max, log_sum, NULL);
        /* The scores s are recomputed, by other products than the forward's
         * perhaps: where they are huge, scale s - max carries their rounding
         * (1e22 at 1e38) and the exp may pass 1, even overflow. A weight is
         * at most 1: such rows are clamped to it (a NaN stays NaN). */
        if (fabs((double)max) > FROM_LSE_EXACT || fabs((double)log_sum) > FROM_LSE_EXACT)
            for (size_t j = 0; j < n_valid; j++)
                p[j] = p[j] > REAL_C(1.0) ? REAL_C(1.0) : p[j];
    }
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
