/*
 * Allocation-failure injection for the OUT_OF_MEMORY cases of test_errors.
 * The executable is linked with -Wl,--wrap for malloc, calloc, realloc,
 * aligned_alloc and posix_memalign, so every such call made by code linked
 * into it -- the static attn library included, shared libraries (BLAS, libc)
 * not -- goes through the wrappers in alloc_fail.c. Disarmed they forward to
 * the real allocator.
 */
#ifndef ATTN_TEST_ALLOC_FAIL_H
#define ATTN_TEST_ALLOC_FAIL_H

/* Counts allocations from now on; the k-th (from 0) and every later one
 * fails. k < 0 disarms. */
void alloc_fail_arm(long k);
/* Allocations attempted since the last alloc_fail_arm. */
long alloc_fail_count(void);

#endif /* ATTN_TEST_ALLOC_FAIL_H */
