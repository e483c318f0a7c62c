/*
 * test_sdpa_call_errors: every status of attn_sdpa_forward_* and
 * attn_sdpa_backward_* case by case and in the header's order where two
 * coincide, in both precisions; all buffers of an error call live in one
 * sentinel-filled arena (and the key lengths in another), compared byte for
 * byte afterwards (support/sdpa_error_arena.h); PLAN_KIND both ways
 * (attn_forward/attn_backward on an sdpa plan, attn_sdpa_* on a projected
 * plan), DTYPE_MISMATCH both ways, INFERENCE_PLAN; array extents exactly as
 * strides make them (an output touching an input's last element is fine,
 * one element more is ALIASING).
 * The sdpa suites: test_sdpa (the cases on every engine, the decode split),
 * test_sdpa_gradients (finite differences), test_sdpa_extremes (NaN, +inf
 * and huge scores), test_sdpa_call_errors and test_sdpa_create_errors
 * (every status), test_sdpa_one_shots (one-shots and defaults, bit for
 * bit); test_sdpa_layouts and test_sdpa_strides (batch and head strides).
 *
 * Statuses the header leaves to interpretation, as read here: a row stride
 * above INT_MAX (whose extent fits) is ATTN_ERR_BLAS_RANGE, after
 * SIZE_OVERFLOW and before BAD_LENGTH (attn.h's conventions: "the BLAS
 * integer range"); the backward's INFERENCE_PLAN comes right after
 * DTYPE_MISMATCH, before the strides (as in attn_backward_*); key_lengths
 * is an input for ALIASING.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/sdpa_error_arena.h"
#include "support/test_common.h"

static attn_plan *error_plan(const test_prec *p, attn_dtype dtype, unsigned flags)
{
    attn_plan *plan = NULL;
    const attn_status st = attn_sdpa_plan_create(&plan, dtype, &error_shape, 0.0, flags, 0);
    check_true(st == ATTN_OK, "%s: the error cases' plan: %s", p->name, attn_status_string(st));
    return sdpa_keep_plan(plan);
}

/* a projected plan of the same precision or the other */
static attn_plan *projected_plan(attn_dtype dtype)
{
    attn_plan *plan = NULL;
    const attn_status st = attn_plan_create(&plan, dtype, 2, 3, 4, 2, 3, 0.0, 0u);
    check_true(st == ATTN_OK, "a projected plan: %s", attn_status_string(st));
    return sdpa_keep_plan(plan);
}

static attn_dtype other_dtype(const test_prec *p)
{
    return p->dtype == ATTN_F32 ? ATTN_F64 : ATTN_F32;
}

