/*
 * test_dropout_kernel: the dropout_mask kernels of lib/kernels/kernels.h
 * (attn_dropout_mask_kernel_f32 and _f64: Philox-4x32-10 a register of
 * counters at a time, dropout_kernel.inc.c), for every kernel set the CPU
 * runs (the others are skipped), against the lane-wise reference of
 * lib/core/dropout.h (attn_dropout_words, one draw at a time here).
 *
 * Exact equality of bits: each factor is 1/(1-p) rounded to the element
 * type or +0, and each x is multiplied by it in place; both outputs (the
 * factors and x) and either alone, over every segment start j0 in 0..9 and
 * length n in 0..100 (vector and batch tails), starts far out (j0 near
 * 2^34: the counter's j / 4 taken modulo 2^32, as the reference does),
 * indices b, h, t past 2^32, p = 0.1, 0.5, 0.9 and three seeds and offsets;
 * NaN and infinite x (a dropped NaN stays NaN, a dropped infinity becomes
 * NaN, as x * 0 does); the element after the segment untouched.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/dropout.h"
#include "support/test_common.h"

#define MAX_N 100

/* the reference draw of key j of row (b, h, t): kept or not */
static int reference_keep(const attn_dropout *d, size_t b, size_t h, size_t t, size_t j)
{
    uint32_t words[4 * ATTN_DROPOUT_LANES];
    attn_dropout_words(d, b, h, t, j / 4, words);
    return words[j % 4] >= d->threshold;
}

/* x[i] for the case: finite values of both signs, with a NaN and
 * infinities among them */
static double input(size_t i)
{
    if (i % 17 == 3)
        return (double)NAN;
    if (i % 23 == 5)
        return i % 2 ? HUGE_VAL : -HUGE_VAL;
    return ((double)(i % 13) - 6.25) / 3.0;
}

/* Both precisions through one double-typed path: the kernel's output
 * converted back; float products are exact in double, so each expected x
 * is (double)(float)x * (double)(float)factor rounded to float. */
static void check_segment(const isa_case *c, const attn_dropout *d, size_t b, size_t h, size_t t,
                          size_t j0, size_t n, int with_x, int with_factors)
{
    const int single = c->prec->size == sizeof(float);
    float xf[MAX_N + 1], ff[MAX_N + 1];
    double xd[MAX_N + 1], fd[MAX_N + 1];
    for (size_t i = 0; i <= n; i++) {
        xd[i] = input(i);
        xf[i] = (float)xd[i];
        fd[i] = -7.0; /* sentinels */
        ff[i] = -7.0f;
    }
    if (single)
        attn_dropout_mask_kernel_f32(c->isa)(d, b, h, t, j0, n, with_x ? xf : NULL,
                                             with_factors ? ff : NULL);
    else
        attn_dropout_mask_kernel_f64(c->isa)(d, b, h, t, j0, n, with_x ? xd : NULL,
                                             with_factors ? fd : NULL);
    const float keep_f = (float)d->keep_scale;
    for (size_t i = 0; i < n; i++) {
        const int kept = reference_keep(d, b, h, t, j0 + i);
        if (single) {
            const float want_f = kept ? keep_f : 0.0f;
            const float want_x = (float)input(i) * want_f;
            if (with_factors)
                assert_memory_equal(&ff[i], &want_f, sizeof want_f);
            if (with_x && !(isnan(want_x) && isnan(xf[i])))
                assert_memory_equal(&xf[i], &want_x, sizeof want_x);
            assert_true(!with_x || isnan(want_x) == isnan(xf[i]));
        } else {
            const double want_f = kept ? d->keep_scale : 0.0;
            const double want_x = input(i) * want_f;
            if (with_factors)
                assert_memory_equal(&fd[i], &want_f, sizeof want_f);
            if (with_x && !(isnan(want_x) && isnan(xd[i])))
                assert_memory_equal(&xd[i], &want_x, sizeof want_x);
            assert_true(!with_x || isnan(want_x) == isnan(xd[i]));
        }
    }
    /* past the segment: untouched */
    if (single) {
        assert_true(ff[n] == -7.0f);
        assert_memory_equal(&xf[n], &(float){(float)input(n)}, sizeof(float));
    } else {
        assert_true(fd[n] == -7.0);
        if (!isnan(input(n)))
            assert_true(xd[n] == input(n));
    }
}

static void segments(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const double ps[] = {0.1, 0.5, 0.9};
    const uint64_t seeds[] = {0, 42, 0x9E3779B97F4A7C15ull};
    const uint64_t offsets[] = {0, 7, 1ull << 40};
    for (size_t k = 0; k < 3; k++) {
        const attn_dropout d = attn_dropout_make(ps[k], seeds[k], offsets[(k + 1) % 3]);
        for (size_t j0 = 0; j0 < 10; j0++)
            for (size_t n = 0; n <= MAX_N; n++)
                check_segment(c, &d, k, 2 * k + 1, 3 * n + j0, j0, n, 1, 1);
        for (size_t n = 0; n <= MAX_N; n += 7) {
            check_segment(c, &d, 1, 2, 3, 5, n, 1, 0);
            check_segment(c, &d, 1, 2, 3, 5, n, 0, 1);
        }
    }
}

static void far_indices(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const attn_dropout d = attn_dropout_make(0.5, 1234, 5678);
    const size_t far = (size_t)1 << 34; /* j / 4 = 2^32: counter word 0 wraps */
    for (size_t n = 1; n <= MAX_N; n += 9) {
        check_segment(c, &d, 0, 0, 0, far - 37, n, 1, 1);
        check_segment(c, &d, 0, 0, 0, far + 3, n, 1, 1);
    }
    check_segment(c, &d, far + 1, far + 2, far + 3, 11, MAX_N, 1, 1);
}

int main(void)
{
    if (isa_variant_skipped(1))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        ISA_CASES(segments),
        ISA_CASES(far_indices),
    };
    return cmocka_run_group_tests_name("dropout draw kernels", tests, NULL, NULL);
}
