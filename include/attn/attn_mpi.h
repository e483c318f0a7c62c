/*
 * attn_mpi — ring attention over MPI (libattn_mpi, on top of libattn).
 *
 * The sequence is split over the P ranks of a communicator; each rank holds
 * its queries, keys and values, and the key/value blocks travel around the
 * ring (rank r sends to r+1 and receives from r-1) while each rank computes
 * its queries against the block it holds. The partial results of the blocks
 * merge through their log-sum-exp; the backward sends the dK, dV partial
 * sums around the ring with their K, V block (FlashAttention-2's ring
 * backward), so that each rank ends with the gradients of its own tokens.
 * attn.h's conventions hold (statuses, shapes, _f32/_f64, untouched outputs
 * on error), with these additions:
 *
 *  - Collective calls: attn_ring_plan_create, attn_ring_forward_* and
 *    attn_ring_backward_* are called by every rank of the communicator, in
 *    the same order. Their status is the same on every rank: each rank
 *    checks its own arguments, then the ranks agree (an MPI_Allreduce)
 *    before any data moves (and once more at the end), and every rank
 *    returns the status of the
 *    lowest-numbered rank that failed; no rank is left waiting. The
 *    exceptions, which return at once on the rank that has them (there is
 *    no communicator to tell the others through): a NULL plan or a plan that
 *    is not a ring plan (ATTN_ERR_NULL_POINTER, ATTN_ERR_PLAN_KIND) in the
 *    forward and backward, and comm == MPI_COMM_NULL at creation
 *    (ATTN_ERR_NULL_POINTER).
 *  - MPI must be initialized (any thread level: only the calling thread
 *    makes MPI calls). Failures of MPI itself go to the communicator's error
 *    handler (MPI_ERRORS_ARE_FATAL unless the caller set another); attn
 *    does not recover from them.
 *  - Layout. Every rank holds local->Tq = local->Tk consecutive tokens of
 *    each of the B sequences, rank r the global tokens [r*Tq, (r+1)*Tq), so
 *    that the global sequence has T = P*Tq tokens. With ATTN_ZIGZAG (Tq
 *    even) rank r holds the half-chunks r and 2P-1-r of the 2P half-chunks
 *    of Tq/2 tokens, in that order: local token t < Tq/2 is global token
 *    r*Tq/2 + t, local token Tq/2 + u is global token (2P-1-r)*Tq/2 + u
 *    (the causal load balance: every rank then does the same work).
 *    Q, K, V, out, dout, dQ, dK, dV are the local parts in any layout, as
 *    attn_sdpa_forward_* (attn.h, "The arrays of one call": the batch,
 *    head and row strides of attn_sdpa_args_*, with the same rules; dout
 *    takes out's strides, dQ, dK, dV those of Q, K, V), read and written
 *    where they are; lse is (B,NH,Tq), dense. The results
 *    equal attn_sdpa_forward_* / attn_sdpa_backward_* on the gathered
 *    sequences (Tq = Tk = T, ATTN_CAUSAL as given), restricted to the rank's
 *    own tokens: out and lse of its queries, dQ, dK, dV of its tokens.
 *  - Not supported: masks, key lengths (a->mask and a->key_lengths must be
 *    NULL, else ATTN_ERR_BAD_SHAPE) and sliding windows.
 *
 * Per-block work runs on libattn's sdpa engine, on sdpa plans the ring plan
 * owns (one per kind of block: whole, causal diagonal, and for a causal
 * zigzag ring the two half-chunk blocks), at ATTN_THREADS_AUTO (the
 * environment variable ATTN_NUM_THREADS applies) or at the setting given to
 * the ring plan with attn_plan_set_threads, which reaches them at the next
 * call (attn_plan_set_threads(plan, n >= 2) also starts the n - 1 threads
 * every plan gets, which a ring plan leaves idle). A causal ring skips the
 * blocks that are wholly masked. Each sequence's block is computed in up to
 * 4 pieces of its key/value heads, with MPI_Testall between them, so that
 * an MPI without a progress thread moves the step's messages during the
 * computation (docs/scaling-model.md). Every layout costs the copies of
 * the dense one: the travelling K/V blocks are dense, gathered from K and
 * V once per call (and dK, dV scattered back from them once); the blocks
 * read Q and write out in place, and the backward packs a sequence's Q
 * for each block after the first only when it is not dense (T,NH,hs) rows.
 * attn_plan_destroy frees a ring plan and its duplicated communicator
 * (MPI_Comm_free, collective in MPI's terms: destroy the plan on every
 * rank, before MPI_Finalize).
 */
#ifndef ATTN_ATTN_MPI_H
#define ATTN_ATTN_MPI_H

#include <mpi.h>

#include <attn/attn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The zigzag layout (above). A bit no flag of attn.h uses. */
#define ATTN_ZIGZAG (1u << 8)

