/*
 * attn_sdpa_forward_*, attn_sdpa_backward_*, attn_sdpa_*: validation of an
 * sdpa call in the order attn.h documents (sdpa_check.h), then the engines of
 * sdpa_forward.c and sdpa_backward.c on the plan's buffers, threads and
 * scratch (nothing is allocated by a call on a plan).
 */
#include <limits.h>

#include <attn/attn.h>

#include "core/check.h"
#include "plan/plan.h"
#include "plan/plan_engine.h"
#include "core/scale.h"
#include "api/sdpa_check.h"
#include "api/sdpa_exec.h"
#include "api/sdpa_run_args.h"
#include "engine/sdpa.h"

#if ATTN_REAL_BITS == 32
#define PLAN_DTYPE ATTN_F32
#else
#define PLAN_DTYPE ATTN_F64
#endif

typedef FN(attn_sdpa_args) FN(sdpa_args);

/* The packed operands (own threads, attn_sdpa_prepacks) at the start of
 * the plan's scratch (plan.c), or NULL. */
static real *FN(sdpa_packed)(const attn_plan *plan)
{
    return plan->threads > 0 && attn_sdpa_prepacks(&plan->sdpa) ? (real *)plan->scratch : NULL;
}

static FN(attn_sdpa_run_args) FN(run_args)(const attn_plan *plan, const FN(sdpa_args) *a,
                                          const attn_sdpa_checked *x)
{
    FN(attn_sdpa_run_args) r = FN(attn_plan_sdpa_run_args)(plan);
    r.Q = a->Q, r.K = a->K, r.V = a->V;
    r.ldq = x->st[ATTN_SDPA_Q].ld, r.ldk = x->st[ATTN_SDPA_K].ld, r.ldv = x->st[ATTN_SDPA_V].ld;
    r.sbq = x->st[ATTN_SDPA_Q].sb, r.shq = x->st[ATTN_SDPA_Q].sh;
    r.sbk = x->st[ATTN_SDPA_K].sb, r.shk = x->st[ATTN_SDPA_K].sh;
    r.sbv = x->st[ATTN_SDPA_V].sb, r.shv = x->st[ATTN_SDPA_V].sh;
    r.sbo = x->st[ATTN_SDPA_OUT].sb, r.sho = x->st[ATTN_SDPA_OUT].sh;
    r.mask = a->mask, r.mask_ld = a->mask_ld, r.mask_sb = a->mask_sb, r.mask_sh = a->mask_sh;
    r.key_lengths = a->key_lengths;
    r.out = a->out, r.ldo = x->st[ATTN_SDPA_OUT].ld;
    r.lse = a->lse;
    r.packed = FN(sdpa_packed)(plan);
    r.partials = (real *)attn_plan_buffer(plan, ATTN_BUF_PARTIALS);
    r.rowdot = (real *)attn_plan_buffer(plan, ATTN_BUF_ROWDOT);
    r.dQ_parts = (real *)attn_plan_buffer(plan, ATTN_BUF_DQ_PARTS);
    if (r.packed != NULL) /* checked when the scratch was laid out */
        (void)attn_sdpa_packs_of(&plan->sdpa, !plan->inference, &r.packs);
    return r;
}

/* The forward and backward as a call of `dtype`: PLAN_DTYPE for the public
 * calls, the plan's for a half plan's float copies (sdpa_half.inc.c). */
static attn_status FN(forward_as)(attn_plan *plan, const FN(sdpa_args) *a, attn_dtype dtype,
                                  const attn_sdpa_half_kv *kv, const attn_sdpa_half_out *ho)
{
    if (plan == NULL || a == NULL)
        return ATTN_ERR_NULL_POINTER;
    const attn_sdpa_call c = ATTN_SDPA_CALL_OF(a, dtype, sizeof(real), sizeof(real));
    attn_sdpa_checked x;
    const attn_status status = attn_sdpa_check_forward(plan, &c, &x);
    if (status != ATTN_OK)
        return status;
    FN(attn_sdpa_run_args) args = FN(run_args)(plan, a, &x);
    if (kv != NULL) { /* engine/sdpa.h: only the few-row kernels read them */
        args.K = args.V = NULL;
        args.K16 = kv->K, args.V16 = kv->V;
        args.sbk16 = kv->k.sb, args.shk16 = kv->k.sh, args.ldk16 = kv->k.ld;
        args.sbv16 = kv->v.sb, args.shv16 = kv->v.sh, args.ldv16 = kv->v.ld;
        args.rows_dot_half = kv->rows_dot;
        args.rows_axpy_half = kv->rows_axpy;
    }
    if (ho != NULL) { /* engine/sdpa.h: rows rounded as they are finished */
        args.out_half = ho->out;
        args.sbo_half = ho->st.sb, args.sho_half = ho->st.sh, args.ldo_half = ho->st.ld;
        args.narrow_half = ho->narrow;
        args.narrow_scaled_half = ho->narrow_scaled;
    }
#if ATTN_REAL_BITS == 32
    /* engine/sdpa_bf16.h: a bf16 plan's packed products in bf16 */
    if (dtype == ATTN_BF16 && kv == NULL && attn_sdpa_bf16_forward(plan))
        args.bf16 = attn_bf16_products_of(plan->isa);
    if (ho != NULL && ho->Q != NULL) { /* engine/sdpa.h: Q_half, K16, V16 */
        args.Q_half = ho->Q;
        args.sbq_half = ho->q.sb, args.shq_half = ho->q.sh, args.ldq_half = ho->q.ld;
        args.widen_half = ho->widen;
        args.K16 = ho->K, args.V16 = ho->V;
        args.sbk16 = ho->k.sb, args.shk16 = ho->k.sh, args.ldk16 = ho->k.ld;
        args.sbv16 = ho->v.sb, args.shv16 = ho->v.sh, args.ldv16 = ho->v.ld;
        args.rows_dot_half = ho->rows_dot;
        args.rows_axpy_half = ho->rows_axpy;
    }
#endif
    const FN(attn_engine) engine = FN(plan_engine)(plan);
    FN(attn_sdpa_forward_run)(&args, &engine);
    FN(plan_engine_done)(plan, &engine);
    return ATTN_OK;
}

