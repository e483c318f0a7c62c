/*
 * test_properties: laws every attention head obeys, checked on random
 * inputs in both precisions through attn_self_attention_* (and the lookup
 * for the convexity of its output).
 *   - every weight lies in [0, 1] and every weight row sums to 1
 *     (|sum - 1| <= tol, the sum taken in double);
 *   - each output is a convex combination of the value rows it sees: every
 *     component lies within [min, max] of that column of V = X Wv over the
 *     visible keys (j <= t when causal), widened by tol * max|V|;
 *   - non-causal attention is permutation-equivariant: permuting the tokens
 *     of each batch element permutes the output rows the same way and the
 *     weights on both axes (compared to tolerance: GEMM blocking may treat a
 *     row differently at another position, so the bits may differ);
 *   - a causal weight row t is exactly 0 at j > t;
 *   - causal output and weights at position t do not change, bit for bit,
 *     when the tokens after t change: the rows <= t of Q, K, V come from the
 *     same arithmetic on the same data, row t's softmax sees only j <= t, and
 *     the masked weights are exact zeros whose products add nothing, so any
 *     difference at all means the future leaked in (checked with weights
 *     requested, without, and on a sequence long enough for the tiled path);
 *   - identical tokens get uniform weights 1/T (non-causal) and 1/(t+1)
 *     (causal), and the output is then that token's value row.
 * Tolerance 1e-5 (f32) / 1e-12 (f64) as in precision.h, relative to the
 * scales named above.
 */
#include <math.h>
#include <string.h>

#include "support/inputs.h"
#include "support/test_common.h"

/* W* ~ N(0, 1.5^2/C): scores of a few units, rows neither flat nor one-hot */
#define W_GAIN 1.5

static head_data make_case(const test_prec *p, test_rng *rng, const size_t shape[4])
{
    return head_random(p, rng, shape[0], shape[1], shape[2], shape[3], W_GAIN);
}

static const size_t shapes[][4] = {
    {1, 1, 4, 2}, {2, 5, 7, 3}, {3, 17, 20, 5}, {1, 33, 64, 16}, {2, 40, 9, 1}, {1, 70, 31, 12},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static void rows_are_distributions(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 51);
    for (size_t i = 0; i < N_SHAPES; i++)
        for (int causal = 0; causal <= 1; causal++) {
            head_data h = make_case(p, &rng, shapes[i]);
            double *out, *w;
            head_run(p, &h, NULL, causal, &out, &w);
            for (size_t r = 0; r < h.B * h.T; r++) {
                double sum = 0.0;
                for (size_t j = 0; j < h.T; j++) {
                    double x = w[r * h.T + j];
                    check_true(x >= 0.0 && x <= 1.0, "weight (%zu,%zu) = %g", r, j, x);
                    sum += x;
                }
                check_residual(fabs(sum - 1.0), p->tol, "T %zu causal %d: row %zu sums to %.17g",
                               h.T, causal, r, sum);
            }
        }
    check_worst_report(p->name);
}

static void outputs_are_convex_combinations(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 52);
    for (size_t i = 0; i < N_SHAPES; i++)
        for (int causal = 0; causal <= 1; causal++) {
            head_data h = make_case(p, &rng, shapes[i]);
            double *out, *w;
            head_run(p, &h, NULL, causal, &out, &w);
            const double slack = p->tol * max_abs(h.V, h.B * h.T * h.hs);
            for (size_t b = 0; b < h.B; b++)
                for (size_t t = 0; t < h.T; t++)
                    for (size_t c = 0; c < h.hs; c++) {
                        double lo = HUGE_VAL, hi = -HUGE_VAL;
                        for (size_t j = 0; j < (causal ? t + 1 : h.T); j++) {
                            double v = h.V[(b * h.T + j) * h.hs + c];
                            lo = fmin(lo, v);
                            hi = fmax(hi, v);
                        }
                        double o = out[(b * h.T + t) * h.hs + c];
                        check_true(o >= lo - slack && o <= hi + slack,
                                   "causal %d out[%zu][%zu][%zu] = %.17g outside [%.17g, %.17g]",
                                   causal, b, t, c, o, lo, hi);
                    }
        }
}

