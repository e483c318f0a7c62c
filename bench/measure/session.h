/*
 * One configuration measured, whatever kind of attn call it times: the
 * outcome every row of both sweep commands reports, and the session that
 * produces it.
 *
 * A kind of call (measure/measure.h: the run command's projected plan or
 * one-shot; measure/sdpa_measure.h: an sdpa call or a client's decode loop)
 * makes its problem and its call, then hands the session its operations
 * (bench_call_ops). The session checks the call once against the
 * reference, times it in rounds -- a block per round (util/timing.h's
 * bench_time_round), the caller running the other configurations' and the
 * peers' blocks between them, so that a machine whose speed drifts slows
 * them alike -- and at the end puts the median and min into the outcome
 * and, with --profile, profiles as many calls again.
 *
 * A kind that times passes (a decode loop) gives `pass`: its first round
 * runs the warmup's passes untimed, then every round one timed pass whose
 * every step is a sample.
 */
#ifndef ATTN_BENCH_SESSION_H
#define ATTN_BENCH_SESSION_H

#include <stddef.h>

#include <attn/attn.h>

#include "measure/phase_profile.h"
#include "measure/reference.h"
#include "util/timing.h"

typedef enum bench_point_status {
    BENCH_POINT_TIMED,        /* checked (or check skipped), timed */
    BENCH_POINT_CHECK_FAILED, /* the output does not match the reference: not timed */
    BENCH_POINT_CALL_FAILED,  /* attn returned an error (see call_status) */
    BENCH_POINT_SETUP_FAILED  /* inputs or the reference could not be allocated */
} bench_point_status;

extern const char *const bench_point_status_names[4];

/* attn's side of a row, of either command. */
typedef struct bench_outcome {
    bench_point_status status;
    attn_status call_status;
    bench_check check;
    bench_timing attn;
    unsigned engine_threads;     /* attn_plan_get_threads: 0 BLAS threads, n own threads */
    bench_phase_profile profile; /* --profile: where the time went (profile.measured) */
    double ceiling_gflops;       /* GEMM ceiling of the dtype and threads; 0: not measured */
    double peak_gflops;          /* FMA peak of the dtype and threads; 0: not measured */
} bench_outcome;

/* Whether the outcome was timed; its median seconds when it was, else 0. */
int bench_outcome_timed(const bench_outcome *outcome);
double bench_outcome_median(const bench_outcome *outcome);

/* The size of a session's error message. */
enum { BENCH_ERROR_SIZE = 512 };

/* What the session does with a kind's call (its context). */
typedef struct bench_call_ops {
    /* NaN into every output, then the checked call (a loop: an untimed pass). */
    attn_status (*run_checked)(void *call);
    /* The outputs of the checked call against the reference: 0, or -1 when
     * memory for the reference runs out. */
    int (*check)(void *call, bench_check *check);
    /* One timed call (dropout's offset set, as a training step's). */
    attn_status (*run_timed)(void *call);
    /* A loop's pass: samples[s] gets step s's seconds (NULL: untimed);
     * prepare(context) before each step, untimed. NULL: no loop. */
    attn_status (*pass)(void *call, bench_prepare_fn prepare, void *context, double *samples);
} bench_call_ops;

/* How a session times: the policy of all rounds, their count, --profile. */
typedef struct bench_session_policy {
    const bench_repeat_policy *repeat;
    size_t rounds;
    int profile;
    size_t threads; /* the row's, for the profile */
} bench_session_policy;

typedef struct bench_session {
    bench_outcome *outcome;
    bench_session_policy policy;
    const bench_call_ops *ops;
    void *call;
    attn_plan *plan;          /* profiled (NULL: a one-shot, not profiled) */
    size_t steps;             /* a loop's steps a pass (ops->pass) */
    bench_prepare_fn prepare; /* before every timed call, untimed (the cold-cache read) */
    void *prepare_context;
    bench_round_samples samples; /* of every round */
    double *profile_steps;       /* a loop's step times of a profiled pass */
    int ready;                   /* the call was made and its check passed */
    int result; /* 0 while attn can be timed; < 0 memory, > 0 a call's attn_status */
    char error[BENCH_ERROR_SIZE]; /* why the point is not timed */
} bench_session;

/* A session that times nothing yet: the outcome cleared (check skipped,
 * call ATTN_OK), its status setup_failed until bench_session_check passes. */
void bench_session_init(bench_session *session, bench_outcome *outcome,
                        const bench_session_policy *policy);

/* The kind could not make its problem (error: why) or its call (status). */
void bench_session_setup_failed(bench_session *session, const char *error);
void bench_session_call_failed(bench_session *session, attn_status status, const char *when);

/* The call made (the kind sets engine_threads): its operations and its
 * plan, then the checked call and the check; ready when it passed. */
void bench_session_check(bench_session *session, const bench_call_ops *ops, void *call,
                         attn_plan *plan);

/* attn's block of round `round` (nothing once it failed). */
void bench_session_block(bench_session *session, size_t round);

/* The median and min into the outcome and its status; with --profile the
 * plan's profile over as many calls again (a profile that fails stays
 * unmeasured: the timing stands). The kind destroys its call after. */
void bench_session_end(bench_session *session);

/* GFLOP/s of a FLOP count done in seconds; 0 for no time. */
double bench_gflops(double flops, double seconds);

#endif /* ATTN_BENCH_SESSION_H */
