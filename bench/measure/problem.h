/*
 * The arrays of one shape (config.h gives their layout) and their
 * deterministic contents.
 *
 * Inputs: X ~ N(0, 1); Wq, Wk, Wv ~ N(0, 1)/sqrt(C); Wo ~ N(0, 1)/sqrt(D);
 * dout ~ N(0, 1). They are drawn in that order from bench_rng seeded by
 * (seed, B, T, C, NH, hs), so a shape has the same inputs in every sweep,
 * with or without Wo and for forward and backward alike, and both precisions
 * see the same numbers (f32 holds them rounded). The 1/sqrt(C) scale keeps
 * Q, K, V and the scores of order 1 for every C, so the softmax is neither
 * uniform nor one-hot and no timing depends on underflowing exponentials.
 */
#ifndef ATTN_BENCH_PROBLEM_H
#define ATTN_BENCH_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "measure/config.h"

typedef struct bench_problem {
    bench_shape shape;
    void *X, *Wq, *Wk, *Wv, *Wo; /* Wo: NULL without an output projection */
    void *out;                   /* (B,T,out width) */
    void *weights;               /* (B,NH,T,T), or NULL */
    void *dout;                  /* backward only (else NULL), like the gradients: */
    void *dX, *dWq, *dWk, *dWv, *dWo;
} bench_problem;

/* Element counts of the arrays of a shape; -1 when one overflows size_t. */
typedef struct bench_problem_sizes {
    size_t X, W, Wo, out, weights;
} bench_problem_sizes;

int bench_problem_sizes_of(const bench_shape *shape, bench_problem_sizes *sizes);

/* Allocates and fills the arrays the shape and with_weights need. Returns 0,
 * or -1 with a reason in error (sizes that overflow, memory). */
int bench_problem_create(bench_problem *problem, const bench_shape *shape, int with_weights,
                         uint64_t seed, char *error, size_t error_size);

void bench_problem_destroy(bench_problem *problem);

/* Fills every output (out, weights, gradients) with NaN, so a check sees
 * what a call did not write. */
void bench_problem_poison_outputs(bench_problem *problem);

#endif /* ATTN_BENCH_PROBLEM_H */
