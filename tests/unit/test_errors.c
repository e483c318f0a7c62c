/*
 * test_errors: the error contract of every public function, case by case,
 * in both precisions: each status the function documents (NULL_POINTER for
 * each pointer argument, ZERO_DIMENSION for each dimension, SIZE_OVERFLOW for
 * each array's element count and for byte counts, BLAS_RANGE for each
 * dimension handed to BLAS, BAD_STRIDE, BAD_SCALE, ALIASING for each
 * output/input pair and partial overlaps, OUT_OF_MEMORY at every allocation
 * the call makes, injected through alloc_fail.c), the documented
 * order of the checks where two failures coincide, and -- after every
 * failing call -- that no byte of any buffer changed.
 *
 * Every pointer an error call receives points into one sentinel-filled arena
 * of small slots, including the calls with huge dimensions: the library must
 * reject those before touching memory, and the arena is compared byte for
 * byte afterwards (a stray write elsewhere is caught by ASan/valgrind).
 * Touching-but-not-overlapping buffers and aliased *inputs* are not errors:
 * those calls must succeed and compute the right answer (tolerance as in
 * precision.h).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "support/alloc_fail.h"
#include "support/inputs.h"
#include "support/test_common.h"

#define SLOT_ELEMENTS 256
#define SLOTS 8
#define BIG ((size_t)1 << 31) /* INT_MAX + 1: out of BLAS range, products small */

static unsigned char *arena;
static size_t arena_bytes;

static void *slot(const test_prec *p, size_t i)
{
    if (arena == NULL || arena_bytes != SLOTS * SLOT_ELEMENTS * p->size) {
        arena_bytes = SLOTS * SLOT_ELEMENTS * p->size;
        arena = talloc(arena_bytes);
    }
    return arena + i * SLOT_ELEMENTS * p->size;
}

static int arena_teardown(void **state)
{
    arena = NULL; /* talloc_teardown frees it */
    return talloc_teardown(state);
}

static void expect_status(attn_status got, attn_status want, const char *fn, const char *what)
{
    check_true(got == want, "%s, %s: got %s (%d), want %s (%d)", fn, what,
               attn_status_string(got), (int)got, attn_status_string(want), (int)want);
    check_true(sentinel_intact(arena, arena_bytes), "%s, %s: a buffer was modified", fn, what);
}

/* ---- attn_softmax_rows -------------------------------------------------- */

typedef struct rows_call {
    void *x;
    size_t rows, cols, ld;
} rows_call;

static void expect_rows(const test_prec *p, rows_call c, attn_status want, const char *what)
{
    sentinel_fill(arena, arena_bytes);
    expect_status(p->softmax_rows(c.x, c.rows, c.cols, c.ld), want, "softmax_rows", what);
}

#define ROWS_CASE(want, what, ...)                       \
    do {                                                 \
        rows_call c_ = {slot(p, 0), 3, 5, 6};            \
        __VA_ARGS__;                                     \
        expect_rows(p, c_, want, what);                  \
    } while (0)

static void softmax_rows_errors(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const size_t elems_max = SIZE_MAX / p->size; /* largest element count with a byte count */
    ROWS_CASE(ATTN_ERR_NULL_POINTER, "x NULL", c_.x = NULL);
    ROWS_CASE(ATTN_ERR_ZERO_DIMENSION, "rows 0", c_.rows = 0);
    ROWS_CASE(ATTN_ERR_ZERO_DIMENSION, "cols 0", c_.cols = 0);
    ROWS_CASE(ATTN_ERR_SIZE_OVERFLOW, "(rows-1)*ld overflows", c_.rows = SIZE_MAX / 2);
    ROWS_CASE(ATTN_ERR_SIZE_OVERFLOW, "(rows-1)*ld + cols overflows", c_.rows = 2;
              c_.ld = SIZE_MAX - 2);
    ROWS_CASE(ATTN_ERR_SIZE_OVERFLOW, "byte count overflows", c_.rows = 1;
              c_.cols = elems_max + 1; c_.ld = elems_max + 1);
    ROWS_CASE(ATTN_ERR_BAD_STRIDE, "ld < cols", c_.ld = 4);
    ROWS_CASE(ATTN_ERR_BAD_STRIDE, "ld 0", c_.ld = 0);
    ROWS_CASE(ATTN_ERR_BAD_STRIDE, "ld < cols, one row", c_.rows = 1; c_.ld = 2);
    /* order: NULL, zero, overflow, stride */
    ROWS_CASE(ATTN_ERR_NULL_POINTER, "NULL before zero", c_.x = NULL; c_.rows = 0);
    ROWS_CASE(ATTN_ERR_ZERO_DIMENSION, "zero before stride", c_.cols = 0; c_.ld = 0;
              c_.rows = 0);
    ROWS_CASE(ATTN_ERR_SIZE_OVERFLOW, "overflow before stride", c_.rows = SIZE_MAX / 2;
              c_.cols = 9; c_.ld = 8);
    /* ld == cols is fine (and the slot is not written beyond the rows) */
    double x[15];
    for (size_t i = 0; i < 15; i++)
        x[i] = (double)i / 4.0;
    void *tx = prec_typed(p, x, 15);
    assert_int_equal(p->softmax_rows(tx, 3, 5, 5), ATTN_OK);
}

