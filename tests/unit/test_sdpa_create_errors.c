/*
 * test_sdpa_create_errors: every status of attn_sdpa_plan_create and of the
 * one-shots attn_sdpa_* case by case and in the header's order where two
 * coincide, in both precisions: *plan untouched by a failing create, every
 * buffer of a failing one-shot unchanged (support/sdpa_error_arena.h).
 * Shapes whose products wrap around size_t are SIZE_OVERFLOW, and an
 * invalid shape is refused at once; these cases, placed last, are ones that
 * crashed or hung the library when they were written.
 * The sdpa suites: test_sdpa (the cases on every engine, the decode split),
 * test_sdpa_gradients (finite differences), test_sdpa_extremes (NaN, +inf
 * and huge scores), test_sdpa_call_errors and test_sdpa_create_errors
 * (every status), test_sdpa_one_shots (one-shots and defaults, bit for
 * bit); test_sdpa_layouts and test_sdpa_strides (batch and head strides).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/sdpa_error_arena.h"
#include "support/test_common.h"

/* ---- attn_sdpa_plan_create -------------------------------------------------------------- */

typedef struct create_call {
    int null_plan, null_shape;
    attn_dtype dtype;
    attn_sdpa_shape s;
    double scale;
    unsigned flags;
    size_t window;
} create_call;

static void expect_create(const test_prec *p, create_call c, attn_status want, const char *what)
{
    attn_plan *const untouched = (attn_plan *)&c; /* any address: it must stay */
    attn_plan *plan = untouched;
    const attn_status st = attn_sdpa_plan_create(c.null_plan ? NULL : &plan, c.dtype,
                                                 c.null_shape ? NULL : &c.s, c.scale, c.flags,
                                                 c.window);
    if (st == ATTN_OK && plan != untouched)
        attn_plan_destroy(plan);
    expect_true(st == want, "%s attn_sdpa_plan_create, %s: got %s (%d), want %s (%d)", p->name,
                what, attn_status_string(st), (int)st, attn_status_string(want), (int)want);
    if (want != ATTN_OK)
        expect_true(plan == untouched, "%s attn_sdpa_plan_create, %s: *plan was written",
                    p->name, what);
}

#define CREATE_CASE(want, what, ...)                                                         \
    do {                                                                                     \
        create_call c_ = {0, 0, p->dtype, {2, 4, 2, 3, 5, 2, 3}, 0.0, ATTN_CAUSAL, 0};       \
        __VA_ARGS__;                                                                         \
        expect_create(p, c_, want, what);                                                    \
    } while (0)

