/*
 * test_extremes_nan: a NaN (or +inf) stays in the rows that see it, through
 * the public API.
 * The numerical-extremes suites: test_extremes_overflow (huge logits,
 * inputs and scores), test_extremes_rows (constant, single-entry, very long
 * and subnormal rows), test_extremes_nan (NaN confined to the rows that see
 * it); in both precisions (every case runs for f32 and f64; ctest also runs
 * each program with ATTN_SIMD=scalar and =avx2, so each kernel set meets
 * them).
 *
 *   nan_rows            a NaN changes only the rows that see it: its softmax
 *                       row; the batch element it is in (other batches
 *                       exact against the reference); the head whose Wq
 *                       column holds it (the other heads' columns exact).
 *   causal_future_nan   causal heads: a NaN or +inf at position t leaves
 *                       the rows before t (which give it weight 0) finite
 *                       and equal to the reference.
 *   causal_backward_nan_dout  a NaN or +inf in one dout row of a causal
 *                       head reaches no gradient of a later key.
 *
 * Tolerances: p->tol (1e-5 f32, 1e-12 f64; precision.h) for residuals
 * against the double reference; exact comparisons where the result is
 * exactly representable and the computation exact (stated per case).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/extremes_checks.h"
#include "support/inputs.h"
#include "reference/mha.h"
#include "support/test_common.h"

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
        MHA_PREC_CASES(nan_rows),
        MHA_PREC_CASES(causal_future_nan),
        MHA_PREC_CASES(causal_backward_nan_dout),
    };
    return cmocka_run_group_tests_name("numerical extremes: NaN", tests, NULL, NULL);
}