/* ---- attn_lookup --------------------------------------------------------- */

typedef struct lookup_call {
    size_t Tq, Tk, d, dv;
    double scale;
    const void *q, *k, *v;
    void *out, *weights;
} lookup_call;

static void expect_lookup(const test_prec *p, lookup_call c, attn_status want, const char *what)
{
    sentinel_fill(arena, arena_bytes);
    expect_status(p->lookup(c.Tq, c.Tk, c.d, c.dv, c.scale, c.q, c.k, c.v, c.out, c.weights),
                  want, "lookup", what);
}

/* valid: Tq 3, Tk 5, d 4, dv 2; q, k, v, out, weights in slots 0..4 */
#define LOOKUP_CASE(want, what, ...)                                                      \
    do {                                                                                  \
        lookup_call c_ = {3, 5, 4, 2, 0.5, slot(p, 0), slot(p, 1), slot(p, 2), slot(p, 3), \
                          slot(p, 4)};                                                    \
        __VA_ARGS__;                                                                      \
        expect_lookup(p, c_, want, what);                                                 \
    } while (0)

static void lookup_null_zero_overflow(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const size_t elems_max = SIZE_MAX / p->size;
    const size_t huge = (size_t)1 << 40, large = (size_t)1 << 30; /* huge*large overflows */
    LOOKUP_CASE(ATTN_ERR_NULL_POINTER, "q NULL", c_.q = NULL);
    LOOKUP_CASE(ATTN_ERR_NULL_POINTER, "k NULL", c_.k = NULL);
    LOOKUP_CASE(ATTN_ERR_NULL_POINTER, "v NULL", c_.v = NULL);
    LOOKUP_CASE(ATTN_ERR_NULL_POINTER, "out NULL", c_.out = NULL);
    LOOKUP_CASE(ATTN_ERR_NULL_POINTER, "out NULL, weights NULL", c_.out = NULL;
                c_.weights = NULL);
    LOOKUP_CASE(ATTN_ERR_ZERO_DIMENSION, "Tq 0", c_.Tq = 0);
    LOOKUP_CASE(ATTN_ERR_ZERO_DIMENSION, "Tk 0", c_.Tk = 0);
    LOOKUP_CASE(ATTN_ERR_ZERO_DIMENSION, "d 0", c_.d = 0);
    LOOKUP_CASE(ATTN_ERR_ZERO_DIMENSION, "dv 0", c_.dv = 0);
    LOOKUP_CASE(ATTN_ERR_ZERO_DIMENSION, "dv 0, weights NULL", c_.dv = 0; c_.weights = NULL);
    /* each array's element count alone */
    LOOKUP_CASE(ATTN_ERR_SIZE_OVERFLOW, "q (Tq*d)", c_.Tq = huge; c_.d = large; c_.Tk = 1;
                c_.dv = 1);
    LOOKUP_CASE(ATTN_ERR_SIZE_OVERFLOW, "k (Tk*d)", c_.Tk = huge; c_.d = large; c_.Tq = 1;
                c_.dv = 1);
    LOOKUP_CASE(ATTN_ERR_SIZE_OVERFLOW, "v (Tk*dv)", c_.Tk = huge; c_.dv = large; c_.Tq = 1;
                c_.d = 1);
    LOOKUP_CASE(ATTN_ERR_SIZE_OVERFLOW, "out (Tq*dv)", c_.Tq = huge; c_.dv = large; c_.Tk = 1;
                c_.d = 1);
    LOOKUP_CASE(ATTN_ERR_SIZE_OVERFLOW, "weights (Tq*Tk)", c_.Tq = huge; c_.Tk = large;
                c_.d = 1; c_.dv = 1);
    LOOKUP_CASE(ATTN_ERR_SIZE_OVERFLOW, "workspace (Tq*Tk), weights NULL", c_.Tq = huge;
                c_.Tk = large; c_.d = 1; c_.dv = 1; c_.weights = NULL);
    LOOKUP_CASE(ATTN_ERR_SIZE_OVERFLOW, "byte count", c_.Tq = elems_max + 1; c_.Tk = 1;
                c_.d = 1; c_.dv = 1);
    /* order */
    LOOKUP_CASE(ATTN_ERR_NULL_POINTER, "NULL before zero", c_.v = NULL; c_.d = 0);
    LOOKUP_CASE(ATTN_ERR_ZERO_DIMENSION, "zero before overflow", c_.Tq = 0; c_.Tk = huge;
                c_.dv = large);
}

