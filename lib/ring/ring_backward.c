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

#include "ring_comm.h"
#include "ring_exec.h"
#include "ring_schedule.h"

/* The block's keys of one sequence b: K, V with strides ldk, ldv and their
 * gradients dK, dV written with the same strides. */
typedef struct FN(block_keys) {
    const real *K, *V;
    size_t ldk, ldv;
    real *dK, *dV;
} FN(block_keys);

/* One sequence b of a block: its dQ into dQ (first: written, else added),
 * its dK, dV into keys->dK, keys->dV (overwritten). The first block is the
 * whole one (q0 = 0, Tq = T). In ring->pieces pieces of heads, MPI polled
 * after each when `poll`. */
static attn_status FN(block_backward)(attn_ring *ring, ring_block kind, size_t b, int first,
                                      int poll, const FN(ring_args) *a, const ring_strides *x,
                                      const real *dout, const FN(block_keys) *keys, real *dQ)
{
    const attn_sdpa_shape s = ring->shape;
    const size_t T = s.Tq, q_width = s.NH * s.hs;
    const size_t heads = s.NH / ring->pieces, kv_heads = s.NH_kv / ring->pieces;
    const ring_geometry g = ring_geometry_of(kind, T);
    const real *Q = a->Q + (b * T + g.q0) * x->ldq;
    size_t ldq = x->ldq;
    /* dQ is written with Q's stride: the first block's straight into the
     * caller's dQ, a later one's into the dense block buffer, with Q dense */
    if (!first && x->ldq != q_width) {
        FN(ring_copy_rows)(g.Tq, q_width, Q, x->ldq, (real *)ring->q_dense, q_width);
        Q = (const real *)ring->q_dense;
        ldq = q_width;
    }
    real *lse = a->lse + b * s.NH * T; /* the queries' global lse, (NH, Tq) */
    if (g.Tq != T) {
        FN(ring_copy_rows)(s.NH, g.Tq, lse + g.q0, T, (real *)ring->block_lse, g.Tq);
        lse = (real *)ring->block_lse;
    }
    real *dQ_b = dQ + (b * T + g.q0) * x->ldq;
    real *dQ_block = first ? dQ_b : (real *)ring->block_out;
    const size_t rows = b * T + g.q0;
    attn_status status = ATTN_OK;
    for (size_t piece = 0; piece < ring->pieces && status == ATTN_OK; piece++) {
        const size_t h0 = piece * heads, g0 = piece * kv_heads;
        FN(ring_args) sub = {0};
        sub.Q = Q + h0 * s.hs;
        sub.ldq = ldq;
        sub.K = keys->K + g0 * s.hs;
        sub.ldk = keys->ldk;
        sub.V = keys->V + g0 * s.hs_v;
        sub.ldv = keys->ldv;
        sub.out = a->out + rows * x->ldo + h0 * s.hs_v;
        sub.ldo = x->ldo;
        sub.lse = lse + h0 * g.Tq;
        status = FN(attn_sdpa_backward)(ring->block_plans[kind], &sub,
                                        dout + rows * x->ldo + h0 * s.hs_v,
                                        dQ_block + h0 * s.hs, keys->dK + g0 * s.hs,
                                        keys->dV + g0 * s.hs_v);
        if (poll)
            ring_progress(ring);
    }
    if (status == ATTN_OK && !first)
        FN(ring_add_rows)(g.Tq, q_width, dQ_block, q_width, dQ_b, x->ldq);
    return status;
}

/* P = 1: the sdpa backward of each sequence on the caller's arrays. */
static attn_status FN(backward_alone)(attn_ring *ring, const FN(ring_args) *a,
                                      const ring_strides *x, const real *dout, real *dQ,
                                      real *dK, real *dV)
{
    const double start = ring_now();
    const size_t T = ring->shape.Tq;
    const ring_block kind = ring_block_of(ring, ring->rank);
    attn_status status = ATTN_OK;
    for (size_t b = 0; b < ring->shape.B && status == ATTN_OK; b++) {
        const FN(block_keys) keys = {a->K + b * T * x->ldk, a->V + b * T * x->ldv, x->ldk,
                                     x->ldv, dK + b * T * x->ldk, dV + b * T * x->ldv};
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
    const size_t T = s.Tq, k_width = s.NH_kv * s.hs, v_width = s.NH_kv * s.hs_v;
    const size_t n = ring->kv_elements, rows = s.B * T;
    real *kv[2] = {(real *)ring->kv[0], (real *)ring->kv[1]};
    real *dkv[2] = {(real *)ring->dkv[0], (real *)ring->dkv[1]};
    real *block_dK = (real *)ring->block_dkv, *block_dV = block_dK + T * k_width;
    attn_status status = ATTN_OK;
    for (int step = 0; step < P; step++) {
        const double start = ring_now(), waited = ring->counters[ATTN_RING_WAIT_SECONDS],
                     progressed = ring->counters[ATTN_RING_PROGRESS_SECONDS];
        const int src = (ring->rank - step + P) % P, more = step + 1 < P;
        real *held = kv[step % 2], *sums = dkv[step % 2];
        const int send_slot = RING_REQ_DKV_SEND0 + step % 2;
        if (step == 0) { /* the caller's K, V packed to travel (and computed on) */
            FN(ring_copy_rows)(rows, k_width, a->K, x->ldk, held, k_width);
            FN(ring_copy_rows)(rows, v_width, a->V, x->ldv, held + ring->k_elements, v_width);
        }
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
            for (size_t b = 0; b < s.B; b++) {
                const real *K = held + b * T * k_width, *V = held + ring->k_elements +
                                                               b * T * v_width;
                real *dK_b = sums + b * T * k_width,
                     *dV_b = sums + ring->k_elements + b * T * v_width;
                const FN(block_keys) keys = {K, V, k_width, v_width,
                                             step == 0 ? dK_b : block_dK,
                                             step == 0 ? dV_b : block_dV};
                const attn_status st =
                    FN(block_backward)(ring, kind, b, step == 0, 1, a, x, dout, &keys, dQ);
                if (status == ATTN_OK)
                    status = st;
                if (step > 0) {
                    if (!arrived)
                        ring_wait(ring, RING_REQ_DKV_RECV);
                    arrived = 1;
                    FN(ring_add_rows)(g.Tk, k_width, block_dK, k_width, dK_b, k_width);
                    FN(ring_add_rows)(g.Tk, v_width, block_dV, v_width, dV_b, v_width);
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
    FN(ring_copy_rows)(rows, k_width, own, k_width, dK, x->ldk);
    FN(ring_copy_rows)(rows, v_width, own + ring->k_elements, v_width, dV, x->ldv);
    ring->counters[ATTN_RING_COMPUTE_SECONDS] += ring_now() - start;
    ring_wait(ring, RING_REQ_DKV_SEND0 + (P - 1) % 2);
    return status;
}
