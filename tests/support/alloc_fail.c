/* Allocation-failure injection (see alloc_fail.h). */
#include "support/alloc_fail.h"

#include <errno.h>
#include <stddef.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
int __real_posix_memalign(void **p, size_t alignment, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_aligned_alloc(size_t alignment, size_t size);
int __wrap_posix_memalign(void **p, size_t alignment, size_t size);

static long fail_from = -1;
static int fail_only_one;
static long attempts;
static long live;

void alloc_fail_arm(long k)
{
    fail_from = k;
    fail_only_one = 0;
    attempts = 0;
}

void alloc_fail_arm_only(long k)
{
    fail_from = k;
    fail_only_one = 1;
    attempts = 0;
}

long alloc_fail_count(void)
{
    return attempts;
}

long alloc_fail_live(void)
{
    return live;
}

void alloc_fail_note_free(void)
{
    live--;
}

/* counts a successful allocation */
static void *noted(void *p)
{
    if (p != NULL)
        live++;
    return p;
}

/* whether this allocation is to fail */
static int failing(void)
{
    if (fail_from < 0)
        return 0;
    const long n = attempts++;
    return fail_only_one ? n == fail_from : n >= fail_from;
}

void *__wrap_malloc(size_t size)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return noted(__real_malloc(size));
}

void *__wrap_calloc(size_t count, size_t size)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return noted(__real_calloc(count, size));
}

void *__wrap_realloc(void *p, size_t size)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    void *q = __real_realloc(p, size);
    if (q != NULL && p == NULL)
        live++; /* a realloc that moves or resizes p keeps the count */
    return q;
}

void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return noted(__real_aligned_alloc(alignment, size));
}

int __wrap_posix_memalign(void **p, size_t alignment, size_t size)
{
    if (failing())
        return ENOMEM;
    int err = __real_posix_memalign(p, alignment, size);
    if (err == 0)
        live++;
    return err;
}
