/*
 * The ring's messages and status agreement (ring_comm.h).
 */
#include "ring/ring_comm.h"

attn_status ring_agree(MPI_Comm comm, attn_status local)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* the largest key is the lowest failing rank's: (size - rank) above the
     * status's byte; 0 when every rank is fine */
    const long long key =
        local != ATTN_OK ? (long long)(size - rank) * 256 + (long long)local : 0;
    long long agreed = 0;
    MPI_Allreduce(&key, &agreed, 1, MPI_LONG_LONG, MPI_MAX, comm);
    return (attn_status)(agreed % 256);
}

/* Posts the chunks of one message in the requests of `slot`. */
static void post(attn_ring *ring, int slot, const void *buf, size_t elements,
                 MPI_Datatype type, int peer, int tag, int send)
{
    MPI_Request *requests = ring_slot(ring, slot);
    const char *at = buf;
    for (size_t c = 0; c < ring->chunks; c++) {
        const size_t first = c * RING_CHUNK_ELEMENTS;
        const size_t count = first >= elements                          ? 0
                             : elements - first > RING_CHUNK_ELEMENTS ? RING_CHUNK_ELEMENTS
                                                                        : elements - first;
        if (count == 0) {
            requests[c] = MPI_REQUEST_NULL;
            continue;
        }
        if (send)
            MPI_Isend(at, (int)count, type, peer, tag, ring->comm, &requests[c]);
        else
            MPI_Irecv((char *)at, (int)count, type, peer, tag, ring->comm, &requests[c]);
        at += count * ring->element_size;
    }
    ring->counters[send ? ATTN_RING_BYTES_SENT : ATTN_RING_BYTES_RECEIVED] +=
        (double)elements * (double)ring->element_size;
}

void ring_post_recv(attn_ring *ring, int slot, void *buf, size_t elements, MPI_Datatype type,
                    int from, int tag)
{
    post(ring, slot, buf, elements, type, from, tag, 0);
}

void ring_post_send(attn_ring *ring, int slot, const void *buf, size_t elements,
                    MPI_Datatype type, int to, int tag)
{
    post(ring, slot, buf, elements, type, to, tag, 1);
}

void ring_wait(attn_ring *ring, int slot)
{
    const double start = ring_now();
    MPI_Waitall((int)ring->chunks, ring_slot(ring, slot), MPI_STATUSES_IGNORE);
    ring->counters[ATTN_RING_WAIT_SECONDS] += ring_now() - start;
}

void ring_progress(attn_ring *ring)
{
    const double start = ring_now();
    int done = 0;
    MPI_Testall((int)(RING_REQUEST_SLOTS * ring->chunks), ring->requests, &done,
                MPI_STATUSES_IGNORE);
    ring->counters[ATTN_RING_PROGRESS_SECONDS] += ring_now() - start;
}
