/*
 * test_seeds: the numbers the three lessons in shared/seeds/ print, which
 * are the specification, reproduced through the library in both precisions
 * from fixtures/ (written by fixtures/gen_fixtures.py following the lessons'
 * NumPy recipes: seeds, draw order and scaling exactly as printed there).
 *
 * Printed numbers are asserted as printed: a value printed with k decimals
 * must lie within 0.5e-k of it (that is what rounding to k decimals means).
 * Full precision: every result is also compared with the double reference
 * on the fixture inputs rounded to the element type, at 1e-5 (f32) / 1e-12
 * (f64) relative (weights per row, other arrays against their largest
 * magnitude, outputs against max|V|; check.h), and the f64 results with
 * NumPy's own values (stored %.17g) at 1e-12 -- NumPy's inputs are the f64
 * inputs. (The lookup lesson's inputs are small integers, exact in float, so
 * there NumPy's values are the reference for f32 as well.)
 *
 *   weighted lookup (module1-lesson2), attn_lookup with scale 1 (unscaled):
 *     q = [3 0 0 0]: weights [0.87 0.0433 0.0433 0.0433], out [8.7005 0.4332]
 *     q = [2 2 0 0]: weights [0.4404 0.4404 0.0596 0.0596], out [4.404 4.404]
 *   learned attention (module1-lesson4), attn_self_attention, B,T,C,hs =
 *     1,6,64,16, non-causal: both weight tables (3 decimals) and the argmax
 *     rows [3 5 5 0 5 3] (Wq) and [4 0 0 0 3 0] (Wq2 from default_rng(1));
 *   Q, K, V projections (module2-lesson1), "the lamp" through the embedding:
 *     Q[0,0] = [0.4591 0.827 0.179 0.0736], K[0,0] = [-0.1142 -0.1084 0.2109
 *     0.0254] and the asymmetric scaled scores scores[0,0,1] = -0.1481,
 *     scores[0,1,0] = -0.0016, all obtained from attn_self_attention itself:
 *     - Q = X Wq: run the head with B = 8 sequences of T = 1 token and
 *       Wv = Wq. A lone token's only weight is softmax([s]) = 1, so the
 *       output is its value row, X Wq (K likewise with Wv = Wk);
 *     - scores: append a zero token to "the lamp" (T = 9). Its key is 0, so
 *       its score is exactly 0 in every row, and the library's weights give
 *       S[t][j] = log(w[t][j] / w[t][8]) for t, j < 8: the head's own
 *       Q K^T / sqrt(hs), read back through its softmax.
 */
#include <math.h>
#include <string.h>

#include "support/fixture.h"
#include "support/inputs.h"
#include "support/test_common.h"

/* |got_i - printed_i| <= 0.5 * 10^-decimals for every i */
static void check_printed(const double *got, const double *printed, size_t n, int decimals,
                          const char *what)
{
    const double half = 0.5 * pow(10.0, -decimals) * (1.0 + 1e-9);
    for (size_t i = 0; i < n; i++)
        check_true(fabs(got[i] - printed[i]) <= half, "%s[%zu] = %.9f, printed %.*f", what, i,
                   got[i], decimals, printed[i]);
}

static size_t argmax(const double *x, size_t n)
{
    size_t best = 0;
    for (size_t j = 1; j < n; j++)
        if (x[j] > x[best])
            best = j;
    return best;
}

