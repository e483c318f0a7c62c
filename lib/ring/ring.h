/*
 * The state of a ring plan (attn_mpi.h), not templated: the communicator,
 * the local shape, the schedule of blocks and the buffers the ring steps
 * use. A ring plan is an attn_plan of kind ATTN_PLAN_RING (lib/plan/plan.h)
 * whose `extension` is this struct and whose `release` frees it, so that
 * attn_plan_destroy (libattn) frees a ring plan like any other.
 *
 * Shapes (local, per rank; T = Tq = Tk tokens of each of B sequences),
 * all dense whatever the caller's layouts (ring_exec.h):
 *   travelling block  K (B,T,NH_kv,hs), then V (B,T,NH_kv,hs_v), gathered
 *   from the caller's K, V (forward: kv[2]; backward: kv[2] and their dK,
 *   dV partial sums dkv[2], the same layout, scattered to the caller's dK,
 *   dV at the end)
 *   block_out  (T,NH,max(hs,hs_v))  one sequence's block out (forward) or dQ (backward)
 *   block_lse  (NH,T)               one sequence's block lse, or the global lse
 *                                   of the zigzag back half-chunk's queries (backward)
 *   block_dkv  (T,NH_kv,hs) then (T,NH_kv,hs_v): one sequence's block dK, dV
 *   lse_acc    (B,NH,T)             the forward's running lse when the caller has none
 *   q_dense    (T,NH,hs)            backward: one sequence's Q packed dense for the
 *                                   blocks after the first, when the caller's Q is
 *                                   not (T,NH,hs) rows (the block backward writes dQ
 *                                   with Q's strides, and their dQ goes to the dense
 *                                   block_out)
 */
#ifndef ATTN_RING_H
#define ATTN_RING_H

#include <stddef.h>

#include <mpi.h>

#include <attn/attn.h>
#include <attn/attn_mpi.h>

#include "plan/plan.h"

/* The kinds of block a rank computes in a step (ring_schedule.h). */
typedef enum ring_block {
    RING_SKIP = -1, /* wholly masked (causal): nothing to compute */
    RING_FULL = 0,  /* every local query against every key of the block */
    RING_DIAG,      /* the rank's own block, causal */
    RING_FRONT,     /* zigzag, source below the rank: every query, the block's first half */
    RING_BACK,      /* zigzag, source above: the second half's queries, every key */
    RING_BLOCK_KINDS
} ring_block;

/* The queries [q0, q0 + Tq) of the local chunk against the keys [0, Tk) of
 * the block, per sequence. */
typedef struct ring_geometry {
    size_t q0, Tq, Tk;
} ring_geometry;

/* The most pieces of one sequence's block (ring_plan.c: the largest divisor
 * of NH_kv up to this). An MPI without a progress thread moves a large
 * message only inside MPI calls (with shared memory the receiver copies it
 * there), so the pieces are where the messages of a step make progress
 * while the step computes. */
#define RING_MAX_PIECES 4

/* Message tags (on the plan's own communicator). */
enum { RING_TAG_KV = 1, RING_TAG_DKV = 2 };

/* The most elements in one MPI message (counts are int). */
#define RING_CHUNK_ELEMENTS ((size_t)1 << 30)

typedef struct attn_ring {
    MPI_Comm comm; /* the caller's, duplicated */
    int rank, size;
    attn_sdpa_shape shape; /* local; hs_v resolved, Tq = Tk */
    int causal, zigzag, inference;
    double scale; /* resolved: never <= 0 */
    size_t element_size;
    size_t pieces; /* a sequence's block is computed in pieces of NH_kv / pieces key/value
                    * heads (and their query heads), MPI polled between them */
    attn_plan *block_plans[RING_BLOCK_KINDS]; /* B = 1 sdpa plans of one piece's heads;
                                               * NULL when never used */
    unsigned block_threads;                   /* their attn_plan_set_threads setting */
    size_t k_elements, kv_elements;           /* of a travelling block: K, and K with V */
    size_t chunks;                            /* messages per travelling block */
    void *memory;                             /* one allocation, holding: */
    void *kv[2], *dkv[2];                     /* dkv: NULL in an inference plan */
    void *block_out, *block_lse, *block_dkv, *lse_acc, *q_dense;
    MPI_Request *requests;                    /* RING_REQUEST_SLOTS * chunks */
    double counters[ATTN_RING_COUNTER_COUNT];
} attn_ring;

/* Request slots: the K/V exchange (receive, send), the dK/dV receive and
 * the two dK/dV sends in flight. */
enum { RING_REQ_KV_RECV = 0, RING_REQ_KV_SEND, RING_REQ_DKV_RECV, RING_REQ_DKV_SEND0,
       RING_REQ_DKV_SEND1, RING_REQUEST_SLOTS };

/* The ring of a ring plan, or NULL (not one). */
static inline attn_ring *ring_of(const attn_plan *plan)
{
    return plan->kind == ATTN_PLAN_RING ? (attn_ring *)plan->extension : NULL;
}

/* Gives the plan's block plans the threads setting of the ring plan
 * (attn_plan_set_threads on it) when it changed since they got theirs;
 * ring_plan.c. Local. OUT_OF_MEMORY (attn_plan_set_threads's) or OK. */
attn_status ring_sync_threads(attn_plan *plan, attn_ring *ring);

#endif /* ATTN_RING_H */