static attn_status FN(backward_as)(attn_plan *plan, const FN(sdpa_args) *a, const real *dout,
                                   real *dQ, real *dK, real *dV, attn_dtype dtype,
                                   const attn_sdpa_half_backward *hb)
{
    if (plan == NULL || a == NULL)
        return ATTN_ERR_NULL_POINTER;
    const attn_sdpa_call c = ATTN_SDPA_CALL_OF(a, dtype, sizeof(real), sizeof(real));
    attn_sdpa_checked x;
    const attn_status status = attn_sdpa_check_backward(plan, &c, dout, dQ, dK, dV, &x);
    if (status != ATTN_OK)
        return status;
    FN(attn_sdpa_run_args) args = FN(run_args)(plan, a, &x);
    args.dout = dout;
    args.dQ = dQ;
    args.dK = dK;
    args.dV = dV;
#if ATTN_REAL_BITS == 32
    /* engine/sdpa_bf16_backward.h: a bf16 plan's products in bf16 */
    if (dtype == ATTN_BF16 && attn_sdpa_bf16_backward(plan))
        args.bf16 = attn_bf16_products_of(plan->isa);
    if (hb != NULL) { /* engine/sdpa.h: out_bf16, Q_half, K16 */
        args.out_bf16 = hb->out, args.dout_bf16 = hb->dout;
        args.sbo_bf16 = hb->st.sb, args.sho_bf16 = hb->st.sh, args.ldo_bf16 = hb->st.ld;
        args.Q_half = hb->Q;
        args.sbq_half = hb->q.sb, args.shq_half = hb->q.sh, args.ldq_half = hb->q.ld;
        args.K16 = hb->K, args.V16 = hb->V;
        args.sbk16 = hb->k.sb, args.shk16 = hb->k.sh, args.ldk16 = hb->k.ld;
        args.sbv16 = hb->v.sb, args.shv16 = hb->v.sh, args.ldv16 = hb->v.ld;
        args.widen_half = hb->widen;
    }
#else
    (void)hb;
#endif
    const FN(attn_engine) engine = FN(plan_engine)(plan);
    FN(attn_sdpa_backward_run)(&args, &engine);
    FN(plan_engine_done)(plan, &engine);
    return ATTN_OK;
}

attn_status FN(attn_sdpa_forward)(attn_plan *plan, const FN(sdpa_args) *a)
{
    return FN(forward_as)(plan, a, PLAN_DTYPE, NULL, NULL);
}

attn_status FN(attn_sdpa_backward)(attn_plan *plan, const FN(sdpa_args) *a, const real *dout,
                                   real *dQ, real *dK, real *dV)
{
    return FN(backward_as)(plan, a, dout, dQ, dK, dV, PLAN_DTYPE, NULL);
}

#if ATTN_REAL_BITS == 32
int attn_sdpa_bf16_forward(const attn_plan *plan)
{
    return plan->dtype == ATTN_BF16 && FN(sdpa_packed)(plan) != NULL &&
           plan->sdpa.shape.hs % ATTN_BF16_K_STEP == 0 &&
           FN(attn_gemm_panel_kernel)(plan->isa)() == ATTN_BF16_NR &&
           attn_bf16_products_of(plan->isa).gemm != NULL;
}

int attn_sdpa_bf16_backward(const attn_plan *plan)
{
    return attn_sdpa_bf16_forward(plan) && plan->sdpa.shape.hs_v % ATTN_BF16_K_STEP == 0;
}

attn_status attn_sdpa_forward_staged(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                     const attn_sdpa_half_kv *kv, const attn_sdpa_half_out *ho)
{
    return FN(forward_as)(plan, a, plan->dtype, kv, ho);
}

attn_status attn_sdpa_backward_staged(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                      const float *dout, float *dQ, float *dK, float *dV,
                                      const attn_sdpa_half_backward *hb)
{
    return FN(backward_as)(plan, a, dout, dQ, dK, dV, plan->dtype, hb);
}
#endif

static attn_status FN(forward_of_any)(attn_plan *plan, const void *a)
{
    return FN(attn_sdpa_forward)(plan, a);
}

attn_status FN(attn_sdpa)(const attn_sdpa_shape *shape, double scale, unsigned flags,
                          size_t window, const FN(sdpa_args) *a)
{
    return attn_sdpa_one_shot(shape, scale, flags, window, PLAN_DTYPE, a, FN(forward_of_any));
}
