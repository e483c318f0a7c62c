/*
 * test_plan_allocations: what attn_plan_create, the plans and the
 * multi-head one-shots allocate.
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
 *   - OUT_OF_MEMORY at each allocation of attn_plan_create (every kind of
 *     plan), attn_mha_forward_* and attn_mha_backward_* (alone and with all
 *     later ones failing): every buffer and *plan untouched, nothing left
 *     allocated;
 *   - executing a plan allocates nothing: the allocator is wrapped at link
 *     time (alloc_fail.c, alloc_free.c; the static library's calls go
 *     through the wrappers, OpenBLAS's own, in its shared library, do not)
 *     and no allocation is attempted during any forward or backward, on
 *     every kind of plan; creating one does allocate (the counter works);
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

/* ---- OUT_OF_MEMORY: every allocation of a call, in turn --------------- */

/* A call whose outputs are all in the arena; ctx is the case's data. */
typedef attn_status (*alloc_call)(const test_prec *p, const arena *a, const void *ctx);

/* Fails allocation k = 0, 1, ... of `call` (only that one, or that one and
 * all later ones) until the call makes no k-th allocation and succeeds.
 * Each failing call must return OUT_OF_MEMORY, leave the arena as it was
 * and free what it had allocated. Returns the number of allocations. */
static long fail_each_allocation(const test_prec *p, const arena *a, alloc_call call,
                                 const void *ctx, int only_one, const char *what)
{
    for (long k = 0;; k++) {
        sentinel_fill(a->base, a->bytes);
        const long live = alloc_fail_live();
        if (only_one)
            alloc_fail_arm_only(k);
        else
            alloc_fail_arm(k);
        const attn_status st = call(p, a, ctx);
        const long attempted = alloc_fail_count();
        alloc_fail_arm(-1);
        if (attempted <= k) {
            check_true(st == ATTN_OK, "%s: no allocation failed, yet %s", what,
                       attn_status_string(st));
            return k;
        }
        check_true(st == ATTN_ERR_OUT_OF_MEMORY, "%s, allocation %ld failed (only %d): got %s",
                   what, k, only_one, attn_status_string(st));
        check_true(sentinel_intact(a->base, a->bytes),
                   "%s, allocation %ld failed: a buffer (or *plan) was modified", what, k);
        check_true(alloc_fail_live() == live, "%s, allocation %ld failed: %ld block(s) leaked",
                   what, k, alloc_fail_live() - live);
    }
}

/* attn_plan_create of the plan shape with the flags in ctx; the plan
 * pointer lives in the arena (slot S_OUT), so writing it on failure is
 * caught; a created plan is destroyed */
static attn_status call_create(const test_prec *p, const arena *a, const void *ctx)
{
    attn_plan **plan = at(a, S_OUT, 0);
    const mha_shape *s = &plan_shape;
    attn_status st = attn_plan_create(plan, p->dtype, s->B, s->T, s->C, s->NH, s->hs, s->scale,
                                      *(const unsigned *)ctx);
    if (st == ATTN_OK)
        attn_plan_destroy(*plan);
    return st;
}

/* the one-shots on the arena's slots */
static attn_status call_mha_forward(const test_prec *p, const arena *a, const void *ctx)
{
    const int with_Wo = *(const int *)ctx;
    return p->mha_forward(2, 3, 4, 2, 1, at(a, S_X, 0), at(a, S_WQ, 0), at(a, S_WK, 0),
                          at(a, S_WV, 0), with_Wo ? at(a, S_WO, 0) : NULL, at(a, S_OUT, 0));
}

static attn_status call_mha_backward(const test_prec *p, const arena *a, const void *ctx)
{
    const int with_Wo = *(const int *)ctx;
    return p->mha_backward(2, 3, 4, 2, 1, at(a, S_X, 0), at(a, S_WQ, 0), at(a, S_WK, 0),
                           at(a, S_WV, 0), with_Wo ? at(a, S_WO, 0) : NULL, at(a, S_DOUT, 0),
                           at(a, S_DX, 0), at(a, S_DWQ, 0), at(a, S_DWK, 0), at(a, S_DWV, 0),
                           at(a, S_DWO, 0));
}

