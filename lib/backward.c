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
 *                         (causal: block by block below the diagonal, see
 *                         head_backward)
 *   P = softmax(S)    ->  dS = P o (dP - rowsum(dP o P))   row by row, in place
 *   S = scale Q K^T   ->  dQ_bh = scale dS K_bh,  dK_bh = scale dS^T Q_bh (T,hs)
 *   Q = X Wq, ...     ->  dWq = X^T dQ, dWk = X^T dK, dWv = X^T dV (C,D)
 *                         dX = dQ Wq^T + dK Wk^T + dV Wv^T (B*T,C)
 */
#include "backward.h"

#include "blas.h"
#include "tiling.h"

/* dS = P o (dP - <dP, P>) for one row of n_valid unmasked entries out of n;
 * masked entries (P = 0) get dS = 0. dP is overwritten by dS. */
static void FN(softmax_backward_row)(const real *P, real *dP, size_t n_valid, size_t n)
{
    real dot = REAL_C(0.0);
    for (size_t j = 0; j < n_valid; j++)
        dot += dP[j] * P[j];
    for (size_t j = 0; j < n_valid; j++)
        dP[j] = P[j] * (dP[j] - dot);
    for (size_t j = n_valid; j < n; j++)
        dP[j] = REAL_C(0.0);
}

/*
 * One head. P, dP (T,T); dY, Q, K, V, dQ, dK, dV (T,hs) with leading
 * dimension D. With a causal mask the queries go in blocks of
 * ATTN_CAUSAL_QUERY_BLOCK and block [t0,t1) meets only keys [0,t1) (P and dS
 * vanish beyond), as in the forward. Blocks run from the last to the first:
 * the last meets every key, so its GEMMs initialize dK and dV (beta 0) and
 * the earlier ones accumulate into their leading rows (beta 1).
 */
static void FN(head_backward)(const FN(attn_backward_args) *a, size_t D, const real *P,
                              const real *dY, const real *Q, const real *K, const real *V,
                              real *dQ, real *dK, real *dV)
{
    const size_t T = a->T, hs = a->hs;
    const size_t block = a->causal ? ATTN_CAUSAL_QUERY_BLOCK : T;
    const size_t blocks = (T + block - 1) / block;
    real *dS = a->dP;
    for (size_t index = blocks; index-- > 0;) {
        const size_t t0 = index * block, rows = T - t0 < block ? T - t0 : block;
        const size_t keys = a->causal ? t0 + rows : T;
        const real accumulate = index + 1 < blocks ? REAL_C(1.0) : REAL_C(0.0);
        const real *P_blk = P + t0 * T;
        real *dS_blk = dS + t0 * T;
        FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, keys, hs, rows, REAL_C(1.0), P_blk, T,
                      dY + t0 * D, D, accumulate, dV, D);
        FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, keys, hs, REAL_C(1.0), dY + t0 * D, D, V, D,
                      REAL_C(0.0), dS_blk, T);
        for (size_t t = t0; t < t0 + rows; t++)
            FN(softmax_backward_row)(P + t * T, dS + t * T, a->causal ? t + 1 : T, keys);
        FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, keys, a->scale, dS_blk, T, K, D,
                      REAL_C(0.0), dQ + t0 * D, D);
        FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, keys, hs, rows, a->scale, dS_blk, T, Q + t0 * D, D,
                      accumulate, dK, D);
    }
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
            FN(head_backward)(a, D, a->P + (b * NH + h) * T * T, dY + head, a->Q + head,
                              a->K + head, a->V + head, a->dQ + head, a->dK + head, a->dV + head);
        }
    }

    FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, C, D, rows, one, a->X, C, a->dQ, D, zero, a->dWq, D);
    FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, C, D, rows, one, a->X, C, a->dK, D, zero, a->dWk, D);
    FN(attn_gemm)(ATTN_TRANS, ATTN_NO_TRANS, C, D, rows, one, a->X, C, a->dV, D, zero, a->dWv, D);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, C, D, one, a->dQ, D, a->Wq, D, zero, a->dX, C);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, C, D, one, a->dK, D, a->Wk, D, one, a->dX, C);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, C, D, one, a->dV, D, a->Wv, D, one, a->dX, C);
}
