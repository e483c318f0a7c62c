#include "measure/attn_call.h"

#include <stdlib.h>

#define BENCH_TEMPLATE "measure/attn_call.inc.c"
#include "util/precisions.inc.c"

static unsigned plan_flags(const bench_config *config)
{
    unsigned flags = config->shape.causal ? ATTN_CAUSAL : 0u;
    if (config->shape.op == BENCH_OP_FORWARD)
        flags |= ATTN_INFERENCE;
    if (config->path == BENCH_PATH_MATERIALIZED)
        flags |= ATTN_MATERIALIZED;
    else if (config->path == BENCH_PATH_TILED)
        flags |= ATTN_TILED;
    return flags;
}

attn_status bench_attn_call_prepare(bench_attn_call *call, const bench_config *config,
                                    const bench_problem *problem)
{
    call->config = *config;
    call->problem = problem;
    call->plan = NULL;
    call->dropout_offset = 0;
    if (config->api != BENCH_API_PLAN)
        return ATTN_OK;
    const bench_shape *s = &config->shape;
    attn_status status =
        attn_plan_create(&call->plan, s->dtype == BENCH_F32 ? ATTN_F32 : ATTN_F64, s->B, s->T,
                         s->C, s->NH, s->hs, 0.0, plan_flags(config));
    if (status == ATTN_OK && config->engine != BENCH_ENGINE_AUTO) /* auto: the default */
        status = attn_plan_set_threads(
            call->plan, config->engine == BENCH_ENGINE_OWN ? (unsigned)s->threads : 0u);
    return status;
}

unsigned bench_attn_auto_threads(void)
{
    static int known;
    static unsigned threads;
    if (!known) {
        attn_plan *plan = NULL;
        known = attn_plan_create(&plan, ATTN_F32, 1, 1, 1, 1, 1, 0.0, ATTN_INFERENCE) ==
                    ATTN_OK &&
                attn_plan_get_threads(plan, &threads) == ATTN_OK;
        attn_plan_destroy(plan);
    }
    return threads;
}

const char *bench_attn_auto_mismatch(bench_engine engine, size_t threads)
{
    const unsigned auto_threads = bench_attn_auto_threads();
    if (engine == BENCH_ENGINE_AUTO && auto_threads > 0 && auto_threads != threads)
        return "engine auto at a thread count other than the one it resolves to (its row's "
               "peers would run on other counts than attn)";
    return NULL;
}

size_t bench_attn_threads_used(unsigned engine_threads, size_t row_threads)
{
    return engine_threads ? engine_threads : row_threads;
}

void bench_attn_auto_threads_print(FILE *out, const char *what)
{
    const unsigned threads = bench_attn_auto_threads();
    const char *forced = getenv("ATTN_NUM_THREADS");
    fprintf(out, "# engine auto (%s): ", what);
    if (threads)
        fprintf(out, "attn's own engine on %u shared thread%s", threads, threads == 1 ? "" : "s");
    else
        fprintf(out, "BLAS threads");
    if (forced)
        fprintf(out, " (ATTN_NUM_THREADS=%s)", forced);
    fputc('\n', out);
}

unsigned bench_attn_call_engine_threads(const bench_attn_call *call)
{
    unsigned threads = 0;
    if (!call->plan || attn_plan_get_threads(call->plan, &threads) != ATTN_OK)
        return bench_attn_auto_threads(); /* a one-shot runs at the default */
    return threads;
}

attn_status bench_attn_call_run(const bench_attn_call *call)
{
    return call->config.shape.dtype == BENCH_F32 ? run_call_f32(call) : run_call_f64(call);
}

attn_status bench_dropout_before_call(attn_plan *plan, double p, uint64_t *offset)
{
    if (!(p > 0.0))
        return ATTN_OK;
    return attn_plan_set_dropout(plan, p, BENCH_DROPOUT_SEED, (*offset)++);
}

attn_status bench_attn_call_run_timed(bench_attn_call *call)
{
    const attn_status status =
        bench_dropout_before_call(call->plan, call->config.shape.dropout, &call->dropout_offset);
    return status == ATTN_OK ? bench_attn_call_run(call) : status;
}

void bench_attn_call_release(bench_attn_call *call)
{
    attn_plan_destroy(call->plan);
    call->plan = NULL;
}
