#include "measure/sdpa_measure.h"

#include <string.h>

#include "measure/sdpa_loop.h"

bench_fma_kind bench_sdpa_peak_kind(const bench_fma_peak *peak, bench_dtype dtype)
{
    if (dtype == BENCH_F64)
        return BENCH_FMA_F64;
    if (dtype != BENCH_BF16)
        return BENCH_FMA_F32;
    /* a bf16 row: the peak of what the library's bf16 products run on */
    const char *set = attn_simd_name();
    const int amx = strcmp(set, "amx") == 0;
    if (amx && peak->amx_bf16)
        return BENCH_FMA_AMX_BF16;
    if ((amx || strcmp(set, "avx512-bf16") == 0) && peak->bf16_dot)
        return BENCH_FMA_BF16_DOT;
    return BENCH_FMA_F32; /* another set: float products on widened copies */
}

double bench_sdpa_peak_gflops(const bench_fma_peak *peak, const bench_sdpa_shape *shape)
{
    return bench_fma_peak_gflops(peak, bench_sdpa_peak_kind(peak, shape->dtype), shape->threads);
}

/* The cold-cache read before each call (the bandwidth buffer). */
static void read_flush_buffer(void *context)
{
    const bench_sdpa_session *s = context;
    bench_bandwidth_read(s->flush, s->threads);
}

/* The operations of a call and of a decode loop (session.h). */
static attn_status run_checked(void *context)
{
    bench_sdpa_session *s = context;
    bench_sdpa_problem_poison_outputs(s->problem);
    return bench_sdpa_call_run(&s->call);
}

static attn_status pass_checked(void *context)
{
    bench_sdpa_session *s = context;
    bench_sdpa_problem_poison_outputs(s->problem);
    return bench_sdpa_loop_pass(&s->call, NULL, NULL, NULL);
}

static int check_call(void *context, bench_check *check)
{
    const bench_sdpa_session *s = context;
    return bench_sdpa_check_problem(s->problem, s->check_rows, s->call.backward, check);
}

static int check_loop(void *context, bench_check *check)
{
    const bench_sdpa_session *s = context;
    return bench_sdpa_loop_check(s->problem, s->check_rows, check);
}

static attn_status run_timed(void *context)
{
    return bench_sdpa_call_run_timed(&((bench_sdpa_session *)context)->call);
}

static attn_status pass(void *context, bench_prepare_fn prepare, void *prepare_context,
                        double *samples)
{
    bench_sdpa_session *s = context;
    return bench_sdpa_loop_pass(&s->call, prepare, prepare_context, samples);
}

static const bench_call_ops call_ops = {run_checked, check_call, run_timed, NULL};
static const bench_call_ops loop_ops = {pass_checked, check_loop, run_timed, pass};

void bench_sdpa_session_begin(bench_sdpa_session *s, const bench_sdpa_config *c,
                              const bench_sdpa_options *o, bench_sdpa_problem *problem,
                              const char *error, const bench_bandwidth_buffer *flush,
                              bench_sdpa_point *point)
{
    memset(s, 0, sizeof *s);
    memset(point, 0, sizeof *point);
    point->config = *c;
    const bench_session_policy policy = {&o->common.repeat, o->rounds, o->common.profile,
                                         c->shape.threads};
    bench_session_init(&s->session, &point->outcome, &policy);
    if (!problem) {
        bench_session_setup_failed(&s->session, error);
        return;
    }
    point->pairs = bench_sdpa_visible_pairs(&c->shape) * (double)c->shape.NH;
    point->flops = bench_sdpa_flops(&c->shape);
    point->kv_bytes = bench_sdpa_kv_bytes(&c->shape);
    s->problem = problem;
    s->check_rows = o->check_rows;
    s->threads = c->shape.threads;
    const attn_status status = bench_sdpa_call_create(&s->call, &c->shape, c->engine, problem);
    if (status != ATTN_OK) {
        bench_session_call_failed(&s->session, status, "creating the plan");
        return;
    }
    if (attn_plan_get_threads(s->call.plan, &point->outcome.engine_threads) != ATTN_OK)
        point->outcome.engine_threads = 0;
    if (c->shape.cache == BENCH_SDPA_CACHE_COLD && flush) {
        s->flush = flush;
        s->session.prepare = read_flush_buffer;
        s->session.prepare_context = s;
    }
    const int loop = c->shape.scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP;
    s->session.steps = c->shape.steps;
    bench_session_check(&s->session, loop ? &loop_ops : &call_ops, s, s->call.plan);
}

void bench_sdpa_session_block(bench_sdpa_session *s, size_t round)
{
    bench_session_block(&s->session, round);
}

void bench_sdpa_session_end(bench_sdpa_session *s)
{
    bench_session_end(&s->session);
    bench_sdpa_call_destroy(&s->call);
}
