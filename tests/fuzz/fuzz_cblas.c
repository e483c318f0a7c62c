/*
 * cblas_sgemm and cblas_dgemm for the fuzz build: plain loops compiled with
 * the harness's sanitizers, linked into fuzz_api ahead of OpenBLAS (an
 * executable's own definitions take precedence over a shared library's), so
 * that every element the library makes BLAS read or write is seen by
 * AddressSanitizer -- OpenBLAS itself is not instrumented, and an
 * out-of-bounds GEMM access (a wrong M, N, K, leading dimension or offset)
 * would otherwise go unnoticed. The arguments are checked as the reference
 * BLAS checks them (its xerbla cases); an invalid call aborts, as a finding.
 * Semantics as in the reference BLAS: beta = 0 means C is not read; the
 * sums are accumulated in the element type (no zero skipping, so 0 * NaN is
 * NaN as in OpenBLAS).
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

static void bad_call(const char *fn, const char *what, long value)
{
    fprintf(stderr, "fuzz_cblas: %s called with invalid %s (%ld)\n", fn, what, value);
    abort();
}

static long at_least_one(long n)
{
    return n > 1 ? n : 1;
}

/* the reference BLAS checks for a row-major (or column-major) GEMM */
static void check_args(const char *fn, enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta,
                       enum CBLAS_TRANSPOSE tb, long M, long N, long K, long lda, long ldb,
                       long ldc)
{
    if (order != CblasRowMajor && order != CblasColMajor)
        bad_call(fn, "order", (long)order);
    if (ta != CblasNoTrans && ta != CblasTrans)
        bad_call(fn, "TransA", (long)ta);
    if (tb != CblasNoTrans && tb != CblasTrans)
        bad_call(fn, "TransB", (long)tb);
    if (M < 0 || N < 0 || K < 0)
        bad_call(fn, "dimension", M < 0 ? M : (N < 0 ? N : K));
    const int row = order == CblasRowMajor;
    /* stored row lengths (row-major) or column lengths (column-major) */
    const long a_len = row ? (ta == CblasNoTrans ? K : M) : (ta == CblasNoTrans ? M : K);
    const long b_len = row ? (tb == CblasNoTrans ? N : K) : (tb == CblasNoTrans ? K : N);
    const long c_len = row ? N : M;
    if (lda < at_least_one(a_len))
        bad_call(fn, "lda", lda);
    if (ldb < at_least_one(b_len))
        bad_call(fn, "ldb", ldb);
    if (ldc < at_least_one(c_len))
        bad_call(fn, "ldc", ldc);
}

/* C (M,N) = alpha op(A) op(B) + beta C, row-major */
#define DEFINE_GEMM(NAME, REAL)                                                                    \
    static void NAME##_rows(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, long M, long N,      \
                            long K, REAL alpha, const REAL *A, long lda, const REAL *B, long ldb,  \
                            REAL beta, REAL *C, long ldc)                                          \
    {                                                                                              \
        for (long i = 0; i < M; i++)                                                               \
            for (long j = 0; j < N; j++) {                                                         \
                REAL sum = 0;                                                                      \
                for (long p = 0; p < K; p++)                                                       \
                    sum += (ta == CblasNoTrans ? A[i * lda + p] : A[p * lda + i]) *                \
                           (tb == CblasNoTrans ? B[p * ldb + j] : B[j * ldb + p]);                 \
                REAL *c = &C[i * ldc + j];                                                         \
                *c = beta == 0 ? alpha * sum : alpha * sum + beta * *c;                            \
            }                                                                                      \
    }                                                                                              \
    void NAME(const enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE ta,                         \
              const enum CBLAS_TRANSPOSE tb, const blasint M, const blasint N, const blasint K,    \
              const REAL alpha, const REAL *A, const blasint lda, const REAL *B,                   \
              const blasint ldb, const REAL beta, REAL *C, const blasint ldc)                      \
    {                                                                                              \
        check_args(#NAME, order, ta, tb, M, N, K, lda, ldb, ldc);                                  \
        if (order == CblasRowMajor) /* column-major C is row-major C^T = op(B)^T op(A)^T */        \
            NAME##_rows(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);                     \
        else                                                                                       \
            NAME##_rows(tb, ta, N, M, K, alpha, B, ldb, A, lda, beta, C, ldc);                     \
    }

DEFINE_GEMM(cblas_sgemm, float)
DEFINE_GEMM(cblas_dgemm, double)
