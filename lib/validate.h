/*
 * Boundary validation of an attention call (templated over `real`): the
 * checks every entry point that runs forward.c makes, in the order the public
 * header documents. Nothing here touches array contents.
 */
#ifndef ATTN_VALIDATE_H
#define ATTN_VALIDATE_H

#include <attn/attn.h>

#include "real.h"

typedef struct attn_shape {
    size_t B, T, C, NH, hs;
} attn_shape;

/* The arrays of one forward call; Wo and weights may be NULL. */
typedef struct FN(attn_forward_arrays) {
    const real *X, *Wq, *Wk, *Wv, *Wo;
    const real *out, *weights;
} FN(attn_forward_arrays);

/* NULL pointers, zero dimensions, size overflow, BLAS range and overlap of
 * outputs with inputs, for X (B,T,C), Wq/Wk/Wv (C,NH*hs), Wo (NH*hs,C),
 * out (B,T,C or NH*hs) and weights (B,NH,T,T). */
attn_status FN(attn_validate_forward)(attn_shape shape, const FN(attn_forward_arrays) *arrays);

#endif /* ATTN_VALIDATE_H */
