/*
 * test_sdpa_one_shots: the same bytes by other routes, in both precisions.
 * The sdpa suites: test_sdpa (the cases on every engine, the decode split),
 * test_sdpa_gradients (finite differences), test_sdpa_extremes (NaN, +inf
 * and huge scores), test_sdpa_call_errors and test_sdpa_create_errors
 * (every status), test_sdpa_one_shots (one-shots and defaults, bit for
 * bit); test_sdpa_layouts and test_sdpa_strides (batch and head strides).
 *
 * One-shots equal an ATTN_INFERENCE plan on the default engine
 *    (ATTN_THREADS_AUTO) bit for bit; a backward needs no forward on its
 *    plan (out and lse from a one-shot); ld = 0 equals the dense stride and
 *    scale <= 0 equals 1/sqrt(hs), bit for bit.
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

/* ---- one-shots, strides and scales ---------------------------------------------------- */

static void one_shot_equals_plan(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1601);
    static const size_t lengths[2] = {90, 61};
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"one-shot, GQA, causal, lengths, mask", 2, 4, 2, 30, 90, 24, 0, 0.0, ATTN_CAUSAL, 0, 2,
         0, MASK_FULL, lengths, 1, 0},
        {"one-shot, decode split", 1, 4, 1, 1, 3000, 64, 0, 0.4, 0, 0, 0, 0, MASK_NONE, NULL, 1,
         0},
        {"one-shot, fused, window", 1, 2, 2, 140, 140, 16, 0, 0.0, ATTN_CAUSAL, 33, 0, 1,
         MASK_NONE, NULL, 1, 0},
    };
    worsts w;
    memset(&w, 0, sizeof w);
    for (size_t ci = 0; ci < N_OF(cases); ci++) {
        const spec *c = &cases[ci];
        const problem pr = problem_make(c, &rng);
        const expected e = expected_make(&pr, 1);
        const typed t = typed_make(p, &pr);
        const attn_sdpa_shape s = shape_of(&pr);
        char what[640];
        describe(what, sizeof what, p, c, "default (ATTN_THREADS_AUTO)", "one-shot");
        outputs shot = outputs_make(p, &pr, 1);
        const sdpa_io io_shot = io_of(&pr, &t, &shot, 1);
        attn_status st = sdpa_one_shot(p, &s, c->scale, c->causal, c->window, &io_shot);
        expect_true(st == ATTN_OK, "%s: %s", what, attn_status_string(st));
        if (st != ATTN_OK)
            continue;
        check_forward(p, &pr, &e, &shot, 1, &w, what);
        /* the plan it is: ATTN_INFERENCE on the default engine */
        attn_plan *plan = problem_plan(p, &pr, ATTN_INFERENCE, ATTN_THREADS_AUTO, what);
        if (plan != NULL) {
            outputs o = outputs_make(p, &pr, 0);
            const sdpa_io io = io_of(&pr, &t, &o, 1);
            st = sdpa_forward(p, plan, &io);
            expect_true(st == ATTN_OK && memcmp(o.out, shot.out, pr.no * p->size) == 0 &&
                            memcmp(o.lse, shot.lse, pr.nl * p->size) == 0,
                        "%s: the one-shot and its plan give other bytes (%s)", what,
                        attn_status_string(st));
        }
        /* a backward on a fresh training plan that ran no forward, from the one-shot's out
         * and lse, on BLAS threads and on 2 own threads */
        for (size_t k = 0; k < N_OF(engines); k += 2) {
            describe(what, sizeof what, p, c, engines[k].name,
                     "backward without a forward on its plan");
            attn_plan *train = problem_plan(p, &pr, 0u, engines[k].threads, what);
            if (train == NULL)
                continue;
            outputs_refill_grads(p, &pr, &shot);
            st = sdpa_backward(p, train, &io_shot, t.dout, shot.dQ, shot.dK, shot.dV);
            expect_true(st == ATTN_OK, "%s: %s", what, attn_status_string(st));
            if (st == ATTN_OK)
                check_backward(p, &pr, &e, &shot, &w, what);
        }
    }
    report("one-shots out", &w.out);
    report("one-shots gradients", &w.grads);
    test_leave("one-shot equals plan");
}

/* ld = 0 and the dense stride, scale <= 0 and 1/sqrt(hs): the same bytes */
static void defaults_are_exact(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1701);
    const spec c = {"defaults", 2, 6, 2, 20, 45, 24, 0, 0.0, ATTN_CAUSAL, 0, 0, 0, MASK_NONE,
                    NULL, 1, 0};
    const problem pr = problem_make(&c, &rng);
    const typed t = typed_make(p, &pr);
    const double scales[4] = {0.0, -2.5, -0.0, 1.0 / sqrt(24.0)};
    outputs first;
    memset(&first, 0, sizeof first);
    for (size_t si = 0; si < N_OF(scales); si++)
        for (int explicit_ld = 0; explicit_ld <= 1; explicit_ld++) {
            problem q = pr;
            q.c.scale = scales[si];
            if (explicit_ld) {
                q.ldq_arg = q.ldq;
                q.ldk_arg = q.ldk;
                q.ldv_arg = q.ldv;
                q.ldo_arg = q.ldo;
            }
            char what[640];
            describe(what, sizeof what, p, &q.c, "2 own threads",
                     explicit_ld ? "strides given" : "strides 0");
            attn_plan *plan = problem_plan(p, &q, 0u, 2, what);
            if (plan == NULL)
                continue;
            outputs o = outputs_make(p, &q, 1);
            const sdpa_io io = io_of(&q, &t, &o, 1);
            const attn_status st = sdpa_forward(p, plan, &io);
            const attn_status sb = sdpa_backward(p, plan, &io, t.dout, o.dQ, o.dK, o.dV);
            expect_true(st == ATTN_OK && sb == ATTN_OK, "%s: %s, %s", what,
                        attn_status_string(st), attn_status_string(sb));
            if (si == 0 && !explicit_ld)
                first = o;
            else if (first.out != NULL)
                expect_true(outputs_identical(p, &q, &o, &first, 1),
                            "%s: not the bytes of scale 0 and strides 0", what);
        }
    /* a custom scale differs measurably: the comparisons above can fail */
    problem q = pr;
    q.c.scale = 0.37;
    q.ref.scale = 0.37;
    const expected e = expected_make(&q, 0);
    const expected e0 = expected_make(&pr, 0);
    expect_true(residual_scaled(e.out, e0.out, e.n_out, e.v_scale) > 1e-3,
                "scale 0.37 and the default agree");
    test_leave("defaults are exact");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_PREC_CASES(one_shot_equals_plan),
        SDPA_PREC_CASES(defaults_are_exact),
    };
    return cmocka_run_group_tests_name("sdpa one-shots", tests, NULL, NULL);
}
