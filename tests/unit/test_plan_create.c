/*
 * test_plan_create: the plan life cycle.
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
 *   - attn_plan_create: NULL plan pointer, BAD_DTYPE, BAD_FLAGS (unknown
 *     bits, ATTN_MATERIALIZED with ATTN_TILED), ZERO_DIMENSION for each
 *     dimension, SIZE_OVERFLOW for each array, for the workspace alone and
 *     for the own threads' packed weights alone (before any allocation),
 *     BLAS_RANGE, BAD_SCALE (NaN, +-inf, beyond the precision's largest
 *     value), the documented order where two coincide, OUT_OF_MEMORY at each
 *     of its allocations (alone and with all later ones failing); *plan is
 *     untouched on every error and nothing stays allocated.
 *     (OUT_OF_MEMORY: test_plan_allocations)
 *   - a custom scale (> 0) replaces 1/sqrt(hs) (against the reference with
 *     that scale, and measurably different from the default), scale <= 0 is
 *     the default to the bit, as is an explicit 1/sqrt(hs);
 *   - attn_plan_destroy(NULL) does nothing.
 * Tolerances: out and weights p->tol, gradients mha_grad_tol (mha.h).
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

/* ---- attn_plan_create ---------------------------------------------------- */

typedef struct create_call {
    int null_plan;
    attn_dtype dtype;
    size_t B, T, C, NH, hs;
    double scale;
    unsigned flags;
} create_call;

static void expect_create(create_call c, attn_status want, const char *what)
{
    attn_plan *const untouched = (attn_plan *)&c; /* any address: it must stay */
    attn_plan *plan = untouched;
    const long live = alloc_fail_live();
    attn_status st = attn_plan_create(c.null_plan ? NULL : &plan, c.dtype, c.B, c.T, c.C, c.NH,
                                      c.hs, c.scale, c.flags);
    if (st == ATTN_OK && plan != untouched)
        attn_plan_destroy(plan);
    check_true(st == want, "create (dtype %d), %s: got %s, want %s", (int)c.dtype, what,
               attn_status_string(st), attn_status_string(want));
    if (want == ATTN_OK)
        return;
    check_true(plan == untouched, "create, %s: *plan was written", what);
    check_true(alloc_fail_live() == live, "create, %s: memory left allocated", what);
}

/* valid: the plan shape, causal */
#define CREATE_CASE(want, what, ...)                                          \
    do {                                                                      \
        create_call c_ = {0, p->dtype, 2, 3, 4, 2, 3, 0.0, ATTN_CAUSAL};      \
        __VA_ARGS__;                                                          \
        expect_create(c_, want, what);                                        \
    } while (0)

static void create_flags_and_zeros(void **state)
{
    const test_prec *p = TEST_PREC(state);
    CREATE_CASE(ATTN_OK, "valid", (void)0);
    CREATE_CASE(ATTN_ERR_NULL_POINTER, "plan NULL", c_.null_plan = 1);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "dtype 0", c_.dtype = (attn_dtype)0);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "ATTN_BF16 (sdpa plans only)", c_.dtype = ATTN_BF16);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "ATTN_F16 (sdpa plans only)", c_.dtype = ATTN_F16);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "dtype 255", c_.dtype = (attn_dtype)255);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "flag bit 4", c_.flags = 1u << 4);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "flag bit 31 with known ones",
                c_.flags = ATTN_CAUSAL | ATTN_INFERENCE | (1u << 31));
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "every bit", c_.flags = ~0u);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "MATERIALIZED | TILED",
                c_.flags = ATTN_MATERIALIZED | ATTN_TILED);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "INFERENCE | MATERIALIZED | TILED",
                c_.flags = ATTN_INFERENCE | ATTN_MATERIALIZED | ATTN_TILED);
    CREATE_CASE(ATTN_OK, "MATERIALIZED without INFERENCE", c_.flags = ATTN_MATERIALIZED);
    CREATE_CASE(ATTN_OK, "every known flag but one path",
                c_.flags = ATTN_CAUSAL | ATTN_INFERENCE | ATTN_TILED);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "B 0", c_.B = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "T 0", c_.T = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "C 0", c_.C = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "NH 0", c_.NH = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "hs 0", c_.hs = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "T 0, inference, tiled", c_.T = 0;
                c_.flags = ATTN_INFERENCE | ATTN_TILED);
    /* order: NULL, dtype, flags, zero */
    CREATE_CASE(ATTN_ERR_NULL_POINTER, "NULL before dtype", c_.null_plan = 1;
                c_.dtype = (attn_dtype)0);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "dtype before flags", c_.dtype = (attn_dtype)0;
                c_.flags = ~0u);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "flags before zero", c_.flags = ~0u; c_.B = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "zero before overflow", c_.hs = 0;
                c_.T = (size_t)1 << 33);
}

