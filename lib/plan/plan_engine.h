/*
 * The engine (engine.h) of one call on a plan (templated over `real`): its
 * threads, its products and the scratch of each thread, as the plan's
 * settings say. Shared by the executions of projected and sdpa plans.
 */
#ifndef ATTN_PLAN_ENGINE_H
#define ATTN_PLAN_ENGINE_H

#include "engine/engine.h"
#include "plan/plan.h"
#include "core/real.h"
#include "engine/shared_threads.h"

/* The own threads' buffers (plan.h): KT, VT (training plans), then the
 * packed weights; NULL on BLAS threads and for a plan that runs alone
 * (plan.c gives it none). */
static inline real *FN(plan_kt)(const attn_plan *plan)
{
    return plan->threads > 0 && !plan->alone ? (real *)plan->scratch : NULL;
}
/* The plan's threads and products (engine.h) for one call: on the shared
 * pool, when the plan runs there and it is free (else on the caller alone),
 * which plan_engine_done gives back. */
static inline FN(attn_engine) FN(plan_engine)(const attn_plan *plan)
{
    real *kt = FN(plan_kt)(plan);
    const FN(attn_engine) engine = {
        .pool = plan->alone                          ? NULL
                : plan->shared && plan->threads > 1 ? attn_shared_pool_acquire()
                                                    : plan->pool,
        .blas = plan->threads == 0,
        .own = FN(attn_gemm_kernel)(plan->isa),
        .own_shared_a = FN(attn_gemm_shared_a_kernel)(plan->isa),
        .own_pack_b = FN(attn_gemm_pack_b_kernel)(plan->isa),
        .packed = kt != NULL && plan->kind == ATTN_PLAN_PROJECTED ? kt + plan->packed_offset : NULL,
        .packed_elements = plan->packed_slot_elements,
        .own_lower = FN(attn_gemm_lower_kernel)(plan->isa),
        .profile = plan->profile,
        .scratch = (real *)plan->scratch + plan->own_elements,
        .worker_elements = plan->worker_elements,
        .pack_elements = plan->pack_elements};
    return engine;
}

static inline void FN(plan_engine_done)(const attn_plan *plan, const FN(attn_engine) *engine)
{
    if (plan->shared && !plan->alone)
        attn_shared_pool_release(engine->pool);
}

#endif /* ATTN_PLAN_ENGINE_H */
