/*
 * test_plan_backward_errors: the statuses of attn_backward_*.
 * The plan suites: test_plan_create (creation and destruction, the scale),
 * test_plan_forward_errors and test_plan_backward_errors (the statuses of
 * plan execution and of the multi-head one-shots), test_plan_allocations
 * (OUT_OF_MEMORY at each allocation, none while executing); in both
 * precisions, case by case; after every failing call, every byte of every
 * buffer is as it was (all buffers of an error call live in one
 * sentinel-filled arena compared byte for byte afterwards:
 * support/plan_error_calls.h), and *plan is untouched.
 * They wrap the allocator at link time (alloc_fail.c, alloc_free.c; the
 * static library's calls go through the wrappers, OpenBLAS's own, in its
 * shared library, do not).
 *
 *   - attn_backward_*: NULL for each pointer (dWo only with Wo),
 *     DTYPE_MISMATCH, INFERENCE_PLAN, NO_FORWARD (before any forward, and
 *     after a forward that failed validation), FORWARD_MISMATCH both ways
 *     for Wo's presence and for each of X, Wq, Wk, Wv, Wo not being the
 *     forward's array (moved by one element, swapped),
 *     ALIASING for each gradient against each input and each other gradient
 *     (dWo ignored without Wo); the documented order.
 *   - a failed call leaves the plan usable, and a failed forward does not
 *     replace the state kept by the last successful one.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support/alloc_fail.h"
#include "support/plan_error_calls.h"
#include "reference/mha.h"
#include "support/test_common.h"

/* ---- attn_backward ---------------------------------------------------- */

typedef struct backward_call {
    const test_prec *via;
    attn_plan *plan;
    void *X, *Wq, *Wk, *Wv, *Wo, *dout, *dX, *dWq, *dWk, *dWv, *dWo;
} backward_call;

/* the pointer arguments of a backward by position, and their names */
static const char *const backward_args[] = {"X",  "Wq",  "Wk",  "Wv",  "Wo", "dout",
                                            "dX", "dWq", "dWk", "dWv", "dWo"};
static void **backward_arg(backward_call *c, size_t i)
{
    void **args[] = {&c->X,  &c->Wq,  &c->Wk,  &c->Wv,  &c->Wo, &c->dout,
                     &c->dX, &c->dWq, &c->dWk, &c->dWv, &c->dWo};
    return args[i];
}

static backward_call backward_default(const arena *a, attn_plan *plan)
{
    backward_call c = {a->p,           plan,           at(a, S_X, 0),   at(a, S_WQ, 0),
                       at(a, S_WK, 0), at(a, S_WV, 0), at(a, S_WO, 0),  at(a, S_DOUT, 0),
                       at(a, S_DX, 0), at(a, S_DWQ, 0), at(a, S_DWK, 0), at(a, S_DWV, 0),
                       at(a, S_DWO, 0)};
    return c;
}

/* gradient g (0 dX, 1 dWq, 2 dWk, 3 dWv, 4 dWo) of a call */
static void **gradient(backward_call *c, size_t g)
{
    return backward_arg(c, 6 + g);
}

static attn_status backward_run(backward_call c)
{
    return c.via->backward(c.plan, c.X, c.Wq, c.Wk, c.Wv, c.Wo, c.dout, c.dX, c.dWq, c.dWk,
                           c.dWv, c.dWo);
}

#define BACKWARD_CASE(...) \
    ARENA_CASE(backward_call, backward_default, backward_run, "backward", __VA_ARGS__)

/* A plan of the plan shape that has run one forward (on zeros) with the
 * inputs of backward_default, with or without Wo, or with those of `inputs`
 * when not NULL (X, Wq, Wk, Wv, Wo). */
static attn_plan *forwarded_on(const arena *a, unsigned flags, int with_Wo,
                               const backward_call *inputs)
{
    attn_plan *plan = mha_plan(a->p, &plan_shape, flags);
    memset(a->base, 0, a->bytes);
    forward_call c = forward_default(a, plan);
    c.Wo = with_Wo ? c.Wo : NULL;
    if (inputs != NULL) {
        c.X = inputs->X;
        c.Wq = inputs->Wq;
        c.Wk = inputs->Wk;
        c.Wv = inputs->Wv;
        c.Wo = inputs->Wo;
    }
    c.weights = NULL;
    attn_status st = forward_run(c);
    check_true(st == ATTN_OK, "forward before the backward cases: %s", attn_status_string(st));
    return plan;
}
static attn_plan *forwarded(const arena *a, unsigned flags, int with_Wo)
{
    return forwarded_on(a, flags, with_Wo, NULL);
}

