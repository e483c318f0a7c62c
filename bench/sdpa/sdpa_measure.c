#include "sdpa/sdpa_measure.h"

#include <stdlib.h>
#include <string.h>

#include "sdpa/sdpa_loop.h"

bench_fma_kind bench_sdpa_peak_kind(const bench_fma_peak *peak, bench_dtype dtype)
{
    if (dtype == BENCH_F64)
        return BENCH_FMA_F64;
    if (dtype == BENCH_BF16 && peak->amx_bf16 && strcmp(attn_simd_name(), "amx") == 0)
        return BENCH_FMA_AMX_BF16; /* the library's bf16 products run on the tiles */
    return dtype == BENCH_BF16 && peak->bf16_dot ? BENCH_FMA_BF16_DOT : BENCH_FMA_F32;
}

double bench_sdpa_peak_gflops(const bench_fma_peak *peak, const bench_sdpa_shape *shape)
{
    return bench_fma_peak_gflops(peak, bench_sdpa_peak_kind(peak, shape->dtype), shape->threads);
}

static int call_once(void *context)
{
    return (int)bench_sdpa_call_run_timed(&((bench_sdpa_session *)context)->call);
}

/* The cold-cache read before each call (the bandwidth buffer). */
static void read_flush_buffer(void *context)
{
    const bench_sdpa_session *session = context;
    bench_bandwidth_read(session->flush, session->point->config.shape.threads);
}

/* A decode loop's block: --warmup untimed passes in the first round, then a
 * timed one. */
static int loop_block(bench_sdpa_session *session, const bench_repeat_policy *block,
                      size_t round)
{
    const size_t steps = session->point->config.shape.steps;
    bench_prepare_fn prepare = session->flush ? read_flush_buffer : NULL;
    attn_status status = ATTN_OK;
    for (size_t i = 0; round == 0 && i < block->warmup && status == ATTN_OK; ++i)
        status = bench_sdpa_loop_pass(&session->call, prepare, session, NULL);
    if (status != ATTN_OK)
        return (int)status;
    bench_round_samples *samples = &session->samples;
    if (bench_round_samples_reserve(samples, steps) != 0)
        return -1;
    status = bench_sdpa_loop_pass(&session->call, prepare, session,
                                  samples->values + samples->count);
    if (status == ATTN_OK)
        samples->count += steps;
    return (int)status;
}

void bench_sdpa_session_block(bench_sdpa_session *session, size_t round)
{
    if (session->result != 0)
        return;
    const bench_sdpa_options *o = session->options;
    if (session->point->config.shape.scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP) {
        const bench_repeat_policy block = bench_round_policy(&o->common.repeat, round, o->rounds);
        session->result = loop_block(session, &block, round);
        return;
    }
    session->result = bench_time_round(&session->samples, &o->common.repeat, round, o->rounds,
                                       session->flush ? read_flush_buffer : NULL, call_once,
                                       session);
}

static void call_failed(bench_sdpa_session *session, attn_status status, const char *when)
{
    session->point->status = BENCH_POINT_CALL_FAILED;
    session->point->call_status = status;
    snprintf(session->error, sizeof session->error, "attn call failed%s: %s", when,
             attn_status_string(status));
}

/* The checked call (a decode loop: a pass) and the check; 0 when it passed. */
static int check_call(bench_sdpa_session *session, bench_sdpa_problem *problem)
{
    bench_sdpa_point *point = session->point;
    const int loop = problem->shape.scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP;
    const size_t rows = session->options->check_rows;
    bench_sdpa_problem_poison_outputs(problem);
    const attn_status status = loop ? bench_sdpa_loop_pass(&session->call, NULL, NULL, NULL)
                                    : bench_sdpa_call_run(&session->call);
    if (status != ATTN_OK) {
        call_failed(session, status, "");
        return -1;
    }
    const int failed = loop ? bench_sdpa_loop_check(problem, rows, &point->check)
                            : bench_sdpa_check_problem(problem, rows, session->call.backward,
                                                       &point->check);
    if (failed) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(session->error, sizeof session->error, "out of memory for the reference");
        return -1;
    }
    if (point->check.status == BENCH_CHECK_FAILED) {
        point->status = BENCH_POINT_CHECK_FAILED;
        snprintf(session->error, sizeof session->error,
                 "%s differs from the reference: relative error %.3e > tolerance %.2g",
                 point->check.worst, point->check.error, point->check.tolerance);
        return -1;
    }
    return 0;
}

