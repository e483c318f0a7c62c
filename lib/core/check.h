/*
 * Boundary checks shared by every public entry point: pointer presence, zero
 * dimensions, overflow-checked products, the BLAS integer range and overlap
 * of memory regions. Pure functions, no state.
 */
#ifndef ATTN_CHECK_H
#define ATTN_CHECK_H

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest dimension or leading dimension handed to BLAS: blasint is int
 * in an LP64 OpenBLAS (blas.h asserts it). */
#define ATTN_BLAS_INT_MAX ((size_t)INT_MAX)

#define ATTN_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* *product = a * b; false when that overflows size_t. */
static inline bool attn_mul(size_t a, size_t b, size_t *product)
{
    return !__builtin_mul_overflow(a, b, product);
}

/* *product = a * b * c; false when any partial product overflows. */
static inline bool attn_mul3(size_t a, size_t b, size_t c, size_t *product)
{
    size_t ab;
    return attn_mul(a, b, &ab) && attn_mul(ab, c, product);
}

/* *sum = a + b; false on overflow. */
static inline bool attn_add(size_t a, size_t b, size_t *sum)
{
    return !__builtin_add_overflow(a, b, sum);
}

static inline bool attn_any_null(const void *const *pointers, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (pointers[i] == NULL)
            return true;
    return false;
}

static inline bool attn_any_zero(const size_t *dims, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (dims[i] == 0)
            return true;
    return false;
}

/* Whether every value is at most `limit` (ATTN_BLAS_INT_MAX for BLAS). */
static inline bool attn_all_at_most(const size_t *values, size_t count, size_t limit)
{
    for (size_t i = 0; i < count; i++)
        if (values[i] > limit)
            return false;
    return true;
}

/* A scale argument is usable unless it is NaN, -inf, or above `largest` (the
 * largest finite value of the call's precision); scale <= 0 selects the
 * default 1/sqrt(d). */
static inline bool attn_scale_valid(double scale, double largest)
{
    return scale > -(double)INFINITY && scale <= largest; /* false for NaN */
}

/* A byte range [begin, begin + bytes); a NULL begin is an absent region. */
typedef struct attn_region {
    const void *begin;
    size_t bytes;
} attn_region;

static inline bool attn_regions_overlap(attn_region a, attn_region b)
{
    if (a.begin == NULL || b.begin == NULL || a.bytes == 0 || b.bytes == 0)
        return false;
    uintptr_t a0 = (uintptr_t)a.begin, b0 = (uintptr_t)b.begin;
    /* Differences, not end addresses, so nothing wraps. */
    return a0 >= b0 ? a0 - b0 < b.bytes : b0 - a0 < a.bytes;
}

/* True when any output overlaps any input or another output. */
static inline bool attn_outputs_alias(const attn_region *outputs, size_t n_outputs,
                                      const attn_region *inputs, size_t n_inputs)
{
    for (size_t o = 0; o < n_outputs; o++) {
        for (size_t i = 0; i < n_inputs; i++)
            if (attn_regions_overlap(outputs[o], inputs[i]))
                return true;
        for (size_t p = o + 1; p < n_outputs; p++)
            if (attn_regions_overlap(outputs[o], outputs[p]))
                return true;
    }
    return false;
}

#endif /* ATTN_CHECK_H */