static void lookup_range_scale_aliasing(void **state)
{
    const test_prec *p = TEST_PREC(state);
    /* dimensions past INT_MAX whose products fit */
    LOOKUP_CASE(ATTN_ERR_BLAS_RANGE, "Tq > INT_MAX", c_.Tq = BIG; c_.Tk = 1; c_.d = 1; c_.dv = 1);
    LOOKUP_CASE(ATTN_ERR_BLAS_RANGE, "Tk > INT_MAX", c_.Tk = BIG; c_.Tq = 1; c_.d = 1; c_.dv = 1);
    LOOKUP_CASE(ATTN_ERR_BLAS_RANGE, "d > INT_MAX", c_.d = BIG; c_.Tq = 1; c_.Tk = 1; c_.dv = 1);
    LOOKUP_CASE(ATTN_ERR_BLAS_RANGE, "dv > INT_MAX", c_.dv = BIG; c_.Tq = 1; c_.Tk = 1; c_.d = 1);
    LOOKUP_CASE(ATTN_ERR_BLAS_RANGE, "Tk > INT_MAX, weights NULL", c_.Tk = BIG; c_.Tq = 1;
                c_.d = 1; c_.dv = 1; c_.weights = NULL);
    LOOKUP_CASE(ATTN_ERR_SIZE_OVERFLOW, "overflow before range", c_.Tq = BIG; c_.Tk = BIG;
                c_.d = BIG; c_.dv = BIG);
    /* scale */
    LOOKUP_CASE(ATTN_ERR_BAD_SCALE, "scale NaN", c_.scale = ((double)NAN));
    LOOKUP_CASE(ATTN_ERR_BAD_SCALE, "scale +inf", c_.scale = HUGE_VAL);
    LOOKUP_CASE(ATTN_ERR_BAD_SCALE, "scale -inf", c_.scale = -HUGE_VAL);
    /* finite in double but past the precision's largest value (f32: 2 FLT_MAX;
     * f64: 2 DBL_MAX is +inf) */
    LOOKUP_CASE(ATTN_ERR_BAD_SCALE, "scale 2 * largest finite", c_.scale = 2.0 * p->max);
    LOOKUP_CASE(ATTN_ERR_BAD_SCALE, "scale NaN, weights NULL", c_.scale = ((double)NAN);
                c_.weights = NULL);
    LOOKUP_CASE(ATTN_ERR_BLAS_RANGE, "range before scale", c_.Tq = BIG; c_.Tk = 1; c_.d = 1;
                c_.dv = 1; c_.scale = ((double)NAN));
    /* aliasing: each output against each input and the other output */
    const size_t nq = 3 * 4, nk = 5 * 4, nv = 5 * 2, nout = 3 * 2;
    LOOKUP_CASE(ATTN_ERR_ALIASING, "out == q", c_.out = slot(p, 0));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "out == k", c_.out = slot(p, 1));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "out == v", c_.out = slot(p, 2));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "out starts at q's last element",
                c_.out = prec_at(p, slot(p, 0), nq - 1));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "out's last element is k's first",
                c_.k = prec_at(p, slot(p, 3), nout - 1));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "out inside v", c_.out = prec_at(p, slot(p, 2), 1);
                c_.dv = 1);
    LOOKUP_CASE(ATTN_ERR_ALIASING, "weights == q", c_.weights = slot(p, 0));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "weights overlaps k",
                c_.weights = prec_at(p, slot(p, 1), nk - 2));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "weights overlaps v", c_.weights = prec_at(p, slot(p, 2), nv - 1));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "weights == out", c_.weights = slot(p, 3));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "weights overlaps out's end",
                c_.weights = prec_at(p, slot(p, 3), nout - 1));
    LOOKUP_CASE(ATTN_ERR_ALIASING, "out overlaps weights' end",
                c_.out = prec_at(p, slot(p, 4), 3 * 5 - 1));
    LOOKUP_CASE(ATTN_ERR_BAD_SCALE, "scale before aliasing", c_.out = slot(p, 0);
                c_.scale = HUGE_VAL);
}

