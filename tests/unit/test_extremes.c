/*
 * test_extremes: numerical extremes through the public API, in both
 * precisions (every case runs for f32 and f64; ctest also runs the program
 * with ATTN_SIMD=scalar and =avx2, so each kernel set meets them).
 *
 *   large_logits        softmax rows of integer logits up to +-1e4 against the
 *                       reference; rows of +-1e30 are exactly one-hot (or
 *                       exactly 1/2 on a tie): exp(-1e29) is 0 in any precision.
 *   limit_inputs        rows holding +-REAL_MAX (x - max overflows to -inf),
 *                       -inf and +inf, short (one register) and long (64
 *                       masked entries appended): exact weights 1/2, 1, 0.
 *   tiny_scale          a positive scale below the precision's smallest
 *                       subnormal (1e-300, 5e-324 in f32) is valid: uniform
 *                       weights, out = the mean value row.
 *   scale_overflow      lookups whose scale makes scale * q.k overflow: +inf
 *                       scores share the weight equally, -inf ones are
 *                       masked, a row of -inf gives weights 0 and output 0
 *                       (attn.h); scale 1e30 gives exactly one-hot weights
 *                       and out exactly the chosen v row.
 *   head_score_overflow a head whose Q K^T products overflow to +-inf
 *                       (C = hs = 1, |x| = 2^(emax/2 + 4)): the same rules,
 *                       on the materialized, workspace and tiled paths.
 *   masked_rows_nonfinite_v  heads whose every score is -inf while V is
 *                       +inf, and a lookup whose v holds Inf and NaN: out
 *                       exactly 0 (not 0 * Inf), on every path.
 *   integer_logits      heads with exact integer logits up to 1e4 and 1e6,
 *                       short (materialized) and T = 2100 (tiled), against
 *                       the reference.
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
 *   nan_rows            a NaN changes only the rows that see it: its softmax
 *                       row; the batch element it is in (other batches
 *                       exact against the reference); the head whose Wq
 *                       column holds it (the other heads' columns exact).
 *   causal_future_nan   causal heads: a NaN or +inf at position t leaves
 *                       the rows before t (which give it weight 0) finite
 *                       and equal to the reference.
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

#include "support/inputs.h"
#include "reference/mha.h"
#include "support/test_common.h"

/* ---- helpers ------------------------------------------------------------- */

/* attn_softmax_rows on a dense (rows, cols) copy of x; the result as doubles */
static double *softmax_dense(const test_prec *p, const double *x, size_t rows, size_t cols)
{
    void *buf = prec_typed(p, x, rows * cols);
    attn_status st = p->softmax_rows(buf, rows, cols, cols);
    check_true(st == ATTN_OK, "softmax_rows (%zu, %zu): %s", rows, cols, attn_status_string(st));
    return prec_doubles(p, buf, rows * cols);
}

static double *softmax_reference(const double *x, size_t rows, size_t cols)
{
    double *y = talloc_doubles(rows * cols);
    for (size_t r = 0; r < rows; r++)
        ref_softmax_row(x + r * cols, y + r * cols, cols, cols, 1.0);
    return y;
}

