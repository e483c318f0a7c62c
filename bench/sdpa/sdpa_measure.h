/*
 * One configuration of attn-bench sdpa as a session: attn's call
 * (sdpa_call.h) checked once against the reference (a decode loop: one
 * untimed pass, then some of its steps, sdpa_loop.h), then timed in
 * --rounds rounds, a block per round; the caller runs the blocks of the
 * peers, and of the other configurations of a group (the same shape in the
 * other layout, on another engine), between them, so that all of them are
 * measured interleaved (a machine whose speed drifts slows them alike).
 *
 * A call's rounds are util/timing.h's (bench_time_round, as the run
 * command's): the first after --warmup untimed calls, each with 1/R of
 * --repeats, --min-time and --max-repeats. Round r of a decode loop: r = 0
 * runs --warmup untimed passes, then every round one timed pass, a sample
 * per step. The median and min are over the samples of every round.
 */
#ifndef ATTN_BENCH_SDPA_MEASURE_H
#define ATTN_BENCH_SDPA_MEASURE_H

#include <attn/attn.h>

#include "machine/bandwidth.h"
#include "machine/fma_peak.h"
#include "measure/measure.h"
#include "measure/phase_profile.h"
#include "sdpa/sdpa_call.h"
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
    bench_check check;
    bench_timing attn;
    unsigned engine_threads; /* attn_plan_get_threads: 0 BLAS threads, n own threads */
    double ceiling_gflops;   /* GEMM ceiling of the dtype and threads; 0: none */
    double peak_gflops;      /* FMA peak of the dtype and threads; 0: none */
    double bandwidth_gbps;   /* read bandwidth at the threads; 0: none */
    bench_peer_timing peers[BENCH_SDPA_PEER_COUNT];
    bench_phase_profile profile; /* --profile (measure/phase_profile.h) */
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

typedef struct bench_sdpa_session {
    bench_sdpa_point *point;
    const bench_sdpa_options *options;
    bench_sdpa_call call;
    const bench_bandwidth_buffer *flush; /* the cold-cache read, or NULL */
    bench_round_samples samples;         /* of every round */
    double *profile_steps;               /* --profile on a decode loop: a pass's step times */
    int ready;  /* the plan was made and the check passed */
    int result; /* 0 while attn can be timed; < 0 memory, > 0 a call's attn_status */
    char error[512];
} bench_sdpa_session;

/* Creates the plan and checks the call on the problem (created for the
 * shape by the caller, kept until the session ends); point gets everything
 * but the timing, the ceiling, the bandwidth and the peers. problem NULL:
 * nothing to time (point->status says why, set by the caller). flush: the
 * cold-cache read (NULL: none). */
void bench_sdpa_session_begin(bench_sdpa_session *session, const bench_sdpa_config *config,
                              const bench_sdpa_options *options, bench_sdpa_problem *problem,
                              const bench_bandwidth_buffer *flush, bench_sdpa_point *point);

/* attn's block of round `round` of options->rounds (nothing once it failed). */
void bench_sdpa_session_block(bench_sdpa_session *session, size_t round);

/* The median and min into the point, its status; with --profile the
 * plan's profile over as many calls again (a profile that fails stays
 * unmeasured: the timing stands); the plan destroyed.
 * session->error says what failed when point->status is not timed. */
void bench_sdpa_session_end(bench_sdpa_session *session);

#endif /* ATTN_BENCH_SDPA_MEASURE_H */
