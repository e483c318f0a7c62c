/*
 * One point of the sweep: check a configuration against the reference, then
 * time the measured call.
 */
#ifndef ATTN_BENCH_MEASURE_H
#define ATTN_BENCH_MEASURE_H

#include <attn/attn.h>

#include "options.h"
#include "peer.h"
#include "problem.h"
#include "reference.h"
#include "timing.h"

typedef enum bench_point_status {
    BENCH_POINT_TIMED,        /* checked, passed, timed */
    BENCH_POINT_CHECK_FAILED, /* the output does not match the reference: not timed */
    BENCH_POINT_CALL_FAILED,  /* attn returned an error (see call_status) */
    BENCH_POINT_SETUP_FAILED  /* inputs or the reference could not be allocated */
} bench_point_status;

typedef struct bench_point {
    bench_shape shape;
    int with_weights;
    double flops; /* bench_self_attention_flops */
    bench_point_status status;
    attn_status call_status;
    bench_check check;
    bench_timing attn;
    bench_peer_timing numpy;
} bench_point;

/* Fills point (except point->numpy). On a status other than TIMED, error
 * says what went wrong. */
void bench_measure_point(const bench_shape *shape, const bench_options *options,
                         bench_point *point, char *error, size_t error_size);

#endif /* ATTN_BENCH_MEASURE_H */
