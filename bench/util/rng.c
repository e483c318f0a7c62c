#include "util/rng.h"

#include <math.h>

static uint64_t splitmix64_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint64_t rotate_left(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t xoshiro256ss_next(uint64_t s[4])
{
    uint64_t result = rotate_left(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotate_left(s[3], 45);
    return result;
}

void bench_rng_seed(bench_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; ++i)
        rng->state[i] = splitmix64_next(&seed);
    rng->spare_normal = 0.0;
    rng->has_spare_normal = 0;
}

double bench_rng_uniform(bench_rng *rng)
{
    return (double)(xoshiro256ss_next(rng->state) >> 11) * 0x1.0p-53;
}

double bench_rng_normal(bench_rng *rng)
{
    if (rng->has_spare_normal) {
        rng->has_spare_normal = 0;
        return rng->spare_normal;
    }
    double u, v, r2;
    do {
        u = 2.0 * bench_rng_uniform(rng) - 1.0;
        v = 2.0 * bench_rng_uniform(rng) - 1.0;
        r2 = u * u + v * v;
    } while (r2 >= 1.0 || r2 == 0.0);
    double factor = sqrt(-2.0 * log(r2) / r2);
    rng->spare_normal = v * factor;
    rng->has_spare_normal = 1;
    return u * factor;
}

uint64_t bench_seed_mix(uint64_t seed, uint64_t value)
{
    uint64_t x = seed ^ rotate_left(value, 32);
    return splitmix64_next(&x);
}
