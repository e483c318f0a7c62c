/*
 * test_plan_forward_errors: the statuses of attn_forward_* and of the
 * multi-head one-shots.
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
 *   - attn_forward_*: NULL for each pointer, DTYPE_MISMATCH both ways
 *     (each precision's test calls the other precision's function),
 *     ALIASING for each output against each input and the other output,
 *     including overlaps that exist only because out is (B,T,C) with Wo and
 *     (B,T,D) without; the order NULL, DTYPE_MISMATCH, ALIASING.
 *   - attn_mha_forward_* / attn_mha_backward_*: NULL, ZERO_DIMENSION,
 *     BAD_SHAPE, SIZE_OVERFLOW, BLAS_RANGE, ALIASING, the order (their
 *     OUT_OF_MEMORY: test_plan_allocations).
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

static void forward_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const arena a = arena_make(p);
    attn_plan *plan = mha_plan(p, &plan_shape, 0u);
    attn_plan *inference = mha_plan(p, &plan_shape, ATTN_INFERENCE);
    FORWARD_CASE(plan, ATTN_OK, "valid", (void)0);
    FORWARD_CASE(plan, ATTN_OK, "Wo NULL, weights NULL", c_.Wo = NULL; c_.weights = NULL);
    FORWARD_CASE(inference, ATTN_OK, "inference plan, weights requested", (void)0);
    FORWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "plan NULL", c_.plan = NULL);
    char what[64];
    for (size_t i = 0; i < sizeof forward_args / sizeof forward_args[0]; i++) {
        const int optional = i == 4 || i == 6; /* Wo, weights */
        snprintf(what, sizeof what, "%s NULL", forward_args[i]);
        FORWARD_CASE(plan, optional ? ATTN_OK : ATTN_ERR_NULL_POINTER, what,
                     *forward_arg(&c_, i) = NULL);
    }
    FORWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "out NULL, Wo and weights NULL", c_.out = NULL;
                 c_.Wo = NULL; c_.weights = NULL);
    /* the other precision's function on this plan (f32 on f64, f64 on f32) */
    FORWARD_CASE(plan, ATTN_ERR_DTYPE_MISMATCH, "other precision", c_.via = p->other);
    FORWARD_CASE(inference, ATTN_ERR_DTYPE_MISMATCH, "other precision, inference plan",
                 c_.via = p->other);
    FORWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "NULL before DTYPE_MISMATCH", c_.via = p->other;
                 c_.Wk = NULL);
    FORWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "plan NULL, other precision", c_.via = p->other;
                 c_.plan = NULL);
    /* aliasing */
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "out == X", c_.out = at(&a, S_X, 0));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "out == Wq", c_.out = at(&a, S_WQ, 0));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "out == Wk", c_.out = at(&a, S_WK, 0));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "out == Wv", c_.out = at(&a, S_WV, 0));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "out == Wo", c_.out = at(&a, S_WO, 0));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "out starts at X's last element",
                 c_.out = at(&a, S_X, N_BTC - 1));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "Wv starts at out's last element",
                 c_.Wv = at(&a, S_OUT, N_BTC - 1));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "weights == X", c_.weights = at(&a, S_X, 0));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "weights overlap Wo's end",
                 c_.weights = at(&a, S_WO, N_W - 1));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "weights == out", c_.weights = at(&a, S_OUT, 0));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "out overlaps weights' end",
                 c_.out = at(&a, S_WEIGHTS, N_WEIGHTS - 1));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "Wq inside weights",
                 c_.Wq = at(&a, S_WEIGHTS, 4));
    /* X right after 24 elements of out: touching with Wo (out (B,T,C) = 24),
     * overlapping without (out (B,T,D) = 36) */
    FORWARD_CASE(plan, ATTN_OK, "X touches out (B,T,C)", c_.X = at(&a, S_OUT, N_BTC));
    FORWARD_CASE(plan, ATTN_ERR_ALIASING, "X inside out (B,T,D), Wo NULL",
                 c_.X = at(&a, S_OUT, N_BTC); c_.Wo = NULL);
    FORWARD_CASE(plan, ATTN_OK, "Wo touches the end of weights",
                 c_.Wo = at(&a, S_WEIGHTS, N_WEIGHTS));
    FORWARD_CASE(plan, ATTN_OK, "inputs shared (Wq == Wk == Wv == Wo)",
                 c_.Wk = c_.Wq; c_.Wv = c_.Wq; c_.Wo = c_.Wq);
    FORWARD_CASE(plan, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before ALIASING",
                 c_.via = p->other; c_.out = at(&a, S_X, 0));
    FORWARD_CASE(plan, ATTN_OK, "the plan still works after its errors", (void)0);
}

