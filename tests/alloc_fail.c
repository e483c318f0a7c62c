/* Allocation-failure injection (see alloc_fail.h). */
#include "alloc_fail.h"

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
static long attempts;

void alloc_fail_arm(long k)
{
    fail_from = k;
    attempts = 0;
}

long alloc_fail_count(void)
{
    return attempts;
}

/* whether this allocation is to fail */
static int failing(void)
{
    if (fail_from < 0)
        return 0;
    return attempts++ >= fail_from;
}

void *__wrap_malloc(size_t size)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_calloc(count, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc(p, size);
}

void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    if (failing()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_aligned_alloc(alignment, size);
}

int __wrap_posix_memalign(void **p, size_t alignment, size_t size)
{
    if (failing())
        return ENOMEM;
    return __real_posix_memalign(p, alignment, size);
}
