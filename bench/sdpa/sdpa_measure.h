/*
 * One configuration of attn-bench sdpa: attn's call (sdpa_call.h) checked
 * once against the reference (a decode loop: one untimed pass, then some of
 * its steps, sdpa_loop.h), then timed in --rounds rounds; after each of
 * attn's blocks the caller's `between` times the peers' block of the same
 * round, so that attn and its peers are measured interleaved (a machine
 * whose speed drifts slows them alike).
 *
 * Round r of R (0-based) of a call: r = 0 runs --warmup untimed calls, the
 * later rounds one (the call before was another process's), then timed
 * calls until the block has ceil(--repeats / R) samples adding up to
 * --min-time / R seconds, or ceil(--max-repeats / R) samples: with R = 1,
 * the repeat policy itself. Round r of a decode loop: r = 0 runs --warmup
 * untimed passes, then every round one timed pass, a sample per step. The
 * median and min are over the samples of every round.
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
    bench_sdpa_peer_timing peers[BENCH_SDPA_PEER_COUNT];
} bench_sdpa_point;

/* The peers' block of round `round` of `rounds` (0-based), run after attn's. */
typedef struct bench_sdpa_between {
    void (*block)(void *context, size_t round, size_t rounds);
    void *context;
} bench_sdpa_between;

/* The block policy of round `round` of `rounds` (above). */
bench_repeat_policy bench_sdpa_block_policy(const bench_repeat_policy *policy, size_t round,
                                            size_t rounds);

/* Checks and times attn on the problem (created for the shape by the
 * caller), calling between->block after each of its blocks (also when attn
 * has nothing to time). flush: the cold-cache read (NULL: none). Fills
 * point except the ceiling, the bandwidth and the peers. */
void bench_sdpa_measure(const bench_sdpa_config *config, const bench_sdpa_options *options,
                        bench_sdpa_problem *problem, const bench_bandwidth_buffer *flush,
                        const bench_sdpa_between *between, bench_sdpa_point *point, char *error,
                        size_t error_size);

#endif /* ATTN_BENCH_SDPA_MEASURE_H */
