/*
 * Arrays laid out by strides (attn.h, "The arrays of one call"): whether
 * one places its elements at distinct addresses, its span, and whether two
 * of them share an address. Pure functions of sizes and addresses, no
 * state; not templated (units are the caller's: elements or bytes).
 */
#ifndef ATTN_STRIDED_H
#define ATTN_STRIDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/check.h"

#define ATTN_STRIDED_DIMS 3

/* count[d] entries stride[d] apart in each dimension d, each entry a
 * contiguous run of `width`; a dimension of count 1 has no stride that
 * matters. base NULL (or width 0): an absent array. run: an array attn.h
 * judges by its span alone (the mask, lse, key_lengths), not one laid out
 * by strides (Q, K, V, out and the rest, even of a single entry). */
typedef struct attn_strided {
    const void *base;
    size_t width;
    size_t count[ATTN_STRIDED_DIMS];
    size_t stride[ATTN_STRIDED_DIMS];
    bool run;
} attn_strided;

/* A contiguous run of `bytes` at base, judged by its span. */
static inline attn_strided attn_strided_run(const void *base, size_t bytes)
{
    const attn_strided x = {base, bytes, {1, 1, 1}, {0, 0, 0}, true};
    return x;
}

/* *span = from the first to past the last unit of x; false on overflow. */
static inline bool attn_strided_span(const attn_strided *x, size_t *span)
{
    size_t total = x->width, step;
    for (int d = 0; d < ATTN_STRIDED_DIMS; d++)
        if (x->count[d] > 1 &&
            (!attn_mul(x->count[d] - 1, x->stride[d], &step) || !attn_add(total, step, &total)))
            return false;
    *span = total;
    return true;
}

/* Whether x's entries lie at distinct addresses by attn.h's rule: its
 * dimensions of more than one entry, by increasing stride, each step over
 * the whole span of the entry and the dimensions below. Once that span
 * overflows, the rest is left to attn_strided_span (SIZE_OVERFLOW). */
static inline bool attn_strided_distinct(const attn_strided *x)
{
    int order[ATTN_STRIDED_DIMS], n = 0;
    for (int d = 0; d < ATTN_STRIDED_DIMS; d++) {
        if (x->count[d] <= 1)
            continue;
        int at = n++;
        for (; at > 0 && x->stride[order[at - 1]] > x->stride[d]; at--)
            order[at] = order[at - 1];
        order[at] = d;
    }
    size_t below = x->width, step;
    for (int i = 0; i < n; i++) {
        const int d = order[i];
        if (x->stride[d] < below)
            return false;
        if (!attn_mul(x->count[d] - 1, x->stride[d], &step) || !attn_add(below, step, &below))
            return true;
    }
    return true;
}

/* *inner = the span of x's dimensions whose strides are not multiples of
 * `period` (with the entry): modulo the period, x's units lie in the arc
 * [base, base + *inner) when it is at most the period; false otherwise. */
static inline bool attn_strided_inner(const attn_strided *x, size_t period, size_t *inner)
{
    size_t span = x->width, step;
    for (int d = 0; d < ATTN_STRIDED_DIMS; d++)
        if (x->count[d] > 1 && x->stride[d] % period != 0 &&
            (!attn_mul(x->count[d] - 1, x->stride[d], &step) || !attn_add(span, step, &span)))
            return false;
    *inner = span;
    return span <= period;
}

/* Whether some stride of x or y, as a period, puts them on disjoint arcs
 * of the circle of residues: x on [0, ix) from its base, y on [d, d + iy)
 * with d = (y - x) mod period; then no unit of x is a unit of y. */
static inline bool attn_strided_interleaved(const attn_strided *x, const attn_strided *y)
{
    const attn_strided *both[2] = {x, y};
    const uintptr_t bx = (uintptr_t)x->base, by = (uintptr_t)y->base;
    for (int which = 0; which < 2; which++)
        for (int d = 0; d < ATTN_STRIDED_DIMS; d++) {
            const size_t period = both[which]->stride[d];
            size_t ix, iy;
            if (both[which]->count[d] <= 1 || period == 0 ||
                !attn_strided_inner(x, period, &ix) || !attn_strided_inner(y, period, &iy))
                continue;
            const size_t apart = by >= bx ? (size_t)((by - bx) % period)
                                          : (period - (size_t)((bx - by) % period)) % period;
            if (apart >= ix && period - apart >= iy)
                return true;
        }
    return false;
}

/* Whether x and y (strides and widths in bytes, spans known to fit) may
 * share a byte: false when either is absent, their spans are disjoint, or
 * both are laid out by strides and interleave (attn_strided_interleaved;
 * a period may come from either, so an array of one entry can sit in the
 * gap of another); a run (lse, a mask, key lengths) is judged by its span
 * alone (attn.h). */
static inline bool attn_strided_overlap(const attn_strided *x, const attn_strided *y)
{
    size_t xs, ys;
    if (x->base == NULL || y->base == NULL || x->width == 0 || y->width == 0)
        return false;
    if (!attn_strided_span(x, &xs) || !attn_strided_span(y, &ys))
        return true;
    const attn_region rx = {x->base, xs}, ry = {y->base, ys};
    return attn_regions_overlap(rx, ry) &&
           !(!x->run && !y->run && attn_strided_interleaved(x, y));
}

/* True when any output may share a byte with any input or another output. */
static inline bool attn_strided_outputs_alias(const attn_strided *outputs, size_t n_outputs,
                                              const attn_strided *inputs, size_t n_inputs)
{
    for (size_t o = 0; o < n_outputs; o++) {
        for (size_t i = 0; i < n_inputs; i++)
            if (attn_strided_overlap(&outputs[o], &inputs[i]))
                return true;
        for (size_t p = o + 1; p < n_outputs; p++)
            if (attn_strided_overlap(&outputs[o], &outputs[p]))
                return true;
    }
    return false;
}

#endif /* ATTN_STRIDED_H */
