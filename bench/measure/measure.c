#include "measure/measure.h"

#include <stdio.h>
#include <string.h>

#include "measure/attn_call.h"
#include "measure/flops.h"

const char *const bench_peer_kind_names[BENCH_PEER_KINDS] = {
    "naive", "numpy", "numpy32", "torch", "python", "ort", "openvino", "ggml"};
const char *const bench_point_status_names[4] = {"timed", "check_failed", "call_failed",
                                                 "setup_failed"};

double bench_gflops(double flops, double seconds)
{
    return seconds > 0.0 ? flops / seconds * 1e-9 : 0.0;
}

static int run_call(void *context)
{
    return (int)bench_attn_call_run_timed(context);
}

static void call_failed(bench_point_session *s, attn_status status, const char *when)
{
    s->point->status = BENCH_POINT_CALL_FAILED;
    s->point->call_status = status;
    snprintf(s->error, sizeof s->error, "attn call failed %s: %s", when,
             attn_status_string(status));
}

/* Creates the problem and the call, runs the call once and checks it:
 * whether it is ready to be timed (else the point and the error say why). */
static int prepare_and_check(bench_point_session *s, const bench_config *config)
{
    const bench_options *o = s->options;
    bench_point *point = s->point;
    bench_problem *problem = s->problem;
    memset(point, 0, sizeof *point);
    point->config = *config;
    point->flops = bench_shape_flops(&config->shape);
    point->call_status = ATTN_OK;
    point->check.status = BENCH_CHECK_SKIPPED;
    if (bench_problem_create(problem, &config->shape, config->with_weights, o->common.seed, s->error,
                             sizeof s->error) != 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        return 0;
    }
    attn_status status = bench_attn_call_prepare(&s->call, config, problem);
    if (status != ATTN_OK) {
        call_failed(s, status, "creating the plan");
        return 0;
    }
    point->engine_threads = bench_attn_call_engine_threads(&s->call);
    bench_problem_poison_outputs(problem);
    status = bench_attn_call_run(&s->call);
    if (status != ATTN_OK) {
        call_failed(s, status, "");
        return 0;
    }
    const bench_check_policy policy = {o->check_rows, o->check_grad_max_T};
    if (bench_check_problem(problem, &policy, &point->check) != 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(s->error, sizeof s->error, "out of memory for the reference");
        return 0;
    }
    if (point->check.status == BENCH_CHECK_FAILED) {
        point->status = BENCH_POINT_CHECK_FAILED;
        snprintf(s->error, sizeof s->error,
                 "output differs from the reference: relative error %.3e > tolerance %.0e",
                 point->check.error, point->check.tolerance);
        return 0;
    }
    return 1;
}

void bench_point_session_begin(bench_point_session *s, const bench_config *config,
                               const bench_options *options, bench_problem *problem,
                               bench_point *point)
{
    memset(s, 0, sizeof *s);
    s->point = point;
    s->options = options;
    s->problem = problem;
    s->ready = prepare_and_check(s, config);
    s->result = s->ready ? 0 : 1;
}

void bench_point_session_block(bench_point_session *s, size_t round, size_t rounds)
{
    if (s->result == 0)
        s->result = bench_time_round(&s->samples, &s->options->common.repeat, round, rounds, NULL,
                                     run_call, &s->call);
}

/* A profiled call: one plan call, as timed (dropout's offset included). */
static attn_status profiled_call(void *context, size_t *calls, double *seconds)
{
    const double start = bench_monotonic_seconds();
    const attn_status status = bench_attn_call_run_timed(context);
    *seconds = bench_monotonic_seconds() - start;
    *calls = 1;
    return status;
}

void bench_point_session_end(bench_point_session *s)
{
    bench_point *point = s->point;
    const int timed = bench_round_samples_finish(&s->samples, &point->attn) == 0;
    if (s->ready && s->result == 0 && timed) {
        point->status = BENCH_POINT_TIMED;
        /* a profile that fails stays unmeasured: the timing stands */
        if (s->options->common.profile)
            bench_phase_profile_measure(s->call.plan, profiled_call, &s->call,
                                        point->attn.repeats, point->config.shape.threads,
                                        &point->profile);
    } else if (s->ready && s->result > 0) {
        call_failed(s, (attn_status)s->result, "while timing");
    } else if (s->ready) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(s->error, sizeof s->error, "out of memory for the timing samples");
    }
    bench_attn_call_release(&s->call);
}
