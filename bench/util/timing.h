/*
 * Wall-clock timing of a repeated call on CLOCK_MONOTONIC.
 *
 * Repeat policy (the NumPy peer applies the same one): `warmup` untimed
 * calls, then timed calls, one sample per call, until at least
 * `min_repeats` samples were taken AND they add up to at least `min_time_s`
 * seconds, or `max_repeats` samples were taken, whichever comes first.
 * Small shapes thus get many samples, large ones at least min_repeats.
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

/* bench_time_calls with prepare(context) before every call (NULL: none). */
int bench_time_prepared_calls(const bench_repeat_policy *policy, bench_prepare_fn prepare,
                              bench_call_fn call, void *context, bench_timing *timing);

/* The timed part of bench_time_prepared_calls: the samples (seconds) into
 * samples[0 .. *n), which holds max(policy->max_repeats, 1). Returns 0 or
 * the first nonzero result of call. */
int bench_time_samples(const bench_repeat_policy *policy, bench_prepare_fn prepare,
                       bench_call_fn call, void *context, double *samples, size_t *n);

/* Median, min and count of n > 0 samples (reordered). */
void bench_timing_summarize(double *samples, size_t n, bench_timing *timing);

/* Times `count` calls side by side, so that a machine whose speed drifts
 * (a shared VM) slows them alike: in turn, each call runs a block of calls
 * (one untimed call first, since the call before it was another one, then
 * timed calls until the block has at least block_s seconds of them, at
 * least one), round after round, until every call has at least
 * policy->min_repeats samples adding up to at least policy->min_time_s, or
 * policy->max_repeats samples. policy->warmup untimed calls of each first.
 * timings[k] gets call k's median and min. Returns 0, the first nonzero
 * result of a call (the timing stops there), or -1 when the samples cannot
 * be allocated. */
int bench_time_interleaved(const bench_repeat_policy *policy, double block_s, size_t count,
                           const bench_call_fn *calls, void *const *contexts,
                           bench_timing *timings);

/* Median of n > 0 values; reorders values. */
double bench_median(double *values, size_t n);

#endif /* ATTN_BENCH_TIMING_H */
