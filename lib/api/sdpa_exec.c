/*
 * attn_sdpa_forward_*, attn_sdpa_backward_*, attn_sdpa_*: validation of an
 * sdpa call in the order attn.h documents, then the engines of
 * sdpa_forward.c and sdpa_backward.c on the plan's buffers, threads and
 * scratch (nothing is allocated by a call on a plan).
 */
#include <limits.h>

#include <attn/attn.h>

#include "core/check.h"
#include "plan/plan.h"
#include "plan/plan_engine.h"
#include "core/scale.h"
#include "api/sdpa_strides.h"
#include "engine/sdpa.h"

#if ATTN_REAL_BITS == 32
#define PLAN_DTYPE ATTN_F32
#else
#define PLAN_DTYPE ATTN_F64
#endif

typedef FN(attn_sdpa_args) FN(sdpa_args);

/* The call's strides with 0 resolved, and the extents (in elements) of its
 * arrays. */
typedef struct sdpa_extents {
    attn_sdpa_strides st[ATTN_SDPA_ARRAYS]; /* Q, K, V, out */
    size_t extent[ATTN_SDPA_ARRAYS];
    size_t mask, lse;
} sdpa_extents;

/* BAD_STRIDE, then SIZE_OVERFLOW, then BLAS_RANGE, for the arrays of `a`. */
static attn_status FN(check_strides)(const attn_sdpa_layout *l, const FN(sdpa_args) *a,
                                     sdpa_extents *x)
{
    const attn_sdpa_shape s = l->shape; /* the plan's: its products are known to fit */
    const attn_sdpa_strides given[ATTN_SDPA_ARRAYS] = {
        {a->sbq, a->shq, a->ldq}, {a->sbk, a->shk, a->ldk},
        {a->sbv, a->shv, a->ldv}, {a->sbo, a->sho, a->ldo}};
    if (!attn_sdpa_resolve_strides(&s, given, x->st))
        return ATTN_ERR_BAD_STRIDE;
    size_t head = s.Tk, sequence, mask = 0;
    if (a->mask != NULL) {
        /* each nonzero stride steps over the whole of what it repeats; an
         * extent that overflows is above every stride (BAD_STRIDE comes
         * first), and SIZE_OVERFLOW if the strides are 0 */
        int overflow = 0;
        if (a->mask_ld != 0 && a->mask_ld < s.Tk)
            return ATTN_ERR_BAD_STRIDE;
        if (a->mask_ld != 0 && !attn_rows_extent(s.Tq, a->mask_ld, s.Tk, &head))
            overflow = 1;
        if (a->mask_sh != 0 && (overflow || a->mask_sh < head))
            return ATTN_ERR_BAD_STRIDE;
        sequence = head;
        if (a->mask_sh != 0 && !attn_rows_extent(s.NH, a->mask_sh, head, &sequence))
            overflow = 1;
        if (a->mask_sb != 0 && (overflow || a->mask_sb < sequence))
            return ATTN_ERR_BAD_STRIDE;
        mask = sequence;
        if (overflow || (a->mask_sb != 0 && !attn_rows_extent(s.B, a->mask_sb, sequence, &mask)))
            return ATTN_ERR_SIZE_OVERFLOW;
    }
    x->mask = mask;
    size_t bytes;
    if (!attn_sdpa_extents(&s, x->st, sizeof(real), x->extent) ||
        !attn_mul3(s.B, s.NH, s.Tq, &x->lse) || !attn_mul(x->mask, sizeof(real), &bytes))
        return ATTN_ERR_SIZE_OVERFLOW;
    if (!attn_sdpa_rows_in_blas_range(x->st))
        return ATTN_ERR_BLAS_RANGE;
    return ATTN_OK;
}

/* Array `array` (ATTN_SDPA_Q...) of the call at p, in bytes. */
static attn_strided FN(strided)(const attn_plan *plan, const sdpa_extents *x, int array,
                                const void *p)
{
    return attn_sdpa_strided(&plan->sdpa.shape, array, &x->st[array], p, sizeof(real));
}

