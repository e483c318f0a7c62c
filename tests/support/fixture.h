/*
 * Reader of the seed fixtures written by fixtures/gen_fixtures.py: plain
 * text, '#' comment lines, and named 2-D arrays as
 *     @ name rows cols
 *     v v v ...        (rows lines of cols numbers, %.17g)
 * Values go through strtod, which restores %.17g doubles exactly.
 */
#ifndef ATTN_TEST_FIXTURE_H
#define ATTN_TEST_FIXTURE_H

#include <stddef.h>

typedef struct fixture fixture;

/* Loads ATTN_FIXTURE_DIR/<file>; fails the running test on any error. The
 * fixture lives until talloc_free_all. */
fixture *fixture_load(const char *file);

/* The array `name`, which must have shape (rows, cols); fails the test
 * otherwise. */
const double *fixture_array(const fixture *f, const char *name, size_t rows, size_t cols);

#endif /* ATTN_TEST_FIXTURE_H */
