/*
 * test_reference: the naive reference (reference.c) against values worked
 * out by hand, so that the other suites compare the library with something
 * known to be right.
 *   - softmax rows with closed-form answers (log-spaced logits, a scale,
 *     masking, an all -inf row, +inf entries, NaN, n_valid < n_total);
 *   - the weighted-lookup lesson's first query in closed form:
 *     w = (e^3, 1, 1, 1) / (e^3 + 3);
 *   - multi-head bookkeeping: ref_mha with NH heads and Wo equals NH single
 *     heads run on column blocks copied out of Wq/Wk/Wv, concatenated and
 *     multiplied by Wo (an independent formulation of the same formula).
 * Tolerance: 1e-15 relative for closed forms (a handful of double roundings),
 * exact equality where the construction is identical arithmetic.
 */
#include <math.h>
#include <string.h>

#include "support/test_common.h"

static void softmax_closed_forms(void **state)
{
    (void)state;
    double y[5];

    const double x1[3] = {0.0, log(2.0), log(3.0)}; /* e^x = 1, 2, 3 */
    ref_softmax_row(x1, y, 3, 3, 1.0);
    const double want1[3] = {1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0};
    check_residual(residual_rows(y, want1, 1, 3), 1e-15, "log-spaced logits");

    const double x2[2] = {0.0, 1.0}; /* scale ln 3: e^z = 1, 3 */
    ref_softmax_row(x2, y, 2, 2, log(3.0));
    const double want2[2] = {0.25, 0.75};
    check_residual(residual_rows(y, want2, 1, 2), 1e-15, "scale");

    const double x3[4] = {-HUGE_VAL, 0.0, -HUGE_VAL, 0.0};
    ref_softmax_row(x3, y, 4, 4, 1.0);
    const double want3[4] = {0.0, 0.5, 0.0, 0.5};
    check_residual(residual_rows(y, want3, 1, 4), 0.0, "masked entries");

    const double x4[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    ref_softmax_row(x4, y, 3, 3, 1.0);
    const double zeros[5] = {0};
    check_residual(residual_rows(y, zeros, 1, 3), 0.0, "all -inf row");

    const double x5[3] = {HUGE_VAL, 7.0, HUGE_VAL};
    ref_softmax_row(x5, y, 3, 3, 1.0);
    const double want5[3] = {0.5, 0.0, 0.5};
    check_residual(residual_rows(y, want5, 1, 3), 0.0, "+inf entries");

    const double x6[3] = {1.0, ((double)NAN), 2.0};
    ref_softmax_row(x6, y, 3, 3, 1.0);
    for (int j = 0; j < 3; j++)
        check_true(isnan(y[j]), "NaN row: y[%d] = %g", j, y[j]);

    const double x7[5] = {1.0, 1.0, 5.0, 6.0, 7.0}; /* only the first two count */
    ref_softmax_row(x7, y, 2, 5, 1.0);
    const double want7[5] = {0.5, 0.5, 0.0, 0.0, 0.0};
    check_residual(residual_rows(y, want7, 1, 5), 0.0, "n_valid < n_total");

    ref_softmax_row(x7, y, 0, 5, 1.0);
    check_residual(residual_rows(y, zeros, 1, 5), 0.0, "n_valid = 0");
}

static void lookup_closed_form(void **state)
{
    (void)state;
    const double keys[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const double values[8] = {10, 0, 0, 10, 5, 5, -5, -5};
    const double q[4] = {3, 0, 0, 0};
    double out[2], w[4];
    ref_lookup(1, 4, 4, 2, 1.0, q, keys, values, out, w);
    const double e3 = exp(3.0), z = e3 + 3.0;
    const double want_w[4] = {e3 / z, 1 / z, 1 / z, 1 / z};
    const double want_out[2] = {(10 * e3 + 0 + 5 - 5) / z, (0 + 10 + 5 - 5) / z};
    check_residual(residual_rows(w, want_w, 1, 4), 1e-15, "lookup weights");
    check_residual(residual_scaled(out, want_out, 2, 10.0), 1e-15, "lookup out");
}

static void mha_matches_heads(void **state)
{
    (void)state;
    enum { B = 2, T = 5, C = 7, NH = 3, hs = 2, D = NH * hs };
    test_rng rng;
    rng_seed(&rng, 7);
    double *X = talloc_doubles(B * T * C), *Wo = talloc_doubles(D * C);
    double *W[3];
    for (int m = 0; m < 3; m++) {
        W[m] = talloc_doubles(C * D);
        rng_fill_normal(&rng, W[m], C * D, 0.4);
    }
    rng_fill_normal(&rng, X, B * T * C, 1.0);
    rng_fill_normal(&rng, Wo, D * C, 0.4);

    for (int causal = 0; causal <= 1; causal++) {
        double *out = talloc_doubles(B * T * C), *weights = talloc_doubles(B * NH * T * T);
        ref_mha(B, T, C, NH, hs, 0.0, causal, X, W[0], W[1], W[2], Wo, out, weights);

        double *Y = talloc_doubles(B * T * D);
        for (size_t h = 0; h < NH; h++) {
            double *Wh[3];
            for (int m = 0; m < 3; m++) {
                Wh[m] = talloc_doubles(C * hs);
                for (size_t c = 0; c < C; c++)
                    memcpy(Wh[m] + c * hs, W[m] + c * D + h * hs, hs * sizeof(double));
            }
            double *head = talloc_doubles(B * T * hs), *wh = talloc_doubles(B * T * T);
            ref_self_attention(B, T, C, hs, causal, X, Wh[0], Wh[1], Wh[2], head, wh);
            for (size_t r = 0; r < B * T; r++)
                memcpy(Y + r * D + h * hs, head + r * hs, hs * sizeof(double));
            for (size_t b = 0; b < B; b++)
                check_residual(residual_rows(weights + (b * NH + h) * T * T, wh + b * T * T, T, T),
                               0.0, "causal %d head %zu batch %zu weights", causal, h, b);
        }
        double *want = talloc_doubles(B * T * C);
        ref_matmul(B * T, C, D, Y, D, Wo, C, want, C);
        check_residual(residual_scaled(out, want, B * T * C, max_abs(want, B * T * C)), 1e-15,
                       "causal %d: Y Wo", causal);
        if (causal)
            for (size_t i = 0; i < B * NH; i++)
                for (size_t t = 0; t < T; t++)
                    for (size_t j = t + 1; j < T; j++)
                        check_true(weights[(i * T + t) * T + j] == 0.0, "causal weight (%zu,%zu)",
                                   t, j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PLAIN_CASE(softmax_closed_forms),
        PLAIN_CASE(lookup_closed_form),
        PLAIN_CASE(mha_matches_heads),
    };
    return cmocka_run_group_tests_name("reference", tests, NULL, NULL);
}
