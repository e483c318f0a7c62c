/*
 * attn_forward_* and attn_backward_*: executing a plan. Validation, then the
 * engines of forward.c and backward.c on the plan's own buffers, threads and
 * scratch; nothing is allocated here.
 */

#include <attn/attn.h>

#include "engine/backward.h"
#include "core/check.h"
#include "engine/forward.h"
#include "plan/plan.h"
#include "plan/plan_engine.h"
#include "core/scale.h"
#include "api/sdpa_run_args.h"
#include "api/validate.h"

#if ATTN_REAL_BITS == 32
#define PLAN_DTYPE ATTN_F32
#else
#define PLAN_DTYPE ATTN_F64
#endif

#define PLAN_BUFFER(plan, name) ((real *)attn_plan_buffer((plan), ATTN_BUF_##name))

/* K^T (and V^T) for the engines, or NULL: products read K and V as they
 * lie. A call too small to share (plan->alone) takes K as it lies: copying
 * it out first cost 7% of the course shape's forward. */
static real *FN(plan_transposes)(const attn_plan *plan)
{
    return FN(plan_kt)(plan); /* NULL for a plan that runs alone */
}
static real *FN(plan_vt)(const attn_plan *plan)
{
    real *kt = FN(plan_kt)(plan);
    return kt != NULL && !plan->inference ? kt + plan->kt_elements : NULL;
}

/* The sdpa engine's arguments for the heads of a forward (forward.h's
 * args.sdpa) into *r, true when the plan computes them so: a projected
 * inference plan with sdpa_heads (plan.h) on own threads, without weights.
 * Q, K, V of each head lie in the plan's (B,T,NH*hs) buffers; the heads go
 * to `heads` of the same layout. */
static int FN(sdpa_heads_args)(const attn_plan *plan, const real *weights, real *heads,
                               FN(attn_sdpa_run_args) *r)
{
    real *packed = FN(plan_kt)(plan);
    if (!plan->sdpa_heads || packed == NULL || weights != NULL)
        return 0;
    const attn_shape s = plan->shape;
    const size_t D = s.NH * s.hs, sb = s.T * D;
    *r = FN(attn_plan_sdpa_run_args)(plan);
    r->Q = PLAN_BUFFER(plan, Q), r->K = PLAN_BUFFER(plan, K), r->V = PLAN_BUFFER(plan, V);
    r->ldq = r->ldk = r->ldv = r->ldo = D;
    r->sbq = r->sbk = r->sbv = r->sbo = sb;
    r->shq = r->shk = r->shv = r->sho = s.hs;
    r->out = heads;
    r->packed = packed;
    return attn_sdpa_packs_of(&plan->sdpa, 0, &r->packs); /* checked by the plan */
}

attn_status FN(attn_forward)(attn_plan *plan, const real *X, const real *Wq, const real *Wk,
                             const real *Wv, const real *Wo, real *out, real *weights)
{
    if (plan == NULL)
        return ATTN_ERR_NULL_POINTER;
    if (plan->kind != ATTN_PLAN_PROJECTED) {
        const void *required[] = {X, Wq, Wk, Wv, out};
        return attn_any_null(required, ATTN_COUNT(required)) ? ATTN_ERR_NULL_POINTER
                                                              : ATTN_ERR_PLAN_KIND;
    }
    const FN(attn_forward_arrays) arrays = {X, Wq, Wk, Wv, Wo, out, weights};
    attn_status status = FN(attn_validate_presence)(plan->shape, &arrays);
    if (status != ATTN_OK)
        return status;
    if (plan->dtype != PLAN_DTYPE)
        return ATTN_ERR_DTYPE_MISMATCH;
    status = FN(attn_validate_extent)(plan->shape, &arrays);
    if (status != ATTN_OK)
        return status;

    const attn_shape s = plan->shape;
    FN(attn_sdpa_run_args) heads;
    const int sdpa_heads =
        FN(sdpa_heads_args)(plan, weights, Wo != NULL ? PLAN_BUFFER(plan, HEADS) : out, &heads);
    const FN(attn_forward_args) args = {
        .B = s.B, .T = s.T, .C = s.C, .NH = s.NH, .hs = s.hs,
        .scale = attn_real_scale(plan->scale),
        .causal = plan->causal,
        .tiled = plan->tiled,
        .sdpa = sdpa_heads ? &heads : NULL,
        .softmax_rows = FN(attn_softmax_rows_kernel)(plan->isa),
        .softmax_online = FN(attn_softmax_online_kernel)(plan->isa),
        .softmax_from_lse = FN(attn_softmax_from_lse_kernel)(plan->isa),
        .X = X, .Wq = Wq, .Wk = Wk, .Wv = Wv, .Wo = Wo,
        .out = out,
        .P = weights,
        .Q = PLAN_BUFFER(plan, Q), .K = PLAN_BUFFER(plan, K), .V = PLAN_BUFFER(plan, V),
        .heads = PLAN_BUFFER(plan, HEADS),
        .stats = PLAN_BUFFER(plan, STATS),
        .KT = FN(plan_transposes)(plan),
        .dropout = &plan->dropout,
        .dropout_mask = FN(attn_dropout_mask_kernel)(plan->isa)};
    const FN(attn_engine) engine = FN(plan_engine)(plan);
    FN(attn_forward_run)(&args, &engine);
    FN(plan_engine_done)(plan, &engine);
    if (!plan->inference) {
        const void *inputs[] = {X, Wq, Wk, Wv, Wo};
        plan->has_forward = 1;
        plan->forward_dropout = plan->dropout;
        for (size_t i = 0; i < ATTN_COUNT(inputs); i++)
            plan->forward_inputs[i] = inputs[i];
    }
    return ATTN_OK;
}

