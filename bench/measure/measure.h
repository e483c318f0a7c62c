/*
 * One point of the sweep: check a configuration against the reference, then
 * time attn's call on it (the peers are timed by run.c, on the same problem).
 */
#ifndef ATTN_BENCH_MEASURE_H
#define ATTN_BENCH_MEASURE_H

#include <attn/attn.h>

#include "measure/attn_call.h"
#include "measure/config.h"
#include "measure/options.h"
#include "measure/peer_timing.h"
#include "measure/phase_profile.h"
#include "measure/problem.h"
#include "measure/reference.h"
#include "util/timing.h"

typedef enum bench_point_status {
    BENCH_POINT_TIMED,        /* checked (or check skipped), timed */
    BENCH_POINT_CHECK_FAILED, /* the output does not match the reference: not timed */
    BENCH_POINT_CALL_FAILED,  /* attn returned an error (see call_status) */
    BENCH_POINT_SETUP_FAILED  /* inputs or the reference could not be allocated */
} bench_point_status;

extern const char *const bench_point_status_names[4];

typedef struct bench_point {
    bench_config config;
    double flops; /* bench_shape_flops */
    bench_point_status status;
    attn_status call_status;
    bench_check check;
    bench_timing attn;
    unsigned engine_threads;     /* the call's engine: 0 = BLAS threads, n = n own threads */
    bench_phase_profile profile; /* --profile: where the time went (profile.measured) */
    double ceiling_gflops; /* of the dtype and thread count; 0: not measured */
    double peak_gflops;    /* the FMA peak of the dtype and thread count; 0: not measured */
    bench_peer_timing peers[BENCH_PEER_KINDS];
    /* A row with dropout: its median over its twin's at p = 0 (the same
     * configuration, measured before it), attn's and the torch peer's; 0: none. */
    double attn_dropout_cost, torch_dropout_cost;
} bench_point;

/* The most configurations timed side by side, the size of an error
 * message, and the rounds of configurations timed side by side. */
enum { BENCH_INTERLEAVE_MAX = 8, BENCH_ERROR_SIZE = 512, BENCH_INTERLEAVE_ROUNDS = 8 };

/* One configuration as a session: its problem created and attn's call
 * checked against the reference (begin), then timed in rounds (a block per
 * round, util/timing.h's bench_time_round: the caller runs the other
 * configurations' blocks between them, so that a machine whose speed
 * drifts slows them alike), then (end) its median and min into the point
 * and, with --profile, as many calls profiled. The problem stays for the
 * peers; the caller destroys it. */
typedef struct bench_point_session {
    bench_point *point;
    const bench_options *options;
    bench_problem *problem;
    bench_attn_call call;
    bench_round_samples samples;
    int ready;  /* the call was made and its check passed */
    int result; /* 0 while attn can be timed; < 0 memory, > 0 a call's attn_status */
    char error[BENCH_ERROR_SIZE]; /* why the point is not timed */
} bench_point_session;

/* point gets everything but the timing, ceiling_gflops, peak_gflops and
 * peers; a point that cannot be timed gets its status and error now. */
void bench_point_session_begin(bench_point_session *session, const bench_config *config,
                               const bench_options *options, bench_problem *problem,
                               bench_point *point);
/* attn's block of round `round` of `rounds` (nothing once it failed). */
void bench_point_session_block(bench_point_session *session, size_t round, size_t rounds);
void bench_point_session_end(bench_point_session *session);

/* GFLOP/s of a FLOP count done in seconds; 0 for no time. */
double bench_gflops(double flops, double seconds);

#endif /* ATTN_BENCH_MEASURE_H */
