/* The attention scale of `real`: validation and the 1/sqrt(d) default. */
#ifndef ATTN_SCALE_H
#define ATTN_SCALE_H

#include <math.h>
#include <stdbool.h>

#include "check.h"
#include "real.h"

/* See attn_scale_valid (check.h). */
static inline bool attn_scale_ok(double scale)
{
    return attn_scale_valid(scale, (double)ATTN_REAL_MAX);
}

/* scale <= 0 selects the default 1/sqrt(d). */
static inline real attn_scale_or_default(double scale, size_t d)
{
    return (real)(scale > 0.0 ? scale : 1.0 / sqrt((double)d));
}

#endif /* ATTN_SCALE_H */
