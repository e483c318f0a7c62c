/*
 * The ring's calls, templated over `real` (real.h): their argument checks
 * (ring_checks.c), the row operations that merge and sum block results
 * (ring_rows.c) and the steps of the forward (ring_forward.c) and backward
 * (ring_backward.c).
 *
 * Shapes (local, any layout: attn.h's strides, resolved, never 0): Q
 * (B,T,NH,hs), K (B,T,NH_kv,hs), V (B,T,NH_kv,hs_v), out and dout
 * (B,T,NH,hs_v), element i of row t of head h of sequence b at
 * b*sb + h*sh + t*ld + i (ring_at); dout takes out's strides, dQ, dK, dV
 * those of Q, K, V; lse (B,NH,T) dense. The ring's own buffers (ring.h)
 * are dense (T,heads,width) rows (ring_dense).
 */
#ifndef ATTN_RING_EXEC_H
#define ATTN_RING_EXEC_H

#include <stddef.h>

#include <mpi.h>

#include <attn/attn.h>

#include "api/sdpa_strides.h"
#include "core/real.h"
#include "ring/ring.h"

#if ATTN_REAL_BITS == 32
#define RING_DTYPE ATTN_F32
#define RING_MPI_REAL MPI_FLOAT
#else
#define RING_DTYPE ATTN_F64
#define RING_MPI_REAL MPI_DOUBLE
#endif

typedef FN(attn_sdpa_args) FN(ring_args);

/* The strides of a call, 0 resolved: Q, K, V, out, as sdpa_strides.h
 * orders them. */
typedef struct ring_strides {
    attn_sdpa_strides st[ATTN_SDPA_ARRAYS];
} ring_strides;

/* The offset of row t of head h of sequence b in an array of strides st. */
static inline size_t ring_at(attn_sdpa_strides st, size_t b, size_t h, size_t t)
{
    return b * st.sb + h * st.sh + t * st.ld;
}

/* The strides of dense (B,T,heads,width) rows: the travelling K/V blocks,
 * their dK/dV sums and the ring's one-sequence buffers. */
static inline attn_sdpa_strides ring_dense(size_t T, size_t heads, size_t width)
{
    const attn_sdpa_strides st = {T * heads * width, width, heads * width};
    return st;
}

/* What a strided copy moves: `rows` rows of `width` of `heads` heads of B
 * sequences. */
typedef struct ring_box {
    size_t B, heads, rows, width;
} ring_box;

/* The local checks of a forward (backward: dout, dQ, dK, dV set) in
 * attn_mpi.h's order. *ring is the plan's ring, or NULL when the plan is
 * NULL or not a ring plan: then the status is the rank's alone (no
 * communicator to agree through). */
attn_status FN(ring_check_call)(attn_plan *plan, const FN(ring_args) *a, const real *dout,
                                const real *dQ, const real *dK, const real *dV, int backward,
                                attn_ring **ring, ring_strides *x);

/* dst = src (add: dst += src) over the box n, src addressed with strides
 * from, dst with strides to (ring_at): the gather of the caller's K, V
 * into a travelling block, the scatter of the gradients back, sums. */
void FN(ring_copy)(ring_box n, const real *src, attn_sdpa_strides from, real *dst,
                   attn_sdpa_strides to, int add);

/* The caller's K and V (strides x) gathered into a travelling block: K
 * (B,T,NH_kv,hs) then V (B,T,NH_kv,hs_v), dense. */
void FN(ring_pack_kv)(const attn_ring *ring, const FN(ring_args) *a, const ring_strides *x,
                      real *block);

/* The keys and values of one sequence of a block (the caller's or a
 * travelling block's) with their strides, and in the backward their
 * gradients dK, dV, written with the same strides. */
typedef struct FN(ring_keys) {
    const real *K, *V;
    attn_sdpa_strides k, v;
    real *dK, *dV;
} FN(ring_keys);

/* Sequence b's keys of the caller's K, V (strides x) and, in the backward,
 * of its dK, dV (NULL in the forward). */
