/*
 * One configuration of attn-bench sdpa as a session (measure/session.h,
 * the run command's too): attn's call (sdpa_call.h) checked once against
 * the reference (a decode loop: one untimed pass, then some of its steps,
 * sdpa_loop.h), then timed in --rounds rounds, a block per round; the
 * caller runs the blocks of the peers, and of the other configurations of
 * a group (the same shape in the other layout, on another engine), between
 * them. --cache cold: a streaming read of the bandwidth buffer before every
 * timed call (a loop: every step), untimed.
 */
#ifndef ATTN_BENCH_SDPA_MEASURE_H
#define ATTN_BENCH_SDPA_MEASURE_H

#include <attn/attn.h>

#include "machine/bandwidth.h"
#include "machine/fma_peak.h"
#include "measure/peer_timing.h"
#include "measure/session.h"
#include "measure/sdpa_call.h"
#include "measure/sdpa_options.h"
#include "measure/sdpa_problem.h"
#include "measure/sdpa_reference.h"

typedef struct bench_sdpa_point {
    bench_sdpa_config config;
    double pairs;    /* visible (query, key) pairs of all heads */
    double flops;    /* bench_sdpa_flops */
    double kv_bytes; /* bench_sdpa_kv_bytes */
    bench_outcome outcome;
    double bandwidth_gbps; /* read bandwidth at the threads; 0: none */
    bench_peer_timing peers[BENCH_SDPA_PEER_COUNT];
    /* A row with dropout: its twin at p = 0 measured in the same group (same
     * layout and engine), whose times make the dropout's cost; else NULL. */
    const struct bench_sdpa_point *undropped;
} bench_sdpa_point;

/* The FMA peak kind a row's peak% is against: f32's for f32 and f16 rows,
 * f64's for f64 rows, and for bf16 rows the bf16 dot product's (vdpbf16ps)
 * where the CPU has AVX512_BF16 (else f32's). attn computes the half types
 * on its float engine for now (attn.h), so a bf16 row's share is against
 * what bf16 kernels could reach, an f16 row's against the f32 FMAs it runs. */
bench_fma_kind bench_sdpa_peak_kind(const bench_fma_peak *peak, bench_dtype dtype);
double bench_sdpa_peak_gflops(const bench_fma_peak *peak, const bench_sdpa_shape *shape);

/* The peers' block of round `round` of `rounds` (0-based), run after attn's. */
typedef struct bench_sdpa_between {
    void (*block)(void *context, size_t round, size_t rounds);
    void *context;
} bench_sdpa_between;

/* One configuration as a session (measure/session.h) of its call
 * (sdpa_call.h) or decode loop (sdpa_loop.h) on the problem. */
typedef struct bench_sdpa_session {
    bench_session session;
    bench_sdpa_call call;
    bench_sdpa_problem *problem;
    size_t check_rows;
    const bench_bandwidth_buffer *flush; /* the cold-cache read, or NULL */
    size_t threads;                      /* of the cold-cache read */
} bench_sdpa_session;

/* Creates the plan and checks the call on the problem (created for the
 * shape by the caller, kept until the session ends); point gets everything
 * but the timing, the ceiling, the bandwidth and the peers. problem NULL:
 * nothing to time (error says why). flush: the cold-cache read (NULL:
 * none). */
void bench_sdpa_session_begin(bench_sdpa_session *session, const bench_sdpa_config *config,
                              const bench_sdpa_options *options, bench_sdpa_problem *problem,
                              const char *error, const bench_bandwidth_buffer *flush,
                              bench_sdpa_point *point);

/* attn's block of round `round` of options->rounds (nothing once it failed). */
void bench_sdpa_session_block(bench_sdpa_session *session, size_t round);

/* The median and min (and profile) into the point, its status; the plan
 * destroyed. session.error says what failed when the point is not timed. */
void bench_sdpa_session_end(bench_sdpa_session *session);

#endif /* ATTN_BENCH_SDPA_MEASURE_H */
