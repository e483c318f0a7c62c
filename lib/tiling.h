/*
 * Block sizes of the forward paths (forward.c) and the choice between them.
 * Not templated: plan.c sizes its buffers from these.
 */
#ifndef ATTN_TILING_H
#define ATTN_TILING_H

#include <stddef.h>

#include <attn/attn.h>

/* Query rows per block of the causal materialized path. */
#define ATTN_CAUSAL_QUERY_BLOCK 128

/* Query and key block of the tiled path. */
#define ATTN_TILE_QUERIES 128
#define ATTN_TILE_KEYS 512

/* ATTN_TILED_MIN_T, the default crossover to the tiled path, is public
 * (attn.h). */

/* Elements of the tiled path's workspace for sequence length T: the score
 * tile, three per-query statistics and one fallback row of T. */
static inline size_t attn_tiled_workspace(size_t T)
{
    return (size_t)ATTN_TILE_QUERIES * ATTN_TILE_KEYS + 3 * (size_t)ATTN_TILE_QUERIES + T;
}

#endif /* ATTN_TILING_H */
