/*
 * The forward pass over NH heads, shared by every public entry point that
 * runs attention (templated over `real`, see real.h). Arguments are validated
 * by the caller; this layer only computes.
 */
#ifndef ATTN_FORWARD_H
#define ATTN_FORWARD_H

#include <stddef.h>

#include "kernels.h"
#include "real.h"
#include "tiling.h"

typedef struct FN(attn_forward_args) {
    size_t B, T, C, NH, hs;
    real scale;
    int causal;
    attn_softmax_row_fn softmax_row;
    attn_softmax_online_fn softmax_online;
    const real *X;  /* (B,T,C) */
    const real *Wq; /* (C,NH*hs), head h in columns [h*hs, (h+1)*hs) */
    const real *Wk; /* (C,NH*hs) */
    const real *Wv; /* (C,NH*hs) */
    const real *Wo; /* (NH*hs,C) or NULL: no output projection */
    real *out;      /* (B,T,C) with Wo, else (B,T,NH*hs) */
    real *P;        /* (B,NH,T,T) attention weights, or NULL: scores/tiled */
} FN(attn_forward_args);

typedef struct FN(attn_forward_workspace) {
    real *Q, *K, *V; /* (B,T,NH*hs) each; kept for a backward */
    real *heads;     /* (B,T,NH*hs) concatenated heads, used when Wo is set */
    real *scores;    /* (T,T) reused per head, or NULL; used when args.P is NULL */
    real *tiled;     /* attn_tiled_workspace(T), or NULL; used when P and scores are */
} FN(attn_forward_workspace);

void FN(attn_forward_run)(const FN(attn_forward_args) *args, const FN(attn_forward_workspace) *ws);

#endif /* ATTN_FORWARD_H */
