/*
 * The benchmark's own deterministic random numbers: xoshiro256** seeded
 * through splitmix64, normals by the Marsaglia polar method. The same seed
 * gives the same numbers on every machine and build.
 */
#ifndef ATTN_BENCH_RNG_H
#define ATTN_BENCH_RNG_H

#include <stdint.h>

typedef struct bench_rng {
    uint64_t state[4];
    double spare_normal;
    int has_spare_normal;
} bench_rng;

void bench_rng_seed(bench_rng *rng, uint64_t seed);

/* uniform on [0, 1) with 53 random bits */
double bench_rng_uniform(bench_rng *rng);

/* standard normal N(0, 1) */
double bench_rng_normal(bench_rng *rng);

/* A well-mixed 64-bit function of (seed, value): derives per-shape seeds. */
uint64_t bench_seed_mix(uint64_t seed, uint64_t value);

#endif /* ATTN_BENCH_RNG_H */