static void backward_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const arena a = arena_make(p);
    attn_plan *with_Wo = forwarded(&a, 0u, 1), *without_Wo = forwarded(&a, 0u, 0);
    BACKWARD_CASE(with_Wo, ATTN_OK, "valid", (void)0);
    BACKWARD_CASE(with_Wo, ATTN_ERR_NULL_POINTER, "plan NULL", c_.plan = NULL);
    char what[64];
    /* each pointer but Wo (whose absence is FORWARD_MISMATCH on this plan) */
    for (size_t i = 0; i < sizeof backward_args / sizeof backward_args[0]; i++) {
        if (i == 4)
            continue;
        snprintf(what, sizeof what, "%s NULL (with Wo)", backward_args[i]);
        BACKWARD_CASE(with_Wo, ATTN_ERR_NULL_POINTER, what, *backward_arg(&c_, i) = NULL);
    }
    BACKWARD_CASE(without_Wo, ATTN_OK, "dWo NULL without Wo", c_.Wo = NULL; c_.dWo = NULL);
    BACKWARD_CASE(without_Wo, ATTN_ERR_NULL_POINTER, "dX NULL without Wo", c_.Wo = NULL;
                  c_.dX = NULL);
    BACKWARD_CASE(with_Wo, ATTN_ERR_DTYPE_MISMATCH, "other precision", c_.via = p->other);
    BACKWARD_CASE(with_Wo, ATTN_ERR_NULL_POINTER, "NULL before DTYPE_MISMATCH",
                  c_.via = p->other; c_.dWv = NULL);
    /* FORWARD_MISMATCH both ways */
    BACKWARD_CASE(with_Wo, ATTN_ERR_FORWARD_MISMATCH, "forward with Wo, backward without",
                  c_.Wo = NULL; c_.dWo = NULL);
    BACKWARD_CASE(without_Wo, ATTN_ERR_FORWARD_MISMATCH, "forward without Wo, backward with",
                  (void)0);
    BACKWARD_CASE(with_Wo, ATTN_ERR_FORWARD_MISMATCH, "FORWARD_MISMATCH before ALIASING",
                  c_.Wo = NULL; c_.dX = at(&a, S_X, 0));
    BACKWARD_CASE(with_Wo, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before FORWARD_MISMATCH",
                  c_.via = p->other; c_.Wo = NULL);
    /* FORWARD_MISMATCH for each input that is not the forward's array (one
     * element further on, or another input's array) */
    for (size_t i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "%s moved by one element", backward_args[i]);
        BACKWARD_CASE(with_Wo, ATTN_ERR_FORWARD_MISMATCH, what,
                      *backward_arg(&c_, i) = (char *)*backward_arg(&c_, i) + p->size);
    }
    BACKWARD_CASE(with_Wo, ATTN_ERR_FORWARD_MISMATCH, "Wq and Wk swapped",
                  void *wq_ = c_.Wq; c_.Wq = c_.Wk; c_.Wk = wq_);
    BACKWARD_CASE(without_Wo, ATTN_ERR_FORWARD_MISMATCH, "Wv moved, without Wo",
                  c_.Wo = NULL; c_.dWo = NULL; c_.Wv = at(&a, S_WO, 0));
    BACKWARD_CASE(with_Wo, ATTN_ERR_FORWARD_MISMATCH, "moved X before ALIASING",
                  c_.X = at(&a, S_X, 1); c_.dX = at(&a, S_X, 0));
    BACKWARD_CASE(with_Wo, ATTN_ERR_NULL_POINTER, "NULL X before FORWARD_MISMATCH",
                  c_.X = NULL; c_.Wq = at(&a, S_WQ, 1));
    /* aliasing: each gradient against each input, and the gradients */
    const int gradients[] = {S_DX, S_DWQ, S_DWK, S_DWV, S_DWO};
    const int inputs[] = {S_X, S_WQ, S_WK, S_WV, S_WO, S_DOUT};
    for (size_t g = 0; g < 5; g++) {
        for (size_t i = 0; i < 6; i++) {
            snprintf(what, sizeof what, "gradient slot %d == input slot %d", gradients[g],
                     inputs[i]);
            BACKWARD_CASE(with_Wo, ATTN_ERR_ALIASING, what,
                          *gradient(&c_, g) = at(&a, inputs[i], 0));
        }
        for (size_t h = g + 1; h < 5; h++) {
            snprintf(what, sizeof what, "gradient slots %d and %d overlap", gradients[g],
                     gradients[h]);
            BACKWARD_CASE(with_Wo, ATTN_ERR_ALIASING, what,
                          *gradient(&c_, g) = at(&a, gradients[h], N_W - 1));
        }
    }
    BACKWARD_CASE(with_Wo, ATTN_ERR_ALIASING, "dX starts at dout's last element",
                  c_.dX = at(&a, S_DOUT, N_BTC - 1));
    backward_call moved = backward_default(&a, NULL);
    moved.X = at(&a, S_DX, N_BTC - 1);
    attn_plan *X_in_dX = forwarded_on(&a, 0u, 1, &moved);
    BACKWARD_CASE(X_in_dX, ATTN_ERR_ALIASING, "X starts at dX's last element",
                  c_.X = moved.X);
    /* dout (B,T,C) with Wo, (B,T,D) without: dX right after 24 elements */
    BACKWARD_CASE(with_Wo, ATTN_OK, "dX touches dout (B,T,C)", c_.dX = at(&a, S_DOUT, N_BTC));
    BACKWARD_CASE(without_Wo, ATTN_ERR_ALIASING, "dX inside dout (B,T,D)", c_.Wo = NULL;
                  c_.dWo = NULL; c_.dX = at(&a, S_DOUT, N_BTC));
    backward_call shared = backward_default(&a, NULL);
    shared.Wk = shared.Wv = shared.Wo = shared.Wq;
    attn_plan *shared_W = forwarded_on(&a, 0u, 1, &shared);
    BACKWARD_CASE(shared_W, ATTN_OK, "inputs shared (Wq == Wk == Wv == Wo == dout)",
                  c_.Wk = c_.Wq; c_.Wv = c_.Wq; c_.Wo = c_.Wq; c_.dout = c_.Wq);
    /* without Wo, dWo is ignored: even one aliasing X is no error, and X
     * (like every input) is left as it was */
    sentinel_fill(a.base, a.bytes);
    backward_call c = backward_default(&a, without_Wo);
    c.Wo = NULL;
    c.dWo = at(&a, S_X, 0);
    expect(&a, backward_run(c), ATTN_OK, "backward", "dWo == X without Wo");
    check_true(sentinel_intact(at(&a, S_X, 0), (S_DX - S_X) * SLOT_ELEMENTS * p->size),
               "backward without Wo wrote into dWo (== X) or another input");
    BACKWARD_CASE(with_Wo, ATTN_OK, "the plan still works after its errors", (void)0);
}

