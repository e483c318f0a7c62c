/*
 * The local checks of attn_ring_forward_* and attn_ring_backward_*
 * (templated over `real`), in attn_mpi.h's order: those of
 * attn_sdpa_forward_* / attn_sdpa_backward_* on the local shape (the ring's
 * block calls then never fail), without masks and key lengths. They run
 * before any message so that the ranks can agree on the status first.
 */
#include <attn/attn.h>

#include "core/check.h"
#include "api/sdpa_strides.h"
#include "ring/ring_exec.h"

static attn_strided FN(run)(const void *p, size_t elements)
{
    return attn_strided_run(p, elements * sizeof(real));
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
    const attn_sdpa_strides given[ATTN_SDPA_ARRAYS] = {
        {a->sbq, a->shq, a->ldq}, {a->sbk, a->shk, a->ldk},
        {a->sbv, a->shv, a->ldv}, {a->sbo, a->sho, a->ldo}};
    if (!attn_sdpa_resolve_strides(&s, given, x->st))
        return ATTN_ERR_BAD_STRIDE;
    size_t extent[ATTN_SDPA_ARRAYS];
    const size_t lse = s.B * s.NH * s.Tq;
    if (!attn_sdpa_extents(&s, x->st, sizeof(real), extent))
        return ATTN_ERR_SIZE_OVERFLOW;
    if (!attn_sdpa_rows_in_blas_range(x->st))
        return ATTN_ERR_BLAS_RANGE;

    const attn_strided inputs[] = {
        attn_sdpa_strided(&s, ATTN_SDPA_Q, &x->st[ATTN_SDPA_Q], a->Q, sizeof(real)),
        attn_sdpa_strided(&s, ATTN_SDPA_K, &x->st[ATTN_SDPA_K], a->K, sizeof(real)),
        attn_sdpa_strided(&s, ATTN_SDPA_V, &x->st[ATTN_SDPA_V], a->V, sizeof(real)),
        attn_sdpa_strided(&s, ATTN_SDPA_OUT, &x->st[ATTN_SDPA_OUT], a->out, sizeof(real)),
        FN(run)(a->lse, lse),
        attn_sdpa_strided(&s, ATTN_SDPA_OUT, &x->st[ATTN_SDPA_OUT], dout, sizeof(real))};
    if (!backward) {
        const attn_strided outputs[] = {inputs[3], inputs[4]};
        return attn_strided_outputs_alias(outputs, 2, inputs, 3) ? ATTN_ERR_ALIASING : ATTN_OK;
    }
    const attn_strided grads[] = {
        attn_sdpa_strided(&s, ATTN_SDPA_Q, &x->st[ATTN_SDPA_Q], dQ, sizeof(real)),
        attn_sdpa_strided(&s, ATTN_SDPA_K, &x->st[ATTN_SDPA_K], dK, sizeof(real)),
        attn_sdpa_strided(&s, ATTN_SDPA_V, &x->st[ATTN_SDPA_V], dV, sizeof(real))};
    return attn_strided_outputs_alias(grads, ATTN_COUNT(grads), inputs, ATTN_COUNT(inputs))
               ? ATTN_ERR_ALIASING
               : ATTN_OK;
}
