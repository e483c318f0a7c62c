#include "sdpa/sdpa_measure.h"

#include <stdlib.h>
#include <string.h>

#include "sdpa/sdpa_call.h"
#include "sdpa/sdpa_loop.h"

bench_repeat_policy bench_sdpa_block_policy(const bench_repeat_policy *p, size_t round,
                                            size_t rounds)
{
    const size_t R = rounds ? rounds : 1;
    bench_repeat_policy block = {
        .warmup = round == 0 ? p->warmup : 1,
        .min_repeats = (p->min_repeats + R - 1) / R,
        .max_repeats = (p->max_repeats + R - 1) / R,
        .min_time_s = p->min_time_s / (double)R,
    };
    if (block.min_repeats < 1)
        block.min_repeats = 1;
    if (block.max_repeats < block.min_repeats)
        block.max_repeats = block.min_repeats;
    return block;
}

/* The timed call, and the cold-cache read before it (flush NULL: none). */
typedef struct timed_call {
    bench_sdpa_call *call;
    const bench_bandwidth_buffer *flush;
    size_t threads;
    double *samples; /* of every round */
    size_t count, capacity;
} timed_call;

static int call_once(void *context)
{
    return (int)bench_sdpa_call_run(((const timed_call *)context)->call);
}

static void read_flush_buffer(void *context)
{
    const timed_call *timed = context;
    bench_bandwidth_read(timed->flush, timed->threads);
}

/* Room for `more` samples; -1 when memory runs out. */
static int reserve(timed_call *timed, size_t more)
{
    if (timed->count + more <= timed->capacity)
        return 0;
    const size_t capacity = 2 * (timed->count + more);
    double *samples = realloc(timed->samples, capacity * sizeof *samples);
    if (!samples)
        return -1;
    timed->samples = samples;
    timed->capacity = capacity;
    return 0;
}

/* attn's block of a round; 0, -1 (memory) or the failing call's status. */
static int attn_block(timed_call *timed, const bench_repeat_policy *policy, size_t round,
                      size_t rounds)
{
    const bench_repeat_policy block = bench_sdpa_block_policy(policy, round, rounds);
    bench_prepare_fn prepare = timed->flush ? read_flush_buffer : NULL;
    const bench_sdpa_shape *s = &timed->call->problem->shape;
    if (s->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP) {
        attn_status status = ATTN_OK;
        for (size_t i = 0; i < block.warmup && round == 0 && status == ATTN_OK; ++i)
            status = bench_sdpa_loop_pass(timed->call, prepare, timed, NULL);
        if (status == ATTN_OK && reserve(timed, s->steps) != 0)
            return -1;
        if (status == ATTN_OK)
            status = bench_sdpa_loop_pass(timed->call, prepare, timed,
                                          timed->samples + timed->count);
        if (status == ATTN_OK)
            timed->count += s->steps;
        return (int)status;
    }
    if (reserve(timed, block.max_repeats) != 0)
        return -1;
    size_t got = 0;
    const int result = bench_time_samples(&block, prepare, call_once, timed,
                                          timed->samples + timed->count, &got);
    timed->count += got;
    return result;
}

static void call_failed(bench_sdpa_point *point, attn_status status, const char *when,
                        char *error, size_t error_size)
{
    point->status = BENCH_POINT_CALL_FAILED;
    point->call_status = status;
    snprintf(error, error_size, "attn call failed%s: %s", when, attn_status_string(status));
}

/* The checked call (a decode loop: a pass) and the check; 0 when it passed. */
static int check_call(bench_sdpa_call *call, const bench_sdpa_options *o,
                      bench_sdpa_problem *problem, bench_sdpa_point *point, char *error,
                      size_t error_size)
{
    const int loop = problem->shape.scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP;
    bench_sdpa_problem_poison_outputs(problem);
    const attn_status status =
        loop ? bench_sdpa_loop_pass(call, NULL, NULL, NULL) : bench_sdpa_call_run(call);
    if (status != ATTN_OK) {
        call_failed(point, status, "", error, error_size);
        return -1;
    }
    const int failed = loop ? bench_sdpa_loop_check(problem, o->check_rows, &point->check)
                            : bench_sdpa_check_problem(problem, o->check_rows, call->backward,
                                                       &point->check);
    if (failed) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(error, error_size, "out of memory for the reference");
        return -1;
    }
    if (point->check.status == BENCH_CHECK_FAILED) {
        point->status = BENCH_POINT_CHECK_FAILED;
        snprintf(error, error_size,
                 "%s differs from the reference: relative error %.3e > tolerance %.0e",
                 point->check.worst, point->check.error, point->check.tolerance);
        return -1;
    }
    return 0;
}

/* The rounds: attn's block (while it can be timed), then the peers'. */
static void time_rounds(timed_call *timed, int attn_ready, const bench_sdpa_options *o,
                        const bench_sdpa_between *between, bench_sdpa_point *point,
                        char *error, size_t error_size)
{
    int result = attn_ready ? 0 : 1;
    for (size_t round = 0; round < o->rounds; ++round) {
        if (result == 0)
            result = attn_block(timed, &o->repeat, round, o->rounds);
        if (between && between->block)
            between->block(between->context, round, o->rounds);
    }
    if (!attn_ready)
        return;
    if (result == 0 && timed->count > 0) {
        bench_timing_summarize(timed->samples, timed->count, &point->attn);
        point->status = BENCH_POINT_TIMED;
    } else if (result <= 0) {
        point->status = BENCH_POINT_SETUP_FAILED;
        snprintf(error, error_size, "out of memory for the timing samples");
    } else {
        call_failed(point, (attn_status)result, " while timing", error, error_size);
    }
}

void bench_sdpa_measure(const bench_sdpa_config *c, const bench_sdpa_options *o,
                        bench_sdpa_problem *problem, const bench_bandwidth_buffer *flush,
                        const bench_sdpa_between *between, bench_sdpa_point *point, char *error,
                        size_t error_size)
{
    memset(point, 0, sizeof *point);
    point->config = *c;
    point->pairs = bench_sdpa_visible_pairs(&c->shape) * (double)c->shape.NH;
    point->flops = bench_sdpa_flops(&c->shape);
    point->kv_bytes = bench_sdpa_kv_bytes(&c->shape);
    point->check.status = BENCH_CHECK_SKIPPED;
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k)
        point->peers[k].check_error = -1.0;
    bench_sdpa_call call;
    const attn_status status = bench_sdpa_call_create(&call, &c->shape, c->engine, problem);
    int ready = 0;
    if (status != ATTN_OK) {
        call_failed(point, status, " creating the plan", error, error_size);
    } else {
        if (attn_plan_get_threads(call.plan, &point->engine_threads) != ATTN_OK)
            point->engine_threads = 0;
        ready = check_call(&call, o, problem, point, error, error_size) == 0;
    }
    timed_call timed = {.call = &call,
                        .flush = c->shape.cache == BENCH_SDPA_CACHE_COLD ? flush : NULL,
                        .threads = c->shape.threads};
    time_rounds(&timed, ready, o, between, point, error, error_size);
    free(timed.samples);
    bench_sdpa_call_destroy(&call);
}
