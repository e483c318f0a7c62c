/*
 * The ring's messages and its agreement on statuses (not templated): K/V
 * blocks and their dK/dV partial sums go to the next rank and come from
 * the previous one as non-blocking point-to-point messages of at most
 * RING_CHUNK_ELEMENTS elements each (MPI counts are int), on the plan's
 * own communicator; waits are timed into the plan's counters.
 */
#ifndef ATTN_RING_COMM_H
#define ATTN_RING_COMM_H

#include <stddef.h>

#include <mpi.h>

#include <attn/attn.h>

#include "ring/ring.h"

/* Every rank's `local` status made one: the status of the lowest-numbered
 * rank whose status is not ATTN_OK, or ATTN_OK. Collective over comm. */
attn_status ring_agree(MPI_Comm comm, attn_status local);

/* The ranks a block comes from and goes to. */
static inline int ring_next(const attn_ring *ring)
{
    return ring->rank + 1 < ring->size ? ring->rank + 1 : 0;
}
static inline int ring_prev(const attn_ring *ring)
{
    return ring->rank > 0 ? ring->rank - 1 : ring->size - 1;
}

/* The requests of one slot (ring.h: RING_REQ_*), ring->chunks of them. */
static inline MPI_Request *ring_slot(const attn_ring *ring, int slot)
{
    return ring->requests + (size_t)slot * ring->chunks;
}

/* Posts the receive of `elements` elements of `type` into buf from rank
 * `from` (or the send of buf to rank `to`) in the requests of `slot`. */
void ring_post_recv(attn_ring *ring, int slot, void *buf, size_t elements, MPI_Datatype type,
                    int from, int tag);
void ring_post_send(attn_ring *ring, int slot, const void *buf, size_t elements,
                    MPI_Datatype type, int to, int tag);

/* Waits for the requests of `slot`, adding the time to ATTN_RING_WAIT_SECONDS. */
void ring_wait(attn_ring *ring, int slot);

/* Lets MPI move the messages in flight (MPI_Testall over every slot): called
 * between the pieces of a step's computation, since an MPI library without
 * a progress thread moves a large message only inside MPI calls. */
void ring_progress(attn_ring *ring);

/* Seconds on MPI's clock. */
static inline double ring_now(void)
{
    return MPI_Wtime();
}

#endif /* ATTN_RING_COMM_H */
