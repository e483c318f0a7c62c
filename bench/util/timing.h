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

/* Median of n > 0 values; reorders values. */
double bench_median(double *values, size_t n);

#endif /* ATTN_BENCH_TIMING_H */
