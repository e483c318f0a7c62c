/*
 * Statistics of attention scores and weights shared by the experiments.
 */
#ifndef ATTN_BENCH_EXP_STATS_H
#define ATTN_BENCH_EXP_STATS_H

#include <stddef.h>

/* Variance of count values (about their mean). */
double bench_variance(const double *values, size_t count);

/* Means over the T rows of a (T,T) weights matrix P (rows sum to 1):
 *   max_weight   the row's largest weight
 *   entropy      -sum_j p_j ln p_j (nats; ln T for a uniform row, 0 one-hot)
 *   jacobian     ||diag(p) - p p^T||_F, the Frobenius norm of the softmax's
 *                Jacobian at the row: sum p^2 - 2 sum p^3 + (sum p^2)^2 under
 *                the root. It bounds how much of an output gradient reaches
 *                the scores; 0 for a one-hot row, about 1/sqrt(T) uniform
 *   saturated    the share of rows whose largest weight exceeds 0.99: their
 *                Jacobian norm is below about 0.02, so almost no gradient
 *                reaches their scores */
typedef struct bench_weights_stats {
    double max_weight, entropy, jacobian, saturated;
} bench_weights_stats;

void bench_weights_stats_of(const double *P, size_t T, bench_weights_stats *stats);

#endif /* ATTN_BENCH_EXP_STATS_H */
