/* The naive double-precision reference (see reference.h). */
#include "reference/reference.h"

#include <math.h>
#include <stdlib.h>

#include "support/talloc.h"

void ref_softmax_row(const double *x, double *y, size_t n_valid, size_t n_total, double scale)
{
    /* z_j = scale * x_j; the row maximum decides which case applies */
    double m = -HUGE_VAL;
    int has_nan = 0;
    size_t infinite = 0;
    for (size_t j = 0; j < n_valid; j++) {
        double z = scale * x[j];
        if (isnan(z))
            has_nan = 1;
        else if (z > m)
            m = z;
        if (z == HUGE_VAL)
            infinite++;
    }
    if (has_nan || !isfinite(m)) {
        for (size_t j = 0; j < n_valid; j++) {
            double z = scale * x[j];
            if (has_nan)
                y[j] = ((double)NAN);
            else if (m == -HUGE_VAL)
                y[j] = 0.0; /* fully masked row */
            else /* m = +inf: the +inf entries share the weight */
                y[j] = z == HUGE_VAL ? 1.0 / (double)infinite : 0.0;
        }
    } else {
        double sum = 0.0;
        for (size_t j = 0; j < n_valid; j++) {
            y[j] = exp(scale * x[j] - m); /* x[j] is read before y[j] is written */
            sum += y[j];
        }
        for (size_t j = 0; j < n_valid; j++)
            y[j] /= sum;
    }
    for (size_t j = n_valid; j < n_total; j++)
        y[j] = 0.0;
}

void ref_matmul(size_t M, size_t N, size_t K, const double *A, size_t lda, const double *B,
                size_t ldb, double *C, size_t ldc)
{
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0.0;
            for (size_t p = 0; p < K; p++)
                s += A[i * lda + p] * B[p * ldb + j];
            C[i * ldc + j] = s;
        }
}

void ref_attend(size_t Tq, size_t Tk, size_t d, size_t dv, double scale, int causal,
                const double *q, size_t ldq, const double *k, size_t ldk, const double *v,
                size_t ldv, double *out, size_t ldo, double *weights, size_t ldw)
{
    double *row = talloc_doubles(Tk);
    for (size_t t = 0; t < Tq; t++) {
        for (size_t j = 0; j < Tk; j++) {
            double s = 0.0;
            for (size_t c = 0; c < d; c++)
                s += q[t * ldq + c] * k[j * ldk + c];
            row[j] = (causal && j > t) ? -HUGE_VAL : s;
        }
        ref_softmax_row(row, row, Tk, Tk, scale);
        for (size_t c = 0; c < dv; c++) {
            double s = 0.0;
            for (size_t j = 0; j < Tk; j++)
                s += row[j] * v[j * ldv + c];
            out[t * ldo + c] = s;
        }
        if (weights != NULL)
            for (size_t j = 0; j < Tk; j++)
                weights[t * ldw + j] = row[j];
    }
}

void ref_lookup(size_t Tq, size_t Tk, size_t d, size_t dv, double scale, const double *q,
                const double *k, const double *v, double *out, double *weights)
{
    if (!(scale > 0.0))
        scale = 1.0 / sqrt((double)d);
    ref_attend(Tq, Tk, d, dv, scale, 0, q, d, k, d, v, dv, out, dv, weights, Tk);
}

void ref_mha(size_t B, size_t T, size_t C, size_t NH, size_t hs, double scale, int causal,
             const double *X, const double *Wq, const double *Wk, const double *Wv,
             const double *Wo, double *out, double *weights)
{
    const size_t D = NH * hs;
    if (!(scale > 0.0))
        scale = 1.0 / sqrt((double)hs);
    double *Q = talloc_doubles(T * hs), *K = talloc_doubles(T * hs), *V = talloc_doubles(T * hs);
    double *Y = Wo != NULL ? talloc_doubles(B * T * D) : out;
    for (size_t b = 0; b < B; b++) {
        const double *Xb = X + b * T * C;
        for (size_t h = 0; h < NH; h++) {
            /* this head's projections: columns [h*hs, (h+1)*hs) of W* */
            ref_matmul(T, hs, C, Xb, C, Wq + h * hs, D, Q, hs);
            ref_matmul(T, hs, C, Xb, C, Wk + h * hs, D, K, hs);
            ref_matmul(T, hs, C, Xb, C, Wv + h * hs, D, V, hs);
            double *w = weights != NULL ? weights + (b * NH + h) * T * T : NULL;
            ref_attend(T, T, hs, hs, scale, causal, Q, hs, K, hs, V, hs,
                       Y + b * T * D + h * hs, D, w, T);
        }
    }
    if (Wo != NULL)
        ref_matmul(B * T, C, D, Y, D, Wo, C, out, C);
}

/* C (M,N) = op(A) op(B), or C += op(A) op(B) when `accumulate`, all dense:
 * op(A) (M,K) is A (M,K), or A^T for A stored (K,M) when trans_a; op(B)
 * (K,N) is B (K,N), or B^T for B stored (N,K) when trans_b */
