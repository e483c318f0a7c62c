/*
 * The ring backward (templated over `real`), FlashAttention-2's ring
 * backward: the K/V blocks travel as in the forward (ring_forward.c) and
 * each carries the partial sums dK_src, dV_src of its gradients; every rank
 * adds its queries' contribution to the block it holds and passes the sums
 * on, so that after P steps they return, complete, to the block's owner.
 *
 * It differentiates the forward's merged attention: with the global out
 * and lse of each query row (the forward's results, passed in a->out and
 * a->lse), the weights of block src are P = exp(scale Q K_src^T - lse)
 * (masked on the causal diagonal) and
 *   D    = rowsum(dout o out)                      (the global out)
 *   dS   = P o (dout V_src^T - D)
 *   dQ  += scale dS K_src,   dK_src += scale dS^T Q,   dV_src += P^T dout
 * which is what attn's sdpa backward computes for one block given the
 * global out and lse: per sequence b one sdpa backward (B = 1 plan of the
 * block's kind) gives the block's dQ, dK, dV, summed here.
 *
 *   step s:  post  Irecv kv[(s+1)%2] <- r-1,  Isend kv[s%2] -> r+1   (s < P-1)
 *            post  Irecv dkv[s%2] <- r-1: the sums of block src so far (s > 0;
 *                  after the send of step s-2 from that buffer is done)
 *            compute block src: dQ += its dQ; its dK, dV (step 0: into
 *                  dkv[0]; later: a buffer, added to dkv[s%2] once arrived)
 *            post  Isend dkv[s%2] -> r+1
 *            wait  the K/V exchange                                  (s < P-1)
 *   then     Irecv dkv[P%2] <- r-1: the rank's own block's sums, complete,
 *            copied to dK, dV.
 * A skipped block (causal) passes its sums on unchanged. P = 1 is one
 * sdpa backward per sequence, straight into dQ, dK, dV.
 */
#include <attn/attn.h>

#include "ring/ring_comm.h"
#include "ring/ring_exec.h"
#include "ring/ring_schedule.h"

/* One sequence b of a block: its dQ into dQ (first: written, else added),
 * its dK, dV into keys->dK, keys->dV (overwritten). The first block is the
 * whole one (q0 = 0, Tq = T). In ring->pieces pieces of heads, MPI polled
 * after each when `poll`. */
static attn_status FN(block_backward)(attn_ring *ring, ring_block kind, size_t b, int first,
                                      int poll, const FN(ring_args) *a, const ring_strides *x,
                                      const real *dout, const FN(ring_keys) *keys, real *dQ)
{
    const attn_sdpa_shape s = ring->shape;
    const size_t T = s.Tq, heads = s.NH / ring->pieces, kv_heads = s.NH_kv / ring->pieces;
    const ring_geometry g = ring_geometry_of(kind, T);
    const attn_sdpa_strides q = x->st[ATTN_SDPA_Q], o = x->st[ATTN_SDPA_OUT];
    const attn_sdpa_strides dense_q = ring_dense(g.Tq, s.NH, s.hs);
    const ring_box q_box = {1, s.NH, g.Tq, s.hs};
    /* dQ is written with Q's strides: the first block's straight into the
     * caller's dQ, a later one's into the dense block buffer, with Q dense */
    const real *Q = a->Q + ring_at(q, b, 0, g.q0);
    attn_sdpa_strides block_q = q;
    if (!first && (q.sh != dense_q.sh || q.ld != dense_q.ld)) {
        FN(ring_copy)(q_box, Q, q, (real *)ring->q_dense, dense_q, 0);
        Q = (const real *)ring->q_dense;
        block_q = dense_q;
    }
    real *lse = a->lse + b * s.NH * T; /* the queries' global lse, (NH, Tq) */
    if (g.Tq != T) {
        const ring_box lse_box = {1, 1, s.NH, g.Tq}; /* NH rows of Tq */
        const attn_sdpa_strides from = {0, 0, T}, to = {0, 0, g.Tq};
        FN(ring_copy)(lse_box, lse + g.q0, from, (real *)ring->block_lse, to, 0);
        lse = (real *)ring->block_lse;
    }
    real *dQ_b = dQ + ring_at(q, b, 0, g.q0);
    real *dQ_block = first ? dQ_b : (real *)ring->block_out;
    const size_t at_o = ring_at(o, b, 0, g.q0); /* the rows of out and dout */
    const attn_sdpa_strides st[ATTN_SDPA_ARRAYS] = {block_q, keys->k, keys->v, o};
    const FN(ring_args) sequence =
        FN(ring_sequence_args)(Q, keys->K, keys->V, a->out + at_o, lse, st);
    attn_status status = ATTN_OK;
    for (size_t piece = 0; piece < ring->pieces && status == ATTN_OK; piece++) {
        const size_t h0 = piece * heads, g0 = piece * kv_heads;
        const FN(ring_args) sub = FN(ring_piece_args)(sequence, h0, g0, g.Tq);
        status = FN(attn_sdpa_backward)(ring->block_plans[kind], &sub, dout + at_o + h0 * o.sh,
                                        dQ_block + h0 * block_q.sh, keys->dK + g0 * keys->k.sh,
                                        keys->dV + g0 * keys->v.sh);
        if (poll)
            ring_progress(ring);
    }
    if (status == ATTN_OK && !first)
        FN(ring_copy)(q_box, dQ_block, dense_q, dQ_b, q, 1);
    return status;
}