attn_status FN(attn_backward)(attn_plan *plan, const real *X, const real *Wq, const real *Wk,
                              const real *Wv, const real *Wo, const real *dout, real *dX,
                              real *dWq, real *dWk, real *dWv, real *dWo)
{
    const FN(attn_backward_arrays) arrays = {X, Wq, Wk, Wv, Wo, dout, dX, dWq, dWk, dWv, dWo};
    if (plan == NULL || FN(attn_validate_backward_presence)(&arrays) != ATTN_OK)
        return ATTN_ERR_NULL_POINTER;
    if (plan->kind != ATTN_PLAN_PROJECTED)
        return ATTN_ERR_PLAN_KIND;
    if (plan->dtype != PLAN_DTYPE)
        return ATTN_ERR_DTYPE_MISMATCH;
    if (plan->inference)
        return ATTN_ERR_INFERENCE_PLAN;
    if (!plan->has_forward)
        return ATTN_ERR_NO_FORWARD;
    /* the forward's X and weights are read again, not kept: other arrays
     * (a weight update between the two) would give wrong gradients */
    const void *inputs[] = {X, Wq, Wk, Wv, Wo};
    for (size_t i = 0; i < ATTN_COUNT(inputs); i++)
        if (inputs[i] != plan->forward_inputs[i])
            return ATTN_ERR_FORWARD_MISMATCH;
    attn_status status = FN(attn_validate_backward_aliasing)(plan->shape, &arrays);
    if (status != ATTN_OK)
        return status;

    const attn_shape s = plan->shape;
    const FN(attn_backward_args) args = {
        .B = s.B, .T = s.T, .C = s.C, .NH = s.NH, .hs = s.hs,
        .scale = attn_real_scale(plan->scale),
        .causal = plan->causal,
        .softmax_backward = FN(attn_softmax_backward_kernel)(plan->isa),
        .softmax_from_lse = FN(attn_softmax_from_lse_kernel)(plan->isa),
        .X = X, .Wq = Wq, .Wk = Wk, .Wv = Wv, .Wo = Wo, .dout = dout,
        .Q = PLAN_BUFFER(plan, Q), .K = PLAN_BUFFER(plan, K), .V = PLAN_BUFFER(plan, V),
        .heads = PLAN_BUFFER(plan, HEADS), .stats = PLAN_BUFFER(plan, STATS),
        .KT = FN(plan_transposes)(plan),
        .dX = dX, .dWq = dWq, .dWk = dWk, .dWv = dWv, .dWo = dWo,
        .dQ = PLAN_BUFFER(plan, DQ), .dK = PLAN_BUFFER(plan, DK), .dV = PLAN_BUFFER(plan, DV),
        .dheads = PLAN_BUFFER(plan, DHEADS),
        .rowdot = PLAN_BUFFER(plan, ROWDOT), .dQ_parts = PLAN_BUFFER(plan, DQ_PARTS),
        .VT = FN(plan_transposes)(plan) != NULL ? FN(plan_vt)(plan) : NULL,
        .dropout = &plan->forward_dropout,
        .dropout_mask = FN(attn_dropout_mask_kernel)(plan->isa)};
    const FN(attn_engine) engine = FN(plan_engine)(plan);
    FN(attn_backward_run)(&args, &engine);
    FN(plan_engine_done)(plan, &engine);
    return ATTN_OK;
}
