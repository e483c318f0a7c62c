/*
 * Floating-point operation counts of the measured calls; GFLOP/s columns are
 * these counts divided by the median time. A multiply-add counts as 2.
 */
#ifndef ATTN_BENCH_FLOPS_H
#define ATTN_BENCH_FLOPS_H

#include <stddef.h>

/*
 * One projected head, attn_self_attention (and the NumPy peer's
 * self_attention), counting the matrix products only:
 *   projections  Q, K, V = X Wq, X Wk, X Wv   3 * 2*B*T*C*hs
 *   scores       Q K^T                         2*B*T*T*hs
 *   weights V    P V                           2*B*T*T*hs
 * The softmax (O(B*T*T) exp, max, sum, divide) is not counted.
 * Causal runs count the T*T products in full, because the current
 * implementation (and NumPy) compute the full products and then mask; change
 * this function when a causal path skips the masked half.
 */
double bench_self_attention_flops(size_t B, size_t T, size_t C, size_t hs, int causal);

#endif /* ATTN_BENCH_FLOPS_H */
