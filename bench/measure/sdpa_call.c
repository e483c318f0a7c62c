#include "measure/sdpa_call.h"

#include <string.h>

#include "measure/attn_call.h"

/* The arguments of one precision, bound to the problem (ARGS: the struct). */
#define BIND_ARGUMENTS(ARGS, p, backward)                                                       \
    (ARGS){.Q = (p)->Q, .ldq = (p)->strides.q.ld, .sbq = (p)->strides.q.sb,                    \
           .shq = (p)->strides.q.sh, .K = (p)->K, .ldk = (p)->strides.k.ld,                    \
           .sbk = (p)->strides.k.sb, .shk = (p)->strides.k.sh, .V = (p)->V,                    \
           .ldv = (p)->strides.v.ld, .sbv = (p)->strides.v.sb, .shv = (p)->strides.v.sh,       \
           .mask = (p)->mask, .mask_ld = (p)->mask_ld, .mask_sb = (p)->mask_sb,                \
           .mask_sh = (p)->mask_sh, .key_lengths = (p)->key_lengths, .out = (p)->out,          \
           .ldo = (p)->strides.o.ld, .sbo = (p)->strides.o.sb, .sho = (p)->strides.o.sh,       \
           .lse = (backward) ? (p)->lse : NULL}

static attn_status create_plan(const bench_sdpa_shape *s, bench_engine engine, attn_plan **plan)
{
    const int loop = s->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP;
    const attn_sdpa_shape shape = {.B = s->B, .NH = s->NH, .NH_kv = s->NH_kv, .Tq = s->Tq,
                                   .Tk = loop ? bench_sdpa_capacity(s) : s->Tk, .hs = s->hs,
                                   .hs_v = s->hs_v};
    unsigned flags = s->causal ? ATTN_CAUSAL : 0u;
    if (s->op == BENCH_OP_FORWARD)
        flags |= ATTN_INFERENCE;
    static const attn_dtype dtypes[BENCH_DTYPE_ALL_COUNT] = {
        [BENCH_F32] = ATTN_F32, [BENCH_F64] = ATTN_F64, [BENCH_BF16] = ATTN_BF16,
        [BENCH_F16] = ATTN_F16};
    attn_status status =
        attn_sdpa_plan_create(plan, dtypes[s->dtype], &shape, 0.0, flags, s->window);
    if (status == ATTN_OK && engine != BENCH_ENGINE_AUTO) /* auto: the plan's default */
        status = attn_plan_set_threads(*plan,
                                       engine == BENCH_ENGINE_OWN ? (unsigned)s->threads : 0u);
    return status;
}

attn_status bench_sdpa_call_create(bench_sdpa_call *call, const bench_sdpa_shape *shape,
                                   bench_engine engine, const bench_sdpa_problem *p)
{
    memset(call, 0, sizeof *call);
    attn_status status = create_plan(shape, engine, &call->plan);
    if (status != ATTN_OK) {
        attn_plan_destroy(call->plan);
        call->plan = NULL;
        return status;
    }
    call->problem = p;
    call->backward = shape->op == BENCH_OP_BACKWARD;
    call->dropout = call->backward ? shape->dropout : 0.0;
    switch (shape->dtype) {
    case BENCH_F32:
        call->a32 = BIND_ARGUMENTS(attn_sdpa_args_f32, p, call->backward);
        break;
    case BENCH_F64:
        call->a64 = BIND_ARGUMENTS(attn_sdpa_args_f64, p, call->backward);
        break;
    case BENCH_BF16:
        call->abf16 = BIND_ARGUMENTS(attn_sdpa_args_bf16, p, call->backward);
        break;
    case BENCH_F16:
        call->af16 = BIND_ARGUMENTS(attn_sdpa_args_f16, p, call->backward);
        break;
    }
    return ATTN_OK;
}

void bench_sdpa_call_at_step(bench_sdpa_call *call, size_t step)
{
    const bench_sdpa_problem *p = call->problem;
    const size_t q = step * p->q_count, o = step * p->out_count;
    switch (p->shape.dtype) {
    case BENCH_F32:
        call->a32.Q = (const float *)p->Q + q;
        call->a32.out = (float *)p->out + o;
        break;
    case BENCH_F64:
        call->a64.Q = (const double *)p->Q + q;
        call->a64.out = (double *)p->out + o;
        break;
    case BENCH_BF16:
        call->abf16.Q = (const attn_bf16 *)p->Q + q;
        call->abf16.out = (attn_bf16 *)p->out + o;
        break;
    case BENCH_F16:
        call->af16.Q = (const attn_f16 *)p->Q + q;
        call->af16.out = (attn_f16 *)p->out + o;
        break;
    }
}

attn_status bench_sdpa_call_run(const bench_sdpa_call *call)
{
    const bench_sdpa_problem *p = call->problem;
    attn_status status = ATTN_ERR_BAD_DTYPE;
    switch (p->shape.dtype) {
    case BENCH_F32:
        status = attn_sdpa_forward_f32(call->plan, &call->a32);
        if (status == ATTN_OK && call->backward)
            status = attn_sdpa_backward_f32(call->plan, &call->a32, p->dout, p->dQ, p->dK, p->dV);
        break;
    case BENCH_F64:
        status = attn_sdpa_forward_f64(call->plan, &call->a64);
        if (status == ATTN_OK && call->backward)
            status = attn_sdpa_backward_f64(call->plan, &call->a64, p->dout, p->dQ, p->dK, p->dV);
        break;
    case BENCH_BF16:
        status = attn_sdpa_forward_bf16(call->plan, &call->abf16);
        if (status == ATTN_OK && call->backward)
            status =
                attn_sdpa_backward_bf16(call->plan, &call->abf16, p->dout, p->dQ, p->dK, p->dV);
        break;
    case BENCH_F16:
        status = attn_sdpa_forward_f16(call->plan, &call->af16);
        if (status == ATTN_OK && call->backward)
            status = attn_sdpa_backward_f16(call->plan, &call->af16, p->dout, p->dQ, p->dK, p->dV);
        break;
    }
    return status;
}

attn_status bench_sdpa_call_run_timed(bench_sdpa_call *call)
{
    const attn_status status =
        bench_dropout_before_call(call->plan, call->dropout, &call->dropout_offset);
    return status == ATTN_OK ? bench_sdpa_call_run(call) : status;
}

void bench_sdpa_call_destroy(bench_sdpa_call *call)
{
    attn_plan_destroy(call->plan);
    call->plan = NULL;
}
