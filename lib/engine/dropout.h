/*
 * Attention dropout applied to rows of weights (templated over `real`, see
 * real.h), the draws of core/dropout.h made by the kernel set's
 * dropout_mask kernel (kernels.h, dropout_kernel.inc.c): used by the
 * forward engines on the weights they multiply into V, and by the backward
 * engines, which regenerate the same draws once per tile row.
 *
 * Shapes: x (n) holds entries j0 .. j0+n-1 of row t of head h of sequence
 * b of a (Tq, Tk) weight matrix (or of its gradient):
 *   x[i] *= keep(b, h, t, j0 + i) ? 1 / (1 - p) : 0
 * (a NaN stays NaN); factors (n), when not NULL, receives those factors,
 * and attn_dropout_scale multiplies another row y (n) by them. Nothing is
 * done when dropout is off (d NULL or p = 0).
 */
#ifndef ATTN_ENGINE_DROPOUT_H
#define ATTN_ENGINE_DROPOUT_H

#include <stddef.h>

#include "core/dropout.h"
#include "core/real.h"
#include "kernels/kernels.h"

static inline int attn_dropout_is_on(const attn_dropout *d) { return d != NULL && d->on; }

static inline void FN(attn_dropout_row)(const attn_dropout *d, attn_dropout_mask_fn mask,
                                        size_t b, size_t h, size_t t, size_t j0, size_t n,
                                        real *x, real *factors)
{
    if (attn_dropout_is_on(d) && n > 0)
        mask(d, b, h, t, j0, n, x, factors);
}

/* y[i] *= factors[i], i < n: the same factors on a second row. */
static inline void FN(attn_dropout_scale)(const attn_dropout *d, const real *factors, size_t n,
                                          real *y)
{
    for (size_t i = 0; attn_dropout_is_on(d) && i < n; i++)
        y[i] *= factors[i];
}

/* rows rows of x (ld apart), rows t0, t0+1, ... of (b, h), each over
 * entries [j0, j0+n). */
static inline void FN(attn_dropout_rows)(const attn_dropout *d, attn_dropout_mask_fn mask,
                                         size_t b, size_t h, size_t t0, size_t rows, size_t j0,
                                         size_t n, real *x, size_t ld)
{
    for (size_t r = 0; attn_dropout_is_on(d) && r < rows; r++)
        FN(attn_dropout_row)(d, mask, b, h, t0 + r, j0, n, x + r * ld, NULL);
}

#endif /* ATTN_ENGINE_DROPOUT_H */
