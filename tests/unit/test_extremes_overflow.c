/*
 * test_extremes_overflow: logits, inputs and scores at and beyond the
 * limits of the precision, through the public API.
 * The numerical-extremes suites: test_extremes_overflow (huge logits,
 * inputs and scores), test_extremes_rows (constant, single-entry, very long
 * and subnormal rows), test_extremes_nan (NaN confined to the rows that see
 * it); in both precisions (every case runs for f32 and f64; ctest also runs
 * each program with ATTN_SIMD=scalar and =avx2, so each kernel set meets
 * them).
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
 *                       on the materialized, workspace and tiled paths, at
 *                       T = 5 and T = 1000 (tiled: the sdpa engine's heads).
 *   masked_rows_nonfinite_v  heads whose every score is -inf while V is
 *                       +inf, and a lookup whose v holds Inf and NaN: out
 *                       exactly 0 (not 0 * Inf), on every path.
 *   integer_logits      heads with exact integer logits up to 1e4 and 1e6,
 *                       short (materialized) and T = 2100 (tiled), against
 *                       the reference.
 *   huge_equal_scores_backward  a backward (plan and one-shot) on a head
 *                       whose scores are all equal and ~1e37 (K ~ FLT_MAX / 4
 *                       in both precisions: libFuzzer's finding):
 *                       the backward recomputes them by other products
 *                       than the forward (an edge tile at T = 257), one ulp
 *                       (1e21) apart, and exp(s - lse) must not overflow:
 *                       out against the reference, every gradient finite
 *                       (their values are not determined at such scores: an
 *                       ulp of a score moves its weight from 1/T to 1).
 *
 * Tolerances: p->tol (1e-5 f32, 1e-12 f64; precision.h) for residuals
 * against the double reference; exact comparisons where the result is
 * exactly representable and the computation exact (stated per case).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/extremes_checks.h"
#include "support/inputs.h"
#include "reference/mha.h"
#include "support/test_common.h"

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
    const double v_bad[6] = {HUGE_VAL, (double)NAN, -HUGE_VAL, 1, 2, 3};
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
    /* big^2 > max >= 2 big: 2^(emax/2 + 4), emax = 128 (f32) / 1024 (f64) */
    const double big = ldexp(1.0, ilogb(p->max) / 2 + 5);
    const double pattern[5] = {big, -big, 1.0, big, 0.5}, one[1] = {1.0};
    /* T = 5, and T = 1000 (X the pattern repeated): a plan large enough to
     * share its work, whose tiled heads are the sdpa engine's (8 query
     * blocks, no key split: forward.h) */
    const size_t sizes[2] = {5, 1000};
    for (size_t n = 0; n < 2; n++) {
        const size_t T = sizes[n];
        double *X = talloc_doubles(T);
        for (size_t t = 0; t < T; t++)
            X[t] = pattern[t % 5];
        void *tX = prec_typed(p, X, T), *tW = prec_typed(p, one, 1);
        for (int causal = 0; causal <= 1; causal++) {
            double *want_w = talloc_doubles(T * T), *want_out = talloc_doubles(T);
            overflow_head_expected(p, X, T, causal, want_w, want_out);
            /* one-shot with weights, one-shot without (score workspace, or
             * the tiled path from ATTN_TILED_MIN_T), a plan forced onto the
             * tiled path (its +inf rows are redone) */
            for (int path = 0; path < 3; path++) {
                void *out = typed_output(p, T), *w = path == 0 ? typed_output(p, T * T) : NULL;
                attn_status st;
                if (path < 2) {
                    st = p->self_attention(1, T, 1, 1, causal, tX, tW, tW, tW, out, w);
                } else {
                    mha_shape s = {1, T, 1, 1, 1, 0.0, causal, 0};
                    st = p->forward(mha_plan(p, &s, ATTN_INFERENCE | ATTN_TILED), tX, tW, tW, tW,
                                    NULL, out, NULL);
                }
                check_true(st == ATTN_OK, "path %d: %s", path, attn_status_string(st));
                double *got = prec_doubles(p, out, T);
                expect_all_finite(got, T, "overflowing scores: out");
                check_residual(residual_scaled(got, want_out, T, big), p->tol,
                               "overflowing scores: out, T %zu causal %d path %d", T, causal,
                               path);
                if (w != NULL)
                    check_residual(residual_rows(prec_doubles(p, w, T * T), want_w, T, T), p->tol,
                                   "overflowing scores: weights, T %zu causal %d", T, causal);
            }
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

/* ---- huge equal scores through the backward ----------------------------------- */

static void fill(double *x, size_t n, double value)
{
    for (size_t i = 0; i < n; i++)
        x[i] = value;
}

static void huge_equal_scores_backward(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 6008);
    for (int causal = 0; causal <= 1; causal++) {
        /* every X row and weight the same: Q = 4 x wq = 0.063 and K = 4 x
         * wk = 0.23 FLT_MAX in each column, every score 0.5 * 4 * Q K =
         * 0.029 FLT_MAX = 9.85e36, V rows identical (the reference's out:
         * that row) */
        mha_shape s = {2, 257, 4, 1, 4, 0.0, causal, 0};
        mha_data d = mha_random(p, &rng, s, 1.0);
        const size_t nw = mha_w_elems(&s);
        fill(d.X, mha_x_elems(&s), (double)-0.0575421631f);
        fill(d.Wq, nw, (double)-0.27323956f);
        fill(d.Wk, nw, (double)-FLT_MAX);
        fill(d.Wv, nw, 0.5);
        mha_typed t = mha_typed_copy(p, &d);
        attn_plan *plan = mha_plan(p, &s, 0);
        mha_check_forward(p, &d, mha_plan_forward(p, plan, &s, &t, NULL), NULL, "huge scores");
        for (int one_shot = 0; one_shot <= 1; one_shot++) {
            mha_grads g = one_shot ? mha_one_shot_backward(p, &s, &t)
                                   : mha_plan_backward(p, plan, &s, &t);
            mha_grads got = mha_grads_doubles(p, &s, &g);
            for (int i = 0; i < MHA_GRADS; i++)
                if (got.g[i] != NULL)
                    expect_all_finite(got.g[i], mha_grad_elems(&s, i), mha_grad_names[i]);
        }
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
        MHA_PREC_CASES(huge_equal_scores_backward),
    };
    return cmocka_run_group_tests_name("numerical extremes: overflow", tests, NULL, NULL);
}
