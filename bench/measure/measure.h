/*
 * One point of the run command's sweep (projected heads): its
 * configuration, attn's outcome (measure/session.h) and the peers' timings
 * (the peers are timed by run/run_peers.c, on the same problem).
 */
#ifndef ATTN_BENCH_MEASURE_H
#define ATTN_BENCH_MEASURE_H

#include <attn/attn.h>

#include "measure/attn_call.h"
#include "measure/config.h"
#include "measure/options.h"
#include "measure/peer_timing.h"
#include "measure/problem.h"
#include "measure/session.h"

typedef struct bench_point {
    bench_config config;
    double flops; /* bench_shape_flops */
    bench_outcome outcome;
    bench_peer_timing peers[BENCH_PEER_KINDS];
    /* A row with dropout: its median over its twin's at p = 0 (the same
     * configuration, measured before it), attn's and the torch peer's; 0: none. */
    double attn_dropout_cost, torch_dropout_cost;
} bench_point;

/* The most configurations timed side by side, and the rounds of
 * configurations timed side by side. */
enum { BENCH_INTERLEAVE_MAX = 8, BENCH_INTERLEAVE_ROUNDS = 8 };

/* One configuration as a session (measure/session.h) of the projected call
 * (attn_call.h) on its problem, which stays for the peers; the caller
 * destroys it. */
typedef struct bench_point_session {
    bench_session session;
    bench_attn_call call;
    bench_problem *problem;
    bench_check_policy check;
} bench_point_session;

/* Creates the problem and the call and checks it: point gets everything
 * but the timing, ceiling and peers; a point that cannot be timed gets its
 * status and session.error now. rounds: the session's rounds. */
void bench_point_session_begin(bench_point_session *session, const bench_config *config,
                               const bench_options *options, size_t rounds,
                               bench_problem *problem, bench_point *point);
/* attn's block of round `round` (nothing once it failed). */
void bench_point_session_block(bench_point_session *session, size_t round);
/* The timing (and profile) into the point; the plan destroyed. */
void bench_point_session_end(bench_point_session *session);

#endif /* ATTN_BENCH_MEASURE_H */
