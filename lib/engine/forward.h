/*
 * The forward pass over NH heads, shared by every public entry point that
 * runs attention (templated over `real`, see real.h). Arguments are validated
 * by the caller; this layer only computes.
 */
#ifndef ATTN_FORWARD_H
#define ATTN_FORWARD_H

#include <stddef.h>

#include "engine/dropout.h"
#include "engine/engine.h"
#include "kernels/kernels.h"
#include "core/real.h"
#include "engine/sdpa.h"

typedef struct FN(attn_forward_args) {
    size_t B, T, C, NH, hs;
    real scale;
    int causal;
    int tiled; /* without P: the tiled path (1) or materialized query blocks (0) */
    attn_softmax_rows_fn softmax_rows;
    attn_softmax_online_fn softmax_online;
    attn_softmax_from_lse_fn softmax_from_lse;
    const real *X;  /* (B,T,C) */
    const real *Wq; /* (C,NH*hs), head h in columns [h*hs, (h+1)*hs) */
    const real *Wk; /* (C,NH*hs) */
    const real *Wv; /* (C,NH*hs) */
    const real *Wo; /* (NH*hs,C) or NULL: no output projection */
    real *out;      /* (B,T,C) with Wo, else (B,T,NH*hs) */
    real *P;        /* (B,NH,T,T) attention weights, or NULL */
    /* workspace, kept for a backward */
    real *Q, *K, *V; /* (B,T,NH*hs) each */
    real *heads;     /* (B,T,NH*hs) concatenated heads, used when Wo or stats is set */
    real *stats;     /* (B,NH,T,2) or NULL: a training forward keeps each row's max and
                      * log of its sum (tiled path, whatever `tiled` says) and the
                      * heads, and recomputes P from them when P is wanted */
    real *KT;        /* (B,NH,hs,T) each head's K transposed, or NULL: scores as Q K^T */
    const attn_dropout *dropout; /* training: the plan's (off: p = 0); or NULL */
    attn_dropout_mask_fn dropout_mask; /* its draws (kernels.h); with dropout on */
    /* An inference forward without P on the tiled path, on own threads:
     * the heads by the sdpa engine (sdpa_forward.c) on these arguments
     * (Q, K, V and the heads in place, rows D apart, K^T and V packed
     * once in the plan's KT buffer), instead of the query blocks below;
     * or NULL. */
    const FN(attn_sdpa_run_args) *sdpa;
} FN(attn_forward_args);

/* Worker tiles must hold attn_block_workspace(T) elements, or
 * attn_tiled_workspace(T) when args.stats is set, or args.tiled and args.P is
 * NULL (tiling.h); with args.sdpa, attn_sdpa_tile_elements of its layout. */
void FN(attn_forward_run)(const FN(attn_forward_args) *args, const FN(attn_engine) *engine);

#endif /* ATTN_FORWARD_H */