/* the cases both calls share (bw 0 forward, 1 backward) */
static void shared_errors(const arena *arena_ptr, attn_plan *plan, int bw)
{
    const arena a = *arena_ptr;
    const test_prec *p = a.p;
    attn_plan *proj = projected_plan(p->dtype), *proj_other = projected_plan(other_dtype(p));
    static const size_t lengths_zero[2] = {0, 0}, lengths_full[2] = {5, 5};
    static const size_t lengths_over[2] = {5, 6}, lengths_max[2] = {SIZE_MAX, 1};
    CALL_CASE(bw, plan, ATTN_OK, "valid", (void)0);
    CALL_CASE(bw, plan, ATTN_OK, "mask NULL", c_.io.mask = NULL);
    CALL_CASE(bw, plan, ATTN_OK, "key_lengths NULL", c_.io.key_lengths = NULL);
    CALL_CASE(bw, plan, ATTN_OK, "lengths 0 and 0", len_ = lengths_zero);
    CALL_CASE(bw, plan, ATTN_OK, "lengths Tk", len_ = lengths_full);
    CALL_CASE(bw, plan, ATTN_OK, "strides given, dense", c_.io.ldq = E_NH * E_HS;
              c_.io.ldk = E_NHKV * E_HS; c_.io.ldv = E_NHKV * E_HSV; c_.io.ldo = E_NH * E_HSV);
    /* NULL pointers */
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "plan NULL", c_.plan = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "args NULL", c_.null_args = 1);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "Q NULL", c_.io.Q = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "K NULL", c_.io.K = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "V NULL", c_.io.V = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "out NULL", c_.io.out = NULL);
    /* plan kind and precision */
    CALL_CASE(bw, proj, ATTN_ERR_PLAN_KIND, "a projected plan", (void)0);
    CALL_CASE(bw, proj_other, ATTN_ERR_PLAN_KIND,
              "a projected plan of the other precision (PLAN_KIND before DTYPE_MISMATCH)",
              (void)0);
    CALL_CASE(bw, proj, ATTN_ERR_NULL_POINTER, "NULL before PLAN_KIND", c_.io.V = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_DTYPE_MISMATCH, "the other precision's call",
              c_.via = p->other);
    CALL_CASE(bw, plan, ATTN_ERR_NULL_POINTER, "NULL before DTYPE_MISMATCH", c_.via = p->other;
              c_.io.K = NULL);
    CALL_CASE(bw, plan, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before BAD_STRIDE",
              c_.via = p->other; c_.io.ldq = 1);
    /* strides */
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldq < NH*hs", c_.io.ldq = E_NH * E_HS - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldk < NH_kv*hs", c_.io.ldk = E_NHKV * E_HS - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldv < NH_kv*hs_v", c_.io.ldv = E_NHKV * E_HSV - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldv = NH_kv*hs (< NH_kv*hs_v)",
              c_.io.ldv = E_NHKV * E_HS);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "ldo < NH*hs_v", c_.io.ldo = E_NH * E_HSV - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_ld < Tk", c_.io.mask_ld = E_TK - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_sh < (Tq-1)*mask_ld + Tk",
              c_.io.mask_sh = (E_TQ - 1) * E_TK + E_TK - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_sb < (NH-1)*mask_sh + one head",
              c_.io.mask_sb = (E_NH - 1) * E_TQ * E_TK + E_TQ * E_TK - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_ld 0, mask_sh < Tk", c_.io.mask_ld = 0;
              c_.io.mask_sh = E_TK - 1; c_.io.mask_sb = E_NH * E_TK);
    CALL_CASE(bw, plan, ATTN_OK, "mask_ld 0, mask_sh = Tk", c_.io.mask_ld = 0;
              c_.io.mask_sh = E_TK; c_.io.mask_sb = E_NH * E_TK);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_ld 0, mask_sh Tk, mask_sb < NH*Tk",
              c_.io.mask_ld = 0; c_.io.mask_sh = E_TK; c_.io.mask_sb = E_NH * E_TK - 1);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "mask_sh 0, mask_sb < one head", c_.io.mask_sh = 0;
              c_.io.mask_sb = E_TQ * E_TK - 1);
    CALL_CASE(bw, plan, ATTN_OK, "mask_sh 0, mask_sb = one head", c_.io.mask_sh = 0;
              c_.io.mask_sb = E_TQ * E_TK);
    CALL_CASE(bw, plan, ATTN_OK, "every mask stride 0", c_.io.mask_ld = 0; c_.io.mask_sh = 0;
              c_.io.mask_sb = 0);
    CALL_CASE(bw, plan, ATTN_OK, "mask_ld Tk + 1, the others exact", c_.io.mask_ld = E_TK + 1;
              c_.io.mask_sh = (E_TQ - 1) * (E_TK + 1) + E_TK;
              c_.io.mask_sb = E_NH * ((E_TQ - 1) * (E_TK + 1) + E_TK));
    /* extents */
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "BAD_STRIDE before SIZE_OVERFLOW",
              c_.io.ldq = 1; c_.io.ldk = SIZE_MAX / 2);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "Q's extent (elements)", c_.io.ldq = SIZE_MAX / 4);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "K's extent (bytes)", c_.io.ldk = SIZE_MAX / 16);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "V's extent (bytes)", c_.io.ldv = SIZE_MAX / 12);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "out's extent (bytes)", c_.io.ldo = SIZE_MAX / 8);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "the mask's extent (mask_sb)",
              c_.io.mask_sb = SIZE_MAX / 2);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "the mask's extent (mask_sh, sb 0)",
              c_.io.mask_sh = SIZE_MAX / 4; c_.io.mask_sb = 0);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "the mask's extent (mask_ld, sh 0, sb 0)",
              c_.io.mask_ld = SIZE_MAX / 2; c_.io.mask_sh = 0; c_.io.mask_sb = 0);
    /* a head's extent (Tq-1)*mask_ld + Tk beyond size_t: a nonzero mask_sh is
     * smaller than it, and BAD_STRIDE comes before SIZE_OVERFLOW */
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE,
              "mask_sh below a head's extent that overflows (BAD_STRIDE before SIZE_OVERFLOW)",
              c_.io.mask_ld = SIZE_MAX / 2; c_.io.mask_sh = E_TQ * E_TK; c_.io.mask_sb = 0);
    /* a row stride beyond BLAS's int (its extent 5 * 2^31 + 8 elements fits): the
     * call cannot be made, and ATTN_ERR_BLAS_RANGE (attn.h's conventions: the
     * BLAS integer range) is what says so; after SIZE_OVERFLOW, before BAD_LENGTH */
    CALL_CASE(bw, plan, ATTN_ERR_BLAS_RANGE, "ldq > INT_MAX", c_.io.ldq = (size_t)INT_MAX + 1);
    CALL_CASE(bw, plan, ATTN_ERR_BLAS_RANGE, "ldv > INT_MAX", c_.io.ldv = (size_t)INT_MAX + 1);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "SIZE_OVERFLOW before BLAS_RANGE",
              c_.io.ldq = (size_t)INT_MAX + 1; c_.io.ldk = SIZE_MAX / 4);
    CALL_CASE(bw, plan, ATTN_ERR_BLAS_RANGE, "BLAS_RANGE before BAD_LENGTH",
              c_.io.ldo = (size_t)INT_MAX + 1; len_ = lengths_over);
    /* lengths */
    CALL_CASE(bw, plan, ATTN_ERR_BAD_LENGTH, "a length Tk + 1", len_ = lengths_over);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_LENGTH, "a length SIZE_MAX", len_ = lengths_max);
    CALL_CASE(bw, plan, ATTN_ERR_SIZE_OVERFLOW, "SIZE_OVERFLOW before BAD_LENGTH",
              c_.io.ldq = SIZE_MAX / 4; len_ = lengths_over);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_STRIDE, "BAD_STRIDE before BAD_LENGTH",
              c_.io.mask_ld = 1; len_ = lengths_over);
    CALL_CASE(bw, plan, ATTN_ERR_BAD_LENGTH, "BAD_LENGTH before ALIASING",
              c_.io.out = at(&a, S_Q, 0); len_ = lengths_over);
    /* aliasing of out and lse */
    CALL_CASE(bw, plan, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before ALIASING",
              c_.via = p->other; c_.io.out = at(&a, S_Q, 0));
    CALL_CASE(bw, plan, ATTN_OK, "inputs shared (Q == K == V)", c_.io.K = c_.io.Q;
              c_.io.V = c_.io.Q);
    CALL_CASE(bw, plan, ATTN_OK, "mask NULL, out where it would be", c_.io.mask = NULL;
              c_.io.out = at(&a, S_MASK, 0));
    if (!bw) {
        /* in the backward, out is an input: these are the forward's */
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out == Q", c_.io.out = at(&a, S_Q, 0));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out starts at K's last element",
                  c_.io.out = at(&a, S_K, N_K - 1));
        CALL_CASE(bw, plan, ATTN_OK, "out right after K", c_.io.out = at(&a, S_K, N_K));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "V starts at out's last element",
                  c_.io.V = at(&a, S_OUT, N_O - 1));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out == mask", c_.io.out = at(&a, S_MASK, 0));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out inside the mask's extent",
                  c_.io.out = at(&a, S_MASK, N_M - 1));
        CALL_CASE(bw, plan, ATTN_OK, "out right after the mask", c_.io.out = at(&a, S_MASK, N_M));
        CALL_CASE(bw, plan, ATTN_OK, "out right after a one-row mask (strides 0)",
                  c_.io.mask_ld = 0; c_.io.mask_sh = 0; c_.io.mask_sb = 0;
                  c_.io.out = at(&a, S_MASK, E_TK));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out on a one-row mask's last entry",
                  c_.io.mask_ld = 0; c_.io.mask_sh = 0; c_.io.mask_sb = 0;
                  c_.io.out = at(&a, S_MASK, E_TK - 1));
        /* Q strided (ldq 10): its extent is 5*10 + 8 = 58 */
        CALL_CASE(bw, plan, ATTN_OK, "out right after a strided Q", c_.io.ldq = 10;
                  c_.io.out = at(&a, S_Q, 58));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out on a strided Q's last element",
                  c_.io.ldq = 10; c_.io.out = at(&a, S_Q, 57));
        /* out strided (ldo 13): extent 5*13 + 12 = 77 */
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "Q on a strided out's last element",
                  c_.io.ldo = 13; c_.io.Q = at(&a, S_OUT, 76));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse == out", c_.io.lse = at(&a, S_OUT, 0));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse on out's last element",
                  c_.io.lse = at(&a, S_OUT, N_O - 1));
        CALL_CASE(bw, plan, ATTN_OK, "lse right after out", c_.io.lse = at(&a, S_OUT, N_O));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out on lse's last element",
                  c_.io.out = at(&a, S_LSE, N_L - 1));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse == Q", c_.io.lse = at(&a, S_Q, 0));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse inside V", c_.io.lse = at(&a, S_V, 10));
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "lse inside the mask",
                  c_.io.lse = at(&a, S_MASK, 50));
        CALL_CASE(bw, plan, ATTN_OK, "lse NULL", c_.io.lse = NULL);
        /* key_lengths is an input too */
        CALL_CASE(bw, plan, ATTN_ERR_ALIASING, "out on key_lengths",
                  c_.io.out = (void *)a.lengths);
    }
    CALL_CASE(bw, plan, ATTN_OK, "the plan still works after its errors", (void)0);
}

