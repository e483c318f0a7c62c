/*
 * Backward pass of multi-head attention: every product is a GEMM; the
 * softmax backward is O(T^2) per head, never the O(T^3) Jacobian.
 *
 * Shapes: X (B,T,C); D = NH*hs; Q, K, V, Y, dQ, dK, dV, dY (B*T,D) with head h
 * in columns [h*hs, (h+1)*hs) (leading dimension D); P, dP (T,T) per (b,h).
 *
 * Each step cites the forward formula (forward.c) it differentiates:
 *   out = Y Wo        ->  dWo = Y^T dout (D,C),  dY = dout Wo^T (B*T,D)
 *                         (without Wo, out = Y and dY = dout)
 *   Y_bh = P V_bh     ->  dV_bh = P^T dY_bh (T,hs),  dP = dY_bh V_bh^T (T,T)
 *   P = softmax(S)    ->  dS = P o (dP - rowsum(dP o P))   row by row, in place
 *   S = scale Q K^T   ->  dQ_bh = scale dS K_bh,  dK_bh = scale dS^T Q_bh (T,hs)
 *   Q = X Wq, ...     ->  dWq = X^T dQ, dWk = X^T dK, dWv = X^T dV (C,D)
 *                         dX = dQ Wq^T + dK Wk^T + dV Wv^T (B*T,C)
 */
#include "backward.h"

#include "blas.h"

/* dS = P o (dP - <dP, P>) for one row of n_valid unmasked entries out of T;
 * masked entries (P = 0) get dS = 0. dP is overwritten by dS. */
static void FN(softmax_backward_row)(const real *P, real *dP, size_t n_valid, size_t T)
{
    real dot = REAL_C(0.0);
    for (size_t j = 0; j < n_valid; j++)
        dot += dP[j] * P[j];
    for (size_t j = 0; j < n_valid; j++)
        dP[j] = P[j] * (dP[j] - dot);
    for (size_t j = n_valid; j < T; j++)
        dP[j] = REAL_C(0.0);
}

void FN(attn_backward_run)(const FN(attn_backward_args) *a)
{
    const size_t B = a->B, T = a->T, C = a->C, NH = a->NH, hs = a->hs;
    const size_t D = NH * hs, rows = B * T;
    const real one = REAL_C(1.0), zero = REAL_C(0.0);

    const real *dY = a->dout;
    if (a->Wo != NULL) {
        FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, D, C, rows, one, a->heads, D, a->dout, C, zero,
                      a->dWo, C);
        FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, D, C, one, a->dout, C, a->Wo, C, zero,
                      a->dheads, D);
        dY = a->dheads;
    }

    for (size_t b = 0; b < B; b++) {
        for (size_t h = 0; h < NH; h++) {
            const size_t head = b * T * D + h * hs;
            const real *P = a->P + (b * NH + h) * T * T;
            FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, T, hs, T, one, P, T, dY + head, D, zero,
                          a->dV + head, D);
            FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, T, T, hs, one, dY + head, D, a->V + head, D,
                          zero, a->dP, T);
            for (size_t t = 0; t < T; t++)
                FN(softmax_backward_row)(P + t * T, a->dP + t * T, a->causal ? t + 1 : T, T);
            FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, T, hs, T, a->scale, a->dP, T,
                          a->K + head, D, zero, a->dQ + head, D);
            FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, T, hs, T, a->scale, a->dP, T, a->Q + head, D,
                          zero, a->dK + head, D);
        }
    }

    FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, C, D, rows, one, a->X, C, a->dQ, D, zero, a->dWq, D);
    FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, C, D, rows, one, a->X, C, a->dK, D, zero, a->dWk, D);
    FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, C, D, rows, one, a->X, C, a->dV, D, zero, a->dWv, D);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, C, D, one, a->dQ, D, a->Wq, D, zero, a->dX, C);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, C, D, one, a->dK, D, a->Wk, D, one, a->dX, C);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, C, D, one, a->dV, D, a->Wv, D, one, a->dX, C);
}
