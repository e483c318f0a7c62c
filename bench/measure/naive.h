/*
 * The naive C peer: attention written as plain nested loops over the
 * formula, in the problem's own precision (float accumulates in float), no
 * BLAS, no blocking, no SIMD beyond what the compiler finds. It is what a
 * first C implementation looks like, and the floor attn is measured against.
 *
 * Forward (per batch b, head h, query t; D = NH*hs):
 *   Q, K, V = X Wq, X Wk, X Wv                      triple loops
 *   p_j = softmax_j(Q_t . K_j / sqrt(hs)), j <= t when causal
 *   Y_t = sum_j p_j V_j;  out = Y Wo, or Y
 * Backward (after that forward; the formulas of lib/engine/backward.c):
 *   dY = dout Wo^T, dWo = Y^T dout (with Wo)
 *   dV_j += sum_t P_tj dY_t,  dP_tj = dY_t . V_j,  dS = P o (dP - rowsum(P o dP))
 *   dQ_t = scale sum_j dS_tj K_j,  dK_j += scale sum_t dS_tj Q_t
 *   dW* = X^T dQ*,  dX = dQ Wq^T + dK Wk^T + dV Wv^T
 * The f64 instance on double copies of the inputs is also the reference of
 * the backward check (reference.c).
 */
#ifndef ATTN_BENCH_NAIVE_H
#define ATTN_BENCH_NAIVE_H

#include "measure/problem.h"

typedef struct bench_naive_workspace {
    bench_dtype dtype;
    void *Q, *K, *V, *Y;   /* (B*T, D) */
    void *dY, *dQ, *dK, *dV; /* (B*T, D), backward only */
    void *P, *dS;          /* (T, T): one head's weights and their gradient */
} bench_naive_workspace;

/* Returns 0, or -1 when memory runs out (nothing then needs freeing). */
int bench_naive_workspace_create(bench_naive_workspace *workspace, const bench_shape *shape);

void bench_naive_workspace_destroy(bench_naive_workspace *workspace);

/* The forward (op=forward) or the forward and the backward (op=backward) on
 * the problem's arrays: out, weights when the problem has them, and every
 * gradient for op=backward. */
void bench_naive_run(const bench_problem *problem, bench_naive_workspace *workspace);

#endif /* ATTN_BENCH_NAIVE_H */