static void ref_product(int trans_a, int trans_b, int accumulate, size_t M, size_t N, size_t K,
                        const double *A, const double *B, double *C)
{
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0.0;
            for (size_t p = 0; p < K; p++)
                s += (trans_a ? A[p * M + i] : A[i * K + p]) *
                     (trans_b ? B[j * K + p] : B[p * N + j]);
            C[i * N + j] = accumulate ? C[i * N + j] + s : s;
        }
}

void ref_mha_backward(size_t B, size_t T, size_t C, size_t NH, size_t hs, double scale,
                      int causal, const double *X, const double *Wq, const double *Wk,
                      const double *Wv, const double *Wo, const double *dout, double *dX,
                      double *dWq, double *dWk, double *dWv, double *dWo)
{
    const size_t D = NH * hs, rows = B * T;
    if (!(scale > 0.0))
        scale = 1.0 / sqrt((double)hs);
    /* the forward again: Q, K, V, Y (rows, D) and the weights P (B,NH,T,T) */
    double *Q = talloc_doubles(rows * D), *K = talloc_doubles(rows * D);
    double *V = talloc_doubles(rows * D), *Y = talloc_doubles(rows * D);
    double *P = talloc_doubles(B * NH * T * T);
    ref_matmul(rows, D, C, X, C, Wq, D, Q, D);
    ref_matmul(rows, D, C, X, C, Wk, D, K, D);
    ref_matmul(rows, D, C, X, C, Wv, D, V, D);
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < NH; h++) {
            const size_t at = b * T * D + h * hs;
            ref_attend(T, T, hs, hs, scale, causal, Q + at, D, K + at, D, V + at, D, Y + at, D,
                       P + (b * NH + h) * T * T, T);
        }

    /* out = Y Wo: dY = dout Wo^T, dWo = Y^T dout; without Wo, dY = dout */
    double *dY = talloc_doubles(rows * D);
    if (Wo != NULL) {
        ref_product(0, 1, 0, rows, D, C, dout, Wo, dY);
        ref_product(1, 0, 0, D, C, rows, Y, dout, dWo);
    } else {
        for (size_t i = 0; i < rows * D; i++)
            dY[i] = dout[i];
    }

    double *dQ = talloc_doubles(rows * D), *dK = talloc_doubles(rows * D);
    double *dV = talloc_doubles(rows * D);
    double *dP = talloc_doubles(T), *dz = talloc_doubles(T);
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < NH; h++) {
            const double *Pbh = P + (b * NH + h) * T * T;
            for (size_t t = 0; t < T; t++) {
                const double *p = Pbh + t * T;
                const double *dy = dY + (b * T + t) * D + h * hs;
                /* Y_t = sum_j p_j V_j: dV_j += p_j dY_t, dp_j = <dY_t, V_j> */
                for (size_t j = 0; j < T; j++) {
                    double *dv = dV + (b * T + j) * D + h * hs;
                    const double *v = V + (b * T + j) * D + h * hs;
                    double s = 0.0;
                    for (size_t c = 0; c < hs; c++) {
                        dv[c] += p[j] * dy[c];
                        s += dy[c] * v[c];
                    }
                    dP[j] = s;
                }
                /* p = softmax(z), z_j = scale <Q_t, K_j> (masked: p_j = 0):
                 * dz_j = sum_k dp_k p_k (delta_kj - p_j) */
                for (size_t j = 0; j < T; j++) {
                    double s = 0.0;
                    for (size_t k = 0; k < T; k++)
                        s += dP[k] * p[k] * ((k == j ? 1.0 : 0.0) - p[j]);
                    dz[j] = s;
                }
                /* dQ_t += scale sum_j dz_j K_j, dK_j += scale dz_j Q_t */
                double *dq = dQ + (b * T + t) * D + h * hs;
                const double *q = Q + (b * T + t) * D + h * hs;
                for (size_t j = 0; j < T; j++) {
                    double *dk = dK + (b * T + j) * D + h * hs;
                    const double *k = K + (b * T + j) * D + h * hs;
                    for (size_t c = 0; c < hs; c++) {
                        dq[c] += scale * dz[j] * k[c];
                        dk[c] += scale * dz[j] * q[c];
                    }
                }
            }
        }
    /* (the causal mask lives in P: masked weights are 0, and so is their
     * row and column of the Jacobian) */

    /* Q = X Wq, K = X Wk, V = X Wv */
    ref_product(1, 0, 0, C, D, rows, X, dQ, dWq);
    ref_product(1, 0, 0, C, D, rows, X, dK, dWk);
    ref_product(1, 0, 0, C, D, rows, X, dV, dWv);
    ref_product(0, 1, 0, rows, C, D, dQ, Wq, dX);
    ref_product(0, 1, 1, rows, C, D, dK, Wk, dX);
    ref_product(0, 1, 1, rows, C, D, dV, Wv, dX);
}

void ref_self_attention(size_t B, size_t T, size_t C, size_t hs, int causal, const double *X,
                        const double *Wq, const double *Wk, const double *Wv, double *out,
                        double *weights)
{
    ref_mha(B, T, C, 1, hs, 0.0, causal, X, Wq, Wk, Wv, NULL, out, weights);
}