/* Touching buffers are not overlapping: [q | out | weights | k | v] packed
 * into one allocation must succeed and compute the lookup. */
static void lookup_adjacent_buffers(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { Tq = 3, Tk = 5, d = 4, dv = 2 };
    const size_t nq = Tq * d, nout = Tq * dv, nw = Tq * Tk, nk = Tk * d, nv = Tk * dv;
    test_rng rng;
    rng_seed(&rng, 61);
    double *q = random_rounded(p, &rng, nq, 1.0), *k = random_rounded(p, &rng, nk, 1.0),
           *v = random_rounded(p, &rng, nv, 1.0);
    unsigned char *buf = talloc((nq + nout + nw + nk + nv) * p->size);
    void *tq = buf, *tout = prec_at(p, buf, nq), *tw = prec_at(p, buf, nq + nout);
    void *tk = prec_at(p, buf, nq + nout + nw), *tv = prec_at(p, buf, nq + nout + nw + nk);
    p->from_double(tq, q, nq);
    p->from_double(tk, k, nk);
    p->from_double(tv, v, nv);
    assert_int_equal(p->lookup(Tq, Tk, d, dv, 0.5, tq, tk, tv, tout, tw), ATTN_OK);
    double ref_out[Tq * dv], ref_w[Tq * Tk];
    ref_lookup(Tq, Tk, d, dv, 0.5, q, k, v, ref_out, ref_w);
    check_residual(residual_scaled(prec_doubles(p, tout, nout), ref_out, nout, max_abs(v, nv)),
                   p->tol, "adjacent: out");
    check_residual(residual_rows(prec_doubles(p, tw, nw), ref_w, Tq, Tk), p->tol,
                   "adjacent: weights");
    double *q_after = prec_doubles(p, tq, nq);
    check_true(memcmp(q_after, q, nq * sizeof(double)) == 0, "adjacent: q changed");
}

/* ---- attn_self_attention ------------------------------------------------- */

typedef struct head_call {
    size_t B, T, C, hs;
    int causal;
    const void *X, *Wq, *Wk, *Wv;
    void *out, *weights;
} head_call;

static void expect_head(const test_prec *p, head_call c, attn_status want, const char *what)
{
    sentinel_fill(arena, arena_bytes);
    expect_status(p->self_attention(c.B, c.T, c.C, c.hs, c.causal, c.X, c.Wq, c.Wk, c.Wv, c.out,
                                    c.weights),
                  want, "self_attention", what);
}

/* valid: B 2, T 3, C 4, hs 2; X, Wq, Wk, Wv, out, weights in slots 0..5 */
#define HEAD_CASE(want, what, ...)                                                             \
    do {                                                                                       \
        head_call c_ = {2, 3, 4, 2, 1, slot(p, 0), slot(p, 1), slot(p, 2), slot(p, 3), slot(p, 4), \
                        slot(p, 5)};                                                           \
        __VA_ARGS__;                                                                           \
        expect_head(p, c_, want, what);                                                        \
    } while (0)

