/*
 * test_sdpa_extremes: attention on given Q, K, V with NaN inputs, +inf and
 * -inf scores and scores near the largest double, in both precisions.
 * The sdpa suites: test_sdpa (the cases on every engine, the decode split),
 * test_sdpa_gradients (finite differences), test_sdpa_extremes (NaN, +inf
 * and huge scores), test_sdpa_call_errors and test_sdpa_create_errors
 * (every status), test_sdpa_one_shots (one-shots and defaults, bit for
 * bit); test_sdpa_layouts and test_sdpa_strides (batch and head strides).
 *
 * NaN confinement: a NaN in K (one head's row of key j) and in V (two
 *    other keys, one of them the second key a sequence's first query can
 *    reach) under the causal mask, and a NaN in one query's row: the rows of
 *    queries at positions p < j, and every other head's rows, equal the
 *    reference (finite); the rows that see the NaN are NaN (attn.h); the
 *    NaN query's row alone is NaN. With the decode split too. (The
 *    lengths cases of test_sdpa cover NaN in the unfilled slots.) Special scores
 *    set through the mask, in different key tiles and decode splits: two
 *    +inf share the weight (out their mean, lse +inf), +inf with NaN is NaN
 *    (out and lse), all -inf is out 0, lse -inf.
 * Huge scores in the backward: every gradient finite.
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

/* The forward of pr (lse given) into new outputs *o on an ATTN_INFERENCE
 * plan on engine k; `what` describes the run (path: what it checks).
 * Whether it ran (a failure is recorded). */
static int inference_forward(const test_prec *p, const problem *pr, const typed *t, size_t k,
                             const char *path, outputs *o, char *what, size_t what_size)
{
    describe(what, what_size, p, &pr->c, engines[k].name, path);
    attn_plan *plan = problem_plan(p, pr, ATTN_INFERENCE, engines[k].threads, what);
    if (plan == NULL)
        return 0;
    *o = outputs_make(p, pr, 0);
    const sdpa_io io = io_of(pr, t, o, 1);
    const attn_status st = sdpa_forward(p, plan, &io);
    sdpa_drop_plan(plan);
    expect_true(st == ATTN_OK, "%s: %s", what, attn_status_string(st));
    return st == ATTN_OK;
}

/* ---- NaN confinement -------------------------------------------------------------------- */