/* the lookup's output rows are convex combinations of v's rows too */
static void lookup_outputs_are_convex_combinations(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const size_t shapes_l[][4] = {{1, 1, 2, 2}, {5, 9, 4, 3}, {17, 33, 8, 7}, {40, 3, 1, 12}};
    test_rng rng;
    rng_seed(&rng, 56);
    for (size_t i = 0; i < sizeof shapes_l / sizeof shapes_l[0]; i++) {
        const size_t Tq = shapes_l[i][0], Tk = shapes_l[i][1], d = shapes_l[i][2],
                     dv = shapes_l[i][3];
        double *q = random_rounded(p, &rng, Tq * d, 1.5), *k = random_rounded(p, &rng, Tk * d, 1.5),
               *v = random_rounded(p, &rng, Tk * dv, 1.0);
        void *out = talloc(Tq * dv * p->size);
        assert_int_equal(p->lookup(Tq, Tk, d, dv, 0.0, prec_typed(p, q, Tq * d),
                                   prec_typed(p, k, Tk * d), prec_typed(p, v, Tk * dv), out, NULL),
                         ATTN_OK);
        double *o = prec_doubles(p, out, Tq * dv);
        const double slack = p->tol * max_abs(v, Tk * dv);
        for (size_t c = 0; c < dv; c++) {
            double lo = HUGE_VAL, hi = -HUGE_VAL;
            for (size_t j = 0; j < Tk; j++) {
                lo = fmin(lo, v[j * dv + c]);
                hi = fmax(hi, v[j * dv + c]);
            }
            for (size_t t = 0; t < Tq; t++)
                check_true(o[t * dv + c] >= lo - slack && o[t * dv + c] <= hi + slack,
                           "lookup out[%zu][%zu] = %.17g outside [%.17g, %.17g]", t, c,
                           o[t * dv + c], lo, hi);
        }
    }
}

static void permutation_equivariance(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 53);
    for (size_t i = 0; i < N_SHAPES; i++) {
        head_data h = make_case(p, &rng, shapes[i]);
        const size_t B = h.B, T = h.T, C = h.C, hs = h.hs;
        size_t *perm = talloc(B * T * sizeof(size_t));
        double *Xp = talloc_doubles(B * T * C);
        for (size_t b = 0; b < B; b++) {
            rng_permutation(&rng, perm + b * T, T);
            for (size_t t = 0; t < T; t++) /* token t of Xp is token perm[t] of X */
                memcpy(Xp + (b * T + t) * C, h.X + (b * T + perm[b * T + t]) * C,
                       C * sizeof(double));
        }
        double *out, *w, *out_p, *w_p;
        head_run(p, &h, NULL, 0, &out, &w);
        head_run(p, &h, Xp, 0, &out_p, &w_p);
        /* permute the original results and compare */
        double *want_out = talloc_doubles(B * T * hs), *want_w = talloc_doubles(B * T * T);
        for (size_t b = 0; b < B; b++)
            for (size_t t = 0; t < T; t++) {
                size_t pt = perm[b * T + t];
                memcpy(want_out + (b * T + t) * hs, out + (b * T + pt) * hs, hs * sizeof(double));
                for (size_t j = 0; j < T; j++)
                    want_w[(b * T + t) * T + j] = w[(b * T + pt) * T + perm[b * T + j]];
            }
        check_residual(residual_scaled(out_p, want_out, B * T * hs, max_abs(h.V, B * T * hs)),
                       p->tol, "T %zu: permuted out", T);
        check_residual(residual_rows(w_p, want_w, B * T, T), p->tol, "T %zu: permuted weights", T);
    }
    check_worst_report(p->name);
}

/* Runs h causally, then again with the tokens after each cut replaced by
 * new ones 10x larger, and requires the outputs (and weights, when
 * requested) at positions <= cut to be bit-identical. */
