/*
 * attn_ring_counters, attn_ring_counters_reset: the time and bytes of a
 * ring plan's calls on this rank (attn_mpi.h), kept in its ring (ring.h).
 */
#include <attn/attn.h>
#include <attn/attn_mpi.h>

#include "ring/ring.h"

attn_status attn_ring_counters(const attn_plan *plan, double values[ATTN_RING_COUNTER_COUNT])
{
    if (plan == NULL || values == NULL)
        return ATTN_ERR_NULL_POINTER;
    const attn_ring *ring = ring_of(plan);
    if (ring == NULL)
        return ATTN_ERR_PLAN_KIND;
    for (int c = 0; c < ATTN_RING_COUNTER_COUNT; c++)
        values[c] = ring->counters[c];
    return ATTN_OK;
}

attn_status attn_ring_counters_reset(attn_plan *plan)
{
    if (plan == NULL)
        return ATTN_ERR_NULL_POINTER;
    attn_ring *ring = ring_of(plan);
    if (ring == NULL)
        return ATTN_ERR_PLAN_KIND;
    for (int c = 0; c < ATTN_RING_COUNTER_COUNT; c++)
        ring->counters[c] = 0.0;
    return ATTN_OK;
}
