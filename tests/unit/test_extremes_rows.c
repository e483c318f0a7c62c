/*
 * test_extremes_rows: rows of one repeated value, of one entry, of 65536
 * entries and of subnormal values, through the public API.
 * The numerical-extremes suites: test_extremes_overflow (huge logits,
 * inputs and scores), test_extremes_rows (constant, single-entry, very long
 * and subnormal rows), test_extremes_nan (NaN confined to the rows that see
 * it); in both precisions (every case runs for f32 and f64; ctest also runs
 * each program with ATTN_SIMD=scalar and =avx2, so each kernel set meets
 * them).
 *
 *   all_equal_rows      constant rows (0, +-1e4, 1e30, +-REAL_MAX, a
 *                       subnormal, +inf) of 1..5000 entries: every weight of
 *                       a row has the same bits and is 1/n to 2 ulp; a -inf
 *                       row gives exactly 0. Heads whose positions are all
 *                       equal give uniform weights (1/(t+1) when causal) and
 *                       out = the common V row.
 *   single_position     T = 1 (or Tk = 1, cols = 1): the weight is exactly 1
 *                       (0 for -inf, NaN for NaN), out is exactly the v row,
 *                       and the backward's dWq, dWk are exactly 0 (a
 *                       one-key softmax does not depend on its score).
 *   long_rows           rows of 65536 entries: |sum_j w_j - 1| <= 1e-6 (f32)
 *                       / 1e-12 (f64), and the weights against the reference;
 *                       a lookup with Tk = 65536 keys likewise, with and
 *                       without a weights buffer.
 *   denormal_inputs     subnormal logits, scale and head inputs: finite,
 *                       weights uniform to tolerance, out against the
 *                       reference.
 *
 * Tolerances: p->tol (1e-5 f32, 1e-12 f64; precision.h) for residuals
 * against the double reference; exact comparisons where the result is
 * exactly representable and the computation exact (stated per case). The
 * long-row sum bound 1e-6 (f32) is ~16 unit roundoffs: each weight carries
 * a few u (polynomial exp <= 2e-7, one product), and the normalizing sum is
 * summed in float over chunks of 256 entries and merged in double, so its
 * rounding error does not grow with the row length; 1e-12 (f64) as in
 * precision.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/extremes_checks.h"
#include "support/inputs.h"
#include "reference/mha.h"
#include "support/test_common.h"

/* ---- all-equal rows --------------------------------------------------------- */

static void all_equal_rows(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const double values[] = {
        0.0, 1e4, -1e4, 1e30, p->max, -p->max, p->min_normal * p->epsilon * 3, HUGE_VAL};
    const size_t lengths[] = {1, 3, 7, 16, 17, 100, 1000, 5000};
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        const size_t n = lengths[l], count = sizeof values / sizeof values[0];
        double *x = talloc_doubles((count + 1) * n);
        for (size_t r = 0; r < count; r++)
            for (size_t j = 0; j < n; j++)
                x[r * n + j] = p->round(values[r]);
        for (size_t j = 0; j < n; j++)
            x[count * n + j] = -HUGE_VAL; /* and a masked row */
        double *y = softmax_dense(p, x, count + 1, n);
        for (size_t r = 0; r < count; r++) {
            const double *row = y + r * n;
            for (size_t j = 1; j < n; j++)
                check_true(memcmp(&row[j], &row[0], sizeof row[0]) == 0,
                           "constant %g, n %zu: weight %zu = %.17g differs from weight 0 = %.17g",
                           values[r], n, j, row[j], row[0]);
            check_true(fabs(row[0] - 1.0 / (double)n) <= 2.0 * p->epsilon / (double)n,
                       "constant %g, n %zu: weight %.17g is not 1/n", values[r], n, row[0]);
        }
        for (size_t j = 0; j < n; j++)
            check_true(y[count * n + j] == 0.0, "-inf row, n %zu: weight %zu = %g", n, j,
                       y[count * n + j]);
    }
}