static attn_strided FN(run)(const void *p, size_t elements, size_t element_size)
{
    return attn_strided_run(p, elements * element_size);
}

/* The checks every call shares, after its NULL pointers: PLAN_KIND,
 * DTYPE_MISMATCH, strides and extents, BAD_LENGTH. */
static attn_status FN(check_call)(const attn_plan *plan, const FN(sdpa_args) *a, sdpa_extents *x)
{
    if (plan->kind != ATTN_PLAN_SDPA)
        return ATTN_ERR_PLAN_KIND;
    if (plan->dtype != PLAN_DTYPE)
        return ATTN_ERR_DTYPE_MISMATCH;
    const attn_status status = FN(check_strides)(&plan->sdpa, a, x);
    if (status != ATTN_OK)
        return status;
    for (size_t b = 0; a->key_lengths != NULL && b < plan->sdpa.shape.B; b++)
        if (a->key_lengths[b] > plan->sdpa.shape.Tk)
            return ATTN_ERR_BAD_LENGTH;
    return ATTN_OK;
}

/* The inputs every call reads. */
static void FN(input_regions)(const attn_plan *plan, const FN(sdpa_args) *a,
                              const sdpa_extents *x, attn_strided in[5])
{
    in[0] = FN(strided)(plan, x, ATTN_SDPA_Q, a->Q);
    in[1] = FN(strided)(plan, x, ATTN_SDPA_K, a->K);
    in[2] = FN(strided)(plan, x, ATTN_SDPA_V, a->V);
    in[3] = FN(run)(a->mask, x->mask, sizeof(real));
    in[4] = FN(run)(a->key_lengths, a->key_lengths != NULL ? plan->sdpa.shape.B : 0,
                    sizeof(size_t));
}

/* The packed operands (own threads, attn_sdpa_prepacks) at the start of
 * the plan's scratch (plan.c), or NULL. */
static real *FN(sdpa_packed)(const attn_plan *plan)
{
    return plan->threads > 0 && attn_sdpa_prepacks(&plan->sdpa) ? (real *)plan->scratch : NULL;
}

static FN(attn_sdpa_run_args) FN(run_args)(const attn_plan *plan, const FN(sdpa_args) *a,
                                          const sdpa_extents *x)
{
    FN(attn_sdpa_run_args) r = {
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
        .Q = a->Q, .K = a->K, .V = a->V,
        .ldq = x->st[ATTN_SDPA_Q].ld, .ldk = x->st[ATTN_SDPA_K].ld, .ldv = x->st[ATTN_SDPA_V].ld,
        .sbq = x->st[ATTN_SDPA_Q].sb, .shq = x->st[ATTN_SDPA_Q].sh,
        .sbk = x->st[ATTN_SDPA_K].sb, .shk = x->st[ATTN_SDPA_K].sh,
        .sbv = x->st[ATTN_SDPA_V].sb, .shv = x->st[ATTN_SDPA_V].sh,
        .sbo = x->st[ATTN_SDPA_OUT].sb, .sho = x->st[ATTN_SDPA_OUT].sh,
        .mask = a->mask, .mask_ld = a->mask_ld, .mask_sb = a->mask_sb, .mask_sh = a->mask_sh,
        .key_lengths = a->key_lengths,
        .out = a->out, .ldo = x->st[ATTN_SDPA_OUT].ld,
        .lse = a->lse,
        .dropout = &plan->dropout,
        .dropout_mask = FN(attn_dropout_mask_kernel)(plan->isa),
        .packed = FN(sdpa_packed)(plan),
        .panel = FN(attn_gemm_panel_kernel)(plan->isa)(),
        .partials = (real *)attn_plan_buffer(plan, ATTN_BUF_PARTIALS),
        .rowdot = (real *)attn_plan_buffer(plan, ATTN_BUF_ROWDOT),
        .dQ_parts = (real *)attn_plan_buffer(plan, ATTN_BUF_DQ_PARTS)};
    if (r.packed != NULL) /* checked when the scratch was laid out */
        (void)attn_sdpa_packs_of(&plan->sdpa, !plan->inference, &r.packs);
    return r;
}