/* ---- multi-head one-shots --------------------------------------------- */

typedef struct mha_call {
    size_t B, T, C, NH;
    int backward; /* attn_mha_backward instead of attn_mha_forward */
    const void *X, *Wq, *Wk, *Wv, *Wo, *dout;
    void *out, *dX, *dWq, *dWk, *dWv, *dWo;
} mha_call;

static attn_status mha_call_run(const test_prec *p, mha_call c)
{
    if (!c.backward)
        return p->mha_forward(c.B, c.T, c.C, c.NH, 1, c.X, c.Wq, c.Wk, c.Wv, c.Wo, c.out);
    return p->mha_backward(c.B, c.T, c.C, c.NH, 1, c.X, c.Wq, c.Wk, c.Wv, c.Wo, c.dout, c.dX,
                           c.dWq, c.dWk, c.dWv, c.dWo);
}

/* valid: B 2, T 3, C 4, NH 2 (hs 2): X, out, dout, dX (B,T,C) 24 elements,
 * weights 16 */
#define MHA_CALL_CASE(is_backward, want, what, ...)                                          \
    do {                                                                                      \
        mha_call c_ = {2, 3, 4, 2, is_backward, at(&a, S_X, 0), at(&a, S_WQ, 0),              \
                       at(&a, S_WK, 0), at(&a, S_WV, 0), at(&a, S_WO, 0), at(&a, S_DOUT, 0),  \
                       at(&a, S_OUT, 0), at(&a, S_DX, 0), at(&a, S_DWQ, 0), at(&a, S_DWK, 0), \
                       at(&a, S_DWV, 0), at(&a, S_DWO, 0)};                                   \
        __VA_ARGS__;                                                                          \
        sentinel_fill(a.base, a.bytes);                                                       \
        expect(&a, mha_call_run(p, c_), want, is_backward ? "mha_backward" : "mha_forward",   \
               what);                                                                         \
    } while (0)

