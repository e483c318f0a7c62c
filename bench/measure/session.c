#include "measure/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bench_point_status_names[4] = {"timed", "check_failed", "call_failed",
                                                 "setup_failed"};

double bench_gflops(double flops, double seconds)
{
    return seconds > 0.0 ? flops / seconds * 1e-9 : 0.0;
}

int bench_outcome_timed(const bench_outcome *outcome)
{
    return outcome->status == BENCH_POINT_TIMED;
}

double bench_outcome_median(const bench_outcome *outcome)
{
    return bench_outcome_timed(outcome) ? outcome->attn.median_s : 0.0;
}

void bench_session_init(bench_session *session, bench_outcome *outcome,
                        const bench_session_policy *policy)
{
    memset(session, 0, sizeof *session);
    memset(outcome, 0, sizeof *outcome);
    session->outcome = outcome;
    session->policy = *policy;
    session->result = 1; /* nothing to time until the check passed */
    outcome->status = BENCH_POINT_SETUP_FAILED;
    outcome->call_status = ATTN_OK;
    outcome->check.status = BENCH_CHECK_SKIPPED;
}

void bench_session_setup_failed(bench_session *session, const char *error)
{
    session->outcome->status = BENCH_POINT_SETUP_FAILED;
    snprintf(session->error, sizeof session->error, "%s", error);
}

void bench_session_call_failed(bench_session *session, attn_status status, const char *when)
{
    session->outcome->status = BENCH_POINT_CALL_FAILED;
    session->outcome->call_status = status;
    snprintf(session->error, sizeof session->error, "attn call failed%s%s: %s",
             *when ? " " : "", when, attn_status_string(status));
}

/* The checked call and the check: 0 when it passed. */
static int check_call(bench_session *session)
{
    bench_outcome *outcome = session->outcome;
    const attn_status status = session->ops->run_checked(session->call);
    if (status != ATTN_OK) {
        bench_session_call_failed(session, status, "");
        return -1;
    }
    if (session->ops->check(session->call, &outcome->check) != 0) {
        bench_session_setup_failed(session, "out of memory for the reference");
        return -1;
    }
    if (outcome->check.status == BENCH_CHECK_FAILED) {
        outcome->status = BENCH_POINT_CHECK_FAILED;
        snprintf(session->error, sizeof session->error,
                 "%s differs from the reference: relative error %.3e > tolerance %.2g",
                 outcome->check.worst ? outcome->check.worst : "output", outcome->check.error,
                 outcome->check.tolerance);
        return -1;
    }
    return 0;
}

void bench_session_check(bench_session *session, const bench_call_ops *ops, void *call,
                         attn_plan *plan)
{
    session->ops = ops;
    session->call = call;
    session->plan = plan;
    session->ready = check_call(session) == 0;
    session->result = session->ready ? 0 : 1;
}

static int call_timed(void *context)
{
    const bench_session *session = context;
    return (int)session->ops->run_timed(session->call);
}

static void prepare_call(void *context)
{
    const bench_session *session = context;
    session->prepare(session->prepare_context);
}

/* A loop's block: the warmup's untimed passes in the first round, then a
 * timed one, a sample per step. */
static int loop_block(bench_session *session, size_t round)
{
    const bench_repeat_policy block =
        bench_round_policy(session->policy.repeat, round, session->policy.rounds);
    attn_status status = ATTN_OK;
    for (size_t i = 0; round == 0 && i < block.warmup && status == ATTN_OK; ++i)
        status = session->ops->pass(session->call, session->prepare, session->prepare_context,
                                    NULL);
    if (status != ATTN_OK)
        return (int)status;
    bench_round_samples *samples = &session->samples;
    if (bench_round_samples_reserve(samples, session->steps) != 0)
        return -1;
    status = session->ops->pass(session->call, session->prepare, session->prepare_context,
                                samples->values + samples->count);
    if (status == ATTN_OK)
        samples->count += session->steps;
    return (int)status;
}

void bench_session_block(bench_session *session, size_t round)
{
    if (session->result != 0)
        return;
    if (session->ops->pass) {
        session->result = loop_block(session, round);
        return;
    }
    session->result =
        bench_time_round(&session->samples, session->policy.repeat, round,
                         session->policy.rounds, session->prepare ? prepare_call : NULL,
                         call_timed, session);
}

/* A profiled call (phase_profile.h): a timed call, or a loop's pass (its
 * steps' times summed: the work between them, the appends, not counted);
 * the preparation before each, untimed. */
static attn_status profiled_call(void *context, size_t *calls, double *seconds)
{
    bench_session *session = context;
    if (session->ops->pass) {
        if (!session->profile_steps) /* once for every profiled pass */
            session->profile_steps = malloc(session->steps * sizeof *session->profile_steps);
        double *steps = session->profile_steps;
        const double start = bench_monotonic_seconds();
        const attn_status status = session->ops->pass(session->call, session->prepare,
                                                      session->prepare_context, steps);
        *seconds = bench_monotonic_seconds() - start; /* without memory: appends counted */
        if (steps) {
            *seconds = 0.0;
            for (size_t s = 0; s < session->steps; ++s)
                *seconds += steps[s];
        }
        *calls = session->steps;
        return status;
    }
    if (session->prepare)
        session->prepare(session->prepare_context);
    const double start = bench_monotonic_seconds();
    const attn_status status = session->ops->run_timed(session->call);
    *seconds = bench_monotonic_seconds() - start;
    *calls = 1;
    return status;
}

void bench_session_end(bench_session *session)
{
    bench_outcome *outcome = session->outcome;
    bench_timing timing;
    const int timed = bench_round_samples_finish(&session->samples, &timing) == 0;
    if (session->ready) { /* checked: timed, or why not */
        if (session->result == 0 && timed) {
            outcome->attn = timing;
            outcome->status = BENCH_POINT_TIMED;
            if (session->policy.profile)
                bench_phase_profile_measure(session->plan, profiled_call, session,
                                            timing.repeats, session->policy.threads,
                                            &outcome->profile);
        } else if (session->result > 0) {
            bench_session_call_failed(session, (attn_status)session->result, "while timing");
        } else {
            bench_session_setup_failed(session, "out of memory for the timing samples");
        }
    }
    free(session->profile_steps);
    session->profile_steps = NULL;
}
