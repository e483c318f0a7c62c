/*
 * The ring forward (templated over `real`): P steps; in step s rank r holds
 * the K/V block of src = r - s (mod P), computes its queries against it
 * (ring_schedule.h says which part) while the block moves on to r + 1 and
 * the next one comes from r - 1, double-buffered:
 *
 *   step s:  post  Irecv kv[(s+1)%2] <- r-1,  Isend kv[s%2] -> r+1   (s < P-1)
 *            compute block src on kv[s%2] (step 0: the caller's K, V,
 *              gathered into kv[0] first for sending, ring_pack_kv)
 *            wait  both                                             (s < P-1)
 *
 * Per sequence b, a block is one sdpa forward (B = 1 plan of the block's
 * kind, ring.h) of the rank's queries against the block's keys, on the
 * caller's Q, K, V and out in their layouts (ring_exec.h) or on the ring's
 * dense blocks:
 *   (out_s, lse_s) = attention(Q[q0:q0+Tq], K_src[0:Tk], V_src[0:Tk])
 * Step 0 (the diagonal, which every query sees) writes out and lse; each
 * later block merges into them through its lse (ring_rows.c):
 *   lse = log(e^lse + e^lse_s),  out = e^(lse_old - lse) out + e^(lse_s - lse) out_s.
 * A sequence's block is computed in pieces of its heads (ring.h,
 * RING_MAX_PIECES), and between the pieces MPI gets the chance to move the
 * step's messages (ring_progress): without it a large message would move
 * only in the wait after the computation.
 */
#include <attn/attn.h>

#include "ring/ring_comm.h"
#include "ring/ring_exec.h"
#include "ring/ring_schedule.h"

/* One sequence b of a block, its keys and values `keys`: into out and lse
 * directly (first: the whole block, q0 = 0, Tq = T) or merged into them,
 * in ring->pieces pieces of heads, MPI polled after each when `poll`. */
static attn_status FN(block_forward)(attn_ring *ring, ring_block kind, size_t b, int first,
                                     int poll, const FN(ring_args) *a, const ring_strides *x,
                                     const FN(ring_keys) *keys, real *lse)
{
    const attn_sdpa_shape s = ring->shape;
    const size_t T = s.Tq, heads = s.NH / ring->pieces, kv_heads = s.NH_kv / ring->pieces;
    const ring_geometry g = ring_geometry_of(kind, T);
    const attn_sdpa_strides q = x->st[ATTN_SDPA_Q], o = x->st[ATTN_SDPA_OUT];
    real *lse_b = lse + b * s.NH * T;
    /* the block's out (Tq,NH,hs_v) and lse (NH,Tq): the caller's, or dense buffers */
    real *out = first ? a->out + ring_at(o, b, 0, 0) : (real *)ring->block_out;
    real *out_lse = first ? lse_b : (real *)ring->block_lse;
    const attn_sdpa_strides st[ATTN_SDPA_ARRAYS] = {
        q, keys->k, keys->v, first ? o : ring_dense(g.Tq, s.NH, s.hs_v)};
    const FN(ring_args) sequence = FN(ring_sequence_args)(a->Q + ring_at(q, b, 0, g.q0), keys->K,
                                                          keys->V, out, out_lse, st);
    attn_status status = ATTN_OK;
    for (size_t piece = 0; piece < ring->pieces && status == ATTN_OK; piece++) {
        const FN(ring_args) sub =
            FN(ring_piece_args)(sequence, piece * heads, piece * kv_heads, g.Tq);
        status = FN(attn_sdpa_forward)(ring->block_plans[kind], &sub);
        if (poll)
            ring_progress(ring);
    }
    if (status == ATTN_OK && !first)
        FN(ring_merge)(g.Tq, s.NH, s.hs_v, ring->block_out, ring->block_lse,
                       a->out + ring_at(o, b, 0, g.q0), o, lse_b + g.q0, T);
    return status;
}

attn_status FN(ring_forward_run)(attn_ring *ring, const FN(ring_args) *a, const ring_strides *x)
{
    const attn_sdpa_shape s = ring->shape;
    const int P = ring->size;
    real *lse = a->lse != NULL ? a->lse : (real *)ring->lse_acc;
    real *kv[2] = {(real *)ring->kv[0], (real *)ring->kv[1]};
    attn_status status = ATTN_OK;
    for (int step = 0; step < P; step++) {
        const double start = ring_now(), waited = ring->counters[ATTN_RING_WAIT_SECONDS],
                     progressed = ring->counters[ATTN_RING_PROGRESS_SECONDS];
        const int src = (ring->rank - step + P) % P, more = step + 1 < P;
        if (step == 0 && more)
            FN(ring_pack_kv)(ring, a, x, kv[0]);
        if (more) {
            ring_post_recv(ring, RING_REQ_KV_RECV, kv[(step + 1) % 2], ring->kv_elements,
                           RING_MPI_REAL, ring_prev(ring), RING_TAG_KV);
            ring_post_send(ring, RING_REQ_KV_SEND, kv[step % 2], ring->kv_elements,
                           RING_MPI_REAL, ring_next(ring), RING_TAG_KV);
            ring_progress(ring);
        }
        const ring_block kind = ring_block_of(ring, src);
        if (kind != RING_SKIP) {
            for (size_t b = 0; b < s.B; b++) {
                /* the caller's K, V in step 0, then the travelling block */
                const FN(ring_keys) keys = step == 0
                                               ? FN(ring_caller_keys)(a, x, NULL, NULL, b)
                                               : FN(ring_block_keys)(ring, kv[step % 2], NULL, b);
                const attn_status st =
                    FN(block_forward)(ring, kind, b, step == 0, more, a, x, &keys, lse);
                if (status == ATTN_OK)
                    status = st;
            }
            ring->counters[ATTN_RING_BLOCKS] += 1.0;
        }
        ring->counters[ATTN_RING_COMPUTE_SECONDS] +=
            (ring_now() - start) - (ring->counters[ATTN_RING_WAIT_SECONDS] - waited) -
            (ring->counters[ATTN_RING_PROGRESS_SECONDS] - progressed);
        if (more) {
            ring_wait(ring, RING_REQ_KV_RECV);
            ring_wait(ring, RING_REQ_KV_SEND);
        }
        ring->counters[ATTN_RING_STEPS] += 1.0;
    }
    return status;
}