/* Creates a ring plan in *plan (left untouched on error) for the local part
 * `local` of every rank of comm (the same on every rank), dtype, scale
 * (<= 0: 1/sqrt(hs)) and flags ATTN_CAUSAL, ATTN_INFERENCE (no backward)
 * and ATTN_ZIGZAG. The plan duplicates comm (its messages never meet the
 * caller's) and holds two travelling K/V blocks of B*Tq*NH_kv*(hs + hs_v)
 * elements (in training two dK/dV blocks more), a block's out and lse,
 * and the sdpa plans of its blocks (attn_sdpa_plan_create, B = 1).
 * Collective. Errors, in order: NULL_POINTER (plan, local; comm
 * MPI_COMM_NULL: local only), BAD_DTYPE, BAD_FLAGS, ZERO_DIMENSION,
 * BAD_SHAPE (NH % NH_kv, Tq != Tk, an odd Tq with ATTN_ZIGZAG, or ranks
 * that disagree on dtype, flags, shape or scale), SIZE_OVERFLOW (an array,
 * a buffer, or the global length P*Tq), BLAS_RANGE, BAD_SCALE,
 * OUT_OF_MEMORY. */
ATTN_API attn_status attn_ring_plan_create(attn_plan **plan, MPI_Comm comm, attn_dtype dtype,
                                           const attn_sdpa_shape *local, double scale,
                                           unsigned flags);

/* The forward: out (and lse when set) of the rank's queries. Collective.
 * Errors, in order: NULL_POINTER (plan: local only; a, Q, K, V, out),
 * PLAN_KIND (not a ring plan: local only), DTYPE_MISMATCH, BAD_SHAPE (a
 * mask or key lengths), BAD_STRIDE, SIZE_OVERFLOW, BLAS_RANGE, ALIASING (as
 * attn_sdpa_forward_*), OUT_OF_MEMORY (threads set on the plan could not
 * be had). */
ATTN_API attn_status attn_ring_forward_f32(attn_plan *plan, const attn_sdpa_args_f32 *a);
ATTN_API attn_status attn_ring_forward_f64(attn_plan *plan, const attn_sdpa_args_f64 *a);

/* The backward: dQ, dK, dV of the rank's tokens (with the strides of Q,
 * K, V), overwritten with the gradients of the global sum(out * dout)
 * (dout with out's strides), from a->out and a->lse of the ring forward of
 * the same inputs.
 * Collective. Errors: as the forward, NULL_POINTER also for lse, dout, dQ,
 * dK, dV, INFERENCE_PLAN right after DTYPE_MISMATCH, and ALIASING for a
 * gradient overlapping an input (out, lse and dout included) or another
 * gradient (as attn_sdpa_backward_*). */
ATTN_API attn_status attn_ring_backward_f32(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                            const float *dout, float *dQ, float *dK, float *dV);
ATTN_API attn_status attn_ring_backward_f64(attn_plan *plan, const attn_sdpa_args_f64 *a,
                                            const double *dout, double *dQ, double *dK,
                                            double *dV);

/* ---- counters: where a ring plan's time and bytes go, on this rank -------
 * Every forward and backward adds to them (reading the clock a few times
 * per ring step; they never change a result). */
typedef enum attn_ring_counter {
    ATTN_RING_CALLS = 0,        /* forwards and backwards that ran */
    ATTN_RING_STEPS,            /* ring steps: P per call */
    ATTN_RING_BLOCKS,           /* blocks computed (a causal ring skips masked ones) */
    ATTN_RING_COMPUTE_SECONDS,  /* computing: block products, merges, packing, sums */
    ATTN_RING_PROGRESS_SECONDS, /* in MPI between a step's pieces of computation (MPI_Testall,
                                 * which moves the messages in flight: with shared memory
                                 * it may copy them) */
    ATTN_RING_WAIT_SECONDS,     /* blocked on messages (MPI_Waitall), in all */
    ATTN_RING_RETURN_SECONDS,   /* of which the backward's wait for its own block's dK, dV
                                 * after the last step (the one message no computation can
                                 * hide: it leaves the previous rank after its last step) */
    ATTN_RING_BYTES_SENT,       /* payload bytes this rank sent */
    ATTN_RING_BYTES_RECEIVED,   /* payload bytes this rank received */
    ATTN_RING_COUNTER_COUNT
} attn_ring_counter;

/* values[c] for every c < ATTN_RING_COUNTER_COUNT, since the plan was
 * created or the counters reset. Local (not collective). Errors:
 * NULL_POINTER (plan, values), PLAN_KIND. */
ATTN_API attn_status attn_ring_counters(const attn_plan *plan,
                                        double values[ATTN_RING_COUNTER_COUNT]);
/* Sets the counters to 0. Local. Errors: NULL_POINTER, PLAN_KIND. */
ATTN_API attn_status attn_ring_counters_reset(attn_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_ATTN_MPI_H */