static void nan_confinement(void **state)
{
    (void)state;
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"NaN in K, V and Q, causal", 2, 4, 2, 300, 300, 16, 0, 0.0, ATTN_CAUSAL, 0, 0, 0,
         MASK_NONE, NULL, 0, 0},
        {"NaN in K, V and Q, causal, Tq < Tk, strided", 2, 4, 1, 40, 700, 24, 0, 0.0,
         ATTN_CAUSAL, 0, 2, 0, MASK_NONE, NULL, 0, 0},
        {"NaN in K, V and Q, causal decode split", 1, 2, 1, 4, 3000, 40, 0, 0.0, ATTN_CAUSAL, 0,
         0, 0, MASK_NONE, NULL, 0, 0},
        {"NaN in K, V and Q, causal, one head", 1, 1, 1, 200, 200, 16, 0, 0.0, ATTN_CAUSAL, 0, 0,
         0, MASK_NONE, NULL, 0, 0},
    };
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1401);
    worsts w[2];
    memset(w, 0, sizeof w);
    const test_prec *precs[2] = {&test_prec_f32, &test_prec_f64};
    for (size_t ci = 0; ci < N_OF(cases); ci++) {
        const spec *c = &cases[ci];
        problem pr = problem_make(c, &rng);
        /* key positions: p = Tk - Tq + t; a NaN at key j reaches queries t with p >= j */
        const size_t first_p = c->Tk - c->Tq;
        const size_t jk = first_p + c->Tq / 2 + 1, jv = first_p + c->Tq / 4 + 1;
        const size_t gk = c->NH_kv - 1, gv = 0;
        /* sequence 0: K row jk of kv head gk; sequence B-1: V row jv of kv head gv */
        for (size_t i = 0; i < c->hs; i++)
            pr.in[pr.k_at + jk * pr.ldk + gk * c->hs + i] = (double)NAN;
        pr.in[pr.v_at + ((c->B - 1) * c->Tk + jv) * pr.ldv + gv * pr.hs_v + 1] = (double)NAN;
        /* and V of the second key seen by sequence 0's first query, kv head gk:
         * no query before it may multiply it, even by a weight of 0 */
        pr.in[pr.v_at + (first_p + 1) * pr.ldv + gk * pr.hs_v] = (double)NAN;
        /* one query row: sequence B-1, query Tq/3, head NH-1, one element */
        const size_t tq = c->Tq / 3;
        pr.in[pr.q_at + ((c->B - 1) * c->Tq + tq) * pr.ldq + (c->NH - 1) * c->hs + 2] =
            (double)NAN;
        const expected e = expected_make(&pr, 0);
        /* the reference's NaN rows, as attn.h says they must be */
        size_t nan_rows = 0;
        for (size_t l = 0; l < pr.nl; l++)
            nan_rows += isnan(e.lse[l]) != 0;
        const size_t group = c->NH / c->NH_kv;
        const size_t want_nan = group * (c->Tq - (jk - first_p)) + 1;
        check_true(nan_rows == want_nan, "%s: the reference has %zu NaN lse, expected %zu",
                   c->name, nan_rows, want_nan);
        for (size_t pi = 0; pi < 2; pi++) {
            if (!precision_runs(pi, ci))
                continue;
            const test_prec *p = precs[pi];
            const typed t = typed_make(p, &pr);
            for (size_t k = 0; k < N_OF(engines); k++) {
                if (!engine_runs(k))
                    continue;
                char what[640];
                outputs o;
                if (!inference_forward(p, &pr, &t, k, "NaN confinement", &o, what, sizeof what))
                    continue;
                /* NaN matches NaN only: the clean rows must be finite and exact */
                check_forward(p, &pr, &e, &o, 1, &w[pi], what);
                double *out = dense_of(p, o.out, c->B * c->Tq, pr.ldo, pr.wo);
                size_t nan_out = 0, want_out = 0, first = SIZE_MAX;
                for (size_t i = 0; i < e.n_out; i++) {
                    nan_out += isnan(out[i]) != 0;
                    want_out += isnan(e.out[i]) != 0;
                    if (first == SIZE_MAX && (isnan(out[i]) != 0) != (isnan(e.out[i]) != 0))
                        first = i;
                }
                if (first != SIZE_MAX) {
                    const size_t col = first % pr.hs_v, rh = first / pr.hs_v;
                    const size_t h = rh % c->NH, bt = rh / c->NH;
                    expect_true(0,
                                "%s: %zu NaN in out, the reference has %zu; the first "
                                "differing: b %zu h %zu t %zu (position %zu) column %zu, %g "
                                "(reference %g)",
                                what, nan_out, want_out, bt / c->Tq, h, bt % c->Tq,
                                c->Tk - c->Tq + bt % c->Tq, col, out[first], e.out[first]);
                }
            }
        }
    }
    report("NaN confinement f32 out", &w[0].out);
    report("NaN confinement f64 out", &w[1].out);
    test_leave("NaN confinement");
}

/* +inf scores (attn.h: they take the row's weight, shared equally, and lse
 * is +inf), a +inf with a NaN (the row is NaN), rows all -inf: set through
 * the mask, at keys in different key tiles and decode splits, against the
 * reference's special rules (infinities must match exactly). */