/* exact equality, NaN equal to NaN */
static int same_value(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

static void expect_exact(const double *got, const double *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        check_true(same_value(got[i], want[i]), "%s: [%zu] = %.17g, want exactly %.17g", what, i,
                   got[i], want[i]);
}

static void expect_all_finite(const double *x, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        check_true(isfinite(x[i]), "%s: [%zu] = %g is not finite", what, i, x[i]);
}

/* a typed (n) buffer, sentinel-filled, as an output */
static void *typed_output(const test_prec *p, size_t n)
{
    void *b = talloc(n * p->size);
    sentinel_fill(b, n * p->size);
    return b;
}

/* ---- large logits -------------------------------------------------------- */

static void large_logits(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { ROWS = 6, COLS = 37 };
    test_rng rng;
    rng_seed(&rng, 6001);
    double *x = talloc_doubles(ROWS * COLS);
    for (size_t j = 0; j < COLS; j++) {
        /* integers, exact in both precisions (|x| <= 1e4 < 2^24) */
        x[0 * COLS + j] = (double)rng_below(&rng, 20001) - 1e4;
        x[1 * COLS + j] = 1e4 - (double)rng_below(&rng, 12); /* a cluster near the max */
        x[2 * COLS + j] = rng_below(&rng, 3) == 0 ? 1e4 : -1e4;
        /* beyond: +-1e30 */
        x[3 * COLS + j] = j == 5 ? 1e30 : -1e30;
        x[4 * COLS + j] = 1e30 * rng_normal(&rng);
        x[5 * COLS + j] = (j == 0 || j == COLS - 1) ? 1e30 : (j % 2 ? -1e30 : -1e4);
    }
    prec_round_array(p, x, ROWS * COLS);
    double *y = softmax_dense(p, x, ROWS, COLS), *ref = softmax_reference(x, ROWS, COLS);
    expect_all_finite(y, ROWS * COLS, "large logits");
    check_residual(residual_rows(y, ref, ROWS, COLS), p->tol, "large logits");
    /* rows 3-5: the reference is exactly 1, 1/2 or 0 (every other entry is
     * at least ~1e29 below the maximum) and so must be the library */
    expect_exact(y + 3 * COLS, ref + 3 * COLS, 3 * COLS, "+-1e30 rows");
    check_worst_report(p->name);
}

/* ---- inputs at the limits of the precision --------------------------------- */

static void limit_inputs(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const double M = p->max, inf = HUGE_VAL, tiny = p->min_normal * p->epsilon;
    enum { ROWS = 6, SHORT = 5, PAD = 64 };
    const double rows[ROWS][SHORT] = {
        {M, M, -M, 0.0, -M},                               /* 1/2, 1/2, 0, 0, 0 */
        {-M, -M, -M, -M, -M},                              /* uniform */
        {M, -M, -inf, -M, 0.5 * M},                        /* one-hot */
        {M, inf, 0.0, -inf, inf},                          /* +inf entries share */
        {-M, -inf, -inf, -inf, -inf},                      /* one-hot */
        {p->min_normal, -p->min_normal, 0.0, tiny, -tiny}, /* ~uniform */
    };
    const int exact[ROWS] = {1, 0, 1, 1, 1, 0};
    /* each row alone (one register on every kernel), then with PAD masked
     * entries appended (the vector loops); the result must not change */
    for (size_t cols = SHORT; cols <= SHORT + PAD; cols += PAD) {
        double *x = talloc_doubles(ROWS * cols);
        for (size_t r = 0; r < ROWS; r++)
            for (size_t j = 0; j < cols; j++)
                x[r * cols + j] = j < SHORT ? rows[r][j] : -inf;
        double *y = softmax_dense(p, x, ROWS, cols), *ref = softmax_reference(x, ROWS, cols);
        expect_all_finite(y, ROWS * cols, "limit inputs");
        check_residual(residual_rows(y, ref, ROWS, cols), p->tol, "limits, cols %zu", cols);
        for (size_t r = 0; r < ROWS; r++)
            if (exact[r])
                expect_exact(y + r * cols, ref + r * cols, cols, "limit row");
        for (size_t j = 1; j < SHORT; j++)
            check_true(y[cols + j] == y[cols], "uniform row: entry %zu differs", j);
    }
}

/* ---- scale * q.k overflowing --------------------------------------------- */

typedef struct lookup_run {
    double *out, *weights;
} lookup_run;

/* attn_lookup with weights requested; fails the test unless ATTN_OK */
static lookup_run lookup_with_weights(const test_prec *p, size_t Tq, size_t Tk, size_t d, size_t dv,
                                      double scale, const double *q, const double *k,
                                      const double *v)
{
    void *out = typed_output(p, Tq * dv), *w = typed_output(p, Tq * Tk);
    attn_status st = p->lookup(Tq, Tk, d, dv, scale, prec_typed(p, q, Tq * d),
                               prec_typed(p, k, Tk * d), prec_typed(p, v, Tk * dv), out, w);
    check_true(st == ATTN_OK, "lookup (%zu,%zu,%zu,%zu) scale %g: %s", Tq, Tk, d, dv, scale,
               attn_status_string(st));
    lookup_run run = {prec_doubles(p, out, Tq * dv), prec_doubles(p, w, Tq * Tk)};
    return run;
}

static void scale_overflow(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const double third = p->round(1.0 / 3.0);
    /* d = 1, scale = the largest finite value: scale * q.k is +inf for
     * q.k >= 2, -inf for q.k <= -2, and +-max for q.k = +-1 */
    const double q[4] = {1, -1, -2, 0}, k[4] = {2, 3, -1, 2};
    const double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    lookup_run r = lookup_with_weights(p, 4, 4, 1, 2, p->max, q, k, v);
    const double want_w[16] = {
        third, third, 0,    third, /* scores +inf, +inf, -max, +inf: the +inf share */
        0,     0,     1,    0,     /* -inf, -inf, +max, -inf */
        0,     0,     1,    0,     /* -inf, -inf, +inf, -inf */
        0.25,  0.25,  0.25, 0.25,  /* all 0 */
    };
    const double want_out[8] = {11.0 / 3.0, 14.0 / 3.0, 5, 6, 5, 6, 4, 5};
    check_residual(residual_rows(r.weights, want_w, 4, 4), p->epsilon,
                   "overflowing scores: weights");
    expect_exact(r.weights + 4, want_w + 4, 8, "one-hot rows of overflowing scores");
    check_residual(residual_scaled(r.out, want_out, 8, 8.0), p->tol, "overflowing scores: out");
    expect_exact(r.out + 2, want_out + 2, 4, "out of one-hot rows");

    /* every score -inf: weights 0 and output 0 (attn.h) */
    const double q_neg[1] = {-1}, k_pos[3] = {2, 3, 4};
    lookup_run masked = lookup_with_weights(p, 1, 3, 1, 2, p->max, q_neg, k_pos, v);
    const double zeros[3] = {0, 0, 0};
    expect_exact(masked.weights, zeros, 3, "all -inf row: weights");
    expect_exact(masked.out, zeros, 2, "all -inf row: out");
    /* ... even where v holds Inf and NaN (0, not 0 * Inf) */
    const double v_bad[6] = {HUGE_VAL, NAN, -HUGE_VAL, 1, 2, 3};
    lookup_run bad_v = lookup_with_weights(p, 1, 3, 1, 2, p->max, q_neg, k_pos, v_bad);
    expect_exact(bad_v.weights, zeros, 3, "all -inf row, v not finite: weights");
    expect_exact(bad_v.out, zeros, 2, "all -inf row, v not finite: out");
    void *bad_out = typed_output(p, 2); /* without a weights buffer: the workspace */
    check_true(p->lookup(1, 3, 1, 2, p->max, prec_typed(p, q_neg, 1), prec_typed(p, k_pos, 3),
                         prec_typed(p, v_bad, 6), bad_out, NULL) == ATTN_OK,
               "lookup without weights failed");
    expect_exact(prec_doubles(p, bad_out, 2), zeros, 2,
                 "all -inf row, v not finite, no weights buffer: out");

    /* scale 1e30 on exact integer scores: one-hot at the largest score (ties:
     * exactly 1/2 each), out exactly the chosen v row (or the exact mean) */
    const double q2[6] = {1, 0, 0, 1, 1, 1};                /* Tq 3, d 2 */
    const double k2[10] = {1, 2, 3, -1, 2, 2, -4, 0, 0, 1}; /* Tk 5: k.q1=1,3,2,-4,0 */
    const double v2[10] = {1, -1, 2, -2, 3, -3, 4, -4, 5, -5};
    lookup_run hot = lookup_with_weights(p, 3, 5, 2, 2, 1e30, q2, k2, v2);
    /* q0.k = 1,3,2,-4,0 -> key 1; q1.k = 2,-1,2,0,1 -> keys 0 and 2; q2.k = 3,2,4,-4,1 -> key 2 */
    const double want_hot[15] = {0, 1, 0, 0, 0, 0.5, 0, 0.5, 0, 0, 0, 0, 1, 0, 0};
    const double want_hot_out[6] = {2, -2, 2, -2, 3, -3};
    expect_exact(hot.weights, want_hot, 15, "scale 1e30: weights");
    expect_exact(hot.out, want_hot_out, 6, "scale 1e30: out");
}

/* A positive scale too small for the element type (below its smallest
 * subnormal: 1e-300 and 5e-324 round to 0 in float) is still a valid scale
 * (attn.h: only NaN, infinite or too large ones are BAD_SCALE): every scaled
 * score is ~0, so each row is uniform and out the mean of the value rows. */
static void tiny_scale(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const double scales[2] = {1e-300, 4.9406564584124654e-324};
    test_rng rng;
    rng_seed(&rng, 6010);
    for (int i = 0; i < 2; i++)
        for (size_t Tk = 3; Tk <= 40; Tk += 37) { /* one register, and the vector loops */
            double *q = random_rounded(p, &rng, 2 * 4, 1.0),
                   *k = random_rounded(p, &rng, Tk * 4, 1.0),
                   *v = random_rounded(p, &rng, Tk * 2, 1.0);
            lookup_run r = lookup_with_weights(p, 2, Tk, 4, 2, scales[i], q, k, v);
            double mean[2] = {0, 0};
            for (size_t j = 0; j < Tk; j++)
                for (size_t c = 0; c < 2; c++)
                    mean[c] += v[j * 2 + c] / (double)Tk;
            for (size_t j = 0; j < 2 * Tk; j++)
                check_true(fabs(r.weights[j] - 1.0 / (double)Tk) <= p->tol / (double)Tk,
                           "scale %g, Tk %zu: weight %zu = %g, want 1/%zu", scales[i], Tk, j,
                           r.weights[j], Tk);
            for (size_t t = 0; t < 2; t++)
                check_residual(residual_scaled(r.out + t * 2, mean, 2, max_abs(v, Tk * 2)), p->tol,
                               "scale %g, Tk %zu: out row %zu", scales[i], Tk, t);
        }
    /* a plan with such a scale: uniform weights too */
    mha_shape s = {1, 6, 4, 2, 2, scales[0], 0, 0};
    mha_data d = mha_random(p, &rng, s, MHA_W_GAIN);
    mha_typed t = mha_typed_copy(p, &d);
    void *w = NULL;
    mha_plan_forward(p, mha_plan(p, &s, ATTN_INFERENCE), &s, &t, &w);
    double *weights = prec_doubles(p, w, mha_weights_elems(&s));
    for (size_t j = 0; j < mha_weights_elems(&s); j++)
        check_true(fabs(weights[j] - 1.0 / 6.0) <= p->tol / 6.0, "plan, scale %g: weight %zu = %g",
                   scales[0], j, weights[j]);
}

/* ---- Q K^T overflowing inside a head --------------------------------------- */

/* A one-dimensional head (C = hs = 1, Wq = Wk = Wv = 1, scale 1): Q = K =
 * V = X and each score is one product, +-inf where it leaves the precision's
 * range. Expected weights by the reference's rules on those scores. */
static void overflow_head_expected(const test_prec *p, const double *X, size_t T, int causal,
                                   double *weights, double *out)
{
    double *z = talloc_doubles(T);
    for (size_t t = 0; t < T; t++) {
        size_t keys = causal ? t + 1 : T;
        for (size_t j = 0; j < T; j++) {
            double s = X[t] * X[j];
            z[j] = fabs(s) > p->max ? copysign(HUGE_VAL, s) : s;
        }
        ref_softmax_row(z, weights + t * T, keys, T, 1.0);
        out[t] = 0.0;
        for (size_t j = 0; j < keys; j++)
            out[t] += weights[t * T + j] * X[j];
    }
}

static void head_score_overflow(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { T = 5 };
    /* big^2 > max >= 2 big: 2^(emax/2 + 4), emax = 128 (f32) / 1024 (f64) */
    const double big = ldexp(1.0, ilogb(p->max) / 2 + 5);
    const double X[T] = {big, -big, 1.0, big, 0.5}, one[1] = {1.0};
    void *tX = prec_typed(p, X, T), *tW = prec_typed(p, one, 1);
    for (int causal = 0; causal <= 1; causal++) {
        double *want_w = talloc_doubles(T * T), *want_out = talloc_doubles(T);
        overflow_head_expected(p, X, T, causal, want_w, want_out);
        /* one-shot with weights, one-shot without (score workspace), a
         * plan forced onto the tiled path (its +inf rows are redone) */
        for (int path = 0; path < 3; path++) {
            void *out = typed_output(p, T), *w = path == 0 ? typed_output(p, T * T) : NULL;
            attn_status st;
            if (path < 2) {
                st = p->self_attention(1, T, 1, 1, causal, tX, tW, tW, tW, out, w);
            } else {
                mha_shape s = {1, T, 1, 1, 1, 0.0, causal, 0};
                st = p->forward(mha_plan(p, &s, ATTN_INFERENCE | ATTN_TILED), tX, tW, tW, tW, NULL,
                                out, NULL);
            }
            check_true(st == ATTN_OK, "path %d: %s", path, attn_status_string(st));
            double *got = prec_doubles(p, out, T);
            expect_all_finite(got, T, "overflowing scores: out");
            check_residual(residual_scaled(got, want_out, T, big), p->tol,
                           "overflowing scores: out, causal %d path %d", causal, path);
            if (w != NULL)
                check_residual(residual_rows(prec_doubles(p, w, T * T), want_w, T, T), p->tol,
                               "overflowing scores: weights, causal %d", causal);
        }
    }
}

/* Heads whose every score is -inf while V is +inf: X rows (big, big), Wq = I,
 * Wk = -I, Wv = ((0, 0), (0, big)), so Q = (big, big), K = (-big, -big),
 * each score -2 big^2 = -inf and each V row (0, big^2 = +inf). Every row is
 * fully masked: weights 0 and out 0 exactly (attn.h), not 0 * Inf = NaN, on
 * the materialized path (weights asked, and the score workspace), the tiled
 * one, and a training forward. */
static void masked_rows_nonfinite_v(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { T = 6, C = 2 };
    const double big = ldexp(1.0, ilogb(p->max) / 2 + 5);
    double X[T * C];
    for (size_t j = 0; j < T * C; j++)
        X[j] = big;
    const double Wq[4] = {1, 0, 0, 1}, Wk[4] = {-1, 0, 0, -1}, Wv[4] = {0, 0, 0, big};
    void *tX = prec_typed(p, X, T * C), *tWq = prec_typed(p, Wq, 4),
         *tWk = prec_typed(p, Wk, 4), *tWv = prec_typed(p, Wv, 4);
    double zeros[T * T] = {0};
    for (int causal = 0; causal <= 1; causal++)
        for (int path = 0; path < 4; path++) {
            void *out = typed_output(p, T * C), *w = path == 0 ? typed_output(p, T * T) : NULL;
            attn_status st;
            if (path < 2) {
                st = p->self_attention(1, T, C, C, causal, tX, tWq, tWk, tWv, out, w);
            } else {
                mha_shape s = {1, T, C, 1, C, 0.0, causal, 0};
                attn_plan *plan = mha_plan(p, &s, path == 2 ? ATTN_INFERENCE | ATTN_TILED : 0u);
                st = p->forward(plan, tX, tWq, tWk, tWv, NULL, out, NULL);
            }
            check_true(st == ATTN_OK, "path %d: %s", path, attn_status_string(st));
            char what[96];
            snprintf(what, sizeof what, "fully masked rows, V +inf: out, causal %d, path %d",
                     causal, path);
            expect_exact(prec_doubles(p, out, T * C), zeros, T * C, what);
            if (w != NULL)
                expect_exact(prec_doubles(p, w, T * T), zeros, T * T,
                             "fully masked rows, V +inf: weights");
        }
}

/* ---- exact integer logits up to 1e4 and 1e6 -------------------------------- */

static void integer_logits(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const double one[1] = {1.0};
    test_rng rng;
    rng_seed(&rng, 6002);
    /* C = hs = 1 and W = 1: the scores X_t X_j are integers below 2^24,
     * exact in f32; |X| <= 100 gives logits up to 1e4, |X| <= 1000 up to 1e6 */
    const double ranges[2] = {100, 1000};
    const size_t long_rows[] = {0, 1, 127, 128, 511, 512, 1000, 2047, 2048, 2099};
    for (int i = 0; i < 2; i++) {
        for (size_t T = 150; T <= 2100; T += 1950) {
            const size_t B = T < 1000 ? 2 : 1;
            double *X = talloc_doubles(B * T);
            for (size_t n = 0; n < B * T; n++)
                X[n] = (double)rng_below(&rng, 2 * (size_t)ranges[i] + 1) - ranges[i];
            head_data h = head_from(p, B, T, 1, 1, X, one, one, one);
            for (int causal = 0; causal <= 1; causal++) {
                if (T < 1000) {
                    head_check(p, &h, causal, 1, "integer logits");
                    head_check(p, &h, causal, 0, "integer logits, no weights");
                } else { /* T >= ATTN_TILED_MIN_T without weights: the tiled path */
                    head_check_rows(p, &h, causal, 0, long_rows,
                                    sizeof long_rows / sizeof long_rows[0],
                                    "integer logits, tiled");
                }
            }
        }
    }
    check_worst_report(p->name);
}

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

/* ---- NaN stays in the rows that see it ------------------------------------------ */

/* got[i] for i in [begin, end) is NaN */
static void expect_nan_range(const double *got, size_t begin, size_t end, const char *what)
{
    for (size_t i = begin; i < end; i++)
        check_true(isnan(got[i]), "%s: [%zu] = %g, want NaN", what, i, got[i]);
}

/* got and ref agree to tol (relative to scale) on [begin, end), and got is finite there */
static void expect_clean_range(const test_prec *p, const double *got, const double *ref,
                               size_t begin, size_t end, double scale, const char *what)
{
    expect_all_finite(got + begin, end - begin, what);
    check_residual(residual_scaled(got + begin, ref + begin, end - begin, scale), p->tol, "%s",
                   what);
}

static void nan_rows(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 6008);

    /* softmax rows: only the row holding the NaN */
    enum { ROWS = 5, COLS = 33 };
    double *x = random_rounded(p, &rng, ROWS * COLS, 3.0);
    x[2 * COLS + 17] = (double)NAN;
    double *y = softmax_dense(p, x, ROWS, COLS), *ref = softmax_reference(x, ROWS, COLS);
    expect_nan_range(y, 2 * COLS, 3 * COLS, "softmax NaN row");
    check_residual(residual_rows(y, ref, 2, COLS), p->tol, "rows before the NaN row");
    check_residual(residual_rows(y + 3 * COLS, ref + 3 * COLS, 2, COLS), p->tol,
                   "rows after the NaN row");

    /* NaN in X of batch element 1: all of batch 1 (every query sees every
     * key), nothing of batches 0 and 2; NaN in a Wq column of head 1 (no Wo):
     * head 1's weights and output columns, nothing of head 0's */
    mha_shape s = {3, 6, 5, 2, 3, 0.0, 0, 0};
    const size_t D = mha_D(&s), T = s.T, per_batch_out = T * D, per_head_w = T * T;
    for (int where = 0; where < 2; where++) {
        mha_data d = mha_random(p, &rng, s, MHA_W_GAIN);
        const mha_forward_ref clean = mha_reference_forward(&d);
        if (where == 0)
            d.X[(1 * T + 2) * s.C + 0] = (double)NAN;
        else
            d.Wq[1 * D + 1 * s.hs] = (double)NAN; /* row 1, first column of head 1 */
        mha_typed t = mha_typed_copy(p, &d);
        void *tw = NULL;
        double *out = prec_doubles(p, mha_plan_forward(p, mha_plan(p, &s, 0), &s, &t, &tw),
                                   mha_out_elems(&s));
        double *w = prec_doubles(p, tw, mha_weights_elems(&s));
        for (size_t b = 0; b < s.B; b++)
            for (size_t h = 0; h < s.NH; h++) {
                const size_t w0 = (b * s.NH + h) * per_head_w;
                const int poisoned = where == 0 ? b == 1 : h == 1;
                if (poisoned)
                    expect_nan_range(w, w0, w0 + per_head_w, "weights seeing the NaN");
                else
                    expect_clean_range(p, w, clean.weights, w0, w0 + per_head_w, 1.0,
                                       "weights not seeing the NaN");
                for (size_t tt = 0; tt < T; tt++) {
                    const size_t o0 = b * per_batch_out + tt * D + h * s.hs;
                    if (poisoned)
                        expect_nan_range(out, o0, o0 + s.hs, "out seeing the NaN");
                    else
                        expect_clean_range(p, out, clean.out, o0, o0 + s.hs, clean.out_scale,
                                           "out not seeing the NaN");
                }
            }
    }
}

