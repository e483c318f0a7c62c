/*
 * Forward pass of multi-head scaled dot-product attention.
 *
 * Shapes: X (B,T,C); Wq, Wk, Wv (C,D) with D = NH*hs; Wo (D,C) or none.
 *   Q = X Wq, K = X Wk, V = X Wv            (B*T, D)   three GEMMs over all rows
 *   for each batch element b and head h (columns [h*hs, (h+1)*hs) of Q, K, V,
 *   addressed in place with leading dimension D, no copies):
 *     S = Q_bh K_bh^T                       (T,T)      GEMM
 *     P = softmax_rows(scale*S), row t seeing keys j <= t when causal
 *                                           (T,T)      fused row kernel, in place
 *     Y_bh = P V_bh                         (T,hs)     GEMM into Y's columns
 *   out = Y Wo (B*T, C) with Wo, else out = Y (B*T, D)  GEMM
 */
#include <attn/attn.h>

#include "blas.h"
#include "forward.h"

void FN(attn_forward_run)(const FN(attn_forward_args) *a, const FN(attn_forward_workspace) *ws)
{
    const size_t B = a->B, T = a->T, C = a->C, NH = a->NH, hs = a->hs;
    const size_t D = NH * hs, rows = B * T;
    const real one = REAL_C(1.0), zero = REAL_C(0.0);

    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, D, C, one, a->X, C, a->Wq, D, zero, ws->Q, D);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, D, C, one, a->X, C, a->Wk, D, zero, ws->K, D);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, D, C, one, a->X, C, a->Wv, D, zero, ws->V, D);

    real *Y = a->Wo != NULL ? ws->heads : a->out;
    for (size_t b = 0; b < B; b++) {
        for (size_t h = 0; h < NH; h++) {
            const size_t head = b * T * D + h * hs;
            real *P = a->P != NULL ? a->P + (b * NH + h) * T * T : ws->scores;
            FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, T, T, hs, one, ws->Q + head, D, ws->K + head,
                          D, zero, P, T);
            for (size_t t = 0; t < T; t++)
                a->softmax_row(P + t * T, P + t * T, a->causal ? t + 1 : T, T, a->scale);
            FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, T, hs, T, one, P, T, ws->V + head, D, zero,
                          Y + head, D);
        }
    }
    if (a->Wo != NULL)
        FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, C, D, one, Y, D, a->Wo, C, zero, a->out,
                      C);
}