attn_status FN(attn_sdpa_forward)(attn_plan *plan, const FN(sdpa_args) *a)
{
    if (plan == NULL || a == NULL || a->Q == NULL || a->K == NULL || a->V == NULL ||
        a->out == NULL)
        return ATTN_ERR_NULL_POINTER;
    sdpa_extents x;
    attn_status status = FN(check_call)(plan, a, &x);
    if (status != ATTN_OK)
        return status;
    attn_strided in[5];
    FN(input_regions)(plan, a, &x, in);
    const attn_strided out[] = {FN(strided)(plan, &x, ATTN_SDPA_OUT, a->out),
                                FN(run)(a->lse, x.lse, sizeof(real))};
    if (attn_strided_outputs_alias(out, ATTN_COUNT(out), in, 5))
        return ATTN_ERR_ALIASING;

    const FN(attn_sdpa_run_args) args = FN(run_args)(plan, a, &x);
    const FN(attn_engine) engine = FN(plan_engine)(plan);
    FN(attn_sdpa_forward_run)(&args, &engine);
    FN(plan_engine_done)(plan, &engine);
    return ATTN_OK;
}

attn_status FN(attn_sdpa_backward)(attn_plan *plan, const FN(sdpa_args) *a, const real *dout,
                                   real *dQ, real *dK, real *dV)
{
    if (plan == NULL || a == NULL || a->Q == NULL || a->K == NULL || a->V == NULL ||
        a->out == NULL || a->lse == NULL || dout == NULL || dQ == NULL || dK == NULL ||
        dV == NULL)
        return ATTN_ERR_NULL_POINTER;
    if (plan->kind != ATTN_PLAN_SDPA)
        return ATTN_ERR_PLAN_KIND;
    if (plan->dtype != PLAN_DTYPE)
        return ATTN_ERR_DTYPE_MISMATCH;
    if (plan->inference)
        return ATTN_ERR_INFERENCE_PLAN;
    sdpa_extents x;
    attn_status status = FN(check_call)(plan, a, &x);
    if (status != ATTN_OK)
        return status;
    attn_strided in[8];
    FN(input_regions)(plan, a, &x, in);
    in[5] = FN(strided)(plan, &x, ATTN_SDPA_OUT, a->out);
    in[6] = FN(run)(a->lse, x.lse, sizeof(real));
    in[7] = FN(strided)(plan, &x, ATTN_SDPA_OUT, dout);
    const attn_strided grads[] = {FN(strided)(plan, &x, ATTN_SDPA_Q, dQ),
                                  FN(strided)(plan, &x, ATTN_SDPA_K, dK),
                                  FN(strided)(plan, &x, ATTN_SDPA_V, dV)};
    if (attn_strided_outputs_alias(grads, ATTN_COUNT(grads), in, ATTN_COUNT(in)))
        return ATTN_ERR_ALIASING;

    FN(attn_sdpa_run_args) args = FN(run_args)(plan, a, &x);
    args.dout = dout;
    args.dQ = dQ;
    args.dK = dK;
    args.dV = dV;
    const FN(attn_engine) engine = FN(plan_engine)(plan);
    FN(attn_sdpa_backward_run)(&args, &engine);
    FN(plan_engine_done)(plan, &engine);
    return ATTN_OK;
}

attn_status FN(attn_sdpa)(const attn_sdpa_shape *shape, double scale, unsigned flags,
                          size_t window, const FN(sdpa_args) *a)
{
    if (shape == NULL || a == NULL)
        return ATTN_ERR_NULL_POINTER;
    attn_plan *plan = NULL;
    attn_status status = attn_sdpa_plan_create(&plan, PLAN_DTYPE, shape, scale,
                                               flags | ATTN_INFERENCE, window);
    if (status == ATTN_OK)
        status = FN(attn_sdpa_forward)(plan, a);
    attn_plan_destroy(plan);
    return status;
}
