/*
 * Block sizes of the forward and backward engines and the choice between the
 * forward paths. Not templated: plan.c sizes its buffers from these.
 */
#ifndef ATTN_TILING_H
#define ATTN_TILING_H

#include <stddef.h>

#include <attn/attn.h>

/* Query rows per block, on every path: a block is one work item of a plan
 * on threads of its own, and with a causal mask block [t0,t1) meets keys
 * [0,t1) only. */
#define ATTN_QUERY_BLOCK 128

/* Key block of the tiled path. A key block holds whole query blocks, so a
 * causal query block's diagonal lies inside one key block. */
#define ATTN_TILE_KEYS 512
_Static_assert(ATTN_TILE_KEYS % ATTN_QUERY_BLOCK == 0,
               "a causal query block's diagonal must lie in one key block");

/* On a plan's own threads the backward takes one (batch, head) per work
 * item from this many heads on; below, a few groups of key blocks of each
 * head, ATTN_BACKWARD_ITEMS items in all (each group with a dQ part of its
 * own, summed at the end), so that every thread is busy even with one head.
 * A shape's choice, never the thread count's. */
#define ATTN_HEADS_PER_ITEM_MIN 4
#define ATTN_BACKWARD_ITEMS 8

/* Groups of key blocks per (batch, head) in the backward on own threads;
 * any dimensions (a plan's are checked after it is asked). */
static inline size_t attn_backward_groups(size_t B, size_t NH, size_t T)
{
    const size_t key_blocks = T / ATTN_QUERY_BLOCK + (T % ATTN_QUERY_BLOCK != 0);
    if (B == 0 || NH == 0 || B >= ATTN_HEADS_PER_ITEM_MIN || NH >= ATTN_HEADS_PER_ITEM_MIN ||
        B * NH >= ATTN_HEADS_PER_ITEM_MIN)
        return 1;
    const size_t heads = B * NH;
    const size_t groups = (ATTN_BACKWARD_ITEMS + heads - 1) / heads;
    return groups < key_blocks ? groups : key_blocks;
}

/* The backward's tiles of P and dS: ATTN_QUERY_BLOCK rows each, this far
 * apart (not a power of two: no cache-set aliasing of their columns), in
 * the worker's tile of the tiled path, which holds both. */
#define ATTN_BACKWARD_TILE_LD (ATTN_QUERY_BLOCK + 16)
_Static_assert((size_t)ATTN_QUERY_BLOCK * ATTN_TILE_KEYS >=
                   2 * (size_t)ATTN_QUERY_BLOCK * ATTN_BACKWARD_TILE_LD,
               "the tiled path's tile holds the backward's two tiles");

/* The most rows of X per work item of the projections (Q, K and V of them
 * together) on a plan's own threads: the own kernel's MC, one packed block
 * of X per item (engine.h takes fewer for short inputs). */
#define ATTN_ROW_BLOCK 144

/* The fewest rows of a row block that the split makes shorter than
 * ATTN_ROW_BLOCK because the product is too narrow for column blocks. */
#define ATTN_ROW_BLOCK_MIN 32

/* A call of fewer floating-point operations than this (its forward's
 * products, about 10 microseconds of one core) runs on the calling thread
 * alone on every engine: handing it to other threads costs more than it
 * saves (2 threads took 8.7 us a call where 1 took 4.9, at T=48 C=64 hs=16,
 * Xeon Sapphire Rapids). Results are the same either way. */
#define ATTN_PARALLEL_MIN_FLOPS 2e6

/* ATTN_TILED_MIN_T, the default crossover to the tiled path, is public
 * (attn.h). Measured with attn-bench --path materialized,tiled (one head,
 * C=768, hs=64, f32, 1 BLAS thread, median ms, materialized / tiled):
 *            T=256        512          1024         2048          4096
 *   c=0   0.98/0.96   2.38/2.31   6.59/6.23   22.4/19.6   79.0/66.8
 *   c=1   0.92/0.91   2.07/2.03   5.31/4.87   19.3/13.5   47.9/42.1
 * The tiled path never loses; below 512 (one key block) the two do the same
 * GEMMs, so the crossover sits where the tiled path starts to save work.
 * Measured again with query blocks of 128 on both paths (attn-bench default
 * sweep, 2026-12-01, AMD EPYC, f32, one thread, materialized / tiled ms):
 *                    T=256        512          1024         2048
 *   BLAS    c=0   0.798/0.805  1.97/1.89   5.47/5.05   15.9/15.5
 *           c=1   0.740/0.749  1.66/1.65   4.08/4.02   11.2/10.8
 *   own     c=0   0.461/0.443  1.05/1.01   2.82/2.67   9.29/8.50
 *           c=1   0.433/0.432  0.899/0.893 2.15/2.15   6.17/5.82
 * still never a loss from 512 on, so the crossover stays. */

/* Elements of a tiled query block's workspace for sequence length T: the
 * score tile, three per-query statistics and one fallback row of T. */
static inline size_t attn_tiled_workspace(size_t T)
{
    return (size_t)ATTN_QUERY_BLOCK * ATTN_TILE_KEYS + 3 * (size_t)ATTN_QUERY_BLOCK + T;
}

/* Elements of a materialized query block's scores (and of the backward's
 * dS block): ATTN_QUERY_BLOCK rows of at most T keys. */
static inline size_t attn_block_workspace(size_t T)
{
    return (size_t)ATTN_QUERY_BLOCK * T;
}

#endif /* ATTN_TILING_H */
