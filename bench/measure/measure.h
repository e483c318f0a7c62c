/*
 * One point of the sweep: check a configuration against the reference, then
 * time attn's call on it (the peers are timed by run.c, on the same problem).
 */
#ifndef ATTN_BENCH_MEASURE_H
#define ATTN_BENCH_MEASURE_H

#include <attn/attn.h>

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

/* Creates the problem of the configuration in *problem (the caller destroys
 * it; the peers run on it next), checks attn's output and times attn (then,
 * with --profile, profiles as many calls). Fills point except ceiling_gflops,
 * peak_gflops and peers. On a status other than TIMED, error
 * says what went wrong. */
void bench_measure_point(const bench_config *config, const bench_options *options,
                         bench_problem *problem, bench_point *point, char *error,
                         size_t error_size);

/* The most configurations timed side by side, the size of their error
 * messages, and how many blocks of calls each gets in --min-time. */
enum { BENCH_INTERLEAVE_MAX = 8, BENCH_ERROR_SIZE = 512, BENCH_INTERLEAVE_BLOCKS = 8 };

/* bench_measure_point for count <= BENCH_INTERLEAVE_MAX configurations of
 * one shape (different engines or APIs): each is checked, then their calls
 * are timed side by side (bench_time_interleaved, blocks of min_time_s /
 * BENCH_INTERLEAVE_BLOCKS), so that the ratios between them do not take the
 * drift of a shared machine's speed between one configuration and the
 * next. problems[k] is created for the caller, as bench_measure_point's. */
void bench_measure_points_interleaved(const bench_config *configs, size_t count,
                                      const bench_options *options, bench_problem *problems,
                                      bench_point *points, char (*errors)[BENCH_ERROR_SIZE]);

/* GFLOP/s of a FLOP count done in seconds; 0 for no time. */
double bench_gflops(double flops, double seconds);

#endif /* ATTN_BENCH_MEASURE_H */
