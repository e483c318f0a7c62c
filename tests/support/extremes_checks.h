/*
 * What the numerical-extremes suites (test_extremes_overflow,
 * test_extremes_rows, test_extremes_nan) share: softmax rows through the
 * library and the reference, exact and finiteness checks, sentinel-filled
 * typed outputs and a lookup with its weights.
 */
#ifndef ATTN_TEST_EXTREMES_CHECKS_H
#define ATTN_TEST_EXTREMES_CHECKS_H

#include <stddef.h>

#include "support/precision.h"

/* attn_softmax_rows on a dense (rows, cols) copy of x; the result as doubles */
double *softmax_dense(const test_prec *p, const double *x, size_t rows, size_t cols);
/* the same rows by the double reference (ref_softmax_row) */
double *softmax_reference(const double *x, size_t rows, size_t cols);
/* got[i] equal to want[i] exactly (NaN equal to NaN), each i < n */
void expect_exact(const double *got, const double *want, size_t n, const char *what);
void expect_all_finite(const double *x, size_t n, const char *what);
/* a typed (n) buffer, sentinel-filled, as an output */
void *typed_output(const test_prec *p, size_t n);

typedef struct lookup_run {
    double *out, *weights;
} lookup_run;

/* attn_lookup with weights requested; fails the test unless ATTN_OK */
lookup_run lookup_with_weights(const test_prec *p, size_t Tq, size_t Tk, size_t d, size_t dv,
                               double scale, const double *q, const double *k, const double *v);

#endif /* ATTN_TEST_EXTREMES_CHECKS_H */
