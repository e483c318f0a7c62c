/*
 * Which block a rank computes in each ring step, and over which queries and
 * keys: a pure function of (rank r, source rank src of the block it holds,
 * causal, zigzag, T). In step s rank r holds the K/V block of src = r - s
 * (mod P).
 *
 * Contiguous (rank r holds global chunk r), causal:
 *   src = r  the causal diagonal (local query t sees local keys j <= t)
 *   src < r  every key precedes every query: the whole block, unmasked
 *   src > r  every key follows every query: skipped
 * Zigzag (rank r holds half-chunks r and 2P-1-r of h = T/2 tokens; the
 * block of src its half-chunks src and 2P-1-src), causal:
 *   src = r  the causal diagonal again: the local tokens are in increasing
 *            global order, so local causality is global causality
 *   src < r  half src precedes both query halves (r, 2P-1-r), half 2P-1-src
 *            follows both: every query against the block's first half
 *   src > r  half r precedes both key halves: nothing for the first query
 *            half; half 2P-1-r follows both key halves (src, 2P-1-src are
 *            both below it): the second query half against the whole block
 * so every step but the diagonal is half of a block (T*T/2 scores) on every
 * rank: the load balance. Not causal: the whole block every step (attention
 * without a mask does not depend on the order of the keys).
 */
#ifndef ATTN_RING_SCHEDULE_H
#define ATTN_RING_SCHEDULE_H

#include "ring/ring.h"

static inline ring_block ring_block_of(const attn_ring *ring, int src)
{
    if (!ring->causal)
        return RING_FULL;
    if (src == ring->rank)
        return RING_DIAG;
    if (!ring->zigzag)
        return src < ring->rank ? RING_FULL : RING_SKIP;
    return src < ring->rank ? RING_FRONT : RING_BACK;
}

static inline ring_geometry ring_geometry_of(ring_block kind, size_t T)
{
    ring_geometry g = {0, T, T};
    if (kind == RING_FRONT)
        g.Tk = T / 2;
    else if (kind == RING_BACK) {
        g.q0 = T / 2;
        g.Tq = T - T / 2;
    }
    return g;
}

#endif /* ATTN_RING_SCHEDULE_H */