/* Causal heads: a NaN or +inf in X at position `bad` reaches Q, K and V of
 * that position only. Rows t < bad give key `bad` weight exactly 0 (it is
 * masked), so their weights and output must not change; rows t >= bad see it
 * (NaN score) and are NaN. */
static void causal_future_nan(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const double specials[2] = {(double)NAN, HUGE_VAL};
    enum { T = 6, C = 2, HS = 2, BAD = 4 };
    test_rng rng;
    rng_seed(&rng, 6009);
    head_data h = head_random(p, &rng, 1, T, C, HS, MHA_W_GAIN);
    double *ref_out = talloc_doubles(T * HS), *ref_w = talloc_doubles(T * T);
    ref_self_attention(1, T, C, HS, 1, h.X, h.Wq, h.Wk, h.Wv, ref_out, ref_w);
    const double v_scale = max_abs(h.V, T * HS);
    for (int s = 0; s < 2; s++) {
        double *X = talloc_doubles(T * C);
        memcpy(X, h.X, T * C * sizeof(double));
        X[BAD * C] = specials[s];
        for (int path = 0; path < 3; path++) { /* weights; score workspace; tiled plan */
            double *out, *w = NULL;
            if (path < 2) {
                head_run(p, &h, X, 1, &out, path == 0 ? &w : NULL);
            } else {
                mha_shape shape = {1, T, C, 1, HS, 0.0, 1, 0};
                void *tout = typed_output(p, T * HS);
                attn_status st = p->forward(mha_plan(p, &shape, ATTN_INFERENCE | ATTN_TILED),
                                            prec_typed(p, X, T * C), prec_typed(p, h.Wq, C * HS),
                                            prec_typed(p, h.Wk, C * HS),
                                            prec_typed(p, h.Wv, C * HS), NULL, tout, NULL);
                check_true(st == ATTN_OK, "tiled plan: %s", attn_status_string(st));
                out = prec_doubles(p, tout, T * HS);
            }
            for (size_t t = 0; t < BAD; t++) {
                check_true(isfinite(out[t * HS]) && isfinite(out[t * HS + 1]),
                           "%s at position %d, path %d: out[%zu] = (%g, %g) though row %zu gives "
                           "position %d weight 0",
                           s == 0 ? "NaN" : "+inf", BAD, path, t, out[t * HS], out[t * HS + 1], t,
                           BAD);
                check_residual(residual_scaled(out + t * HS, ref_out + t * HS, HS, v_scale), p->tol,
                               "row %zu before the special value, path %d", t, path);
                if (w != NULL)
                    check_residual(residual_rows(w + t * T, ref_w + t * T, 1, T), p->tol,
                                   "weights row %zu before the special value", t);
            }
            for (size_t c = 0; c < HS; c++) /* NaN, or +-inf from the +inf rule */
                check_true(!isfinite(out[BAD * HS + c]), "out[%d][%zu] = %g is finite", BAD, c,
                           out[BAD * HS + c]);
        }
    }
}

