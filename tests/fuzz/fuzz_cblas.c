/*
 * The CBLAS calls of the library (cblas_?gemm, cblas_?trmm) for the fuzz
 * build: plain loops compiled with
 * the harness's sanitizers, linked into fuzz_api ahead of OpenBLAS (an
 * executable's own definitions take precedence over a shared library's), so
 * that every element the library makes BLAS read or write is seen by
 * AddressSanitizer -- OpenBLAS itself is not instrumented, and an
 * out-of-bounds GEMM access (a wrong M, N, K, leading dimension or offset)
 * would otherwise go unnoticed. The arguments are checked as the reference
 * BLAS checks them (its xerbla cases); an invalid call aborts, as a finding.
 * Semantics as in the reference BLAS: GEMM with beta = 0 does not read C;
 * TRMM never reads the other triangle of A (nor its diagonal when unit);
 * sums are accumulated in the element type, without skipping zeros (0 * NaN
 * is NaN, as in OpenBLAS).
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* B (M,N) = alpha op(A) B (side Left, A M x M) or alpha B op(A) (Right, A
 * N x N), A triangular; the element (i, j) of A and B in either order. */
#define DEFINE_TRMM(NAME, REAL)                                                                 \
    void NAME(const enum CBLAS_ORDER order, const enum CBLAS_SIDE side,                          \
              const enum CBLAS_UPLO uplo, const enum CBLAS_TRANSPOSE ta,                         \
              const enum CBLAS_DIAG diag, const blasint M, const blasint N, const REAL alpha,    \
              const REAL *A, const blasint lda, REAL *B, const blasint ldb)                      \
    {                                                                                            \
        if (order != CblasRowMajor && order != CblasColMajor)                                    \
            bad_call(#NAME, "order", (long)order);                                               \
        if (side != CblasLeft && side != CblasRight)                                             \
            bad_call(#NAME, "side", (long)side);                                                 \
        if (uplo != CblasUpper && uplo != CblasLower)                                            \
            bad_call(#NAME, "uplo", (long)uplo);                                                 \
        if (ta != CblasNoTrans && ta != CblasTrans)                                              \
            bad_call(#NAME, "TransA", (long)ta);                                                 \
        if (diag != CblasUnit && diag != CblasNonUnit)                                           \
            bad_call(#NAME, "diag", (long)diag);                                                 \
        if (M < 0 || N < 0)                                                                      \
            bad_call(#NAME, "dimension", M < 0 ? (long)M : (long)N);                             \
        const int row = order == CblasRowMajor, left = side == CblasLeft;                        \
        const long k = left ? M : N;                                                             \
        if (lda < at_least_one(k))                                                               \
            bad_call(#NAME, "lda", (long)lda);                                                   \
        if (ldb < at_least_one(row ? N : M))                                                     \
            bad_call(#NAME, "ldb", (long)ldb);                                                   \
        if (M == 0 || N == 0)                                                                    \
            return;                                                                              \
        REAL *R = malloc((size_t)M * (size_t)N * sizeof(REAL));                                  \
        if (R == NULL)                                                                           \
            bad_call(#NAME, "size (out of memory)", (long)M * N);                                \
        for (long i = 0; i < M; i++)                                                             \
            for (long j = 0; j < N; j++) {                                                       \
                REAL sum = 0;                                                                    \
                for (long p = 0; p < k; p++) {                                                   \
                    /* op(A)(r, c) for the triangle's factor, B's factor */                      \
                    const long r = left ? i : p, c = left ? p : j;                               \
                    const long ar = ta == CblasNoTrans ? r : c, ac = ta == CblasNoTrans ? c : r; \
                    if (uplo == CblasLower ? ac > ar : ac < ar)                                  \
                        continue; /* outside the triangle: 0, never read */                      \
                    const REAL a = ar == ac && diag == CblasUnit                                 \
                                       ? (REAL)1                                                 \
                                       : A[row ? ar * lda + ac : ac * lda + ar];                 \
                    const long br = left ? p : i, bc = left ? j : p;                             \
                    sum += a * B[row ? br * ldb + bc : bc * ldb + br];                           \
                }                                                                                \
                R[i * N + j] = alpha * sum;                                                      \
            }                                                                                    \
        for (long i = 0; i < M; i++)                                                             \
            for (long j = 0; j < N; j++)                                                         \
                B[row ? i * ldb + j : j * ldb + i] = R[i * N + j];                               \
        free(R);                                                                                 \
    }

DEFINE_TRMM(cblas_strmm, float)
DEFINE_TRMM(cblas_dtrmm, double)
