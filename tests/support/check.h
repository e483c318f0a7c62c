/*
 * Residuals, tolerance assertions and untouched-buffer checks shared by the
 * suites.
 *
 * Residual formulas (all evaluated in double):
 *   residual_scaled(got, ref, n, s) = max_i |got_i - ref_i| / s
 *       used for outputs, with s = max |V| (the value rows the output is a
 *       convex combination of): out = P V has absolute error bounded by
 *       max|V| * (error of P + error of V), independent of how much the
 *       averaging cancels, so max|V| is the scale the error lives on.
 *   residual_rows(got, ref, rows, cols) = max_r max_j |got_rj - ref_rj| / max_j |ref_rj|
 *       used for softmax weights, row by row: the largest weight of a row
 *       (>= 1/cols) sets that row's scale, so a uniform row is held as
 *       tightly as a peaked one. A row whose reference is all zeros (fully
 *       masked) must be exactly zero.
 * In both, a NaN in got where ref is not NaN (or the reverse), or a
 * mismatching infinity, makes the residual +inf; NaN matching NaN and equal
 * infinities count as agreement (special-value tests rely on that).
 */
#ifndef ATTN_TEST_CHECK_H
#define ATTN_TEST_CHECK_H

#include <stddef.h>

double max_abs(const double *x, size_t n);
double residual_scaled(const double *got, const double *ref, size_t n, double scale);
double residual_rows(const double *got, const double *ref, size_t rows, size_t cols);

/* Fails the running test with the formatted context when !(residual <= tol);
 * otherwise records the residual for check_worst_report. */
void check_residual(double residual, double tol, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prints (cmocka print_message) and resets the largest residual seen. */
void check_worst_report(const char *what);
/* Forgets the largest residual seen (a failed test leaves it unreported). */
void check_worst_reset(void);

/* Fails the test with a formatted message when !cond. */
void check_true(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Soft checks: a failure is printed and counted, the test goes on (a large
 * suite reports every mismatch of a case, not the first); test_leave fails
 * the test when any check between test_enter and it failed. */
typedef struct check_worst {
    double residual, tol; /* the largest residual relative to its tolerance */
} check_worst;
void test_enter(void);
void test_leave(const char *what);
void expect_true(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* !(residual <= tol) is a failure; w (or NULL) keeps the worst ratio, NaN included */
void expect_within(check_worst *w, double residual, double tol, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Fills `bytes` bytes at p with a position-dependent pattern, and tells
 * whether they still hold it (1) or not (0). */
void sentinel_fill(void *p, size_t bytes);
int sentinel_intact(const void *p, size_t bytes);

#endif /* ATTN_TEST_CHECK_H */
