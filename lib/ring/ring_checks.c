/*
 * The local checks of attn_ring_forward_* and attn_ring_backward_*
 * (templated over `real`), in attn_mpi.h's order: those of
 * attn_sdpa_forward_* / attn_sdpa_backward_* on the local shape (the ring's
 * block calls then never fail), without masks and key lengths. They run
 * before any message so that the ranks can agree on the status first.
 */
#include <attn/attn.h>

#include "check.h"
#include "sdpa_strides.h"
#include "ring_exec.h"

static attn_region FN(region)(const void *p, size_t elements)
{
    const attn_region r = {p, elements * sizeof(real)};
    return r;
}

attn_status FN(ring_check_call)(attn_plan *plan, const FN(ring_args) *a, const real *dout,
                                const real *dQ, const real *dK, const real *dV, int backward,
                                attn_ring **ring, ring_strides *x)
{
    *ring = NULL;
    if (plan == NULL)
        return ATTN_ERR_NULL_POINTER;
    *ring = ring_of(plan);
    if (a == NULL || a->Q == NULL || a->K == NULL || a->V == NULL || a->out == NULL ||
        (backward && (a->lse == NULL || dout == NULL || dQ == NULL || dK == NULL || dV == NULL)))
        return ATTN_ERR_NULL_POINTER;
    if (*ring == NULL)
        return ATTN_ERR_PLAN_KIND;
    if (plan->dtype != RING_DTYPE)
        return ATTN_ERR_DTYPE_MISMATCH;
    if (backward && plan->inference)
        return ATTN_ERR_INFERENCE_PLAN;
    if (a->mask != NULL || a->key_lengths != NULL)
        return ATTN_ERR_BAD_SHAPE;

    const attn_sdpa_shape s = (*ring)->shape; /* its products are known to fit */
    const size_t given[4] = {a->ldq, a->ldk, a->ldv, a->ldo};
    size_t ld[4];
    const int strides_ok = attn_sdpa_resolve_strides(&s, given, ld);
    x->ldq = ld[0], x->ldk = ld[1], x->ldv = ld[2], x->ldo = ld[3];
    if (!strides_ok)
        return ATTN_ERR_BAD_STRIDE;
    size_t extent[4];
    const size_t lse = s.B * s.NH * s.Tq;
    if (!attn_sdpa_extents(&s, ld, sizeof(real), extent))
        return ATTN_ERR_SIZE_OVERFLOW;
    const size_t Q = extent[0], K = extent[1], V = extent[2], out = extent[3];
    if (!attn_all_at_most(ld, 4, ATTN_BLAS_INT_MAX))
        return ATTN_ERR_BLAS_RANGE;

    const attn_region inputs[] = {FN(region)(a->Q, Q), FN(region)(a->K, K),
                                  FN(region)(a->V, V), FN(region)(a->out, out),
                                  FN(region)(a->lse, lse), FN(region)(dout, out)};
    if (!backward) {
        const attn_region outputs[] = {inputs[3], inputs[4]};
        return attn_outputs_alias(outputs, 2, inputs, 3) ? ATTN_ERR_ALIASING : ATTN_OK;
    }
    const attn_region grads[] = {FN(region)(dQ, Q), FN(region)(dK, K), FN(region)(dV, V)};
    return attn_outputs_alias(grads, ATTN_COUNT(grads), inputs, ATTN_COUNT(inputs))
               ? ATTN_ERR_ALIASING
               : ATTN_OK;
}
