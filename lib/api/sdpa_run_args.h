/*
 * What every sdpa engine call on a plan shares (templated over `real`, see
 * real.h): the plan's layout, scale, mask settings, dropout and kernel set
 * in the engine's run arguments (engine/sdpa.h), the arrays left for the
 * caller to fill. For sdpa_exec.c (sdpa plans) and plan_exec.c (the heads
 * of a projected inference plan, forward.h).
 */
#ifndef ATTN_API_SDPA_RUN_ARGS_H
#define ATTN_API_SDPA_RUN_ARGS_H

#include "core/real.h"
#include "core/scale.h"
#include "engine/sdpa.h"
#include "plan/plan.h"

static inline FN(attn_sdpa_run_args) FN(attn_plan_sdpa_run_args)(const attn_plan *plan)
{
    const FN(attn_sdpa_run_args) r = {
        .layout = plan->sdpa,
        .scale = attn_real_scale(plan->scale),
        .causal = plan->causal,
        .window = plan->window,
        .softmax_online = FN(attn_softmax_online_kernel)(plan->isa),
        .softmax_row = FN(attn_softmax_row_kernel)(plan->isa),
        .softmax_from_lse = FN(attn_softmax_from_lse_kernel)(plan->isa),
        .softmax_backward = FN(attn_softmax_backward_kernel)(plan->isa),
        .rows_dot = FN(attn_rows_dot_kernel)(plan->isa),
        .rows_axpy = FN(attn_rows_axpy_kernel)(plan->isa),
        .dropout = &plan->dropout,
        .dropout_mask = FN(attn_dropout_mask_kernel)(plan->isa),
        .panel = FN(attn_gemm_panel_kernel)(plan->isa)()};
    return r;
}

#endif /* ATTN_API_SDPA_RUN_ARGS_H */
