/*
 * Allocation-failure injection for the OUT_OF_MEMORY cases of test_errors
 * and the test_plan_* suites (test_plan_allocations also counts the
 * allocations of plan execution).
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
/* Counts allocations from now on; only the k-th (from 0) fails, the others
 * succeed. k < 0 disarms. */
void alloc_fail_arm_only(long k);
/* Allocations attempted since the last alloc_fail_arm or alloc_fail_arm_only. */
long alloc_fail_count(void);

/* Successful allocations minus frees of non-NULL pointers so far (frees
 * are seen only in executables that also link alloc_free.c with
 * -Wl,--wrap=free): equal before and after a call when the call left
 * nothing allocated. */
long alloc_fail_live(void);
/* Called by the free wrapper (alloc_free.c) for each non-NULL pointer. */
void alloc_fail_note_free(void);

#endif /* ATTN_TEST_ALLOC_FAIL_H */
