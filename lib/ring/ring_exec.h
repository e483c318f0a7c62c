/*
 * The ring's calls, templated over `real` (real.h): their argument checks
 * (ring_checks.c), the row operations that merge and sum block results
 * (ring_rows.c) and the steps of the forward (ring_forward.c) and backward
 * (ring_backward.c).
 *
 * Shapes (local): Q (B,T,NH,hs) ld ldq, K (B,T,NH_kv,hs) ld ldk,
 * V (B,T,NH_kv,hs_v) ld ldv, out and dout (B,T,NH,hs_v) ld ldo,
 * lse (B,NH,T); the strides resolved (never 0).
 */
#ifndef ATTN_RING_EXEC_H
#define ATTN_RING_EXEC_H

#include <stddef.h>

#include <mpi.h>

#include <attn/attn.h>

#include "sdpa_strides.h"
#include "real.h"
#include "ring.h"

#if ATTN_REAL_BITS == 32
#define RING_DTYPE ATTN_F32
#define RING_MPI_REAL MPI_FLOAT
#else
#define RING_DTYPE ATTN_F64
#define RING_MPI_REAL MPI_DOUBLE
#endif

typedef FN(attn_sdpa_args) FN(ring_args);

/* The strides of a call, 0 resolved: every one (st: Q, K, V, out, as
 * sdpa_strides.h orders them) and the row strides alone. */
typedef struct ring_strides {
    attn_sdpa_strides st[ATTN_SDPA_ARRAYS];
    size_t ldq, ldk, ldv, ldo;
} ring_strides;

/* The local checks of a forward (backward: dout, dQ, dK, dV set) in
 * attn_mpi.h's order. *ring is the plan's ring, or NULL when the plan is
 * NULL or not a ring plan: then the status is the rank's alone (no
 * communicator to agree through). */
attn_status FN(ring_check_call)(attn_plan *plan, const FN(ring_args) *a, const real *dout,
                                const real *dQ, const real *dK, const real *dV, int backward,
                                attn_ring **ring, ring_strides *x);

/* dst[r*ld_dst + i] = src[r*ld_src + i] (add: +=), r < rows, i < width. */
void FN(ring_copy_rows)(size_t rows, size_t width, const real *src, size_t ld_src, real *dst,
                        size_t ld_dst);
void FN(ring_add_rows)(size_t rows, size_t width, const real *src, size_t ld_src, real *dst,
                       size_t ld_dst);

/* Merges a block's result into the running one, for Tq queries of one
 * sequence: block out (Tq,NH,hs_v) dense and lse (NH,Tq) into out (Tq,NH,hs_v)
 * ld ldo and lse (NH,.) head stride lse_ld, through their log-sum-exp:
 *   lse = log(e^lse_a + e^lse_b),  out = e^(lse_a - lse) out_a + e^(lse_b - lse) out_b. */
void FN(ring_merge)(size_t Tq, size_t NH, size_t hs_v, const real *block_out,
                    const real *block_lse, real *out, size_t ldo, real *lse, size_t lse_ld);

/* The ring steps of a checked call. */
attn_status FN(ring_forward_run)(attn_ring *ring, const FN(ring_args) *a, const ring_strides *x);
attn_status FN(ring_backward_run)(attn_ring *ring, const FN(ring_args) *a,
                                  const ring_strides *x, const real *dout, real *dQ, real *dK,
                                  real *dV);

#endif /* ATTN_RING_EXEC_H */
