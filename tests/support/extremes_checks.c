/* The numerical-extremes suites' shared checks (extremes_checks.h). */
#include "support/extremes_checks.h"

#include <math.h>

#include <attn/attn.h>

#include "reference/reference.h"
#include "support/check.h"
#include "support/talloc.h"

/* attn_softmax_rows on a dense (rows, cols) copy of x; the result as doubles */
double *softmax_dense(const test_prec *p, const double *x, size_t rows, size_t cols)
{
    void *buf = prec_typed(p, x, rows * cols);
    attn_status st = p->softmax_rows(buf, rows, cols, cols);
    check_true(st == ATTN_OK, "softmax_rows (%zu, %zu): %s", rows, cols, attn_status_string(st));
    return prec_doubles(p, buf, rows * cols);
}

double *softmax_reference(const double *x, size_t rows, size_t cols)
{
    double *y = talloc_doubles(rows * cols);
    for (size_t r = 0; r < rows; r++)
        ref_softmax_row(x + r * cols, y + r * cols, cols, cols, 1.0);
    return y;
}

/* exact equality, NaN equal to NaN */
static int same_value(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

void expect_exact(const double *got, const double *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        check_true(same_value(got[i], want[i]), "%s: [%zu] = %.17g, want exactly %.17g", what, i,
                   got[i], want[i]);
}

void expect_all_finite(const double *x, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        check_true(isfinite(x[i]), "%s: [%zu] = %g is not finite", what, i, x[i]);
}

/* a typed (n) buffer, sentinel-filled, as an output */
void *typed_output(const test_prec *p, size_t n)
{
    void *b = talloc(n * p->size);
    sentinel_fill(b, n * p->size);
    return b;
}

/* attn_lookup with weights requested; fails the test unless ATTN_OK */
lookup_run lookup_with_weights(const test_prec *p, size_t Tq, size_t Tk, size_t d, size_t dv,
                               double scale, const double *q, const double *k,
                               const double *v)
{
    void *out = typed_output(p, Tq * dv), *w = typed_output(p, Tq * Tk);
    attn_status st = p->lookup(Tq, Tk, d, dv, scale, prec_typed(p, q, Tq * d),
                               prec_typed(p, k, Tk * d), prec_typed(p, v, Tk * dv), out, w);
    check_true(st == ATTN_OK, "lookup (%zu,%zu,%zu,%zu) scale %g: %s", Tq, Tk, d, dv, scale,
               attn_status_string(st));
    lookup_run run = {prec_doubles(p, out, Tq * dv), prec_doubles(p, w, Tq * Tk)};
    return run;
}
