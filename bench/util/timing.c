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

int bench_time_calls(const bench_repeat_policy *policy, bench_call_fn call, void *context,
                     bench_timing *timing)
{
    return bench_time_prepared_calls(policy, NULL, call, context, timing);
}

int bench_time_prepared_calls(const bench_repeat_policy *policy, bench_prepare_fn prepare,
                              bench_call_fn call, void *context, bench_timing *timing)
{
    size_t capacity = policy->max_repeats > 0 ? policy->max_repeats : 1;
    double *samples = malloc(capacity * sizeof *samples);
    if (!samples)
        return -1;

    int result = 0;
    for (size_t i = 0; i < policy->warmup && result == 0; ++i) {
        if (prepare)
            prepare(context);
        result = call(context);
    }

    size_t n = 0;
    double total = 0.0;
    while (result == 0 && n < capacity &&
           (n < policy->min_repeats || total < policy->min_time_s)) {
        if (prepare)
            prepare(context);
        double start = bench_monotonic_seconds();
        result = call(context);
        double elapsed = bench_monotonic_seconds() - start;
        samples[n++] = elapsed;
        total += elapsed;
    }

    if (result == 0) {
        double min = samples[0];
        for (size_t i = 1; i < n; ++i)
            min = samples[i] < min ? samples[i] : min;
        timing->min_s = min;
        timing->median_s = bench_median(samples, n);
        timing->repeats = n;
    }
    free(samples);
    return result;
}