static void weighted_lookup(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const fixture *fx = fixture_load("weighted_lookup.txt");
    /* the lesson's literal inputs */
    const double keys[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const double values[8] = {10, 0, 0, 10, 5, 5, -5, -5};
    const double queries[8] = {3, 0, 0, 0, 2, 2, 0, 0};
    const double printed_w[2][4] = {{0.87, 0.0433, 0.0433, 0.0433},
                                    {0.4404, 0.4404, 0.0596, 0.0596}};
    const double printed_out[2][2] = {{8.7005, 0.4332}, {4.404, 4.404}};
    check_true(memcmp(fixture_array(fx, "keys", 4, 4), keys, sizeof keys) == 0 &&
                   memcmp(fixture_array(fx, "values", 4, 2), values, sizeof values) == 0 &&
                   memcmp(fixture_array(fx, "queries", 2, 4), queries, sizeof queries) == 0,
               "fixture inputs differ from the lesson's");
    const double *np_w = fixture_array(fx, "weights", 2, 4);
    const double *np_out = fixture_array(fx, "out", 2, 2);

    void *tk = prec_typed(p, keys, 16), *tv = prec_typed(p, values, 8);
    /* both queries at once, then each alone (the lesson's form), with and
     * without a weights buffer */
    for (size_t first = 0; first < 3; first++) {
        const size_t Tq = first == 2 ? 2 : 1, q0 = first == 2 ? 0 : first;
        for (int with_weights = 1; with_weights >= 0; with_weights--) {
            void *out = talloc(Tq * 2 * p->size), *w = talloc(Tq * 4 * p->size);
            attn_status st = p->lookup(Tq, 4, 4, 2, 1.0, prec_typed(p, queries + q0 * 4, Tq * 4),
                                       tk, tv, out, with_weights ? w : NULL);
            assert_int_equal(st, ATTN_OK);
            double *got_out = prec_doubles(p, out, Tq * 2);
            for (size_t r = 0; r < Tq; r++) {
                check_printed(got_out + r * 2, printed_out[q0 + r], 2, 4, "out");
                /* the inputs are small integers, exact in float: NumPy's values
                 * are the exact reference for both precisions */
                check_residual(residual_scaled(got_out + r * 2, np_out + (q0 + r) * 2, 2, 10.0),
                               p->tol, "out of query %zu vs NumPy", q0 + r);
            }
            if (!with_weights)
                continue;
            double *got_w = prec_doubles(p, w, Tq * 4);
            for (size_t r = 0; r < Tq; r++) {
                check_printed(got_w + r * 4, printed_w[q0 + r], 4, 4, "weights");
                check_residual(residual_rows(got_w + r * 4, np_w + (q0 + r) * 4, 1, 4), p->tol,
                               "weights of query %zu vs NumPy", q0 + r);
                double sum = 0.0;
                for (size_t j = 0; j < 4; j++)
                    sum += got_w[r * 4 + j];
                check_residual(fabs(sum - 1.0), p->tol, "weights of query %zu sum", q0 + r);
            }
        }
    }
    check_worst_report(p->name);
}

/* The library's weights and output for one head of the learned-attention
 * lesson, checked at full precision; returns the weights. */
static double *learned_head(const test_prec *p, const fixture *fx, const char *wq_name,
                            const char *weights_name, const char *out_name)
{
    enum { T = 6, C = 64, hs = 16 };
    /* the inputs rounded to the element type (the fixture's own for f64) */
    head_data h = head_from(p, 1, T, C, hs, fixture_array(fx, "X", T, C),
                            fixture_array(fx, wq_name, C, hs), fixture_array(fx, "Wk", C, hs),
                            fixture_array(fx, "Wv", C, hs));
    double *out, *w;
    head_run(p, &h, NULL, 0, &out, &w);
    head_check(p, &h, 0, 1, weights_name); /* against the double reference */
    if (p->size == sizeof(double)) {
        check_residual(residual_rows(w, fixture_array(fx, weights_name, T, T), T, T), p->tol,
                       "%s vs NumPy", weights_name);
        check_residual(residual_scaled(out, fixture_array(fx, out_name, T, hs), T * hs,
                                       max_abs(h.V, T * hs)),
                       p->tol, "%s vs NumPy", out_name);
    }
    return w;
}

static void learned_attention(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const fixture *fx = fixture_load("learned_attention.txt");
    const double table1[36] = {
        0.,    0.004, 0.003, 0.988, 0.,    0.005, 0.028, 0.138, 0.087, 0.002, 0.203, 0.541,
        0.,    0.002, 0.001, 0.003, 0.002, 0.993, 0.989, 0.,    0.,    0.007, 0.002, 0.002,
        0.,    0.001, 0.024, 0.009, 0.042, 0.923, 0.032, 0.004, 0.,    0.511, 0.009, 0.445};
    const double table2[36] = {
        0.018, 0.004, 0.139, 0.038, 0.714, 0.087, 0.961, 0.026, 0.002, 0.002, 0.009, 0.,
        0.53,  0.001, 0.461, 0.,    0.008, 0.,    0.923, 0.036, 0.037, 0.,    0.004, 0.,
        0.052, 0.002, 0.081, 0.677, 0.17,  0.018, 0.923, 0.002, 0.,    0.071, 0.002, 0.001};
    const size_t argmax1[6] = {3, 5, 5, 0, 5, 3}, argmax2[6] = {4, 0, 0, 0, 3, 0};

    double *w1 = learned_head(p, fx, "Wq", "weights", "out");
    double *w2 = learned_head(p, fx, "Wq2", "weights2", "out2");
    check_printed(w1, table1, 36, 3, "weights[0]");
    check_printed(w2, table2, 36, 3, "weights2[0]");
    int changed = 0;
    for (size_t t = 0; t < 6; t++) {
        assert_int_equal(argmax(w1 + t * 6, 6), argmax1[t]);
        assert_int_equal(argmax(w2 + t * 6, 6), argmax2[t]);
        changed |= argmax1[t] != argmax2[t];
    }
    check_true(changed, "changing Wq left the pattern as it was");
    check_worst_report(p->name);
}

/* the lamp: X = embed[ids] (8,8) */
static const double *lamp_inputs(const fixture *fx, double *X)
{
    const double *embed = fixture_array(fx, "embed", 24, 8);
    const double *ids = fixture_array(fx, "ids", 1, 8);
    const double lesson_ids[8] = {19, 9, 6, 0, 12, 2, 13, 16};
    check_true(memcmp(ids, lesson_ids, sizeof lesson_ids) == 0, "ids differ from the lesson's");
    for (size_t t = 0; t < 8; t++)
        memcpy(X + t * 8, embed + (size_t)ids[t] * 8, 8 * sizeof(double));
    return X;
}

/* X W through the library: 8 one-token sequences with W as the value
 * projection (the query/key projections are arbitrary, here Wq and Wk) */
static double *project_via_head(const test_prec *p, const fixture *fx, const double *X,
                                const double *W)
{
    void *out = talloc(8 * 4 * p->size), *w = talloc(8 * p->size);
    assert_int_equal(p->self_attention(8, 1, 8, 4, 0, prec_typed(p, X, 64),
                                       prec_typed(p, fixture_array(fx, "Wq", 8, 4), 32),
                                       prec_typed(p, fixture_array(fx, "Wk", 8, 4), 32),
                                       prec_typed(p, W, 32), out, w),
                     ATTN_OK);
    double *weights = prec_doubles(p, w, 8);
    for (size_t b = 0; b < 8; b++)
        check_residual(fabs(weights[b] - 1.0), p->tol, "lone token %zu weight", b);
    return prec_doubles(p, out, 32);
}

static void qkv_projections(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const fixture *fx = fixture_load("qkv_projections.txt");
    double *X = talloc_doubles(9 * 8); /* row 8 stays the zero token */
    lamp_inputs(fx, X);
    const double *Wq = fixture_array(fx, "Wq", 8, 4), *Wk = fixture_array(fx, "Wk", 8, 4),
                 *Wv = fixture_array(fx, "Wv", 8, 4);

    double *Q = project_via_head(p, fx, X, Wq), *K = project_via_head(p, fx, X, Wk);
    const double printed_Q00[4] = {0.4591, 0.827, 0.179, 0.0736};
    const double printed_K00[4] = {-0.1142, -0.1084, 0.2109, 0.0254};
    check_printed(Q, printed_Q00, 4, 4, "Q[0,0]");
    check_printed(K, printed_K00, 4, 4, "K[0,0]");
    check_true(memcmp(Q, K, 4 * sizeof(double)) != 0, "Q[0,0] equals K[0,0]");

    /* scores through the head's softmax, with the zero token as the origin */
    void *out = talloc(9 * 4 * p->size), *w = talloc(81 * p->size);
    assert_int_equal(p->self_attention(1, 9, 8, 4, 0, prec_typed(p, X, 72), prec_typed(p, Wq, 32),
                                       prec_typed(p, Wk, 32), prec_typed(p, Wv, 32), out, w),
                     ATTN_OK);
    double *w9 = prec_doubles(p, w, 81), *scores = talloc_doubles(64);
    for (size_t t = 0; t < 8; t++)
        for (size_t j = 0; j < 8; j++)
            scores[t * 8 + j] = log(w9[t * 9 + j] / w9[t * 9 + 8]);
    const double printed_s01 = -0.1481, printed_s10 = -0.0016;
    check_printed(&scores[0 * 8 + 1], &printed_s01, 1, 4, "scores[0,0,1]");
    check_printed(&scores[1 * 8 + 0], &printed_s10, 1, 4, "scores[0,1,0]");
    check_true(scores[1] != scores[8], "scores symmetric");
    print_message("  scores[0,0,1] = %.6f, scores[0,1,0] = %.6f\n", scores[1], scores[8]);

    /* full precision: the double reference on the rounded inputs */
    head_data lamp = head_from(p, 1, 8, 8, 4, X, Wq, Wk, Wv);
    double *ref_Q = talloc_doubles(32), *ref_K = talloc_doubles(32), *ref_S = talloc_doubles(64);
    ref_matmul(8, 4, 8, lamp.X, 8, lamp.Wq, 4, ref_Q, 4);
    ref_matmul(8, 4, 8, lamp.X, 8, lamp.Wk, 4, ref_K, 4);
    for (size_t t = 0; t < 8; t++)
        for (size_t j = 0; j < 8; j++) {
            double dot = 0.0;
            for (size_t c = 0; c < 4; c++)
                dot += ref_Q[t * 4 + c] * ref_K[j * 4 + c];
            ref_S[t * 8 + j] = dot / 2.0; /* sqrt(hs) = 2 */
        }
    check_residual(residual_scaled(Q, ref_Q, 32, max_abs(ref_Q, 32)), p->tol, "Q vs reference");
    check_residual(residual_scaled(K, ref_K, 32, max_abs(ref_K, 32)), p->tol, "K vs reference");
    check_residual(residual_scaled(scores, ref_S, 64, max_abs(ref_S, 64)), p->tol,
                   "scores vs reference");
    head_check(p, &lamp, 0, 1, "the lamp"); /* the lesson's own 8-token head */
    if (p->size != sizeof(double)) {
        check_worst_report(p->name);
        return;
    }
    /* and NumPy's values, whose inputs the f64 ones are */
    const double *np_Q = fixture_array(fx, "Q", 8, 4), *np_K = fixture_array(fx, "K", 8, 4);
    const double *np_S = fixture_array(fx, "scores", 8, 8);
    check_residual(residual_scaled(Q, np_Q, 32, max_abs(np_Q, 32)), p->tol, "Q vs NumPy");
    check_residual(residual_scaled(K, np_K, 32, max_abs(np_K, 32)), p->tol, "K vs NumPy");
    check_residual(residual_scaled(scores, np_S, 64, max_abs(np_S, 64)), p->tol,
                   "scores vs NumPy");
    double *out8, *w8;
    head_run(p, &lamp, NULL, 0, &out8, &w8);
    check_residual(residual_rows(w8, fixture_array(fx, "weights", 8, 8), 8, 8), p->tol,
                   "weights vs NumPy");
    check_residual(residual_scaled(out8, fixture_array(fx, "out", 8, 4), 32,
                                   max_abs(fixture_array(fx, "V", 8, 4), 32)),
                   p->tol, "out vs NumPy");
    check_worst_report(p->name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PREC_CASES(weighted_lookup),
        PREC_CASES(learned_attention),
        PREC_CASES(qkv_projections),
    };
    return cmocka_run_group_tests_name("seeds", tests, NULL, NULL);
}