void bench_sdpa_session_begin(bench_sdpa_session *session, const bench_sdpa_config *c,
                              const bench_sdpa_options *o, bench_sdpa_problem *problem,
                              const bench_bandwidth_buffer *flush, bench_sdpa_point *point)
{
    memset(session, 0, sizeof *session);
    session->point = point;
    session->options = o;
    session->result = 1; /* nothing to time until the check passed */
    if (!problem)
        return;
    memset(point, 0, sizeof *point);
    point->config = *c;
    point->pairs = bench_sdpa_visible_pairs(&c->shape) * (double)c->shape.NH;
    point->flops = bench_sdpa_flops(&c->shape);
    point->kv_bytes = bench_sdpa_kv_bytes(&c->shape);
    point->check.status = BENCH_CHECK_SKIPPED;
    const attn_status status = bench_sdpa_call_create(&session->call, &c->shape, c->engine,
                                                      problem);
    if (status != ATTN_OK) {
        call_failed(session, status, " creating the plan");
        return;
    }
    if (attn_plan_get_threads(session->call.plan, &point->engine_threads) != ATTN_OK)
        point->engine_threads = 0;
    session->flush = c->shape.cache == BENCH_SDPA_CACHE_COLD ? flush : NULL;
    session->ready = check_call(session, problem) == 0;
    session->result = session->ready ? 0 : 1;
}

/* A profiled call (phase_profile.h): a timed call, or a decode loop's pass;
 * the cold-cache read before each, untimed. */
static attn_status profiled_call(void *context, size_t *calls, double *seconds)
{
    bench_sdpa_session *session = context;
    const bench_sdpa_shape *shape = &session->point->config.shape;
    bench_prepare_fn prepare = session->flush ? read_flush_buffer : NULL;
    *seconds = 0.0;
    if (shape->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP) {
        if (!session->profile_steps) /* once for every profiled pass */
            session->profile_steps = malloc(shape->steps * sizeof *session->profile_steps);
        double *steps = session->profile_steps;
        const double start = bench_monotonic_seconds();
        const attn_status status = bench_sdpa_loop_pass(&session->call, prepare, session, steps);
        *seconds = bench_monotonic_seconds() - start; /* without memory: appends counted */
        if (steps) {
            *seconds = 0.0;
            for (size_t s = 0; s < shape->steps; ++s)
                *seconds += steps[s];
        }
        *calls = shape->steps;
        return status;
    }
    if (prepare)
        prepare(session);
    const double start = bench_monotonic_seconds();
    const attn_status status = bench_sdpa_call_run_timed(&session->call);
    *seconds = bench_monotonic_seconds() - start;
    *calls = 1;
    return status;
}

void bench_sdpa_session_end(bench_sdpa_session *session)
{
    bench_sdpa_point *point = session->point;
    bench_timing timing;
    const int timed = bench_round_samples_finish(&session->samples, &timing) == 0;
    if (session->ready) { /* checked: timed, or why not */
        if (session->result == 0 && timed) {
            point->attn = timing;
            point->status = BENCH_POINT_TIMED;
            if (session->options->common.profile)
                bench_phase_profile_measure(session->call.plan, profiled_call, session,
                                            timing.repeats, point->config.shape.threads,
                                            &point->profile);
        } else if (session->result > 0) {
            call_failed(session, (attn_status)session->result, " while timing");
        } else {
            point->status = BENCH_POINT_SETUP_FAILED;
            snprintf(session->error, sizeof session->error,
                     "out of memory for the timing samples");
        }
    }
    free(session->profile_steps);
    session->profile_steps = NULL;
    bench_sdpa_call_destroy(&session->call);
}