static inline FN(ring_keys) FN(ring_caller_keys)(const FN(ring_args) *a, const ring_strides *x,
                                                 real *dK, real *dV, size_t b)
{
    const attn_sdpa_strides k = x->st[ATTN_SDPA_K], v = x->st[ATTN_SDPA_V];
    const size_t at_k = ring_at(k, b, 0, 0), at_v = ring_at(v, b, 0, 0);
    const FN(ring_keys) keys = {a->K + at_k, a->V + at_v, k, v,
                                dK != NULL ? dK + at_k : NULL, dV != NULL ? dV + at_v : NULL};
    return keys;
}

/* Sequence b's keys of a travelling block (ring_pack_kv's layout) and, in
 * the backward, of its dK/dV sums `sums` in the same layout (NULL in the
 * forward). */
static inline FN(ring_keys) FN(ring_block_keys)(const attn_ring *ring, const real *block,
                                                real *sums, size_t b)
{
    const attn_sdpa_shape s = ring->shape;
    const attn_sdpa_strides k = ring_dense(s.Tk, s.NH_kv, s.hs),
                            v = ring_dense(s.Tk, s.NH_kv, s.hs_v);
    const size_t at_k = ring_at(k, b, 0, 0), at_v = ring->k_elements + ring_at(v, b, 0, 0);
    const FN(ring_keys) keys = {block + at_k, block + at_v, k, v,
                                sums != NULL ? sums + at_k : NULL,
                                sums != NULL ? sums + at_v : NULL};
    return keys;
}

/* The arguments of a block call on one sequence: Q, K, V, out at the
 * sequence's first query (and key) row, with the strides st (Q, K, V, out),
 * lse (NH,Tq) dense. */
static inline FN(ring_args) FN(ring_sequence_args)(const real *Q, const real *K, const real *V,
                                                   real *out, real *lse,
                                                   const attn_sdpa_strides st[ATTN_SDPA_ARRAYS])
{
    FN(ring_args) a = {0};
    a.Q = Q, a.sbq = st[ATTN_SDPA_Q].sb, a.shq = st[ATTN_SDPA_Q].sh, a.ldq = st[ATTN_SDPA_Q].ld;
    a.K = K, a.sbk = st[ATTN_SDPA_K].sb, a.shk = st[ATTN_SDPA_K].sh, a.ldk = st[ATTN_SDPA_K].ld;
    a.V = V, a.sbv = st[ATTN_SDPA_V].sb, a.shv = st[ATTN_SDPA_V].sh, a.ldv = st[ATTN_SDPA_V].ld;
    a.out = out, a.sbo = st[ATTN_SDPA_OUT].sb, a.sho = st[ATTN_SDPA_OUT].sh;
    a.ldo = st[ATTN_SDPA_OUT].ld;
    a.lse = lse;
    return a;
}

/* Those arguments moved to one piece of the heads: query heads from h0,
 * key/value heads from g0, of Tq queries. */
static inline FN(ring_args) FN(ring_piece_args)(FN(ring_args) a, size_t h0, size_t g0, size_t Tq)
{
    a.Q += h0 * a.shq;
    a.K += g0 * a.shk;
    a.V += g0 * a.shv;
    a.out += h0 * a.sho;
    a.lse += h0 * Tq;
    return a;
}

/* Merges a block's result into the running one, for Tq queries of one
 * sequence: block out (Tq,NH,hs_v) dense and lse (NH,Tq) into out (Tq
 * rows of NH heads of hs_v, strides o: sh, ld) and lse (NH,.) head stride
 * lse_ld, through their log-sum-exp:
 *   lse = log(e^lse_a + e^lse_b),  out = e^(lse_a - lse) out_a + e^(lse_b - lse) out_b. */
void FN(ring_merge)(size_t Tq, size_t NH, size_t hs_v, const real *block_out,
                    const real *block_lse, real *out, attn_sdpa_strides o, real *lse,
                    size_t lse_ld);

/* The ring steps of a checked call. */
attn_status FN(ring_forward_run)(attn_ring *ring, const FN(ring_args) *a, const ring_strides *x);
attn_status FN(ring_backward_run)(attn_ring *ring, const FN(ring_args) *a,
                                  const ring_strides *x, const real *dout, real *dQ, real *dK,
                                  real *dV);

#endif /* ATTN_RING_EXEC_H */
