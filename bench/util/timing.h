/*
 * Wall-clock timing of a repeated call on CLOCK_MONOTONIC.
 *
 * Repeat policy (the NumPy peer applies the same one): `warmup` untimed
 * calls, then timed calls, one sample per call, until at least
 * `min_repeats` samples were taken AND they add up to at least `min_time_s`
 * seconds, or `max_repeats` samples were taken, whichever comes first.
 * Small shapes thus get many samples, large ones at least min_repeats.
 * Where untimed work precedes every call (bench_time_round's prepare: a
 * cold-cache read), min_time_s counts it with the samples: a budget of
 * wall time, so that a small call after a long read is not repeated
 * thousands of times (its samples are still the calls alone).
 */
#ifndef ATTN_BENCH_TIMING_H
#define ATTN_BENCH_TIMING_H

#include <stddef.h>

typedef struct bench_repeat_policy {
    size_t warmup;
    size_t min_repeats;
    size_t max_repeats;
    double min_time_s;
} bench_repeat_policy;

typedef struct bench_timing {
    double median_s;
    double min_s;
    size_t repeats;
} bench_timing;

/* Seconds on CLOCK_MONOTONIC from an arbitrary origin. */
double bench_monotonic_seconds(void);

/* The measured call: returns 0 on success; anything else stops the timing. */
typedef int (*bench_call_fn)(void *context);

/* Times `call` under `policy`. Returns 0, the first nonzero result of call,
 * or -1 when the sample buffer cannot be allocated. */
int bench_time_calls(const bench_repeat_policy *policy, bench_call_fn call, void *context,
                     bench_timing *timing);

/* Work done before every call (the warmup calls too), outside the timing. */
typedef void (*bench_prepare_fn)(void *context);

/* Timing in rounds: a configuration timed in `rounds` blocks, the caller
 * running other configurations' and the peers' blocks between them, so that
 * a machine whose speed drifts (a shared VM) slows them alike. Round r of R
 * (0-based) runs policy->warmup untimed calls when r = 0, else one (the call
 * before was another's), then timed calls until the block has
 * ceil(min_repeats / R) samples adding up to min_time_s / R seconds, or
 * ceil(max_repeats / R) samples: with R = 1, the policy itself. The median
 * and min are over the samples of every round. */
typedef struct bench_round_samples {
    double *values; /* seconds */
    size_t count, capacity;
} bench_round_samples;

/* The block policy of round `round` of `rounds` (above). */
bench_repeat_policy bench_round_policy(const bench_repeat_policy *policy, size_t round,
                                       size_t rounds);

/* Room for `more` samples after the ones taken: 0, or -1 (memory). */
int bench_round_samples_reserve(bench_round_samples *samples, size_t more);

/* Round `round`'s block of call (prepare before each call, NULL: none), its
 * samples appended. Returns 0, the first nonzero result of call (the block
 * stops there), or -1 when the samples cannot be allocated. */
int bench_time_round(bench_round_samples *samples, const bench_repeat_policy *policy,
                     size_t round, size_t rounds, bench_prepare_fn prepare, bench_call_fn call,
                     void *context);

/* The median, min and count of every round's samples into timing, and the
 * samples freed. Returns 0, or -1 (timing untouched) when there are none. */
int bench_round_samples_finish(bench_round_samples *samples, bench_timing *timing);

/* Median of n > 0 values; reorders values. */
double bench_median(double *values, size_t n);

#endif /* ATTN_BENCH_TIMING_H */