static void one_shot_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const arena a = arena_make(p);
    for (int bw = 0; bw <= 1; bw++) {
        MHA_CALL_CASE(bw, ATTN_OK, "valid", (void)0);
        MHA_CALL_CASE(bw, ATTN_OK, "Wo NULL (and dWo NULL)", c_.Wo = NULL; c_.dWo = NULL);
        MHA_CALL_CASE(bw, ATTN_ERR_NULL_POINTER, "X NULL", c_.X = NULL);
        MHA_CALL_CASE(bw, ATTN_ERR_NULL_POINTER, "Wq NULL", c_.Wq = NULL);
        MHA_CALL_CASE(bw, ATTN_ERR_NULL_POINTER, "Wk NULL", c_.Wk = NULL);
        MHA_CALL_CASE(bw, ATTN_ERR_NULL_POINTER, "Wv NULL", c_.Wv = NULL);
        MHA_CALL_CASE(bw, ATTN_ERR_ZERO_DIMENSION, "B 0", c_.B = 0);
        MHA_CALL_CASE(bw, ATTN_ERR_ZERO_DIMENSION, "T 0", c_.T = 0);
        MHA_CALL_CASE(bw, ATTN_ERR_ZERO_DIMENSION, "C 0", c_.C = 0);
        MHA_CALL_CASE(bw, ATTN_ERR_ZERO_DIMENSION, "NH 0 (no division by zero)", c_.NH = 0);
        MHA_CALL_CASE(bw, ATTN_ERR_BAD_SHAPE, "C 4, NH 3", c_.NH = 3);
        MHA_CALL_CASE(bw, ATTN_ERR_BAD_SHAPE, "NH > C", c_.C = 2; c_.NH = 4);
        MHA_CALL_CASE(bw, ATTN_ERR_NULL_POINTER, "NULL before zero", c_.Wv = NULL; c_.B = 0);
        MHA_CALL_CASE(bw, ATTN_ERR_ZERO_DIMENSION, "zero before BAD_SHAPE", c_.T = 0;
                      c_.NH = 3);
        MHA_CALL_CASE(bw, ATTN_ERR_BAD_SHAPE, "BAD_SHAPE before overflow", c_.NH = 3;
                      c_.B = (size_t)1 << 62);
        MHA_CALL_CASE(bw, ATTN_ERR_SIZE_OVERFLOW, "X (B*T*C)", c_.B = (size_t)1 << 62;
                      c_.C = 8);
        MHA_CALL_CASE(bw, ATTN_ERR_SIZE_OVERFLOW, "W (C*C)", c_.B = 1; c_.T = 1;
                      c_.C = (size_t)1 << 32; c_.NH = 1);
        MHA_CALL_CASE(bw, ATTN_ERR_SIZE_OVERFLOW, "T*T", c_.B = 1; c_.T = (size_t)1 << 33;
                      c_.C = 1; c_.NH = 1);
        MHA_CALL_CASE(bw, ATTN_ERR_BLAS_RANGE, "B*T > INT_MAX", c_.B = (size_t)1 << 16;
                      c_.T = (size_t)1 << 16; c_.C = 1; c_.NH = 1);
        MHA_CALL_CASE(bw, ATTN_ERR_ALIASING, "out/dX == X", c_.out = at(&a, S_X, 0);
                      c_.dX = at(&a, S_X, 0));
        MHA_CALL_CASE(bw, ATTN_ERR_ALIASING, "out/dWq == Wq", c_.out = at(&a, S_WQ, 0);
                      c_.dWq = at(&a, S_WQ, 0));
        MHA_CALL_CASE(bw, ATTN_ERR_ALIASING, "out/dWk overlaps Wo's end",
                      c_.out = at(&a, S_WO, 15); c_.dWk = at(&a, S_WO, 15));
        MHA_CALL_CASE(bw, ATTN_ERR_ALIASING, "Wv starts at out/dWv's last element",
                      c_.Wv = at(&a, bw ? S_DWV : S_OUT, bw ? 15 : 23));
    }
    MHA_CALL_CASE(0, ATTN_ERR_NULL_POINTER, "out NULL", c_.out = NULL);
    MHA_CALL_CASE(1, ATTN_ERR_NULL_POINTER, "dout NULL", c_.dout = NULL);
    MHA_CALL_CASE(1, ATTN_ERR_NULL_POINTER, "dX NULL", c_.dX = NULL);
    MHA_CALL_CASE(1, ATTN_ERR_NULL_POINTER, "dWq NULL", c_.dWq = NULL);
    MHA_CALL_CASE(1, ATTN_ERR_NULL_POINTER, "dWk NULL", c_.dWk = NULL);
    MHA_CALL_CASE(1, ATTN_ERR_NULL_POINTER, "dWv NULL", c_.dWv = NULL);
    MHA_CALL_CASE(1, ATTN_ERR_NULL_POINTER, "dWo NULL with Wo", c_.dWo = NULL);
    MHA_CALL_CASE(1, ATTN_ERR_NULL_POINTER, "dX NULL before zero", c_.dX = NULL; c_.C = 0);
    MHA_CALL_CASE(1, ATTN_ERR_ALIASING, "dWo == dX", c_.dWo = at(&a, S_DX, 0));
    MHA_CALL_CASE(1, ATTN_ERR_ALIASING, "dWq overlaps dWk", c_.dWq = at(&a, S_DWK, 15));
    MHA_CALL_CASE(1, ATTN_ERR_ALIASING, "dX starts at dout's last element",
                  c_.dX = at(&a, S_DOUT, 23));
    MHA_CALL_CASE(1, ATTN_ERR_ALIASING, "dWo == Wo", c_.dWo = at(&a, S_WO, 0));
    MHA_CALL_CASE(1, ATTN_OK, "dWo == X ignored without Wo", c_.Wo = NULL;
                  c_.dWo = at(&a, S_X, 0));
    /* dout is an input: it may share memory with other inputs, as in the
     * plan backward (each slot holds SLOT_ELEMENTS, enough for dout). */
    MHA_CALL_CASE(1, ATTN_OK, "dout == Wq (inputs may alias)", c_.dout = at(&a, S_WQ, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MHA_PREC_CASES(forward_errors),
        MHA_PREC_CASES(one_shot_errors),
    };
    return cmocka_run_group_tests_name("plans: forward errors", tests, NULL, NULL);
}
