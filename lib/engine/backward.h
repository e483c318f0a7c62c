/*
 * The backward pass over NH heads (templated over `real`, see real.h): the
 * gradients of sum(out * dout) for a training forward of forward.c, which
 * kept Q, K, V, the heads and each row's statistics (max, log of the sum). Arguments are
 * validated by the caller.
 */
#ifndef ATTN_BACKWARD_H
#define ATTN_BACKWARD_H

#include <stddef.h>

#include "engine/dropout.h"
#include "engine/engine.h"
#include "kernels/kernels.h"
#include "core/real.h"

typedef struct FN(attn_backward_args) {
    size_t B, T, C, NH, hs;
    real scale;
    int causal;
    attn_softmax_backward_fn softmax_backward;
    attn_softmax_from_lse_fn softmax_from_lse;
    /* inputs of the forward, passed again */
    const real *X, *Wq, *Wk, *Wv, *Wo; /* Wo NULL: no output projection */
    const real *dout;                  /* (B,T,C) with Wo, else (B,T,NH*hs) */
    /* kept by the forward */
    const real *Q, *K, *V; /* (B,T,NH*hs) */
    const real *heads;     /* (B,T,NH*hs): Y */
    const real *stats;     /* (B,NH,T,2): each row's max and log of its sum */
    /* gradients, overwritten */
    real *dX;                /* (B,T,C) */
    real *dWq, *dWk, *dWv;   /* (C,NH*hs) */
    real *dWo;               /* (NH*hs,C), written only with Wo */
    /* workspace */
    real *dQ, *dK, *dV, *dheads; /* (B,T,NH*hs) */
    real *rowdot;                /* (B,NH,T) */
    real *dQ_parts;              /* (B,NH,groups,T,hs) when attn_backward_groups > 1 */
    real *KT, *VT;               /* (B,NH,hs,T) each head's K, V transposed, own threads only */
    const attn_dropout *dropout; /* the forward's (off: p = 0), or NULL */
    attn_dropout_mask_fn dropout_mask; /* its draws (kernels.h); with dropout on */
} FN(attn_backward_args);

/* Worker tiles must hold attn_tiled_workspace(T) elements (tiling.h): the
 * backward's two tiles of ATTN_BACKWARD_TILE_LD columns fit in it. */
void FN(attn_backward_run)(const FN(attn_backward_args) *args, const FN(attn_engine) *engine);

#endif /* ATTN_BACKWARD_H */
