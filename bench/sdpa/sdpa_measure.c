#include "sdpa/sdpa_measure.h"

#include <string.h>

typedef struct sdpa_call {
    attn_plan *plan;
    const bench_sdpa_problem *problem;
    attn_sdpa_args_f32 a32;
    attn_sdpa_args_f64 a64;
    int backward;
} sdpa_call;

static void bind_arguments(sdpa_call *call, const bench_sdpa_problem *p)
{
    const bench_sdpa_shape *s = &p->shape;
    call->problem = p;
    call->backward = s->op == BENCH_OP_BACKWARD;
    /* dense rows, given explicitly (the strides attn.h's 0 would mean) */
    const size_t ldq = s->NH * s->hs, ldk = s->NH_kv * s->hs, ldv = s->NH_kv * s->hs_v,
                 ldo = s->NH * s->hs_v;
    if (s->dtype == BENCH_F32)
        call->a32 = (attn_sdpa_args_f32){
            .Q = p->Q, .ldq = ldq, .K = p->K, .ldk = ldk, .V = p->V, .ldv = ldv,
            .mask = p->mask, .mask_ld = p->mask_ld, .mask_sb = p->mask_sb,
            .mask_sh = p->mask_sh, .key_lengths = p->key_lengths, .out = p->out, .ldo = ldo,
            .lse = call->backward ? p->lse : NULL};
    else
        call->a64 = (attn_sdpa_args_f64){
            .Q = p->Q, .ldq = ldq, .K = p->K, .ldk = ldk, .V = p->V, .ldv = ldv,
            .mask = p->mask, .mask_ld = p->mask_ld, .mask_sb = p->mask_sb,
            .mask_sh = p->mask_sh, .key_lengths = p->key_lengths, .out = p->out, .ldo = ldo,
            .lse = call->backward ? p->lse : NULL};
}

static attn_status run_call(const sdpa_call *call)
{
    const bench_sdpa_problem *p = call->problem;
    attn_status status;
    if (p->shape.dtype == BENCH_F32) {
        status = attn_sdpa_forward_f32(call->plan, &call->a32);
        if (status == ATTN_OK && call->backward)
            status = attn_sdpa_backward_f32(call->plan, &call->a32, p->dout, p->dQ, p->dK, p->dV);
    } else {
        status = attn_sdpa_forward_f64(call->plan, &call->a64);
        if (status == ATTN_OK && call->backward)
            status = attn_sdpa_backward_f64(call->plan, &call->a64, p->dout, p->dQ, p->dK, p->dV);
    }
    return status;
}

/* The timed call, and the cold-cache read before it (flush NULL: none). */
typedef struct timed_call {
    const sdpa_call *call;
    const bench_bandwidth_buffer *flush;
    size_t threads;
} timed_call;

static int call_once(void *context)
{
    return (int)run_call(((const timed_call *)context)->call);
}

static void read_flush_buffer(void *context)
{
    const timed_call *timed = context;
    bench_bandwidth_read(timed->flush, timed->threads);
}

static int time_calls(const bench_repeat_policy *policy, const sdpa_call *call,
                      const bench_bandwidth_buffer *flush, size_t threads, bench_timing *timing)
{
    timed_call timed = {call, flush, threads};
    return bench_time_prepared_calls(policy, flush ? read_flush_buffer : NULL, call_once,
                                     &timed, timing);
}

static void call_failed(bench_sdpa_point *point, attn_status status, const char *when,
                        char *error, size_t error_size)
{
    point->status = BENCH_POINT_CALL_FAILED;
    point->call_status = status;
    snprintf(error, error_size, "attn call failed%s: %s", when, attn_status_string(status));
}

static attn_status create_plan(const bench_sdpa_config *c, attn_plan **plan)
{
    const bench_sdpa_shape *s = &c->shape;
    const attn_sdpa_shape shape = {.B = s->B, .NH = s->NH, .NH_kv = s->NH_kv, .Tq = s->Tq,
                                   .Tk = s->Tk, .hs = s->hs, .hs_v = s->hs_v};
    unsigned flags = s->causal ? ATTN_CAUSAL : 0u;
    if (s->op == BENCH_OP_FORWARD)
        flags |= ATTN_INFERENCE;
    attn_status status = attn_sdpa_plan_create(plan, s->dtype == BENCH_F32 ? ATTN_F32 : ATTN_F64,
                                               &shape, 0.0, flags, s->window);
    if (status == ATTN_OK && c->engine != BENCH_ENGINE_AUTO) /* auto: the plan's default */
        status = attn_plan_set_threads(
            *plan, c->engine == BENCH_ENGINE_OWN ? (unsigned)s->threads : 0u);
    return status;
}

void bench_sdpa_measure(const bench_sdpa_config *c, const bench_sdpa_options *o,
                        bench_sdpa_problem *problem, const bench_bandwidth_buffer *flush,
                        bench_sdpa_point *point, char *error, size_t error_size)
{
    memset(point, 0, sizeof *point);
    point->config = *c;
    point->pairs = bench_sdpa_visible_pairs(&c->shape) * (double)c->shape.NH;
    point->flops = bench_sdpa_flops(&c->shape);
    point->kv_bytes = bench_sdpa_kv_bytes(&c->shape);
    point->check.status = BENCH_CHECK_SKIPPED;
    point->torch.check_error = -1.0;
    attn_plan *plan = NULL;
    attn_status status = create_plan(c, &plan);
    if (status != ATTN_OK) {
        call_failed(point, status, " creating the plan", error, error_size);
        attn_plan_destroy(plan);
        return;
    }
    if (attn_plan_get_threads(plan, &point->engine_threads) != ATTN_OK)
        point->engine_threads = 0;
    sdpa_call call = {.plan = plan};
    bind_arguments(&call, problem);

    bench_sdpa_problem_poison_outputs(problem);
    status = run_call(&call);
    if (status != ATTN_OK) {
        call_failed(point, status, "", error, error_size);
    } else if (bench_sdpa_check_problem(problem, o->check_rows, call.backward, &point->check) !=
               0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(error, error_size, "out of memory for the reference");
    } else if (point->check.status == BENCH_CHECK_FAILED) {
        point->status = BENCH_POINT_CHECK_FAILED;
        snprintf(error, error_size,
                 "%s differs from the reference: relative error %.3e > tolerance %.0e",
                 point->check.worst, point->check.error, point->check.tolerance);
    } else {
        const int result = time_calls(&o->repeat, &call,
                                      c->shape.cache == BENCH_SDPA_CACHE_COLD ? flush : NULL,
                                      c->shape.threads, &point->attn);
        if (result == 0)
            point->status = BENCH_POINT_TIMED;
        else if (result < 0) {
            point->status = BENCH_POINT_SETUP_FAILED;
            snprintf(error, error_size, "out of memory for the timing samples");
        } else {
            call_failed(point, (attn_status)result, " while timing", error, error_size);
        }
    }
    attn_plan_destroy(plan);
}
