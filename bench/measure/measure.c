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
    return (int)bench_attn_call_run_timed(context);
}

static void call_failed(bench_point *point, attn_status status, const char *when, char *error,
                        size_t error_size)
{
    point->status = BENCH_POINT_CALL_FAILED;
    point->call_status = status;
    snprintf(error, error_size, "attn call failed %s: %s", when, attn_status_string(status));
}

/* Creates the problem and the call, runs the call once and checks it:
 * whether it is ready to be timed (else point and error say why). */
static int prepare_and_check(const bench_config *config, const bench_options *o,
                             bench_problem *problem, bench_attn_call *call, bench_point *point,
                             char *error, size_t error_size)
{
    memset(point, 0, sizeof *point);
    point->config = *config;
    point->flops = bench_shape_flops(&config->shape);
    point->call_status = ATTN_OK;
    point->check.status = BENCH_CHECK_SKIPPED;
    if (bench_problem_create(problem, &config->shape, config->with_weights, o->seed, error,
                             error_size) != 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        return 0;
    }
    attn_status status = bench_attn_call_prepare(call, config, problem);
    if (status != ATTN_OK) {
        call_failed(point, status, "creating the plan", error, error_size);
        return 0;
    }
    point->engine_threads = bench_attn_call_engine_threads(call);
    bench_problem_poison_outputs(problem);
    status = bench_attn_call_run(call);
    if (status != ATTN_OK) {
        call_failed(point, status, "", error, error_size);
        return 0;
    }
    const bench_check_policy policy = {o->check_rows, o->check_grad_max_T};
    if (bench_check_problem(problem, &policy, &point->check) != 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(error, error_size, "out of memory for the reference");
        return 0;
    }
    if (point->check.status == BENCH_CHECK_FAILED) {
        point->status = BENCH_POINT_CHECK_FAILED;
        snprintf(error, error_size,
                 "output differs from the reference: relative error %.3e > tolerance %.0e",
                 point->check.error, point->check.tolerance);
        return 0;
    }
    return 1;
}

/* The point's status from the timing's result; then, with --profile, as
 * many calls profiled. */
static void record_timing(int result, bench_attn_call *call, const bench_options *o,
                          bench_point *point, char *error, size_t error_size)
{
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
    bench_attn_call call;
    memset(&call, 0, sizeof call);
    if (prepare_and_check(config, o, problem, &call, point, error, error_size))
        record_timing(bench_time_calls(&o->repeat, run_call, &call, &point->attn), &call, o,
                      point, error, error_size);
    bench_attn_call_release(&call);
}

void bench_measure_points_interleaved(const bench_config *configs, size_t count,
                                      const bench_options *o, bench_problem *problems,
                                      bench_point *points, char (*errors)[BENCH_ERROR_SIZE])
{
    bench_attn_call calls[BENCH_INTERLEAVE_MAX];
    bench_call_fn fns[BENCH_INTERLEAVE_MAX] = {0};
    void *contexts[BENCH_INTERLEAVE_MAX] = {0};
    bench_timing timings[BENCH_INTERLEAVE_MAX];
    size_t ready[BENCH_INTERLEAVE_MAX], n = 0;
    if (count > BENCH_INTERLEAVE_MAX)
        count = BENCH_INTERLEAVE_MAX;
    memset(calls, 0, sizeof calls);
    for (size_t k = 0; k < count; ++k)
        if (prepare_and_check(&configs[k], o, &problems[k], &calls[k], &points[k], errors[k],
                              BENCH_ERROR_SIZE)) {
            fns[n] = run_call;
            contexts[n] = &calls[k];
            ready[n++] = k;
        }
    const double block_s = o->repeat.min_time_s / BENCH_INTERLEAVE_BLOCKS;
    if (bench_time_interleaved(&o->repeat, block_s, n, fns, contexts, timings) == 0) {
        for (size_t i = 0; i < n; ++i) {
            points[ready[i]].attn = timings[i];
            record_timing(0, &calls[ready[i]], o, &points[ready[i]], errors[ready[i]],
                          BENCH_ERROR_SIZE);
        }
    } else { /* one after the other, so that a failure is the failing call's */
        for (size_t i = 0; i < n; ++i) {
            bench_point *point = &points[ready[i]];
            record_timing(bench_time_calls(&o->repeat, run_call, &calls[ready[i]], &point->attn),
                          &calls[ready[i]], o, point, errors[ready[i]], BENCH_ERROR_SIZE);
        }
    }
    for (size_t k = 0; k < count; ++k)
        bench_attn_call_release(&calls[k]);
}