/* INFERENCE_PLAN, NO_FORWARD and the state a failed forward leaves. */
static void backward_states(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const arena a = arena_make(p);
    attn_plan *inference = forwarded(&a, ATTN_INFERENCE, 1);
    attn_plan *inference_fresh = mha_plan(p, &plan_shape, ATTN_INFERENCE);
    attn_plan *fresh = mha_plan(p, &plan_shape, 0u);
    BACKWARD_CASE(inference, ATTN_ERR_INFERENCE_PLAN, "after an inference forward", (void)0);
    BACKWARD_CASE(inference_fresh, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before NO_FORWARD",
                  (void)0);
    BACKWARD_CASE(inference, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before INFERENCE_PLAN",
                  c_.via = p->other);
    BACKWARD_CASE(fresh, ATTN_ERR_NO_FORWARD, "before any forward", (void)0);
    BACKWARD_CASE(fresh, ATTN_ERR_NO_FORWARD, "NO_FORWARD before FORWARD_MISMATCH",
                  c_.Wo = NULL; c_.dWo = NULL);
    BACKWARD_CASE(fresh, ATTN_ERR_NO_FORWARD, "NO_FORWARD before ALIASING",
                  c_.dWq = at(&a, S_WQ, 0));
    BACKWARD_CASE(fresh, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before NO_FORWARD",
                  c_.via = p->other);
    /* forwards that fail validation leave the plan without a forward */
    FORWARD_CASE(fresh, ATTN_ERR_ALIASING, "aliasing forward", c_.out = at(&a, S_X, 0));
    FORWARD_CASE(fresh, ATTN_ERR_DTYPE_MISMATCH, "other precision's forward",
                 c_.via = p->other);
    FORWARD_CASE(fresh, ATTN_ERR_NULL_POINTER, "forward with X NULL", c_.X = NULL);
    BACKWARD_CASE(fresh, ATTN_ERR_NO_FORWARD, "after forwards that failed", (void)0);

    /* a failed forward keeps the state of the last good one: the backward
     * after forward(A), failed forward(B) is the backward of A */
    test_rng rng;
    rng_seed(&rng, 501);
    mha_shape s = {2, 5, 6, 3, 3, 0.0, 1, 1};
    mha_data da = mha_random(p, &rng, s, MHA_W_GAIN);
    mha_data db = mha_random(p, &rng, s, MHA_W_GAIN);
    mha_typed ta = mha_typed_copy(p, &da), tb = mha_typed_copy(p, &db);
    attn_plan *plan = mha_plan(p, &s, 0u);
    mha_plan_forward(p, plan, &s, &ta, NULL);
    check_true(p->forward(plan, tb.X, tb.Wq, tb.Wk, tb.Wv, tb.Wo, tb.X, NULL) ==
                   ATTN_ERR_ALIASING,
               "forward(B) with out == X should fail");
    mha_grads after_failure = mha_plan_backward(p, plan, &s, &ta);
    attn_plan *clean = mha_plan(p, &s, 0u);
    mha_plan_forward(p, clean, &s, &ta, NULL);
    mha_grads clean_grads = mha_plan_backward(p, clean, &s, &ta);
    check_true(mha_grads_identical(p, &s, &after_failure, &clean_grads),
               "a failed forward changed the state the backward uses");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MHA_PREC_CASES(backward_errors),
        MHA_PREC_CASES(backward_states),
    };
    return cmocka_run_group_tests_name("plans: backward errors", tests, NULL, NULL);
}
