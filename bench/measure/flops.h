/*
 * Floating-point operation counts of the measured calls: the matrix products
 * only, a multiply-add counting 2; the softmax and its backward (O(B*NH*T^2)
 * exp, max, sum, scale) are not counted. GFLOP/s columns are these counts
 * divided by the median time; every implementation (attn and each peer) is
 * credited with the same count for a shape.
 *
 * Forward, D = NH*hs (the 3*2*B*T*C*hs + 4*B*T^2*hs for one head):
 *   projections  Q, K, V = X Wq, X Wk, X Wv    3 * 2*B*T*C*D
 *   scores       Q_h K_h^T, every head          2*B*T*T*D   (causal: half)
 *   mixing       P_h V_h, every head            2*B*T*T*D   (causal: half)
 *   output       Y Wo, with Wo                  2*B*T*D*C
 * Causal counts half of each T*T product: the positions a query may see. attn
 * skips the key blocks above the diagonal in query blocks of 128, so it does
 * a little more than that; NumPy and PyTorch mask after computing all of it.
 *
 * Backward (op=backward times the forward and the backward together, so its
 * count is forward + backward). The backward's GEMMs (lib/engine/backward.c):
 *   dWo = Y^T dout, dY = dout Wo^T               2 * 2*B*T*D*C  (with Wo)
 *   dV = P^T dY, dP = dY V^T, dQ = dS K, dK = dS^T Q   4 * 2*B*T*T*D (causal: half)
 *   dWq, dWk, dWv = X^T dQ, X^T dK, X^T dV        3 * 2*B*T*C*D
 *   dX = dQ Wq^T + dK Wk^T + dV Wv^T              3 * 2*B*T*C*D
 * which is exactly twice the forward's count, so op=backward counts 3x the
 * forward. (attn's backward computes the full T*T products of a causal head
 * today; the count credits only the visible half, as for the forward.)
 */
#ifndef ATTN_BENCH_FLOPS_H
#define ATTN_BENCH_FLOPS_H

#include "measure/config.h"

/* The counts above in one line, for the run's header and the report. */
extern const char bench_flops_formula[];

/* The forward's count for the shape (its op ignored). */
double bench_forward_flops(const bench_shape *shape);

/* The count of the shape's measured call: forward, or 3 x forward for
 * op=backward. */
double bench_shape_flops(const bench_shape *shape);

#endif /* ATTN_BENCH_FLOPS_H */