static void head_null_zero_overflow(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const size_t elems_max = SIZE_MAX / p->size;
    const size_t huge = (size_t)1 << 40, large = (size_t)1 << 30;
    HEAD_CASE(ATTN_ERR_NULL_POINTER, "X NULL", c_.X = NULL);
    HEAD_CASE(ATTN_ERR_NULL_POINTER, "Wq NULL", c_.Wq = NULL);
    HEAD_CASE(ATTN_ERR_NULL_POINTER, "Wk NULL", c_.Wk = NULL);
    HEAD_CASE(ATTN_ERR_NULL_POINTER, "Wv NULL", c_.Wv = NULL);
    HEAD_CASE(ATTN_ERR_NULL_POINTER, "out NULL", c_.out = NULL);
    HEAD_CASE(ATTN_ERR_NULL_POINTER, "out NULL, weights NULL", c_.out = NULL; c_.weights = NULL);
    HEAD_CASE(ATTN_ERR_ZERO_DIMENSION, "B 0", c_.B = 0);
    HEAD_CASE(ATTN_ERR_ZERO_DIMENSION, "T 0", c_.T = 0);
    HEAD_CASE(ATTN_ERR_ZERO_DIMENSION, "C 0", c_.C = 0);
    HEAD_CASE(ATTN_ERR_ZERO_DIMENSION, "hs 0", c_.hs = 0);
    HEAD_CASE(ATTN_ERR_ZERO_DIMENSION, "hs 0, not causal, weights NULL", c_.hs = 0;
              c_.causal = 0; c_.weights = NULL);
    /* each array's element count alone */
    HEAD_CASE(ATTN_ERR_SIZE_OVERFLOW, "X (B*T*C)", c_.B = (size_t)1 << 32; c_.T = 1;
              c_.C = (size_t)1 << 32; c_.hs = 1);
    HEAD_CASE(ATTN_ERR_SIZE_OVERFLOW, "W (C*hs)", c_.C = huge; c_.hs = large; c_.B = 1; c_.T = 1);
    HEAD_CASE(ATTN_ERR_SIZE_OVERFLOW, "out (B*T*hs)", c_.B = huge; c_.hs = large; c_.T = 1;
              c_.C = 1);
    HEAD_CASE(ATTN_ERR_SIZE_OVERFLOW, "weights (B*T*T)", c_.B = (size_t)1 << 20;
              c_.T = (size_t)1 << 22; c_.C = 1; c_.hs = 1);
    HEAD_CASE(ATTN_ERR_SIZE_OVERFLOW, "weights (T*T)", c_.T = (size_t)1 << 33; c_.B = 1; c_.C = 1;
              c_.hs = 1);
    HEAD_CASE(ATTN_ERR_SIZE_OVERFLOW, "workspace (T*T), weights NULL", c_.T = (size_t)1 << 33;
              c_.B = 1; c_.C = 1; c_.hs = 1; c_.weights = NULL);
    HEAD_CASE(ATTN_ERR_SIZE_OVERFLOW, "byte count", c_.B = elems_max + 1; c_.T = 1; c_.C = 1;
              c_.hs = 1);
    /* order */
    HEAD_CASE(ATTN_ERR_NULL_POINTER, "NULL before zero", c_.Wk = NULL; c_.T = 0);
    HEAD_CASE(ATTN_ERR_ZERO_DIMENSION, "zero before overflow", c_.hs = 0; c_.T = (size_t)1 << 33);
}