static void create_sizes_and_scale(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const size_t big = (size_t)1 << 31; /* INT_MAX + 1 */
    /* byte counts: (elements fitting size_t) * element size overflowing */
    const size_t elems_max = SIZE_MAX / p->size;
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "D = NH*hs", c_.NH = (size_t)1 << 33;
                c_.hs = (size_t)1 << 33);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "X (B*T*C)", c_.B = (size_t)1 << 32; c_.T = 1;
                c_.C = (size_t)1 << 32; c_.NH = 1; c_.hs = 1);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "W (C*D)", c_.B = 1; c_.T = 1; c_.C = (size_t)1 << 40;
                c_.NH = 1; c_.hs = (size_t)1 << 30);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "Q (B*T*D)", c_.B = (size_t)1 << 40; c_.T = 1; c_.C = 1;
                c_.NH = 1; c_.hs = (size_t)1 << 30);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "T*T", c_.B = 1; c_.T = (size_t)1 << 33; c_.C = 1;
                c_.NH = 1; c_.hs = 1);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "weights (B*NH*T*T)", c_.B = (size_t)1 << 20;
                c_.T = (size_t)1 << 22; c_.C = 1; c_.NH = 1; c_.hs = 1);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "weights (B*NH*T*T), inference plan",
                c_.B = (size_t)1 << 20; c_.T = (size_t)1 << 22; c_.C = 1; c_.NH = 1; c_.hs = 1;
                c_.flags = ATTN_INFERENCE);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "byte count of Q", c_.B = elems_max + 1; c_.T = 1;
                c_.C = 1; c_.NH = 1; c_.hs = 1);
    /* each array fits (X: 2^62 bytes), the four (B,T,D) buffers together do not */
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "workspace total only",
                c_.B = ((size_t)1 << 62) / p->size; c_.T = 1; c_.C = 1; c_.NH = 1; c_.hs = 1;
                c_.flags = ATTN_INFERENCE);
    /* C = hs = INT_MAX, in the BLAS range: in f32 every array fits (W: 2^64 -
     * 2^34 bytes), but the own threads' 4 slots of packed weights, 4 C (D +
     * 64) elements, do not: SIZE_OVERFLOW from the creation, before any
     * allocation (in f64 W itself overflows) */
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "packed weights of the own threads only",
                c_.B = 1; c_.T = 1; c_.C = INT_MAX; c_.NH = 1; c_.hs = INT_MAX;
                c_.flags = ATTN_INFERENCE);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "B*T > INT_MAX", c_.B = (size_t)1 << 16;
                c_.T = (size_t)1 << 16; c_.C = 1; c_.NH = 1; c_.hs = 1);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "B > INT_MAX", c_.B = big; c_.T = 1; c_.C = 1; c_.NH = 1;
                c_.hs = 1);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "C > INT_MAX", c_.B = 1; c_.T = 1; c_.C = big; c_.NH = 1;
                c_.hs = 1);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "hs > INT_MAX", c_.B = 1; c_.T = 1; c_.C = 1; c_.NH = 1;
                c_.hs = big);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "NH > INT_MAX", c_.B = 1; c_.T = 1; c_.C = 1; c_.NH = big;
                c_.hs = 1);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "NH*hs > INT_MAX, each in range", c_.B = 1; c_.T = 1;
                c_.C = 1; c_.NH = (size_t)1 << 16; c_.hs = (size_t)1 << 16);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale NaN", c_.scale = ((double)NAN));
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale +inf", c_.scale = HUGE_VAL);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale -inf", c_.scale = -HUGE_VAL);
    /* f32: any double above FLT_MAX; f64: +inf */
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale just above the largest finite",
                c_.scale = nextafter(p->max, HUGE_VAL));
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale 2 * largest finite", c_.scale = 2.0 * p->max);
    CREATE_CASE(ATTN_OK, "scale = largest finite", c_.scale = p->max);
    CREATE_CASE(ATTN_OK, "scale -1 (default)", c_.scale = -1.0);
    CREATE_CASE(ATTN_OK, "scale -DBL_MAX (default)", c_.scale = -DBL_MAX);
    CREATE_CASE(ATTN_OK, "scale DBL_MIN", c_.scale = DBL_MIN);
    /* order: overflow, range, scale */
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "overflow before range", c_.B = big; c_.T = big;
                c_.C = big; c_.NH = 1; c_.hs = 1);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "range before scale", c_.B = 1; c_.T = 1; c_.C = big;
                c_.NH = 1; c_.hs = 1; c_.scale = ((double)NAN));
}