/* Causal backward: a NaN (or Inf) in dout at query BAD reaches no gradient
 * of a key after it, since no later key is seen by that query: dX of rows
 * j > BAD is finite and equals the reference's with that dout row zero (the
 * pairs the mask removes contribute nothing). BAD lies inside a diagonal
 * block of the tiled backward (blocks of 128 queries and keys), past the
 * first one, on the plan's default engine and on its own threads. */
static void causal_backward_nan_dout(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const double specials[2] = {(double)NAN, HUGE_VAL};
    enum { BAD = 130 };
    mha_shape s = {1, 200, 16, 2, 8, 0.0, 1, 1};
    test_rng rng;
    rng_seed(&rng, 6010);
    mha_data d = mha_random(p, &rng, s, MHA_W_GAIN);
    for (size_t c = 0; c < s.C; c++)
        d.dout[BAD * s.C + c] = 0.0;
    const mha_grads ref = mha_reference_grads(&d);
    const double *dX_ref = ref.g[MHA_DX];
    const size_t first = (BAD + 1) * s.C, n = (s.T - BAD - 1) * s.C;
    for (int sp = 0; sp < 2; sp++)
        for (int threads = 0; threads < 2; threads++) {
            d.dout[BAD * s.C + 3] = specials[sp];
            mha_typed t = mha_typed_copy(p, &d);
            attn_plan *plan = mha_plan(p, &s, 0);
            if (threads)
                check_true(attn_plan_set_threads(plan, 2) == ATTN_OK, "set_threads");
            (void)mha_plan_forward(p, plan, &s, &t, NULL);
            const mha_grads typed = mha_plan_backward(p, plan, &s, &t);
            const mha_grads got = mha_grads_doubles(p, &s, &typed);
            const double *dX = got.g[MHA_DX];
            expect_all_finite(dX + first, n, "dX of rows after the bad dout row");
            check_residual(residual_scaled(dX + first, dX_ref + first, n, max_abs(dX_ref + first, n)),
                           mha_grad_tol(p), "dX after a %s in dout row %d (%s)",
                           sp == 0 ? "NaN" : "+inf", BAD, threads ? "own threads" : "default");
        }
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        MHA_PREC_CASES(large_logits),
        MHA_PREC_CASES(limit_inputs),
        MHA_PREC_CASES(scale_overflow),
        MHA_PREC_CASES(tiny_scale),
        MHA_PREC_CASES(head_score_overflow),
        MHA_PREC_CASES(masked_rows_nonfinite_v),
        MHA_PREC_CASES(integer_logits),
        MHA_PREC_CASES(all_equal_rows),
        MHA_PREC_CASES(all_equal_heads),
        MHA_PREC_CASES(single_position),
        MHA_PREC_CASES(long_rows),
        MHA_PREC_CASES(long_lookup),
        MHA_PREC_CASES(denormal_inputs),
        MHA_PREC_CASES(nan_rows),
        MHA_PREC_CASES(causal_future_nan),
        MHA_PREC_CASES(causal_backward_nan_dout),
    };
    return cmocka_run_group_tests_name("numerical extremes", tests, NULL, NULL);
}