static void head_range_aliasing(void **state)
{
    const test_prec *p = TEST_PREC(state);
    HEAD_CASE(ATTN_ERR_BLAS_RANGE, "C > INT_MAX", c_.C = BIG; c_.B = 1; c_.T = 1; c_.hs = 1);
    HEAD_CASE(ATTN_ERR_BLAS_RANGE, "hs > INT_MAX", c_.hs = BIG; c_.B = 1; c_.T = 1; c_.C = 1);
    HEAD_CASE(ATTN_ERR_BLAS_RANGE, "B > INT_MAX (B*T GEMM rows)", c_.B = BIG; c_.T = 1; c_.C = 1;
              c_.hs = 1);
    HEAD_CASE(ATTN_ERR_BLAS_RANGE, "B*T > INT_MAX", c_.B = (size_t)1 << 16;
              c_.T = (size_t)1 << 16; c_.C = 1; c_.hs = 1);
    HEAD_CASE(ATTN_ERR_BLAS_RANGE, "C > INT_MAX, weights NULL", c_.C = BIG; c_.B = 1; c_.T = 1;
              c_.hs = 1; c_.weights = NULL);
    HEAD_CASE(ATTN_ERR_SIZE_OVERFLOW, "overflow before range", c_.C = BIG; c_.hs = BIG;
              c_.B = BIG; c_.T = 1);
    HEAD_CASE(ATTN_ERR_BLAS_RANGE, "range before aliasing", c_.C = BIG; c_.B = 1; c_.T = 1;
              c_.hs = 1; c_.out = slot(p, 0));

    const size_t nx = 2 * 3 * 4, nw = 4 * 2, nout = 2 * 3 * 2, nwts = 2 * 3 * 3;
    HEAD_CASE(ATTN_ERR_ALIASING, "out == X", c_.out = slot(p, 0));
    HEAD_CASE(ATTN_ERR_ALIASING, "out == Wq", c_.out = slot(p, 1));
    HEAD_CASE(ATTN_ERR_ALIASING, "out == Wk", c_.out = slot(p, 2));
    HEAD_CASE(ATTN_ERR_ALIASING, "out == Wv", c_.out = slot(p, 3));
    HEAD_CASE(ATTN_ERR_ALIASING, "out starts at X's last element",
              c_.out = prec_at(p, slot(p, 0), nx - 1));
    HEAD_CASE(ATTN_ERR_ALIASING, "Wv starts at out's last element",
              c_.Wv = prec_at(p, slot(p, 4), nout - 1));
    HEAD_CASE(ATTN_ERR_ALIASING, "out inside Wq", c_.out = prec_at(p, slot(p, 1), nw - 2);
              c_.weights = NULL);
    HEAD_CASE(ATTN_ERR_ALIASING, "weights == X", c_.weights = slot(p, 0));
    HEAD_CASE(ATTN_ERR_ALIASING, "weights overlaps Wq", c_.weights = prec_at(p, slot(p, 1), nw - 1));
    HEAD_CASE(ATTN_ERR_ALIASING, "weights == Wk", c_.weights = slot(p, 2));
    HEAD_CASE(ATTN_ERR_ALIASING, "Wv inside weights", c_.Wv = prec_at(p, slot(p, 5), nwts - nw));
    HEAD_CASE(ATTN_ERR_ALIASING, "weights == out", c_.weights = slot(p, 4));
    HEAD_CASE(ATTN_ERR_ALIASING, "weights overlaps out's end",
              c_.weights = prec_at(p, slot(p, 4), nout - 1));
    HEAD_CASE(ATTN_ERR_ALIASING, "out overlaps weights' end",
              c_.out = prec_at(p, slot(p, 5), nwts - 1));
}

/* Touching but disjoint [X | out | weights | Wq | Wk | Wv] must succeed, and
 * the weight matrices may alias each other (Wq == Wk == Wv is allowed). */
static void head_adjacent_and_shared_inputs(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { B = 2, T = 3, C = 4, hs = 2 };
    const size_t nx = B * T * C, nw = C * hs, nout = B * T * hs, nwts = B * T * T;
    test_rng rng;
    rng_seed(&rng, 62);
    double *X = random_rounded(p, &rng, nx, 1.0), *W = random_rounded(p, &rng, 3 * nw, 0.5);
    unsigned char *buf = talloc((nx + nout + nwts + 3 * nw) * p->size);
    void *tX = buf, *tout = prec_at(p, buf, nx), *tw = prec_at(p, buf, nx + nout);
    void *tW = prec_at(p, buf, nx + nout + nwts);
    p->from_double(tX, X, nx);
    p->from_double(tW, W, 3 * nw);
    double ref_out[B * T * hs], ref_w[B * T * T], V[B * T * hs];
    for (int shared = 0; shared <= 1; shared++) {
        const size_t step = shared ? 0 : nw; /* shared: Wq = Wk = Wv */
        assert_int_equal(p->self_attention(B, T, C, hs, 1, tX, tW, prec_at(p, tW, step),
                                           prec_at(p, tW, 2 * step), tout, tw),
                         ATTN_OK);
        ref_self_attention(B, T, C, hs, 1, X, W, W + step, W + 2 * step, ref_out, ref_w);
        ref_matmul(B * T, hs, C, X, C, W + 2 * step, hs, V, hs);
        check_residual(residual_scaled(prec_doubles(p, tout, nout), ref_out, nout,
                                       max_abs(V, nout)),
                       p->tol, "shared %d: out", shared);
        check_residual(residual_rows(prec_doubles(p, tw, nwts), ref_w, B * T, T), p->tol,
                       "shared %d: weights", shared);
    }
}

