/*
 * attn_ring_forward_* and attn_ring_backward_* (templated over `real`):
 * the local checks (ring_checks.c), the block plans' threads, the ranks'
 * agreement on the status before any data moves, the ring steps
 * (ring_forward.c, ring_backward.c), and a last agreement: a block call
 * cannot fail after the checks, but if one did every rank would still
 * return the same status.
 */
#include <attn/attn.h>
#include <attn/attn_mpi.h>

#include "ring/ring_comm.h"
#include "ring/ring_exec.h"

/* The status every rank returns, from this rank's checks: agreed when the
 * plan is a ring plan, local otherwise. */
static attn_status FN(agree_checks)(attn_plan *plan, attn_ring *ring, attn_status status)
{
    if (status == ATTN_OK)
        status = ring_sync_threads(plan, ring);
    return ring_agree(ring->comm, status);
}

/* A forward (backward 0: dout, dQ, dK, dV NULL) or a backward: the checks,
 * their agreement, the run, and the agreement on its status. */
static attn_status FN(ring_call)(attn_plan *plan, const FN(ring_args) *a, const real *dout,
                                 real *dQ, real *dK, real *dV, int backward)
{
    attn_ring *ring;
    ring_strides x;
    attn_status status = FN(ring_check_call)(plan, a, dout, dQ, dK, dV, backward, &ring, &x);
    if (ring == NULL)
        return status;
    status = FN(agree_checks)(plan, ring, status);
    if (status != ATTN_OK)
        return status;
    ring->counters[ATTN_RING_CALLS] += 1.0;
    status = backward ? FN(ring_backward_run)(ring, a, &x, dout, dQ, dK, dV)
                      : FN(ring_forward_run)(ring, a, &x);
    return ring_agree(ring->comm, status);
}

attn_status FN(attn_ring_forward)(attn_plan *plan, const FN(ring_args) *a)
{
    return FN(ring_call)(plan, a, NULL, NULL, NULL, NULL, 0);
}

attn_status FN(attn_ring_backward)(attn_plan *plan, const FN(ring_args) *a, const real *dout,
                                   real *dQ, real *dK, real *dV)
{
    return FN(ring_call)(plan, a, dout, dQ, dK, dV, 1);
}
