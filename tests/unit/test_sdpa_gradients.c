/*
 * test_sdpa_gradients: attn_sdpa_backward_f64 against finite differences.
 * The sdpa suites: test_sdpa (the cases on every engine, the decode split),
 * test_sdpa_gradients (finite differences), test_sdpa_extremes (NaN, +inf
 * and huge scores), test_sdpa_call_errors and test_sdpa_create_errors
 * (every status), test_sdpa_one_shots (one-shots and defaults, bit for
 * bit); test_sdpa_layouts and test_sdpa_strides (batch and head strides).
 *
 * Finite differences (f64): every element of Q, K and V of small shapes
 *    (GQA with lengths, a mask with -inf entries and causal; MQA with a
 *    window; a key-padding mask with Tq < Tk), central differences of
 *    L = sum(out * dout) through the library's f64 forward, against its
 *    backward.
 *
 * Tolerance: 1e-7 with step 2^-17, the residual of the gradients
 * (test_backward.c's analysis: truncation ~1e-8 for scores of
 * a few units, rounding ~4e-9; a wrong formula is off by 1e-2 or more).
 * Observed: <= 2.8e-10.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/sdpa_engine_runs.h"
#include "support/test_common.h"

#define FD_STEP 0x1p-17
#define FD_TOL 1e-7

/* ---- finite differences -------------------------------------------------------------- */

/* L = sum(out * dout) by the library's f64 forward on the typed inputs */
static double loss_of(attn_plan *plan, const problem *pr, const typed *t, outputs *o)
{
    const sdpa_io io = io_of(pr, t, o, 0);
    const attn_status st = sdpa_forward(&test_prec_f64, plan, &io);
    check_true(st == ATTN_OK, "finite differences: forward: %s", attn_status_string(st));
    const double *out = o->out, *dout = t->dout;
    double L = 0.0;
    for (size_t r = 0; r < pr->c.B * pr->c.Tq; r++)
        for (size_t i = 0; i < pr->wo; i++)
            L += out[r * pr->ldo + i] * dout[r * pr->ldo + i];
    return L;
}

static void finite_differences(void **state)
{
    (void)state;
    static const size_t lengths[2] = {6, 4};
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"GQA, lengths, mask, causal", 2, 4, 2, 3, 6, 4, 3, 0.7, ATTN_CAUSAL, 0, 1, 0, MASK_FULL,
         lengths, 1, 1},
        {"MQA, window 2", 1, 3, 1, 5, 5, 5, 0, 0.0, 0, 2, 0, 0, MASK_NONE, NULL, 1, 1},
        {"key padding, Tq < Tk", 2, 2, 2, 2, 7, 3, 2, 0.0, 0, 0, 0, 0, MASK_KEYPAD, NULL, 1, 1},
    };
    const test_prec *p = &test_prec_f64;
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1201);
    check_worst w = {0.0, 0.0};
    for (size_t ci = 0; ci < N_OF(cases); ci++) {
        const spec *c = &cases[ci];
        problem pr = problem_make(c, &rng);
        if (c->mask == MASK_KEYPAD) /* keep every row of this small case visible */
            for (size_t j = 0; j + 1 < c->Tk; j++)
                pr.mask[(c->B - 1) * pr.mask_sb + j] = rounded_normal(&rng);
        typed t = typed_make(p, &pr);
        char what[640];
        describe(what, sizeof what, p, c, "1 own thread", "finite differences");
        attn_plan *train = problem_plan(p, &pr, 0u, 1, what);
        attn_plan *infer = problem_plan(p, &pr, ATTN_INFERENCE, 0, what);
        if (train == NULL || infer == NULL)
            continue;
        outputs o = outputs_make(p, &pr, 1);
        const sdpa_io io = io_of(&pr, &t, &o, 1);
        check_true(sdpa_forward(p, train, &io) == ATTN_OK &&
                       sdpa_backward(p, train, &io, t.dout, o.dQ, o.dK, o.dV) == ATTN_OK,
                   "%s: forward and backward", what);
        /* gradients of every element of Q, K, V (at their strided places) */
        struct {
            const char *name;
            size_t at, rows, ld, width;
            const double *g;
        } arrays[3] = {
            {"dQ", pr.q_at, c->B * c->Tq, pr.ldq, pr.wq, o.dQ},
            {"dK", pr.k_at, c->B * c->Tk, pr.ldk, pr.wk, o.dK},
            {"dV", pr.v_at, c->B * c->Tk, pr.ldv, pr.wv, o.dV},
        };
        double largest = 0.0;
        for (size_t a = 0; a < 3; a++)
            for (size_t r = 0; r < arrays[a].rows; r++)
                for (size_t i = 0; i < arrays[a].width; i++)
                    largest = fmax(largest, fabs(arrays[a].g[r * arrays[a].ld + i]));
        outputs scratch = outputs_make(p, &pr, 0);
        double *x = t.in;
        for (size_t a = 0; a < 3; a++) {
            double worst_err = 0.0, gmax = 0.0;
            for (size_t r = 0; r < arrays[a].rows; r++)
                for (size_t i = 0; i < arrays[a].width; i++)
                    gmax = fmax(gmax, fabs(arrays[a].g[r * arrays[a].ld + i]));
            for (size_t r = 0; r < arrays[a].rows; r++)
                for (size_t i = 0; i < arrays[a].width; i++) {
                    const size_t k = arrays[a].at + r * arrays[a].ld + i;
                    const double x0 = x[k];
                    x[k] = x0 + FD_STEP;
                    const double hp = x[k] - x0;
                    const double Lp = loss_of(infer, &pr, &t, &scratch);
                    x[k] = x0 - FD_STEP;
                    const double hm = x0 - x[k];
                    const double Lm = loss_of(infer, &pr, &t, &scratch);
                    x[k] = x0;
                    const double fd = (Lp - Lm) / (hp + hm);
                    worst_err = fmax(worst_err, fabs(fd - arrays[a].g[r * arrays[a].ld + i]));
                }
            const double res = worst_err / fmax(gmax, 0.01 * largest);
            expect_within(&w, res, FD_TOL, "%s: %s against central differences", what,
                          arrays[a].name);
        }
    }
    report("f64 finite differences", &w);
    test_leave("finite differences");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_CASE("finite_differences", finite_differences, NULL),
    };
    return cmocka_run_group_tests_name("sdpa gradients", tests, NULL, NULL);
}
