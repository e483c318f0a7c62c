/* Deterministic test random numbers (see rng.h). */
#include "support/rng.h"

#include <math.h>

void rng_seed(test_rng *rng, uint64_t seed)
{
    rng->state = seed;
    rng->has_spare = 0;
    rng->spare = 0.0;
}

/* splitmix64 (Steele, Lea, Flood 2014) */
uint64_t rng_u64(test_rng *rng)
{
    uint64_t z = (rng->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

double rng_uniform(test_rng *rng)
{
    return (double)(rng_u64(rng) >> 11) * 0x1.0p-53;
}

double rng_range(test_rng *rng, double lo, double hi)
{
    return lo + (hi - lo) * rng_uniform(rng);
}

size_t rng_below(test_rng *rng, size_t n)
{
    return (size_t)(rng_u64(rng) % (uint64_t)n);
}

double rng_normal(test_rng *rng)
{
    if (rng->has_spare) {
        rng->has_spare = 0;
        return rng->spare;
    }
    double u, v, s;
    do {
        u = 2.0 * rng_uniform(rng) - 1.0;
        v = 2.0 * rng_uniform(rng) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt(-2.0 * log(s) / s);
    rng->spare = v * f;
    rng->has_spare = 1;
    return u * f;
}

void rng_fill_normal(test_rng *rng, double *x, size_t n, double stddev)
{
    for (size_t i = 0; i < n; i++)
        x[i] = stddev * rng_normal(rng);
}

void rng_permutation(test_rng *rng, size_t *perm, size_t n)
{
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = rng_below(rng, i);
        size_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}