/* every position of each batch element equal: each weights row is uniform over
 * the keys it sees, and out is the common value row */
static void all_equal_heads(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 6003);
    for (int causal = 0; causal <= 1; causal++) {
        mha_shape s = {2, 9, 4, 2, 3, 0.0, causal, 0};
        mha_data d = mha_random(p, &rng, s, 4.0); /* large gain: big scores */
        for (size_t b = 0; b < s.B; b++)
            for (size_t t = 1; t < s.T; t++)
                memcpy(d.X + (b * s.T + t) * s.C, d.X + b * s.T * s.C, s.C * sizeof(double));
        mha_typed t = mha_typed_copy(p, &d);
        void *w = NULL;
        void *out = mha_plan_forward(p, mha_plan(p, &s, 0), &s, &t, &w);
        mha_check_forward(p, &d, out, w, "all-equal positions");
        double *weights = prec_doubles(p, w, mha_weights_elems(&s));
        for (size_t row = 0; row < s.B * s.NH * s.T; row++) {
            const size_t query = row % s.T, keys = causal ? query + 1 : s.T;
            for (size_t j = 0; j < s.T; j++) {
                const double want = j < keys ? 1.0 / (double)keys : 0.0;
                check_true(fabs(weights[row * s.T + j] - want) <= p->tol * want,
                           "causal %d, row %zu, key %zu: weight %.17g, want %.17g", causal, row, j,
                           weights[row * s.T + j], want);
            }
        }
    }
}

/* ---- a single position ------------------------------------------------------ */

static void single_position(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 6004);

    /* one column: softmax is 1 for any finite value or +inf, 0 for -inf, NaN for NaN */
    const double x[9] = {0.0,      1e30,      -1e30,
                         p->max,   -p->max,   p->min_normal * p->epsilon,
                         HUGE_VAL, -HUGE_VAL, (double)NAN};
    const double want[9] = {1, 1, 1, 1, 1, 1, 1, 0, (double)NAN};
    expect_exact(softmax_dense(p, x, 9, 1), want, 9, "one column");

    /* one key: weights exactly 1, out exactly that key's v row, whatever the scale */
    const double *q = random_rounded(p, &rng, 3 * 2, 100.0), *k = random_rounded(p, &rng, 2, 1.0),
                 *v = random_rounded(p, &rng, 3, 1.0);
    const double scales[3] = {0.0, 1e4, 1e-30};
    const double ones[3] = {1, 1, 1};
    for (int i = 0; i < 3; i++) {
        lookup_run r = lookup_with_weights(p, 3, 1, 2, 3, scales[i], q, k, v);
        expect_exact(r.weights, ones, 3, "one key: weights");
        for (size_t t = 0; t < 3; t++)
            expect_exact(r.out + t * 3, v, 3, "one key: out");
    }

    /* T = 1 through a training plan: weights 1, out against the reference,
     * and dS = P o (dP - rowsum(dP o P)) = dP - dP = 0 makes dWq = dWk = 0 */
    for (int causal = 0; causal <= 1; causal++) {
        mha_shape s = {3, 1, 4, 2, 3, 0.0, causal, 1};
        mha_data d = mha_random(p, &rng, s, 10.0);
        mha_typed t = mha_typed_copy(p, &d);
        attn_plan *plan = mha_plan(p, &s, 0);
        void *w = NULL;
        void *out = mha_plan_forward(p, plan, &s, &t, &w);
        mha_check_forward(p, &d, out, w, "T = 1");
        const double *weights = prec_doubles(p, w, mha_weights_elems(&s));
        for (size_t i = 0; i < mha_weights_elems(&s); i++)
            check_true(weights[i] == 1.0, "T = 1: weight %zu = %.17g, want exactly 1", i,
                       weights[i]);
        mha_grads g = mha_plan_backward(p, plan, &s, &t);
        mha_grads got = mha_grads_doubles(p, &s, &g), ref = mha_reference_grads(&d);
        mha_grads_residual(&s, &got, &ref, mha_grad_tol(p), "T = 1");
        for (size_t i = 0; i < mha_w_elems(&s); i++)
            check_true(((double *)got.g[MHA_DWQ])[i] == 0.0 && ((double *)got.g[MHA_DWK])[i] == 0.0,
                       "T = 1: dWq[%zu] = %g, dWk[%zu] = %g, want 0", i,
                       ((double *)got.g[MHA_DWQ])[i], i, ((double *)got.g[MHA_DWK])[i]);
    }
}

