#include "measure.h"

#include <stdio.h>
#include <string.h>

#include "flops.h"

static int run_problem(void *context)
{
    return (int)bench_problem_run(context);
}

void bench_measure_point(const bench_shape *shape, const bench_options *options,
                         bench_point *point, char *error, size_t error_size)
{
    memset(&point->check, 0, sizeof point->check);
    memset(&point->attn, 0, sizeof point->attn);
    point->shape = *shape;
    point->with_weights = options->with_weights;
    point->flops = bench_self_attention_flops(shape->B, shape->T, shape->C, shape->hs,
                                              shape->causal);
    point->call_status = ATTN_OK;

    bench_problem problem;
    if (bench_problem_create(&problem, shape, options->with_weights, options->seed, error,
                             error_size) != 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        return;
    }

    bench_problem_poison_outputs(&problem);
    point->call_status = bench_problem_run(&problem);
    if (point->call_status != ATTN_OK) {
        point->status = BENCH_POINT_CALL_FAILED;
        snprintf(error, error_size, "attn_self_attention failed: %s",
                 attn_status_string(point->call_status));
    } else if (bench_check_problem(&problem, options->check_rows, &point->check) != 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(error, error_size, "out of memory for the reference");
    } else if (!point->check.passed) {
        point->status = BENCH_POINT_CHECK_FAILED;
        snprintf(error, error_size,
                 "output differs from the reference: relative error %.3e (out %.3e, "
                 "weights %.3e) > tolerance %.0e over %zu rows",
                 point->check.error, point->check.out_error, point->check.weights_error,
                 point->check.tolerance, point->check.rows_checked);
    } else {
        int result = bench_time_calls(&options->repeat, run_problem, &problem, &point->attn);
        if (result == 0) {
            point->status = BENCH_POINT_TIMED;
        } else if (result < 0) {
            point->status = BENCH_POINT_SETUP_FAILED;
            snprintf(error, error_size, "out of memory for the timing samples");
        } else {
            point->status = BENCH_POINT_CALL_FAILED;
            point->call_status = (attn_status)result;
            snprintf(error, error_size, "attn_self_attention failed while timing: %s",
                     attn_status_string(point->call_status));
        }
    }
    bench_problem_destroy(&problem);
}