/* ---- scale ---------------------------------------------------------------- */

static void custom_scale(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 503);
    for (int causal = 0; causal <= 1; causal++) {
        mha_shape s = {2, 6, 5, 3, 2, 0.37, causal, 1};
        mha_data d = mha_random(p, &rng, s, MHA_W_GAIN);
        mha_typed t = mha_typed_copy(p, &d);
        attn_plan *plan = mha_plan(p, &s, 0u);
        void *out = mha_plan_forward(p, plan, &s, &t, NULL);
        mha_check_forward(p, &d, out, NULL, "scale 0.37");
        mha_grads g = mha_plan_backward(p, plan, &s, &t);
        mha_grads got = mha_grads_doubles(p, &s, &g), ref = mha_reference_grads(&d);
        mha_grads_residual(&s, &got, &ref, mha_grad_tol(p), "scale 0.37");

        /* the default 1/sqrt(2) = 0.71 gives other results: the check above can fail */
        const size_t n = mha_out_elems(&s);
        double *ref_default = talloc_doubles(n);
        ref_mha(s.B, s.T, s.C, s.NH, s.hs, 0.0, causal, d.X, d.Wq, d.Wk, d.Wv, d.Wo,
                ref_default, NULL);
        const double r = residual_scaled(prec_doubles(p, out, n), ref_default, n,
                                         max_abs(ref_default, n));
        check_true(r > 1e-3, "scale 0.37 and the default agree to %.1e", r);

        /* scale <= 0 and an explicit 1/sqrt(hs) are the default, to the bit */
        mha_shape by_default = s;
        by_default.scale = 0.0;
        void *want = mha_plan_forward(p, mha_plan(p, &by_default, 0u), &s, &t, NULL);
        const double same[] = {-2.5, -0.0, 1.0 / sqrt((double)s.hs)};
        for (size_t i = 0; i < 3; i++) {
            mha_shape other = s;
            other.scale = same[i];
            void *got_out = mha_plan_forward(p, mha_plan(p, &other, 0u), &s, &t, NULL);
            check_true(memcmp(got_out, want, n * p->size) == 0,
                       "scale %g is not the default", same[i]);
        }
    }
}

static void destroy_null(void **state)
{
    (void)state;
    attn_plan_destroy(NULL);
    /* create and destroy, many times: no state survives a plan */
    for (int i = 0; i < 100; i++) {
        attn_plan *plan = NULL;
        assert_int_equal(attn_plan_create(&plan, i % 2 ? ATTN_F32 : ATTN_F64, 1, 2, 3, 1, 2, 0.0,
                                          (unsigned)i & (ATTN_CAUSAL | ATTN_INFERENCE)),
                         ATTN_OK);
        assert_non_null(plan);
        attn_plan_destroy(plan);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MHA_PREC_CASES(create_flags_and_zeros),
        MHA_PREC_CASES(create_sizes_and_scale),
        MHA_PREC_CASES(custom_scale),
        MHA_CASE("destroy_null", destroy_null, NULL),
    };
    return cmocka_run_group_tests_name("plans: creation", tests, NULL, NULL);
}
