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

/* The row stride BLAS is given for a stored matrix of `rows` rows of
 * `cols`: ld itself, except for a matrix of one row (or none), whose ld no
 * element's address uses; attn.h lets a dimension of one element have any
 * stride (a decode step's single query, a key length of 1), but CBLAS checks
 * ld >= max(1, cols) whatever the rows and refuses the call otherwise. */
static inline attn_blas_int attn_blas_ld(size_t rows, size_t cols, size_t ld)
{
    if (rows <= 1 && ld < cols)
        ld = cols;
    return (attn_blas_int)(ld > 0 ? ld : 1);
}

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
        (attn_blas_int)M, (attn_blas_int)N, (attn_blas_int)K, alpha, A,
        trans_a ? attn_blas_ld(K, M, lda) : attn_blas_ld(M, K, lda), B,
        trans_b ? attn_blas_ld(N, K, ldb) : attn_blas_ld(K, N, ldb), beta, C,
        attn_blas_ld(M, N, ldc));
}

#endif /* ATTN_BLAS_H */