/* P = 1: the sdpa backward of each sequence on the caller's arrays. */
static attn_status FN(backward_alone)(attn_ring *ring, const FN(ring_args) *a,
                                      const ring_strides *x, const real *dout, real *dQ,
                                      real *dK, real *dV)
{
    const double start = ring_now();
    const ring_block kind = ring_block_of(ring, ring->rank);
    attn_status status = ATTN_OK;
    for (size_t b = 0; b < ring->shape.B && status == ATTN_OK; b++) {
        const FN(ring_keys) keys = FN(ring_caller_keys)(a, x, dK, dV, b);
        status = FN(block_backward)(ring, kind, b, 1, 0, a, x, dout, &keys, dQ);
    }
    ring->counters[ATTN_RING_BLOCKS] += 1.0;
    ring->counters[ATTN_RING_STEPS] += 1.0;
    ring->counters[ATTN_RING_COMPUTE_SECONDS] += ring_now() - start;
    return status;
}

attn_status FN(ring_backward_run)(attn_ring *ring, const FN(ring_args) *a,
                                  const ring_strides *x, const real *dout, real *dQ, real *dK,
                                  real *dV)
{
    const attn_sdpa_shape s = ring->shape;
    const int P = ring->size;
    if (P == 1)
        return FN(backward_alone)(ring, a, x, dout, dQ, dK, dV);
    const size_t T = s.Tq, n = ring->kv_elements;
    const attn_sdpa_strides dense_k = ring_dense(T, s.NH_kv, s.hs),
                            dense_v = ring_dense(T, s.NH_kv, s.hs_v);
    real *kv[2] = {(real *)ring->kv[0], (real *)ring->kv[1]};
    real *dkv[2] = {(real *)ring->dkv[0], (real *)ring->dkv[1]};
    real *block_dK = (real *)ring->block_dkv, *block_dV = block_dK + T * s.NH_kv * s.hs;
    attn_status status = ATTN_OK;
    for (int step = 0; step < P; step++) {
        const double start = ring_now(), waited = ring->counters[ATTN_RING_WAIT_SECONDS],
                     progressed = ring->counters[ATTN_RING_PROGRESS_SECONDS];
        const int src = (ring->rank - step + P) % P, more = step + 1 < P;
        real *held = kv[step % 2], *sums = dkv[step % 2];
        const int send_slot = RING_REQ_DKV_SEND0 + step % 2;
        if (step == 0) /* the caller's K, V gathered to travel (and computed on) */
            FN(ring_pack_kv)(ring, a, x, held);
        if (more) {
            ring_post_recv(ring, RING_REQ_KV_RECV, kv[(step + 1) % 2], n, RING_MPI_REAL,
                           ring_prev(ring), RING_TAG_KV);
            ring_post_send(ring, RING_REQ_KV_SEND, held, n, RING_MPI_REAL, ring_next(ring),
                           RING_TAG_KV);
        }
        int arrived = step == 0; /* the block's sums so far are in `sums` */
        if (step > 0) {
            ring_wait(ring, send_slot); /* step - 2's send from `sums` */
            ring_post_recv(ring, RING_REQ_DKV_RECV, sums, n, RING_MPI_REAL, ring_prev(ring),
                           RING_TAG_DKV);
        }
        ring_progress(ring);
        const ring_block kind = ring_block_of(ring, src);
        if (kind != RING_SKIP) {
            const ring_geometry g = ring_geometry_of(kind, T);
            const ring_box k_box = {1, s.NH_kv, g.Tk, s.hs}, v_box = {1, s.NH_kv, g.Tk, s.hs_v};
            for (size_t b = 0; b < s.B; b++) {
                FN(ring_keys) keys = FN(ring_block_keys)(ring, held, sums, b);
                real *dK_b = keys.dK, *dV_b = keys.dV; /* sequence b's sums */
                if (step > 0) /* the block's own, in the same rows */
                    keys.dK = block_dK, keys.dV = block_dV;
                const attn_status st =
                    FN(block_backward)(ring, kind, b, step == 0, 1, a, x, dout, &keys, dQ);
                if (status == ATTN_OK)
                    status = st;
                if (step > 0) {
                    if (!arrived)
                        ring_wait(ring, RING_REQ_DKV_RECV);
                    arrived = 1;
                    FN(ring_copy)(k_box, block_dK, dense_k, dK_b, dense_k, 1);
                    FN(ring_copy)(v_box, block_dV, dense_v, dV_b, dense_v, 1);
                }
            }
            ring->counters[ATTN_RING_BLOCKS] += 1.0;
        }
        if (!arrived)
            ring_wait(ring, RING_REQ_DKV_RECV);
        ring_post_send(ring, send_slot, sums, n, RING_MPI_REAL, ring_next(ring), RING_TAG_DKV);
        ring->counters[ATTN_RING_COMPUTE_SECONDS] +=
            (ring_now() - start) - (ring->counters[ATTN_RING_WAIT_SECONDS] - waited) -
            (ring->counters[ATTN_RING_PROGRESS_SECONDS] - progressed);
        if (more) {
            ring_wait(ring, RING_REQ_KV_RECV);
            ring_wait(ring, RING_REQ_KV_SEND);
        }
        ring->counters[ATTN_RING_STEPS] += 1.0;
    }
    /* the rank's own block came back with every rank's contribution */
    real *own = dkv[P % 2];
    ring_wait(ring, RING_REQ_DKV_SEND0 + P % 2);
    ring_post_recv(ring, RING_REQ_DKV_RECV, own, n, RING_MPI_REAL, ring_prev(ring),
                   RING_TAG_DKV);
    const double waited = ring->counters[ATTN_RING_WAIT_SECONDS];
    ring_wait(ring, RING_REQ_DKV_RECV);
    ring->counters[ATTN_RING_RETURN_SECONDS] += ring->counters[ATTN_RING_WAIT_SECONDS] - waited;
    const double start = ring_now();
    const ring_box k_all = {s.B, s.NH_kv, T, s.hs}, v_all = {s.B, s.NH_kv, T, s.hs_v};
    FN(ring_copy)(k_all, own, dense_k, dK, x->st[ATTN_SDPA_K], 0);
    FN(ring_copy)(v_all, own + ring->k_elements, dense_v, dV, x->st[ATTN_SDPA_V], 0);
    ring->counters[ATTN_RING_COMPUTE_SECONDS] += ring_now() - start;
    ring_wait(ring, RING_REQ_DKV_SEND0 + (P - 1) % 2);
    return status;
}