static void out_of_memory(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const arena a = arena_make(p);
    /* The process's shared threads (ATTN_THREADS_AUTO) are started by the
     * first plan that needs them and kept: start them before counting, so
     * that they are nobody's allocation below. */
    attn_plan *first = NULL;
    check_true(attn_plan_create(&first, ATTN_F32, 1, 8, 8, 1, 8, 0.0, 0) == ATTN_OK,
               "a first plan");
    attn_plan_destroy(first);
    const unsigned flag_sets[] = {ATTN_CAUSAL, ATTN_INFERENCE, ATTN_INFERENCE | ATTN_TILED,
                                  ATTN_INFERENCE | ATTN_MATERIALIZED};
    for (int only_one = 0; only_one <= 1; only_one++) {
        for (size_t i = 0; i < sizeof flag_sets / sizeof flag_sets[0]; i++) {
            long n = fail_each_allocation(p, &a, call_create, &flag_sets[i], only_one,
                                          "attn_plan_create");
            check_true(n >= 1, "attn_plan_create allocated nothing");
            if (i == 0 && only_one)
                print_message("  attn_plan_create: %ld allocation(s)\n", n);
        }
        /* the one-shots; their inputs are the arena's sentinel bytes:
         * garbage numbers, harmless to a call that fails before computing
         * or computes garbage from them */
        for (int with_Wo = 0; with_Wo <= 1; with_Wo++) {
            long n = fail_each_allocation(p, &a, call_mha_forward, &with_Wo, only_one,
                                          "attn_mha_forward");
            check_true(n >= 1, "attn_mha_forward allocated nothing");
            const long n_forward = n;
            n = fail_each_allocation(p, &a, call_mha_backward, &with_Wo, only_one,
                                     "attn_mha_backward");
            check_true(n >= 1, "attn_mha_backward allocated nothing");
            if (with_Wo && only_one)
                print_message("  attn_mha_forward: %ld, attn_mha_backward: %ld allocation(s)\n",
                              n_forward, n);
        }
    }
}

/* ---- execution allocates nothing ---------------------------------------- */

static void execution_allocates_nothing(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const unsigned kinds[] = {0u, ATTN_INFERENCE, ATTN_INFERENCE | ATTN_MATERIALIZED,
                              ATTN_INFERENCE | ATTN_TILED, ATTN_TILED};
    const mha_shape shapes[] = {{2, 5, 6, 2, 4, 0.0, 0, 0},
                                {1, ATTN_TILED_MIN_T + 3, 2, 1, 2, 0.0, 0, 0}};
    test_rng rng;
    rng_seed(&rng, 502);
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            for (int variant = 0; variant < 4; variant++) {
                mha_shape s = shapes[i];
                s.causal = variant & 1;
                s.with_Wo = (variant >> 1) & 1;
                const int training = !(kinds[k] & ATTN_INFERENCE), long_T = i == 1;
                if (long_T && training)
                    continue; /* (B,NH,T,T) of a long sequence: not needed here */
                mha_data d = mha_random(p, &rng, s, MHA_W_GAIN);
                /* the counter sees the library's allocations */
                attn_plan *probe = NULL;
                alloc_fail_arm(LONG_MAX);
                attn_status st = attn_plan_create(&probe, p->dtype, s.B, s.T, s.C, s.NH, s.hs,
                                                  s.scale, mha_flags(&s, kinds[k]));
                const long created = alloc_fail_count();
                alloc_fail_arm(-1);
                attn_plan_destroy(probe);
                check_true(st == ATTN_OK && created >= 1,
                           "attn_plan_create: %s after %ld allocation(s)",
                           attn_status_string(st), created);
                attn_plan *plan = mha_plan(p, &s, kinds[k]);
                /* every buffer is made before counting */
                mha_job with_weights = mha_job_make(p, &d, plan, training, !long_T);
                mha_job without = mha_job_make(p, &d, plan, training, 0);
                alloc_fail_arm(LONG_MAX);
                mha_job_run(&with_weights);
                mha_job_run(&without);
                const long executed = alloc_fail_count();
                alloc_fail_arm(-1);
                check_true(with_weights.status == ATTN_OK && without.status == ATTN_OK,
                           "execution failed: %s / %s", attn_status_string(with_weights.status),
                           attn_status_string(without.status));
                check_true(executed == 0,
                           "flags %#x T %zu causal %d Wo %d: %ld allocation(s) while executing",
                           mha_flags(&s, kinds[k]), s.T, s.causal, s.with_Wo, executed);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MHA_PREC_CASES(out_of_memory),
        MHA_PREC_CASES(execution_allocates_nothing),
    };
    return cmocka_run_group_tests_name("plans: allocations", tests, NULL, NULL);
}
