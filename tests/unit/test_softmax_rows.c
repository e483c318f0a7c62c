/*
 * test_softmax_rows: the public in-place row softmax attn_softmax_rows_*
 * (rows, cols, ld), through whatever kernel set the process uses (ctest also
 * runs this program with ATTN_SIMD=scalar and =avx2).
 *   - random matrices of many shapes, ld = cols and ld > cols: each row
 *     against the double reference; the entries between cols and ld and
 *     everything after the last row keep their bytes (sentinel pattern);
 *   - special rows inside one matrix (masked entries, an all -inf row, a NaN,
 *     +inf entries, large logits) do not disturb the rows around them.
 * Residual: per row max_j |y - ref| / max_j ref (check.h); tolerance 1e-5
 * (f32) / 1e-12 (f64), see precision.h.
 */
#include <math.h>
#include <string.h>

#include "support/inputs.h"
#include "support/test_common.h"

/* Runs attn_softmax_rows on x (rows, cols) stored with stride ld inside a
 * buffer whose other bytes hold a sentinel; checks those bytes and returns
 * the rows as a dense (rows, cols) double array. */
static double *run_rows(const test_prec *p, const double *x, size_t rows, size_t cols, size_t ld)
{
    const size_t elements = (rows - 1) * ld + cols, guard = 4;
    const size_t bytes = (elements + guard) * p->size;
    unsigned char *buf = talloc(bytes), *before = talloc(bytes);
    sentinel_fill(buf, bytes);
    for (size_t r = 0; r < rows; r++)
        p->from_double(buf + r * ld * p->size, x + r * cols, cols);
    memcpy(before, buf, bytes);

    assert_int_equal(p->softmax_rows(buf, rows, cols, ld), ATTN_OK);

    for (size_t r = 0; r < rows; r++) {
        size_t gap_begin = (r * ld + cols) * p->size;
        size_t gap_end = r + 1 < rows ? (r + 1) * ld * p->size : bytes;
        check_true(memcmp(buf + gap_begin, before + gap_begin, gap_end - gap_begin) == 0,
                   "rows %zu cols %zu ld %zu: bytes after row %zu changed", rows, cols, ld, r);
    }
    double *y = talloc_doubles(rows * cols);
    for (size_t r = 0; r < rows; r++)
        p->to_double(y + r * cols, buf + r * ld * p->size, cols);
    return y;
}

static void check_rows(const test_prec *p, const double *x, size_t rows, size_t cols, size_t ld)
{
    double *y = run_rows(p, x, rows, cols, ld);
    double *ref = talloc_doubles(rows * cols);
    for (size_t r = 0; r < rows; r++)
        ref_softmax_row(x + r * cols, ref + r * cols, cols, cols, 1.0);
    check_residual(residual_rows(y, ref, rows, cols), p->tol, "rows %zu cols %zu ld %zu", rows,
                   cols, ld);
}

static void random_shapes(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const size_t shapes[][3] = {
        {1, 1, 1},   {1, 2, 2},    {3, 7, 7},    {5, 16, 16},  {4, 17, 20}, {7, 33, 40},
        {2, 300, 301}, {10, 1, 3}, {1, 257, 257}, {6, 64, 64}, {3, 65, 128}, {9, 15, 16},
    };
    test_rng rng;
    rng_seed(&rng, 21);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        size_t rows = shapes[i][0], cols = shapes[i][1], ld = shapes[i][2];
        double *x = random_rounded(p, &rng, rows * cols, 4.0);
        check_rows(p, x, rows, cols, ld);
    }
    check_worst_report(p->name);
}

/* Special rows among ordinary ones, `cols` entries each (ld cols + 3): rows
 * of 5 are shorter than a vector of every kernel set but the scalar one, so
 * that the seven go through the short-row groups (whose +inf row makes the
 * group fall back to the row kernel); rows of 21 through the row kernel. */
static void special_rows_of(const test_prec *p, size_t cols)
{
    enum { ROWS = 7 };
    const size_t ld = cols + 3;
    test_rng rng;
    rng_seed(&rng, 22);
    double *x = talloc_doubles(ROWS * cols);
    rng_fill_normal(&rng, x, ROWS * cols, 2.0);
    for (size_t j = 0; j < cols; j++) {
        if (j % 3 == 0)
            x[1 * cols + j] = -HUGE_VAL; /* row 1: some masked */
        x[2 * cols + j] = -HUGE_VAL;     /* row 2: all masked */
        x[5 * cols + j] = p->round(1e4 * x[5 * cols + j]); /* row 5: large logits */
    }
    x[3 * cols + cols / 2] = ((double)NAN); /* row 3: a NaN */
    x[4 * cols + 2] = HUGE_VAL;             /* row 4: two +inf */
    x[4 * cols + cols - 2] = HUGE_VAL;
    prec_round_array(p, x, ROWS * cols);

    double *y = run_rows(p, x, ROWS, cols, ld);
    double *ref = talloc_doubles(ROWS * cols);
    for (size_t r = 0; r < ROWS; r++)
        ref_softmax_row(x + r * cols, ref + r * cols, cols, cols, 1.0);
    for (size_t r = 0; r < ROWS; r++)
        check_residual(residual_rows(y + r * cols, ref + r * cols, 1, cols), p->tol,
                       "cols %zu row %zu", cols, r);
    for (size_t j = 0; j < cols; j++) {
        check_true(y[2 * cols + j] == 0.0, "all -inf row: y[%zu] = %g", j, y[2 * cols + j]);
        check_true(isnan(y[3 * cols + j]), "NaN row: y[%zu] = %g", j, y[3 * cols + j]);
        if (j % 3 == 0)
            check_true(y[1 * cols + j] == 0.0, "masked y[%zu] = %g", j, y[1 * cols + j]);
    }
}

static void special_rows(void **state)
{
    special_rows_of(TEST_PREC(state), 21);
    special_rows_of(TEST_PREC(state), 5);
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        PREC_CASES(random_shapes),
        PREC_CASES(special_rows),
    };
    return cmocka_run_group_tests_name("attn_softmax_rows", tests, NULL, NULL);
}
