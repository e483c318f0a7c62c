#include "measure/measure.h"

#include <string.h>

#include "measure/flops.h"

const char *const bench_peer_kind_names[BENCH_PEER_KINDS] = {
    "naive", "numpy", "numpy32", "torch", "python", "ort", "openvino", "ggml"};
const char *const *const bench_sdpa_peer_names = bench_peer_kind_names + BENCH_SDPA_PEER_FIRST;

/* The projected call's operations (session.h). */
static attn_status run_checked(void *context)
{
    bench_point_session *s = context;
    bench_problem_poison_outputs(s->problem);
    return bench_attn_call_run(&s->call);
}

static int check(void *context, bench_check *check)
{
    const bench_point_session *s = context;
    return bench_check_problem(s->problem, &s->check, check);
}

static attn_status run_timed(void *context)
{
    return bench_attn_call_run_timed(&((bench_point_session *)context)->call);
}

static const bench_call_ops projected_ops = {run_checked, check, run_timed, NULL};

void bench_point_session_begin(bench_point_session *s, const bench_config *config,
                               const bench_options *o, size_t rounds, bench_problem *problem,
                               bench_point *point)
{
    memset(s, 0, sizeof *s);
    memset(point, 0, sizeof *point);
    point->config = *config;
    point->flops = bench_shape_flops(&config->shape);
    const bench_session_policy policy = {&o->common.repeat, rounds, o->common.profile,
                                         config->shape.threads};
    bench_session_init(&s->session, &point->outcome, &policy);
    s->problem = problem;
    s->check = (bench_check_policy){o->check_rows, o->check_grad_max_T};
    char error[BENCH_ERROR_SIZE];
    if (bench_problem_create(problem, &config->shape, config->with_weights, o->common.seed, error,
                             sizeof error) != 0) {
        bench_session_setup_failed(&s->session, error);
        return;
    }
    const attn_status status = bench_attn_call_prepare(&s->call, config, problem);
    if (status != ATTN_OK) {
        bench_session_call_failed(&s->session, status, "creating the plan");
        return;
    }
    point->outcome.engine_threads = bench_attn_call_engine_threads(&s->call);
    bench_session_check(&s->session, &projected_ops, s, s->call.plan);
}

void bench_point_session_block(bench_point_session *s, size_t round)
{
    bench_session_block(&s->session, round);
}

void bench_point_session_end(bench_point_session *s)
{
    bench_session_end(&s->session);
    bench_attn_call_release(&s->call);
}