static void forward_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const arena a = arena_make(p);
    attn_plan *plan = error_plan(p, p->dtype, ATTN_CAUSAL);
    attn_plan *inference = error_plan(p, p->dtype, ATTN_INFERENCE);
    shared_errors(&a, plan, 0);
    FORWARD_CASE(inference, ATTN_OK, "an inference plan", (void)0);
    FORWARD_CASE(inference, ATTN_ERR_ALIASING, "an inference plan, out == V",
                 c_.io.out = at(&a, S_V, 0));
    /* the projected calls on an sdpa plan */
    sentinel_fill(a.base, a.bytes);
    attn_status st = p->forward(plan, at(&a, S_Q, 0), at(&a, S_K, 0), at(&a, S_V, 0),
                                at(&a, S_MASK, 0), NULL, at(&a, S_OUT, 0), NULL);
    expect_true(st == ATTN_ERR_PLAN_KIND, "%s attn_forward on an sdpa plan: %s", p->name,
                attn_status_string(st));
    st = p->backward(plan, at(&a, S_Q, 0), at(&a, S_K, 0), at(&a, S_V, 0), at(&a, S_MASK, 0),
                     NULL, at(&a, S_DOUT, 0), at(&a, S_OUT, 0), at(&a, S_DQ, 0), at(&a, S_DK, 0),
                     at(&a, S_DV, 0), NULL);
    expect_true(st == ATTN_ERR_PLAN_KIND, "%s attn_backward on an sdpa plan: %s", p->name,
                attn_status_string(st));
    expect_true(sentinel_intact(a.base, a.bytes), "%s: a projected call on an sdpa plan wrote",
                p->name);
    /* the threads calls work on sdpa plans */
    unsigned threads = 0;
    expect_true(attn_plan_set_threads(plan, 2) == ATTN_OK &&
                    attn_plan_get_threads(plan, &threads) == ATTN_OK && threads == 2,
                "%s: set/get threads on an sdpa plan (%u)", p->name, threads);
    expect_true(attn_plan_set_threads(plan, ATTN_MAX_THREADS + 1) == ATTN_ERR_BAD_THREADS,
                "%s: BAD_THREADS on an sdpa plan", p->name);
    FORWARD_CASE(plan, ATTN_OK, "on 2 own threads", (void)0);
    test_leave("forward errors");
}

