#include "peers/peer_naive.h"

#include <stdio.h>
#include <string.h>

#include "measure/naive.h"

typedef struct naive_call {
    const bench_problem *problem;
    bench_naive_workspace workspace;
} naive_call;

static int run_naive(void *context)
{
    naive_call *call = context;
    bench_naive_run(call->problem, &call->workspace);
    return 0;
}

void bench_naive_peer_time(const bench_problem *problem, const bench_repeat_policy *policy,
                           size_t max_T, bench_peer_timing *result)
{
    memset(result, 0, sizeof *result);
    result->check_error = -1.0; /* checked by attn-bench itself, not by a check of its own */
    if (problem->shape.T > max_T) {
        snprintf(result->note, sizeof result->note, "T > --naive-max-T %zu", max_T);
        return;
    }
    naive_call call = {.problem = problem};
    if (bench_naive_workspace_create(&call.workspace, &problem->shape) != 0) {
        snprintf(result->note, sizeof result->note, "out of memory");
        return;
    }
    if (bench_time_calls(policy, run_naive, &call, &result->timing) == 0) {
        result->measured = 1;
        result->threads = 1; /* plain loops on the calling thread */
        snprintf(result->out_dtype, sizeof result->out_dtype, "%s",
                 problem->shape.dtype == BENCH_F32 ? "float32" : "float64");
    } else {
        snprintf(result->note, sizeof result->note, "out of memory for the samples");
    }
    bench_naive_workspace_destroy(&call.workspace);
}
