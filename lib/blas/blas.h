/*
 * The only place that includes <cblas.h>. It exposes GEMM on `real` with
 * size_t dimensions; callers have already checked every dimension against
 * the BLAS integer range (attn_all_at_most with ATTN_BLAS_INT_MAX), so the narrowing casts are exact.
 */
#ifndef ATTN_BLAS_H
#define ATTN_BLAS_H

#include <cblas.h>
#include <stddef.h>

#include "core/real.h"

/* Every CBLAS attn builds with (ATTN_BLAS: OpenBLAS, BLIS, the reference)
 * takes int dimensions in its LP64 build; OpenBLAS names its type. */
#ifdef OPENBLAS_VERSION
_Static_assert(sizeof(blasint) == sizeof(int),
               "ATTN_BLAS_INT_MAX (check.h) assumes an LP64 BLAS whose blasint is int");
#endif
typedef int attn_blas_int;

typedef enum { ATTN_NO_TRANS = 0, ATTN_TRANS = 1 } attn_trans;

/* C (M,N) = alpha * op(A) (M,K) * op(B) (K,N) + beta * C, row-major. */
static inline void FN(attn_gemm)(attn_trans trans_a, attn_trans trans_b, size_t M, size_t N,
                                 size_t K, real alpha, const real *A, size_t lda,
                                 const real *B, size_t ldb, real beta, real *C, size_t ldc)
{
#if ATTN_REAL_BITS == 32
    cblas_sgemm(
#else
    cblas_dgemm(
#endif
        CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
        (attn_blas_int)M, (attn_blas_int)N, (attn_blas_int)K, alpha, A, (attn_blas_int)lda, B, (attn_blas_int)ldb, beta, C,
        (attn_blas_int)ldc);
}

#endif /* ATTN_BLAS_H */