/* OUT_OF_MEMORY: every allocation the call makes is failed in turn (the
 * k-th and all after it, k = 0, 1, ...) until the call no longer allocates
 * past k and succeeds. Each failing call must return OUT_OF_MEMORY, leave
 * out and weights byte for byte as they were, and free what it had (LSan and
 * valgrind check the leaks). Calls that need a workspace must allocate. */
typedef attn_status (*call_fn)(const test_prec *p, void *const *in, void *out, void *weights);

static attn_status call_lookup(const test_prec *p, void *const *in, void *out, void *weights)
{
    return p->lookup(7, 9, 5, 3, 0.0, in[0], in[1], in[2], out, weights);
}

static attn_status call_head(const test_prec *p, void *const *in, void *out, void *weights)
{
    return p->self_attention(2, 7, 5, 3, 1, in[0], in[1], in[2], in[3], out, weights);
}

static void fail_each_allocation(const test_prec *p, call_fn call, int with_weights,
                                 int must_allocate, const char *what)
{
    enum { N = 256 };
    test_rng rng;
    rng_seed(&rng, 63);
    double x[N];
    void *in[4];
    for (int i = 0; i < 4; i++) {
        rng_fill_normal(&rng, x, N, 0.5);
        in[i] = prec_typed(p, x, N);
    }
    unsigned char *out = talloc(N * p->size), *w = talloc(N * p->size);
    long k = 0;
    for (;; k++) {
        sentinel_fill(out, N * p->size);
        sentinel_fill(w, N * p->size);
        alloc_fail_arm(k);
        attn_status st = call(p, in, out, with_weights ? w : NULL);
        long attempted = alloc_fail_count();
        alloc_fail_arm(-1);
        if (attempted <= k) {
            check_true(st == ATTN_OK, "%s: no allocation failed, yet %s", what,
                       attn_status_string(st));
            break;
        }
        check_true(st == ATTN_ERR_OUT_OF_MEMORY, "%s, allocation %ld failed: got %s", what, k,
                   attn_status_string(st));
        check_true(sentinel_intact(out, N * p->size) && sentinel_intact(w, N * p->size),
                   "%s, allocation %ld failed: an output was modified", what, k);
    }
    print_message("  %s: %ld allocation(s)\n", what, k);
    if (must_allocate)
        check_true(k > 0, "%s: no workspace was allocated", what);
}

static void out_of_memory(void **state)
{
    const test_prec *p = TEST_PREC(state);
    fail_each_allocation(p, call_lookup, 0, 1, "lookup, weights NULL");
    fail_each_allocation(p, call_lookup, 1, 0, "lookup with weights");
    fail_each_allocation(p, call_head, 0, 1, "self_attention, weights NULL");
    fail_each_allocation(p, call_head, 1, 1, "self_attention with weights");
}

/* PREC_CASES with the arena forgotten on teardown */
#define ERR_CASES(fn)                                               \
    {"f32/" #fn, fn, NULL, arena_teardown, (void *)&test_prec_f32}, \
    {"f64/" #fn, fn, NULL, arena_teardown, (void *)&test_prec_f64}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ERR_CASES(softmax_rows_errors),
        ERR_CASES(lookup_null_zero_overflow),
        ERR_CASES(lookup_range_scale_aliasing),
        PREC_CASES(lookup_adjacent_buffers),
        ERR_CASES(head_null_zero_overflow),
        ERR_CASES(head_range_aliasing),
        PREC_CASES(head_adjacent_and_shared_inputs),
        PREC_CASES(out_of_memory),
    };
    return cmocka_run_group_tests_name("error contract", tests, NULL, NULL);
}