static void check_no_leak(const test_prec *p, test_rng *rng, const head_data *h,
                          const size_t *cuts, size_t n_cuts, int with_weights)
{
    const size_t B = h->B, T = h->T, C = h->C, hs = h->hs;
    double *out, *w = NULL, *out_f, *w_f = NULL;
    head_run(p, h, NULL, 1, &out, with_weights ? &w : NULL);
    for (size_t k = 0; k < n_cuts; k++) {
        const size_t t = cuts[k];
        double *Xf = talloc_doubles(B * T * C);
        memcpy(Xf, h->X, B * T * C * sizeof(double));
        for (size_t b = 0; b < B; b++)
            for (size_t i = (b * T + t + 1) * C; i < (b + 1) * T * C; i++)
                Xf[i] = p->round(10.0 * rng_normal(rng));
        head_run(p, h, Xf, 1, &out_f, with_weights ? &w_f : NULL);
        for (size_t b = 0; b < B; b++)
            for (size_t s = 0; s <= t; s++) {
                const size_t r = b * T + s;
                for (size_t c = 0; c < hs; c++)
                    check_true(out_f[r * hs + c] == out[r * hs + c],
                               "T %zu cut %zu: out[%zu][%zu][%zu] %.17g -> %.17g", T, t, b, s, c,
                               out[r * hs + c], out_f[r * hs + c]);
                for (size_t j = 0; with_weights && j < T; j++)
                    check_true(w_f[r * T + j] == w[r * T + j],
                               "T %zu cut %zu: weight[%zu][%zu][%zu] %.17g -> %.17g", T, t, b, s,
                               j, w[r * T + j], w_f[r * T + j]);
            }
    }
}

static void causal_zeros_and_no_leak_from_future(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 54);
    for (size_t i = 0; i < N_SHAPES; i++) {
        head_data h = make_case(p, &rng, shapes[i]);
        const size_t T = h.T;
        double *out, *w;
        head_run(p, &h, NULL, 1, &out, &w);
        for (size_t r = 0; r < h.B * T; r++)
            for (size_t j = r % T + 1; j < T; j++)
                check_true(w[r * T + j] == 0.0, "T %zu: weight row %zu at %zu = %g", T, r, j,
                           w[r * T + j]);
        const size_t cuts[] = {0, T / 3, T / 2, T - 1};
        check_no_leak(p, &rng, &h, cuts, 4, 1);
        check_no_leak(p, &rng, &h, cuts, 4, 0);
    }
    /* long enough for the tiled path (weights NULL): cuts at and beside the
     * query/key block edges */
    const size_t long_shape[4] = {1, 2178, 4, 3};
    head_data h = make_case(p, &rng, long_shape);
    const size_t cuts[] = {127, 600, 2176};
    check_no_leak(p, &rng, &h, cuts, sizeof cuts / sizeof cuts[0], 0);
}

static void identical_tokens(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 55);
    for (size_t i = 0; i < N_SHAPES; i++) {
        head_data h = make_case(p, &rng, shapes[i]);
        const size_t B = h.B, T = h.T, C = h.C, hs = h.hs;
        for (size_t b = 0; b < B; b++) /* every token of batch b equals its first */
            for (size_t t = 1; t < T; t++)
                memcpy(h.X + (b * T + t) * C, h.X + b * T * C, C * sizeof(double));
        head_project_values(&h);
        for (int causal = 0; causal <= 1; causal++) {
            double *out, *w;
            head_run(p, &h, NULL, causal, &out, &w);
            double *want_w = talloc_doubles(B * T * T);
            for (size_t r = 0; r < B * T; r++) {
                size_t seen = causal ? r % T + 1 : T;
                for (size_t j = 0; j < seen; j++)
                    want_w[r * T + j] = 1.0 / (double)seen;
            }
            check_residual(residual_rows(w, want_w, B * T, T), p->tol,
                           "T %zu causal %d: uniform weights", T, causal);
            check_residual(residual_scaled(out, h.V, B * T * hs, max_abs(h.V, B * T * hs)), p->tol,
                           "T %zu causal %d: out = the token's value", T, causal);
        }
    }
    check_worst_report(p->name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PREC_CASES(rows_are_distributions),
        PREC_CASES(outputs_are_convex_combinations),
        PREC_CASES(lookup_outputs_are_convex_combinations),
        PREC_CASES(permutation_equivariance),
        PREC_CASES(causal_zeros_and_no_leak_from_future),
        PREC_CASES(identical_tokens),
    };
    return cmocka_run_group_tests_name("attention properties", tests, NULL, NULL);
}