/* ---- very long rows ---------------------------------------------------------- */

enum { LONG_N = 65536 };

static double long_sum_tol(const test_prec *p)
{
    return p->dtype == ATTN_F32 ? 1e-6 : 1e-12;
}

/* each row's sum within long_sum_tol of 1 */
static void expect_row_sums(const test_prec *p, const double *w, size_t rows, size_t cols,
                            const char *what)
{
    for (size_t r = 0; r < rows; r++) {
        double sum = 0.0;
        for (size_t j = 0; j < cols; j++)
            sum += w[r * cols + j];
        check_residual(fabs(sum - 1.0), long_sum_tol(p), "%s: row %zu of %zu: sum - 1", what, r,
                       cols);
    }
}

static void long_rows(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { ROWS = 4 };
    test_rng rng;
    rng_seed(&rng, 6005);
    double *x = talloc_doubles(ROWS * LONG_N);
    for (size_t j = 0; j < LONG_N; j++) {
        x[0 * LONG_N + j] = rng_normal(&rng);            /* flat: every term counts */
        x[1 * LONG_N + j] = 10.0 * rng_normal(&rng);     /* peaked */
        x[2 * LONG_N + j] = rng_range(&rng, -80.0, 0.0); /* terms over 35 decades */
        x[3 * LONG_N + j] = (j % 4096 == 7) ? 1e4 : -rng_uniform(&rng); /* 16 far above */
    }
    prec_round_array(p, x, ROWS * LONG_N);
    double *y = softmax_dense(p, x, ROWS, LONG_N), *ref = softmax_reference(x, ROWS, LONG_N);
    expect_row_sums(p, y, ROWS, LONG_N, "softmax_rows");
    check_residual(residual_rows(y, ref, ROWS, LONG_N), p->tol, "long rows");
    check_worst_report(p->name);
}

static void long_lookup(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { TQ = 3, D = 8, DV = 4 };
    test_rng rng;
    rng_seed(&rng, 6006);
    double *q = random_rounded(p, &rng, TQ * D, 2.0), *k = random_rounded(p, &rng, LONG_N * D, 1.0),
           *v = random_rounded(p, &rng, LONG_N * DV, 1.0);
    double *ref_out = talloc_doubles(TQ * DV), *ref_w = talloc_doubles(TQ * LONG_N);
    ref_lookup(TQ, LONG_N, D, DV, 0.0, q, k, v, ref_out, ref_w);
    const double v_scale = max_abs(v, LONG_N * DV);

    lookup_run r = lookup_with_weights(p, TQ, LONG_N, D, DV, 0.0, q, k, v);
    expect_row_sums(p, r.weights, TQ, LONG_N, "lookup weights");
    check_residual(residual_rows(r.weights, ref_w, TQ, LONG_N), p->tol, "long lookup: weights");
    check_residual(residual_scaled(r.out, ref_out, TQ * DV, v_scale), p->tol, "long lookup: out");

    void *out = typed_output(p, TQ * DV); /* no weights: the blocked workspace */
    attn_status st =
        p->lookup(TQ, LONG_N, D, DV, 0.0, prec_typed(p, q, TQ * D), prec_typed(p, k, LONG_N * D),
                  prec_typed(p, v, LONG_N * DV), out, NULL);
    check_true(st == ATTN_OK, "long lookup without weights: %s", attn_status_string(st));
    check_residual(residual_scaled(prec_doubles(p, out, TQ * DV), ref_out, TQ * DV, v_scale),
                   p->tol, "long lookup without weights: out");
    check_worst_report(p->name);
}

