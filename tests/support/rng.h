/*
 * Small deterministic random numbers shared by the test suites: splitmix64
 * for the bits, 53-bit uniforms, and normals by Marsaglia's polar method.
 * The same seed gives the same sequence on every platform that has an
 * IEEE double and a correctly behaving sqrt/log (results only feed test
 * inputs; nothing compares them to stored values).
 */
#ifndef ATTN_TEST_RNG_H
#define ATTN_TEST_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct test_rng {
    uint64_t state;
    int has_spare;
    double spare;
} test_rng;

void rng_seed(test_rng *rng, uint64_t seed);
uint64_t rng_u64(test_rng *rng);
/* uniform in [0, 1) with 53 random bits */
double rng_uniform(test_rng *rng);
/* uniform in [lo, hi) */
double rng_range(test_rng *rng, double lo, double hi);
/* uniform integer in [0, n), n > 0 */
size_t rng_below(test_rng *rng, size_t n);
/* standard normal */
double rng_normal(test_rng *rng);
/* x[i] = stddev * N(0,1), i < n */
void rng_fill_normal(test_rng *rng, double *x, size_t n, double stddev);
/* a uniformly random permutation of 0..n-1 */
void rng_permutation(test_rng *rng, size_t *perm, size_t n);

#endif /* ATTN_TEST_RNG_H */
