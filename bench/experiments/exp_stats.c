#include "experiments/exp_stats.h"

#include <math.h>

double bench_variance(const double *values, size_t count)
{
    double mean = 0.0, sum = 0.0;
    for (size_t i = 0; i < count; ++i)
        mean += values[i];
    mean /= (double)count;
    for (size_t i = 0; i < count; ++i)
        sum += (values[i] - mean) * (values[i] - mean);
    return sum / (double)count;
}

void bench_weights_stats_of(const double *P, size_t T, bench_weights_stats *stats)
{
    stats->max_weight = stats->entropy = stats->jacobian = stats->saturated = 0.0;
    for (size_t t = 0; t < T; ++t) {
        const double *p = P + t * T;
        double max = 0.0, entropy = 0.0, squares = 0.0, cubes = 0.0;
        for (size_t j = 0; j < T; ++j) {
            max = p[j] > max ? p[j] : max;
            entropy -= p[j] > 0.0 ? p[j] * log(p[j]) : 0.0;
            squares += p[j] * p[j];
            cubes += p[j] * p[j] * p[j];
        }
        double norm_squared = squares - 2.0 * cubes + squares * squares;
        stats->max_weight += max;
        stats->saturated += max > 0.99 ? 1.0 : 0.0;
        stats->entropy += entropy;
        stats->jacobian += sqrt(norm_squared > 0.0 ? norm_squared : 0.0);
    }
    stats->max_weight /= (double)T;
    stats->entropy /= (double)T;
    stats->jacobian /= (double)T;
    stats->saturated /= (double)T;
}
