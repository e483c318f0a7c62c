/*
 * Test allocations that are released together: a failing cmocka assertion
 * leaves the test function early, so every buffer a test makes comes from
 * talloc and the suites' teardown (talloc_teardown) frees them all.
 */
#ifndef ATTN_TEST_TALLOC_H
#define ATTN_TEST_TALLOC_H

#include <stddef.h>

/* `bytes` (at least 1) of uninitialised memory; fails the test when out of memory. */
void *talloc(size_t bytes);
/* n doubles, zeroed */
double *talloc_doubles(size_t n);
/* Frees everything talloc returned so far. */
void talloc_free_all(void);
/* cmocka teardown of every test: talloc_free_all, and forget the largest
 * residual recorded by check.c */
int talloc_teardown(void **state);

#endif /* ATTN_TEST_TALLOC_H */