static void create_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const size_t big = (size_t)INT_MAX + 1;
    CREATE_CASE(ATTN_OK, "valid", (void)0);
    CREATE_CASE(ATTN_OK, "flags 0", c_.flags = 0);
    CREATE_CASE(ATTN_OK, "ATTN_INFERENCE", c_.flags = ATTN_INFERENCE);
    CREATE_CASE(ATTN_OK, "causal, inference, window 2", c_.flags = ATTN_CAUSAL | ATTN_INFERENCE;
                c_.window = 2);
    CREATE_CASE(ATTN_OK, "window SIZE_MAX", c_.window = SIZE_MAX);
    CREATE_CASE(ATTN_OK, "hs_v 0 (hs)", c_.s.hs_v = 0);
    CREATE_CASE(ATTN_OK, "MQA", c_.s.NH_kv = 1);
    CREATE_CASE(ATTN_OK, "MHA", c_.s.NH_kv = 4);
    CREATE_CASE(ATTN_OK, "Tq > Tk", c_.s.Tq = 9);
    CREATE_CASE(ATTN_ERR_NULL_POINTER, "plan NULL", c_.null_plan = 1);
    CREATE_CASE(ATTN_ERR_NULL_POINTER, "shape NULL", c_.null_shape = 1);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "dtype 0", c_.dtype = (attn_dtype)0);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "dtype 5", c_.dtype = (attn_dtype)5);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "ATTN_MATERIALIZED", c_.flags = ATTN_MATERIALIZED);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "ATTN_TILED", c_.flags = ATTN_TILED | ATTN_INFERENCE);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "flag bit 4", c_.flags = 1u << 4);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "flag bit 31 with known ones",
                c_.flags = ATTN_CAUSAL | ATTN_INFERENCE | (1u << 31));
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "every bit", c_.flags = ~0u);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "B 0", c_.s.B = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "NH 0", c_.s.NH = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "NH_kv 0 (no division by zero)", c_.s.NH_kv = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "Tq 0", c_.s.Tq = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "Tk 0", c_.s.Tk = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "hs 0", c_.s.hs = 0);
    CREATE_CASE(ATTN_ERR_BAD_SHAPE, "NH 4, NH_kv 3", c_.s.NH_kv = 3);
    CREATE_CASE(ATTN_ERR_BAD_SHAPE, "NH_kv > NH", c_.s.NH = 2; c_.s.NH_kv = 4);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "B*NH*Tq", c_.s.B = (size_t)1 << 62; c_.s.NH = 16;
                c_.s.NH_kv = 1);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "Q (B*Tq*NH*hs)", c_.s.B = 1; c_.s.Tq = (size_t)1 << 40;
                c_.s.hs = (size_t)1 << 30);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "K (B*Tk*NH_kv*hs)", c_.s.B = 1;
                c_.s.Tk = (size_t)1 << 40; c_.s.hs = (size_t)1 << 30);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "V (hs_v)", c_.s.hs_v = SIZE_MAX / 2);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "hs > INT_MAX", c_.s.B = 1; c_.s.NH = 1; c_.s.NH_kv = 1;
                c_.s.Tq = 1; c_.s.Tk = 1; c_.s.hs = big; c_.s.hs_v = 1);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "hs_v > INT_MAX", c_.s.B = 1; c_.s.NH = 1; c_.s.NH_kv = 1;
                c_.s.Tq = 1; c_.s.Tk = 1; c_.s.hs = 1; c_.s.hs_v = big);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale NaN", c_.scale = (double)NAN);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale +inf", c_.scale = HUGE_VAL);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale -inf", c_.scale = -HUGE_VAL);
    CREATE_CASE(ATTN_ERR_BAD_SCALE, "scale just above the largest finite",
                c_.scale = nextafter(p->max, HUGE_VAL));
    CREATE_CASE(ATTN_OK, "scale = the largest finite", c_.scale = p->max);
    CREATE_CASE(ATTN_OK, "scale -1 (default)", c_.scale = -1.0);
    CREATE_CASE(ATTN_OK, "scale DBL_MIN", c_.scale = DBL_MIN);
    /* the order */
    CREATE_CASE(ATTN_ERR_NULL_POINTER, "NULL before BAD_DTYPE", c_.null_shape = 1;
                c_.dtype = (attn_dtype)0);
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "BAD_DTYPE before BAD_FLAGS", c_.dtype = (attn_dtype)7;
                c_.flags = ~0u);
    CREATE_CASE(ATTN_ERR_BAD_FLAGS, "BAD_FLAGS before ZERO_DIMENSION", c_.flags = ATTN_TILED;
                c_.s.B = 0);
    CREATE_CASE(ATTN_ERR_ZERO_DIMENSION, "ZERO_DIMENSION before BAD_SHAPE", c_.s.Tk = 0;
                c_.s.NH_kv = 3);
    CREATE_CASE(ATTN_ERR_BAD_SHAPE, "BAD_SHAPE before SIZE_OVERFLOW", c_.s.NH_kv = 3;
                c_.s.B = (size_t)1 << 62);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "SIZE_OVERFLOW before BAD_SCALE",
                c_.s.B = (size_t)1 << 62; c_.scale = (double)NAN);
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "BLAS_RANGE before BAD_SCALE", c_.s.B = 1; c_.s.NH = 1;
                c_.s.NH_kv = 1; c_.s.Tq = 1; c_.s.Tk = 1; c_.s.hs = big; c_.s.hs_v = 1;
                c_.scale = (double)NAN);
    test_leave("attn_sdpa_plan_create errors");
}

/* Shapes whose products wrap around size_t to small values or 0 (B*NH_kv =
 * 2^64, B*NH_kv*query blocks = 2^64): SIZE_OVERFLOW, not a division by
 * the wrapped count. */
static void create_wrapping_products(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "B 2^62, NH = NH_kv = 4 (B*NH_kv wraps to 0)",
                c_.s.B = (size_t)1 << 62; c_.s.NH = 4; c_.s.NH_kv = 4; c_.s.Tq = 1;
                c_.s.Tk = 1; c_.s.hs = 1; c_.s.hs_v = 0);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "B 2^40, Tq 2^31 (items wrap to 0)",
                c_.s.B = (size_t)1 << 40; c_.s.NH = 1; c_.s.NH_kv = 1;
                c_.s.Tq = (size_t)1 << 31; c_.s.Tk = 1; c_.s.hs = 1; c_.s.hs_v = 0);
    CREATE_CASE(ATTN_ERR_SIZE_OVERFLOW, "B 2^63 + 1, NH = NH_kv = 2 (B*NH_kv wraps to 2)",
                c_.s.B = ((size_t)1 << 63) + 1; c_.s.NH = 2; c_.s.NH_kv = 2; c_.s.Tq = 1;
                c_.s.Tk = 1; c_.s.hs = 1; c_.s.hs_v = 0);
    /* an invalid shape is refused at once: no work proportional to NH / NH_kv
     * (validation takes microseconds; 0.5 s leaves room for any slow build) */
    const clock_t start = clock();
    CREATE_CASE(ATTN_ERR_BLAS_RANGE, "NH 2^30, NH_kv 1, hs 2 (NH*hs > INT_MAX)", c_.s.B = 1;
                c_.s.NH = (size_t)1 << 30; c_.s.NH_kv = 1; c_.s.Tq = 3; c_.s.Tk = 4; c_.s.hs = 2;
                c_.s.hs_v = 0);
    const double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    expect_true(seconds < 0.5, "%s: attn_sdpa_plan_create of NH 2^30 took %.1f s", p->name,
                seconds);
    test_leave("attn_sdpa_plan_create with wrapping products");
}

