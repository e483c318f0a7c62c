/* The attention scale of `real`: validation and the 1/sqrt(d) default. */
#ifndef ATTN_SCALE_H
#define ATTN_SCALE_H

#include <float.h>
#include <math.h>
#include <stdbool.h>

#include "core/check.h"
#include "core/real.h"

/* See attn_scale_valid (check.h). */
static inline bool attn_scale_ok(double scale)
{
    return attn_scale_valid(scale, (double)ATTN_REAL_MAX);
}

/* A positive (already validated) scale in `real`. One too small for the
 * precision becomes its smallest positive value, not 0: scores times 0 would
 * turn the -inf of masked entries into NaN, while the limit scale -> 0+ is
 * the uniform softmax that a tiny scale gives. */
static inline real attn_real_scale(double scale)
{
#if ATTN_REAL_BITS == 32
    const real smallest = FLT_TRUE_MIN;
#else
    const real smallest = DBL_TRUE_MIN;
#endif
    const real rounded = (real)scale;
    return rounded > REAL_C(0.0) ? rounded : smallest;
}

/* scale <= 0 selects the default 1/sqrt(d). */
static inline real attn_scale_or_default(double scale, size_t d)
{
    return attn_real_scale(scale > 0.0 ? scale : 1.0 / sqrt((double)d));
}

#endif /* ATTN_SCALE_H */