static void special_scores(void **state)
{
    (void)state;
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"+inf scores across key tiles", 2, 2, 1, 5, 700, 16, 0, 0.0, 0, 0, 0, 0, MASK_FULL,
         NULL, 0, 0},
        {"+inf scores across decode splits", 1, 2, 1, 1, 3000, 16, 0, 0.0, 0, 0, 0, 0,
         MASK_FULL, NULL, 0, 0},
    };
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1451);
    worsts w[2];
    memset(w, 0, sizeof w);
    const test_prec *precs[2] = {&test_prec_f32, &test_prec_f64};
    for (size_t ci = 0; ci < N_OF(cases); ci++) {
        const spec *c = &cases[ci];
        problem pr = problem_make(c, &rng);
        /* no -inf sprinkled: only the rows below are special */
        for (size_t i = 0; i < pr.n_mask; i++)
            if (pr.mask[i] == -HUGE_VAL)
                pr.mask[i] = 0.5;
        double *row = pr.mask; /* (b 0, h 0, t 0): two +inf, far apart */
        row[3] = HUGE_VAL;
        row[c->Tk - 100] = HUGE_VAL;
        row = pr.mask + pr.mask_sh; /* (b 0, h 1, t 0): one +inf */
        row[c->Tk / 2] = HUGE_VAL;
        if (c->Tq > 1) {
            row = pr.mask + pr.mask_ld; /* (b 0, h 0, t 1): +inf and NaN */
            row[1] = HUGE_VAL;
            row[c->Tk - 2] = (double)NAN;
            row = pr.mask + 2 * pr.mask_ld; /* (b 0, h 0, t 2): NaN and +inf */
            row[5] = (double)NAN;
            row[c->Tk - 7] = HUGE_VAL;
            row = pr.mask + 3 * pr.mask_ld; /* (b 0, h 0, t 3): all -inf */
            for (size_t j = 0; j < c->Tk; j++)
                row[j] = -HUGE_VAL;
        }
        const expected e = expected_make(&pr, 0);
        for (size_t pi = 0; pi < 2; pi++) {
            const test_prec *p = precs[pi];
            const typed t = typed_make(p, &pr);
            for (size_t k = 0; k < N_OF(engines); k++) {
                char what[640];
                outputs o;
                if (inference_forward(p, &pr, &t, k, "special scores", &o, what, sizeof what))
                    check_forward(p, &pr, &e, &o, 1, &w[pi], what);
            }
        }
    }
    report("special scores f32 out", &w[0].out);
    report("special scores f64 out", &w[1].out);
    test_leave("special scores");
}

/* Scores near the largest double (Q up to 3.4e38): the weights the backward
 * recomputes from one rounded lse (ulp 1e22 there) must stay finite, and so
 * must every gradient (the fuzz harness found NaN dQ). Finite is all that is
 * asserted: with only lse, weights of such rows are not recoverable exactly. */
static void huge_scores_backward(void **state)
{
    (void)state;
    test_enter();
    enum { NH = 4, TK = 4, HS = 8 };
    double Q[NH * HS], K[TK * HS], V[TK * HS], out[NH * HS], lse[NH], dout[NH * HS];
    double dQ[NH * HS], dK[TK * HS], dV[TK * HS];
    for (int i = 0; i < NH * HS; i++) {
        Q[i] = (i % 3 == 0 ? -3.4e38 : i % 3 == 1 ? 1e30 : 2.0) * (i % 2 ? 1 : -1);
        dout[i] = 0.25 * (i % 5) - 0.5;
    }
    for (int i = 0; i < TK * HS; i++) {
        K[i] = 0.37 * (i % 7) - 1.1;
        V[i] = 0.21 * (i % 9) - 0.8;
    }
    const attn_sdpa_shape shape = {1, NH, 1, 1, TK, HS, 0};
    const unsigned threads[] = {0, 1, 2};
    for (size_t e = 0; e < N_OF(threads); e++) {
        attn_plan *plan = NULL;
        check_true(attn_sdpa_plan_create(&plan, ATTN_F64, &shape, 0.0, 0, 0) == ATTN_OK,
                   "create");
        if (plan == NULL)
            continue;
        check_true(attn_plan_set_threads(plan, threads[e]) == ATTN_OK, "threads %u", threads[e]);
        const attn_sdpa_args_f64 a = {.Q = Q, .K = K, .V = V, .out = out, .lse = lse};
        check_true(attn_sdpa_forward_f64(plan, &a) == ATTN_OK, "forward");
        check_true(attn_sdpa_backward_f64(plan, &a, dout, dQ, dK, dV) == ATTN_OK, "backward");
        for (int i = 0; i < NH * HS; i++)
            check_true(isfinite(out[i]) && isfinite(dQ[i]), "threads %u: out[%d] %g dQ[%d] %g",
                       threads[e], i, out[i], i, dQ[i]);
        for (int i = 0; i < TK * HS; i++)
            check_true(isfinite(dK[i]) && isfinite(dV[i]), "threads %u: dK[%d] %g dV[%d] %g",
                       threads[e], i, dK[i], i, dV[i]);
        attn_plan_destroy(plan);
    }
    test_leave("huge scores in the backward");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_CASE("nan_confinement", nan_confinement, NULL),
        SDPA_CASE("special_scores", special_scores, NULL),
        /* last: a case that crashed the library when written */
        SDPA_CASE("huge_scores_backward", huge_scores_backward, NULL),
    };
    return cmocka_run_group_tests_name("sdpa extremes", tests, NULL, NULL);
}
