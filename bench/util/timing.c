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

void bench_timing_summarize(double *samples, size_t n, bench_timing *timing)
{
    double min = samples[0];
    for (size_t i = 1; i < n; ++i)
        min = samples[i] < min ? samples[i] : min;
    timing->min_s = min;
    timing->median_s = bench_median(samples, n);
    timing->repeats = n;
}

int bench_time_calls(const bench_repeat_policy *policy, bench_call_fn call, void *context,
                     bench_timing *timing)
{
    return bench_time_prepared_calls(policy, NULL, call, context, timing);
}

int bench_time_samples(const bench_repeat_policy *policy, bench_prepare_fn prepare,
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
        if (prepare)
            prepare(context);
        double start = bench_monotonic_seconds();
        result = call(context);
        double elapsed = bench_monotonic_seconds() - start;
        samples[(*n)++] = elapsed;
        total += elapsed;
    }
    return result;
}

int bench_time_prepared_calls(const bench_repeat_policy *policy, bench_prepare_fn prepare,
                              bench_call_fn call, void *context, bench_timing *timing)
{
    double *samples = malloc((policy->max_repeats > 0 ? policy->max_repeats : 1) * sizeof *samples);
    if (!samples)
        return -1;
    size_t n = 0;
    const int result = bench_time_samples(policy, prepare, call, context, samples, &n);
    if (result == 0)
        bench_timing_summarize(samples, n, timing);
    free(samples);
    return result;
}

/* Samples of one call of bench_time_interleaved. */
typedef struct interleaved_samples {
    double *values, total;
    size_t n;
} interleaved_samples;

/* Whether the call still wants samples under the policy. */
static int wants_samples(const bench_repeat_policy *policy, size_t capacity,
                         const interleaved_samples *s)
{
    return s->n < capacity && (s->n < policy->min_repeats || s->total < policy->min_time_s);
}

/* One block of a call: an untimed call, then timed ones for block_s (at
 * least one), while it wants samples. */
static int interleaved_block(const bench_repeat_policy *policy, double block_s, size_t capacity,
                             bench_call_fn call, void *context, interleaved_samples *s)
{
    int result = call(context);
    double block = 0.0;
    while (result == 0 && wants_samples(policy, capacity, s) && (block == 0.0 || block < block_s)) {
        const double start = bench_monotonic_seconds();
        result = call(context);
        const double elapsed = bench_monotonic_seconds() - start;
        s->values[s->n++] = elapsed;
        s->total += elapsed;
        block += elapsed > 0.0 ? elapsed : 1e-12;
    }
    return result;
}

int bench_time_interleaved(const bench_repeat_policy *policy, double block_s, size_t count,
                           const bench_call_fn *calls, void *const *contexts,
                           bench_timing *timings)
{
    const size_t capacity = policy->max_repeats > 0 ? policy->max_repeats : 1;
    interleaved_samples *s = calloc(count ? count : 1, sizeof *s);
    int result = s ? 0 : -1;
    for (size_t k = 0; k < count && result == 0; ++k)
        if (!(s[k].values = malloc(capacity * sizeof *s[k].values)))
            result = -1;
    for (size_t k = 0; k < count && result == 0; ++k)
        for (size_t i = 0; i < policy->warmup && result == 0; ++i)
            result = calls[k](contexts[k]);
    for (int wanted = 1; result == 0 && wanted;) {
        wanted = 0; /* a round: a block of each call that still wants samples */
        for (size_t k = 0; k < count && result == 0; ++k)
            if (wants_samples(policy, capacity, &s[k])) {
                wanted = 1;
                result = interleaved_block(policy, block_s, capacity, calls[k], contexts[k],
                                           &s[k]);
            }
    }
    for (size_t k = 0; k < count && result == 0; ++k)
        bench_timing_summarize(s[k].values, s[k].n, &timings[k]);
    for (size_t k = 0; s && k < count; ++k)
        free(s[k].values);
    free(s);
    return result;
}
