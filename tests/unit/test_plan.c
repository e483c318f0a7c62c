/*
 * test_plan: the plan life cycle and the error contract of attn_plan_create,
 * attn_forward_*, attn_backward_* and the multi-head one-shots, case by
 * case, in both precisions.
 *   - attn_plan_create: NULL plan pointer, BAD_DTYPE, BAD_FLAGS (unknown
 *     bits, ATTN_MATERIALIZED with ATTN_TILED), ZERO_DIMENSION for each
 *     dimension, SIZE_OVERFLOW for each array, for the workspace alone and
 *     for the own threads' packed weights alone (before any allocation),
 *     BLAS_RANGE, BAD_SCALE (NaN, +-inf, beyond the precision's largest
 *     value), the documented order where two coincide, OUT_OF_MEMORY at each
 *     of its allocations (alone and with all later ones failing); *plan is
 *     untouched on every error and nothing stays allocated.
 *   - attn_forward_*: NULL for each pointer, DTYPE_MISMATCH both ways
 *     (each precision's test calls the other precision's function),
 *     ALIASING for each output against each input and the other output,
 *     including overlaps that exist only because out is (B,T,C) with Wo and
 *     (B,T,D) without; the order NULL, DTYPE_MISMATCH, ALIASING.
 *   - attn_backward_*: NULL for each pointer (dWo only with Wo),
 *     DTYPE_MISMATCH, INFERENCE_PLAN, NO_FORWARD (before any forward, and
 *     after a forward that failed validation), FORWARD_MISMATCH both ways
 *     for Wo's presence and for each of X, Wq, Wk, Wv, Wo not being the
 *     forward's array (moved by one element, swapped),
 *     ALIASING for each gradient against each input and each other gradient
 *     (dWo ignored without Wo); the documented order.
 *   - attn_mha_forward_* / attn_mha_backward_*: NULL, ZERO_DIMENSION,
 *     BAD_SHAPE, SIZE_OVERFLOW, BLAS_RANGE, ALIASING, the order, and
 *     OUT_OF_MEMORY at each of their allocations.
 *   - after every failing call, every byte of every buffer is as it was: all
 *     buffers of an error call live in one sentinel-filled arena compared
 *     byte for byte afterwards;
 *   - a failed call leaves the plan usable, and a failed forward does not
 *     replace the state kept by the last successful one;
 *   - executing a plan allocates nothing: the allocator is wrapped at link
 *     time (alloc_fail.c, alloc_free.c; the static library's calls go
 *     through the wrappers, OpenBLAS's own, in its shared library, do not)
 *     and no allocation is attempted during any forward or backward, on
 *     every kind of plan; creating one does allocate (the counter works);
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
#include "reference/mha.h"
#include "support/test_common.h"

/* Every buffer of an error call is a slot of one arena. */
enum slot_id {
    S_X, S_WQ, S_WK, S_WV, S_WO, S_OUT, S_WEIGHTS, S_DOUT,
    S_DX, S_DWQ, S_DWK, S_DWV, S_DWO, SLOTS
};
#define SLOT_ELEMENTS 64

/* The plan shape of the error calls: D = NH*hs = 6 differs from C = 4, so
 * (B,T,C) arrays (24 elements) and (B,T,D) arrays (36) differ in size. */
static const mha_shape plan_shape = {2, 3, 4, 2, 3, 0.0, 1, 1};
enum { N_BTC = 24, N_BTD = 36, N_W = 24, N_WEIGHTS = 36 };

typedef struct arena {
    const test_prec *p;
    unsigned char *base;
    size_t bytes;
} arena;

static arena arena_make(const test_prec *p)
{
    arena a = {p, NULL, SLOTS * SLOT_ELEMENTS * p->size};
    a.base = talloc(a.bytes);
    memset(a.base, 0, a.bytes);
    return a;
}

/* element `offset` of slot `id` */
static void *at(const arena *a, int id, size_t offset)
{
    return a->base + ((size_t)id * SLOT_ELEMENTS + offset) * a->p->size;
}

static void expect(const arena *a, attn_status got, attn_status want, const char *fn,
                   const char *what)
{
    check_true(got == want, "%s %s, %s: got %s (%d), want %s (%d)", a->p->name, fn, what,
               attn_status_string(got), (int)got, attn_status_string(want), (int)want);
    if (want != ATTN_OK)
        check_true(sentinel_intact(a->base, a->bytes), "%s %s, %s: a buffer was modified",
                   a->p->name, fn, what);
}

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
    CREATE_CASE(ATTN_ERR_BAD_DTYPE, "dtype 3", c_.dtype = (attn_dtype)3);
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

/* ---- attn_forward ------------------------------------------------------- */

typedef struct forward_call {
    const test_prec *via; /* whose attn_forward is called */
    attn_plan *plan;
    void *X, *Wq, *Wk, *Wv, *Wo, *out, *weights;
} forward_call;

/* the pointer arguments of a forward by position, and their names */
static const char *const forward_args[] = {"X", "Wq", "Wk", "Wv", "Wo", "out", "weights"};
static void **forward_arg(forward_call *c, size_t i)
{
    void **args[] = {&c->X, &c->Wq, &c->Wk, &c->Wv, &c->Wo, &c->out, &c->weights};
    return args[i];
}

static forward_call forward_default(const arena *a, attn_plan *plan)
{
    forward_call c = {a->p,           plan,           at(a, S_X, 0),   at(a, S_WQ, 0),
                      at(a, S_WK, 0), at(a, S_WV, 0), at(a, S_WO, 0),  at(a, S_OUT, 0),
                      at(a, S_WEIGHTS, 0)};
    return c;
}

static attn_status forward_run(forward_call c)
{
    return c.via->forward(c.plan, c.X, c.Wq, c.Wk, c.Wv, c.Wo, c.out, c.weights);
}

/* One error call on plan_ in arena `a`: the default call of `type` (made
 * by make), changed by the statements after `what`, run on a sentinel-
 * filled arena by run, its status and the arena checked by expect. */
#define ARENA_CASE(type, make, run, fn, plan_, want, what, ...) \
    do {                                                        \
        type c_ = make(&a, plan_);                              \
        __VA_ARGS__;                                            \
        sentinel_fill(a.base, a.bytes);                         \
        expect(&a, run(c_), want, fn, what);                    \
    } while (0)
#define FORWARD_CASE(...) \
    ARENA_CASE(forward_call, forward_default, forward_run, "forward", __VA_ARGS__)

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
        MHA_PREC_CASES(out_of_memory),
        MHA_PREC_CASES(forward_errors),
        MHA_PREC_CASES(backward_errors),
        MHA_PREC_CASES(backward_states),
        MHA_PREC_CASES(one_shot_errors),
        MHA_PREC_CASES(execution_allocates_nothing),
        MHA_PREC_CASES(custom_scale),
        MHA_CASE("destroy_null", destroy_null, NULL),
    };
    return cmocka_run_group_tests_name("plans and their errors", tests, NULL, NULL);
}
