/*
 * One element type seen from the tests. The suites are written once, in
 * double, against a `test_prec` that describes float or double: it rounds
 * double data to the element type, converts typed buffers to and from
 * double, and calls the library (public entry points and internal kernels)
 * through untyped wrappers. A test case runs once per precision with the
 * precision as its cmocka state, so no test body exists twice.
 *
 * Tolerances (relative, see check.h for the residual formulas):
 *   f64: 1e-12   unit roundoff 1.1e-16; the residuals observed are ~1e-15,
 *                so 1e-12 leaves three orders of margin for BLAS accumulation
 *                order and the polynomial exp (<= 1e-14 relative).
 *   f32: 1e-5    unit roundoff 6.0e-8; dot products of length <= ~130 with
 *                random signs lose ~sqrt(n) u ~ 7e-7, the exp kernel 2e-7,
 *                the row sum a few u; observed residuals are ~1e-6, and every
 *                real defect (a wrong mask, scale, stride or index) produces
 *                errors of 1e-3 or more.
 * The reference always runs in double on the *rounded* inputs, so the
 * tolerance measures the library's arithmetic, never input rounding.
 */
#ifndef ATTN_TEST_PRECISION_H
#define ATTN_TEST_PRECISION_H

#include <stddef.h>

#include <attn/attn.h>

#include "kernels/kernels.h"

typedef struct test_prec {
    const char *name;  /* "f32" or "f64" */
    size_t size;       /* sizeof(element) */
    double tol;        /* relative tolerance against the double reference */
    double epsilon;    /* FLT_EPSILON or DBL_EPSILON */
    double max;        /* FLT_MAX or DBL_MAX */
    double min_normal; /* FLT_MIN or DBL_MIN */

    /* x rounded to the element type (and back to double) */
    double (*round)(double x);
    /* the next element-type value above x (x representable) */
    double (*next_up)(double x);
    void (*from_double)(void *dst, const double *src, size_t n);
    void (*to_double)(double *dst, const void *src, size_t n);

    /* public API, element pointers untyped */
    attn_status (*softmax_rows)(void *x, size_t rows, size_t cols, size_t ld);
    attn_status (*lookup)(size_t Tq, size_t Tk, size_t d, size_t dv, double scale,
                          const void *q, const void *k, const void *v, void *out,
                          void *weights);
    attn_status (*self_attention)(size_t B, size_t T, size_t C, size_t hs, int causal,
                                  const void *X, const void *Wq, const void *Wk,
                                  const void *Wv, void *out, void *weights);
    attn_status (*mha_forward)(size_t B, size_t T, size_t C, size_t NH, int causal,
                               const void *X, const void *Wq, const void *Wk, const void *Wv,
                               const void *Wo, void *out);
    attn_status (*mha_backward)(size_t B, size_t T, size_t C, size_t NH, int causal,
                                const void *X, const void *Wq, const void *Wk, const void *Wv,
                                const void *Wo, const void *dout, void *dX, void *dWq,
                                void *dWk, void *dWv, void *dWo);

    /* plans: the dtype to create them with, attn_forward_* and attn_backward_* */
    attn_dtype dtype;
    attn_status (*forward)(attn_plan *plan, const void *X, const void *Wq, const void *Wk,
                           const void *Wv, const void *Wo, void *out, void *weights);
    attn_status (*backward)(attn_plan *plan, const void *X, const void *Wq, const void *Wk,
                            const void *Wv, const void *Wo, const void *dout, void *dX,
                            void *dWq, void *dWk, void *dWv, void *dWo);
    /* the other element type (f32 <-> f64), for the DTYPE_MISMATCH cases */
    const struct test_prec *other;

    /* internal kernels of lib/kernels/kernels.h: whether the library has both the
     * row softmax and the exp kernel of `isa`, and calls of them returning 0
     * when it lacks the kernel (the scale is rounded to the element type) */
    int (*has_kernels)(attn_isa isa);
    int (*softmax_row)(attn_isa isa, const void *x, void *y, size_t n_valid, size_t n_total,
                       double scale);
    int (*exp)(attn_isa isa, const void *x, void *y, size_t n);
    /* the online block (kernels.h): p = exp(scale s - max), the running max
     * and sum updated in *running_max and *running_sum, its alpha returned
     * in *alpha */
    int (*softmax_online)(attn_isa isa, const void *s, void *p, size_t n_valid, size_t n_total,
                          double scale, double *running_max, double *running_sum, double *alpha);
    /* attn's own matrix products (kernels.h); alpha and beta are rounded */
    int (*gemm)(attn_isa isa, int trans_a, int trans_b, size_t M, size_t N, size_t K,
                double alpha, const void *A, size_t lda, const void *B, size_t ldb, double beta,
                void *C, size_t ldc, void *pack);
    int (*gemm_lower)(attn_isa isa, size_t M, size_t N, const void *A, size_t lda, const void *B,
                      size_t ldb, double beta, void *C, size_t ldc, void *pack);
    /* products sharing op(A) (alpha 1, beta 0), and the whole-op(B) packing */
    int (*gemm_shared_a)(attn_isa isa, int trans_a, int trans_b, size_t M, size_t N, size_t K,
                         const void *A, size_t lda, size_t count, const void *const *B,
                         size_t ldb, const void *const *prepacked, void *const *C, size_t ldc,
                         void *pack);
    int (*gemm_pack_b)(attn_isa isa, int trans_b, size_t K, size_t N, const void *B, size_t ldb,
                       size_t k0, void *packed);
} test_prec;

extern const test_prec test_prec_f32;
extern const test_prec test_prec_f64;

/* Rounds x[0..n) to the element type in place (a no-op for f64). */
void prec_round_array(const test_prec *p, double *x, size_t n);

/* A new typed buffer holding src[0..n) converted (tracked by talloc). */
void *prec_typed(const test_prec *p, const double *src, size_t n);
/* A new double array holding the typed buffer src[0..n) (tracked by talloc). */
double *prec_doubles(const test_prec *p, const void *src, size_t n);
/* Address of element i of a typed buffer. */
void *prec_at(const test_prec *p, void *base, size_t i);

#endif /* ATTN_TEST_PRECISION_H */