/* ---- subnormal inputs --------------------------------------------------------- */

static void denormal_inputs(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const double denorm_min = p->min_normal * p->epsilon; /* the subnormal spacing */
    test_rng rng;
    rng_seed(&rng, 6007);

    /* subnormal logits: exp(x - max) rounds to 1, the row is uniform */
    enum { ROWS = 2, COLS = 40 };
    double *x = talloc_doubles(ROWS * COLS);
    for (size_t j = 0; j < ROWS * COLS; j++)
        x[j] = p->round(p->min_normal * 0.25 * rng_normal(&rng));
    double *y = softmax_dense(p, x, ROWS, COLS);
    check_residual(residual_rows(y, softmax_reference(x, ROWS, COLS), ROWS, COLS), p->tol,
                   "subnormal logits");

    /* a subnormal scale: every scaled score is ~0, uniform weights */
    double *q = random_rounded(p, &rng, 2 * 3, 1.0), *k = random_rounded(p, &rng, 5 * 3, 1.0),
           *v = random_rounded(p, &rng, 5 * 2, 1.0);
    lookup_run r = lookup_with_weights(p, 2, 5, 3, 2, 3 * denorm_min, q, k, v);
    for (size_t i = 0; i < 2 * 5; i++)
        check_true(fabs(r.weights[i] - 0.2) <= p->tol * 0.2, "subnormal scale: weight %zu = %.17g",
                   i, r.weights[i]);

    /* a head on subnormal X: Q, K, V and the scores are subnormal or 0.
     * Each product of the V GEMM and of P V rounds to the subnormal grid
     * (absolute error denorm_min / 2 each, up to C + T terms), so out is held
     * to tol * max|V| plus that absolute slack. */
    enum { B = 2, T = 6, C = 4, HS = 3 };
    double *X = talloc_doubles(B * T * C);
    for (size_t i = 0; i < B * T * C; i++)
        X[i] = p->min_normal * 0.0625 * rng_normal(&rng);
    const double *Wq = random_rounded(p, &rng, C * HS, 1.0),
                 *Wk = random_rounded(p, &rng, C * HS, 1.0),
                 *Wv = random_rounded(p, &rng, C * HS, 1.0);
    head_data h = head_from(p, B, T, C, HS, X, Wq, Wk, Wv);
    for (int causal = 0; causal <= 1; causal++) {
        double *out, *w;
        head_run(p, &h, NULL, causal, &out, &w);
        double *ref_out = talloc_doubles(B * T * HS), *ref_w = talloc_doubles(B * T * T);
        ref_self_attention(B, T, C, HS, causal, h.X, h.Wq, h.Wk, h.Wv, ref_out, ref_w);
        expect_all_finite(out, B * T * HS, "subnormal head: out");
        check_residual(residual_rows(w, ref_w, B * T, T), p->tol, "subnormal head: weights");
        const double slack = (double)(C + T) * denorm_min;
        for (size_t i = 0; i < B * T * HS; i++)
            check_true(fabs(out[i] - ref_out[i]) <= p->tol * max_abs(h.V, B * T * HS) + slack,
                       "subnormal head, causal %d: out[%zu] = %g, reference %g", causal, i, out[i],
                       ref_out[i]);
    }
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        MHA_PREC_CASES(all_equal_rows),
        MHA_PREC_CASES(all_equal_heads),
        MHA_PREC_CASES(single_position),
        MHA_PREC_CASES(long_rows),
        MHA_PREC_CASES(long_lookup),
        MHA_PREC_CASES(denormal_inputs),
    };
    return cmocka_run_group_tests_name("numerical extremes: rows", tests, NULL, NULL);
}