/* ---- attn_sdpa_* one-shot errors -------------------------------------------------------- */

static void one_shot_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const arena a = arena_make(p);
    struct {
        const char *what;
        attn_status want;
        int null_shape, null_args;
        attn_sdpa_shape s;
        double scale;
        unsigned flags;
        size_t window;
        int change; /* 1 Q NULL, 2 ldk bad, 3 length Tk + 1, 4 out == K, 5 lse == out */
    } cases[] = {
        {"valid", ATTN_OK, 0, 0, error_shape, 0.0, ATTN_CAUSAL, 0, 0},
        {"valid, window 2, lse given", ATTN_OK, 0, 0, error_shape, 0.0, 0, 2, 0},
        {"shape NULL", ATTN_ERR_NULL_POINTER, 1, 0, error_shape, 0.0, 0, 0, 0},
        {"args NULL", ATTN_ERR_NULL_POINTER, 0, 1, error_shape, 0.0, 0, 0, 0},
        {"Q NULL", ATTN_ERR_NULL_POINTER, 0, 0, error_shape, 0.0, 0, 0, 1},
        {"unknown flag", ATTN_ERR_BAD_FLAGS, 0, 0, error_shape, 0.0, 1u << 9, 0, 0},
        {"ATTN_MATERIALIZED", ATTN_ERR_BAD_FLAGS, 0, 0, error_shape, 0.0, ATTN_MATERIALIZED, 0, 0},
        {"Tk 0", ATTN_ERR_ZERO_DIMENSION, 0, 0, {2, 4, 2, 3, 0, 2, 3}, 0.0, 0, 0, 0},
        {"NH_kv 3", ATTN_ERR_BAD_SHAPE, 0, 0, {2, 4, 3, 3, 5, 2, 3}, 0.0, 0, 0, 0},
        {"scale NaN", ATTN_ERR_BAD_SCALE, 0, 0, error_shape, (double)NAN, 0, 0, 0},
        {"ldk < NH_kv*hs", ATTN_ERR_BAD_STRIDE, 0, 0, error_shape, 0.0, 0, 0, 2},
        {"a length Tk + 1", ATTN_ERR_BAD_LENGTH, 0, 0, error_shape, 0.0, 0, 0, 3},
        {"out == K", ATTN_ERR_ALIASING, 0, 0, error_shape, 0.0, 0, 0, 4},
        {"lse == out", ATTN_ERR_ALIASING, 0, 0, error_shape, 0.0, 0, 0, 5},
        {"BAD_SCALE before BAD_STRIDE", ATTN_ERR_BAD_SCALE, 0, 0, error_shape, HUGE_VAL, 0, 0,
         2},
        {"BAD_SHAPE before ALIASING", ATTN_ERR_BAD_SHAPE, 0, 0, {2, 4, 3, 3, 5, 2, 3}, 0.0, 0, 0,
         4},
    };
    for (size_t i = 0; i < N_OF(cases); i++) {
        err_call c = err_default(&a, NULL);
        size_t lengths[2] = {valid_lengths[0], valid_lengths[1]};
        switch (cases[i].change) {
        case 1:
            c.io.Q = NULL;
            break;
        case 2:
            c.io.ldk = 1;
            break;
        case 3:
            lengths[1] = E_TK + 1;
            break;
        case 4:
            c.io.out = at(&a, S_K, 0);
            break;
        case 5:
            c.io.lse = c.io.out;
            break;
        default:
            break;
        }
        sentinel_fill(a.base, a.bytes);
        a.lengths[0] = lengths[0];
        a.lengths[1] = lengths[1];
        const attn_status st =
            sdpa_one_shot(p, cases[i].null_shape ? NULL : &cases[i].s, cases[i].scale,
                          cases[i].flags, cases[i].window, cases[i].null_args ? NULL : &c.io);
        expect_true(st == cases[i].want, "%s attn_sdpa one-shot, %s: got %s, want %s", p->name,
                    cases[i].what, attn_status_string(st), attn_status_string(cases[i].want));
        if (cases[i].want != ATTN_OK)
            expect_true(sentinel_intact(a.base, a.bytes) && a.lengths[0] == lengths[0] &&
                            a.lengths[1] == lengths[1],
                        "%s attn_sdpa one-shot, %s: a buffer was modified", p->name,
                        cases[i].what);
    }
    /* the other precision's one-shot is the other precision's plan: no mismatch exists */
    test_leave("one-shot errors");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_PREC_CASES(create_errors),
        SDPA_PREC_CASES(one_shot_errors),
        /* last: cases that crashed the library when written */
        SDPA_PREC_CASES(create_wrapping_products),
    };
    return cmocka_run_group_tests_name("sdpa create errors", tests, NULL, NULL);
}
