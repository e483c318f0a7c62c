/*
 * The naive reference the suites compare the library against: plain loops,
 * every sum accumulated in double, libm exp, max-subtracted softmax and
 * -INFINITY masking, following the lessons' NumPy `softmax` and
 * `self_attention` and the conventions of attn.h:
 *   - a row whose entries are all -inf (or that has no unmasked entry) gives
 *     weights 0 and therefore output 0;
 *   - a NaN anywhere in a row makes every weight of the row NaN;
 *   - entries equal to +inf share the row's weight equally, the rest get 0.
 * Arrays are dense row-major unless a leading dimension (ld*) is passed.
 * Written for clarity, not speed: O(T^2 * hs) loops over small test shapes.
 */
#ifndef ATTN_TEST_REFERENCE_H
#define ATTN_TEST_REFERENCE_H

#include <stddef.h>

/* y[j] = softmax(scale * x)[j] over j < n_valid; y[j] = 0 for n_valid <= j < n_total.
 * x == y is allowed. */
void ref_softmax_row(const double *x, double *y, size_t n_valid, size_t n_total, double scale);

/* C (M,N) = A (M,K) B (K,N), with row strides lda, ldb, ldc. */
void ref_matmul(size_t M, size_t N, size_t K, const double *A, size_t lda, const double *B,
                size_t ldb, double *C, size_t ldc);

/*
 * One attention core on strided operands:
 *   q (Tq,d) stride ldq, k (Tk,d) stride ldk, v (Tk,dv) stride ldv
 *   w = softmax_rows(scale * q k^T), with key j > query t masked when causal
 *   out (Tq,dv) stride ldo = w v;  weights (Tq,Tk) stride ldw, or NULL
 */
void ref_attend(size_t Tq, size_t Tk, size_t d, size_t dv, double scale, int causal,
                const double *q, size_t ldq, const double *k, size_t ldk, const double *v,
                size_t ldv, double *out, size_t ldo, double *weights, size_t ldw);

/* attn_lookup: q (Tq,d), k (Tk,d), v (Tk,dv) -> out (Tq,dv), weights (Tq,Tk) or NULL.
 * scale <= 0 means 1/sqrt(d), as in the library. */
void ref_lookup(size_t Tq, size_t Tk, size_t d, size_t dv, double scale, const double *q,
                const double *k, const double *v, double *out, double *weights);

/*
 * Multi-head attention, the general form the single head is a case of:
 *   X (B,T,C); Wq, Wk, Wv (C, NH*hs), head h using columns [h*hs, (h+1)*hs);
 *   per (b, h): Q, K, V = X_b W*_h (T,hs); weights_bh = softmax(scale Q K^T,
 *   causal mask); head output weights_bh V (T,hs) written to columns
 *   [h*hs, (h+1)*hs) of the concatenation Y (B,T,NH*hs);
 *   out = Y Wo (B,T,C) when Wo (NH*hs, C) is given, else out = Y.
 *   weights (B,NH,T,T) or NULL. scale <= 0 means 1/sqrt(hs).
 */
void ref_mha(size_t B, size_t T, size_t C, size_t NH, size_t hs, double scale, int causal,
             const double *X, const double *Wq, const double *Wk, const double *Wv,
             const double *Wo, double *out, double *weights);

/*
 * Gradients of L = sum(out * dout) for ref_mha (same shapes and scale rule),
 * by the chain rule written out in loops, with the softmax differentiated
 * through its explicit Jacobian dP_k/dz_j = P_k (delta_kj - P_j) (O(T^3) per
 * head: a formulation independent of the library's rowsum identity):
 *   dout (B,T,C) with Wo, else (B,T,NH*hs);
 *   dX (B,T,C); dWq, dWk, dWv (C, NH*hs); dWo (NH*hs, C), written only when
 *   Wo is given. Every output is overwritten.
 */
void ref_mha_backward(size_t B, size_t T, size_t C, size_t NH, size_t hs, double scale,
                      int causal, const double *X, const double *Wq, const double *Wk,
                      const double *Wv, const double *Wo, const double *dout, double *dX,
                      double *dWq, double *dWk, double *dWv, double *dWo);

/* attn_self_attention: one head, Wq/Wk/Wv (C,hs), scale 1/sqrt(hs);
 * out (B,T,hs), weights (B,T,T) or NULL. */
void ref_self_attention(size_t B, size_t T, size_t C, size_t hs, int causal, const double *X,
                        const double *Wq, const double *Wk, const double *Wv, double *out,
                        double *weights);

#endif /* ATTN_TEST_REFERENCE_H */
