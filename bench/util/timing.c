#include "util/timing.h"

#include <stdlib.h>
#include <time.h>

double bench_monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *values, size_t n)
{
    qsort(values, n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* Median, min and count of n > 0 samples (reordered). */
static void summarize(double *samples, size_t n, bench_timing *timing)
{
    double min = samples[0];
    for (size_t i = 1; i < n; ++i)
        min = samples[i] < min ? samples[i] : min;
    timing->min_s = min;
    timing->median_s = bench_median(samples, n);
    timing->repeats = n;
}

/* A block under policy: its warmup calls, then the samples (seconds) into
 * samples[0 .. *n), which holds max(policy->max_repeats, 1). Returns 0 or
 * the first nonzero result of call. */
static int time_samples(const bench_repeat_policy *policy, bench_prepare_fn prepare,
                        bench_call_fn call, void *context, double *samples, size_t *n)
{
    const size_t capacity = policy->max_repeats > 0 ? policy->max_repeats : 1;
    int result = 0;
    for (size_t i = 0; i < policy->warmup && result == 0; ++i) {
        if (prepare)
            prepare(context);
        result = call(context);
    }
    double total = 0.0;
    *n = 0;
    while (result == 0 && *n < capacity &&
           (*n < policy->min_repeats || total < policy->min_time_s)) {
        const double prepared = bench_monotonic_seconds();
        if (prepare)
            prepare(context);
        const double start = bench_monotonic_seconds();
        result = call(context);
        const double end = bench_monotonic_seconds();
        samples[(*n)++] = end - start;
        total += end - prepared; /* the budget counts the work before the call */
    }
    return result;
}

bench_repeat_policy bench_round_policy(const bench_repeat_policy *p, size_t round, size_t rounds)
{
    const size_t R = rounds ? rounds : 1;
    bench_repeat_policy block = {
        .warmup = round == 0 ? p->warmup : 1,
        .min_repeats = (p->min_repeats + R - 1) / R,
        .max_repeats = (p->max_repeats + R - 1) / R,
        .min_time_s = p->min_time_s / (double)R,
    };
    if (block.min_repeats < 1)
        block.min_repeats = 1;
    if (block.max_repeats < block.min_repeats)
        block.max_repeats = block.min_repeats;
    return block;
}

int bench_round_samples_reserve(bench_round_samples *s, size_t more)
{
    if (s->count + more <= s->capacity)
        return 0;
    const size_t capacity = 2 * (s->count + more);
    double *values = realloc(s->values, capacity * sizeof *values);
    if (!values)
        return -1;
    s->values = values;
    s->capacity = capacity;
    return 0;
}

int bench_time_round(bench_round_samples *s, const bench_repeat_policy *policy, size_t round,
                     size_t rounds, bench_prepare_fn prepare, bench_call_fn call, void *context)
{
    const bench_repeat_policy block = bench_round_policy(policy, round, rounds);
    if (bench_round_samples_reserve(s, block.max_repeats) != 0)
        return -1;
    size_t got = 0;
    const int result = time_samples(&block, prepare, call, context,
                                          s->values + s->count, &got);
    s->count += got;
    return result;
}

int bench_round_samples_finish(bench_round_samples *s, bench_timing *timing)
{
    const int timed = s->count > 0;
    if (timed)
        summarize(s->values, s->count, timing);
    free(s->values);
    s->values = NULL;
    s->count = s->capacity = 0;
    return timed ? 0 : -1;
}

int bench_time_calls(const bench_repeat_policy *policy, bench_call_fn call, void *context,
                     bench_timing *timing)
{
    bench_round_samples samples = {0};
    const int result = bench_time_round(&samples, policy, 0, 1, NULL, call, context);
    bench_timing measured;
    const int timed = bench_round_samples_finish(&samples, &measured) == 0;
    if (result == 0 && timed)
        *timing = measured;
    return result;
}
