#include "measure/measure.h"

#include <stdio.h>
#include <string.h>

#include "measure/attn_call.h"
#include "measure/flops.h"

const char *const bench_peer_kind_names[BENCH_PEER_KINDS] = {"naive", "numpy", "numpy32",
                                                               "torch", "python"};
const char *const bench_point_status_names[4] = {"timed", "check_failed", "call_failed",
                                                 "setup_failed"};

double bench_gflops(double flops, double seconds)
{
    return seconds > 0.0 ? flops / seconds * 1e-9 : 0.0;
}

static int run_call(void *context)
{
    return (int)bench_attn_call_run(context);
}

static void call_failed(bench_point *point, attn_status status, const char *when, char *error,
                        size_t error_size)
{
    point->status = BENCH_POINT_CALL_FAILED;
    point->call_status = status;
    snprintf(error, error_size, "attn call failed %s: %s", when, attn_status_string(status));
}

/* Checks, then times, the prepared call. */
static void check_and_time(bench_attn_call *call, bench_problem *problem,
                           const bench_options *o, bench_point *point, char *error,
                           size_t error_size)
{
    bench_problem_poison_outputs(problem);
    attn_status status = bench_attn_call_run(call);
    if (status != ATTN_OK) {
        call_failed(point, status, "", error, error_size);
        return;
    }
    const bench_check_policy policy = {o->check_rows, o->check_grad_max_T};
    if (bench_check_problem(problem, &policy, &point->check) != 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(error, error_size, "out of memory for the reference");
        return;
    }
    if (point->check.status == BENCH_CHECK_FAILED) {
        point->status = BENCH_POINT_CHECK_FAILED;
        snprintf(error, error_size,
                 "output differs from the reference: relative error %.3e > tolerance %.0e",
                 point->check.error, point->check.tolerance);
        return;
    }
    int result = bench_time_calls(&o->repeat, run_call, call, &point->attn);
    if (result == 0) {
        point->status = BENCH_POINT_TIMED;
        if (o->profile) /* a profile that fails stays unmeasured: the timing stands */
            bench_phase_profile_measure(call, point->attn.repeats, point->config.shape.threads,
                                        &point->profile);
    } else if (result < 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(error, error_size, "out of memory for the timing samples");
    } else {
        call_failed(point, (attn_status)result, "while timing", error, error_size);
    }
}

void bench_measure_point(const bench_config *config, const bench_options *o,
                         bench_problem *problem, bench_point *point, char *error,
                         size_t error_size)
{
    memset(point, 0, sizeof *point);
    point->config = *config;
    point->flops = bench_shape_flops(&config->shape);
    point->call_status = ATTN_OK;
    point->check.status = BENCH_CHECK_SKIPPED;
    if (bench_problem_create(problem, &config->shape, config->with_weights, o->seed, error,
                             error_size) != 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        return;
    }
    bench_attn_call call;
    attn_status status = bench_attn_call_prepare(&call, config, problem);
    if (status != ATTN_OK) {
        call_failed(point, status, "creating the plan", error, error_size);
    } else {
        point->engine_threads = bench_attn_call_engine_threads(&call);
        check_and_time(&call, problem, o, point, error, error_size);
    }
    bench_attn_call_release(&call);
}
