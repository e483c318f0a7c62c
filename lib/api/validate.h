/*
 * Boundary validation of attention calls (templated over `real`), in the
 * order the public header documents. Nothing here touches array contents.
 */
#ifndef ATTN_VALIDATE_H
#define ATTN_VALIDATE_H

#include <attn/attn.h>

#include "core/real.h"
#include "plan/shape.h"

/* The arrays of one forward call; Wo and weights may be NULL. */
typedef struct FN(attn_forward_arrays) {
    const real *X, *Wq, *Wk, *Wv, *Wo;
    const real *out, *weights;
} FN(attn_forward_arrays);

/* The arrays of one backward call; Wo and dWo may be NULL together. */
typedef struct FN(attn_backward_arrays) {
    const real *X, *Wq, *Wk, *Wv, *Wo, *dout;
    const real *dX, *dWq, *dWk, *dWv, *dWo;
} FN(attn_backward_arrays);

/* NULL_POINTER for X, Wq, Wk, Wv or out; ZERO_DIMENSION for any of B, T, C,
 * NH, hs. */
attn_status FN(attn_validate_presence)(attn_shape shape, const FN(attn_forward_arrays) *arrays);

/* SIZE_OVERFLOW, BLAS_RANGE, then ALIASING for X (B,T,C), Wq/Wk/Wv (C,D),
 * Wo (D,C), out (B,T,C or D) and weights (B,NH,T,T), D = NH*hs. */
attn_status FN(attn_validate_extent)(attn_shape shape, const FN(attn_forward_arrays) *arrays);

/* Presence, then extent. */
attn_status FN(attn_validate_forward)(attn_shape shape, const FN(attn_forward_arrays) *arrays);

/* NULL_POINTER for a required backward array (dWo is required with Wo). */
attn_status FN(attn_validate_backward_presence)(const FN(attn_backward_arrays) *arrays);

/* ALIASING: a gradient overlapping an input or another gradient. The shape
 * is a plan's, already known to be free of overflow. */
attn_status FN(attn_validate_backward_aliasing)(attn_shape shape,
                                                const FN(attn_backward_arrays) *arrays);

#endif /* ATTN_VALIDATE_H */