static void backward_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const arena a = arena_make(p);
    attn_plan *plan = error_plan(p, p->dtype, ATTN_CAUSAL);
    attn_plan *inference = error_plan(p, p->dtype, ATTN_INFERENCE | ATTN_CAUSAL);
    shared_errors(&a, plan, 1);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "lse NULL", c_.io.lse = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dout NULL", c_.dout = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dQ NULL", c_.dQ = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dK NULL", c_.dK = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dV NULL", c_.dV = NULL);
    BACKWARD_CASE(plan, ATTN_ERR_NULL_POINTER, "dV NULL before PLAN_KIND",
                  c_.plan = projected_plan(p->dtype); c_.dV = NULL);
    /* INFERENCE_PLAN */
    BACKWARD_CASE(inference, ATTN_ERR_INFERENCE_PLAN, "an inference plan", (void)0);
    BACKWARD_CASE(inference, ATTN_ERR_NULL_POINTER, "NULL before INFERENCE_PLAN",
                  c_.io.lse = NULL);
    BACKWARD_CASE(inference, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before INFERENCE_PLAN",
                  c_.via = p->other);
    BACKWARD_CASE(inference, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before ALIASING",
                  c_.dQ = at(&a, S_Q, 0));
    /* attn.h: "as the forward ...; then INFERENCE_PLAN": read as the projected
     * backward has it, right after DTYPE_MISMATCH (before the strides) */
    BACKWARD_CASE(inference, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before BAD_STRIDE",
                  c_.io.ldq = 1);
    BACKWARD_CASE(inference, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before BAD_LENGTH",
                  len_ = (const size_t[]){6, 6});
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dV on key_lengths", c_.dV = (void *)a.lengths);
    /* aliasing of the gradients */
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ == dK", c_.dK = c_.dQ);
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dK starts at dQ's last element",
                  c_.dK = at(&a, S_DQ, N_Q - 1));
    BACKWARD_CASE(plan, ATTN_OK, "dK right after dQ", c_.dK = at(&a, S_DQ, N_Q));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dV on dK's last element",
                  c_.dV = at(&a, S_DK, N_K - 1));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ on dV's last element",
                  c_.dQ = at(&a, S_DV, N_V - 1));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ == Q", c_.dQ = at(&a, S_Q, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dK == K", c_.dK = at(&a, S_K, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dK overlaps K's end", c_.dK = at(&a, S_K, N_K - 1));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dV == V", c_.dV = at(&a, S_V, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ == out", c_.dQ = at(&a, S_OUT, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dK on lse", c_.dK = at(&a, S_LSE, 3));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dV == dout", c_.dV = at(&a, S_DOUT, 0));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ inside the mask", c_.dQ = at(&a, S_MASK, 70));
    BACKWARD_CASE(plan, ATTN_ERR_ALIASING, "dQ (ldq 9) on dK",
                  c_.io.ldq = 9; c_.dK = at(&a, S_DQ, 5 * 9 + 7));
    BACKWARD_CASE(plan, ATTN_OK, "dK right after a strided dQ (ldq 9)",
                  c_.io.ldq = 9; c_.dK = at(&a, S_DQ, 5 * 9 + 8));
    BACKWARD_CASE(plan, ATTN_OK, "dout == Q (inputs may share)", c_.dout = at(&a, S_Q, 0));
    test_leave("backward errors");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_PREC_CASES(forward_errors),
        SDPA_PREC_CASES(backward_errors),
    };
    return cmocka_run_group_tests_name("sdpa call errors", tests, NULL, NULL);
}
