/*
 * One configuration of attn-bench sdpa: the plan created once
 * (attn_sdpa_plan_create with ATTN_CAUSAL and, for forwards,
 * ATTN_INFERENCE; the window; engine blas or own: attn_plan_set_threads 0 or
 * --threads, auto: no call), one call checked against the reference, then
 * the plan's call timed: attn_sdpa_forward_* (lse NULL), or for op=backward
 * attn_sdpa_forward_* (with lse) followed by attn_sdpa_backward_*.
 */
#ifndef ATTN_BENCH_SDPA_MEASURE_H
#define ATTN_BENCH_SDPA_MEASURE_H

#include <attn/attn.h>

#include "machine/bandwidth.h"
#include "measure/measure.h"
#include "sdpa/sdpa_options.h"
#include "sdpa/sdpa_peer.h"
#include "sdpa/sdpa_problem.h"
#include "sdpa/sdpa_reference.h"

typedef struct bench_sdpa_point {
    bench_sdpa_config config;
    double pairs;    /* visible (query, key) pairs of all heads */
    double flops;    /* bench_sdpa_flops */
    double kv_bytes; /* bench_sdpa_kv_bytes */
    bench_point_status status;
    attn_status call_status;
    bench_sdpa_check check;
    bench_timing attn;
    unsigned engine_threads; /* attn_plan_get_threads: 0 BLAS threads, n own threads */
    double ceiling_gflops;   /* GEMM ceiling of the dtype and threads; 0: none */
    double bandwidth_gbps;   /* read bandwidth at the threads; 0: none */
    bench_sdpa_peer_timing torch;
} bench_sdpa_point;

/* Checks and times attn on the problem (created for the shape by the
 * caller). flush: the cold-cache read (NULL: none). Fills point except the
 * ceiling, the bandwidth and the peer. */
void bench_sdpa_measure(const bench_sdpa_config *config, const bench_sdpa_options *options,
                        bench_sdpa_problem *problem, const bench_bandwidth_buffer *flush,
                        bench_sdpa_point *point, char *error, size_t error_size);

#endif /* ATTN_BENCH_SDPA_MEASURE_H */
