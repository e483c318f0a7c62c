/*
 * Where a matrix product of the forward and backward engines goes: a BLAS
 * call (blas.h), or attn's own single-threaded kernel (kernels.h) with the
 * calling thread's packing scratch. The engines call attn_mm_* and never
 * choose themselves; the plan decides (plan_engine.h):
 *   - a plan on BLAS threads sends its products to BLAS, except those small
 *     enough (attn_gemm_is_direct) that a BLAS call's overhead would exceed
 *     their arithmetic: they go to the own kernel's unpacked path;
 *   - a plan on threads of its own sends every product to the own kernel,
 *     one product per thread at a time, and never calls BLAS.
 * Templated over `real` (real.h); beta is 0 (C not read) or 1.
 */
#ifndef ATTN_MATMUL_H
#define ATTN_MATMUL_H

#include <string.h>

#include "blas.h"
#include "kernels.h"

typedef struct FN(attn_mm) {
    attn_gemm_fn own;             /* the kernel set's product */
    attn_gemm_shared_a_fn own_shared_a; /* ... products sharing op(A) */
    attn_gemm_lower_fn own_lower; /* ... and triangular product */
    int blas;                     /* 1: products that are not direct go to BLAS */
    real *pack;                   /* the calling thread's scratch of the own kernel */
    double *profile;              /* the calling thread's profiling row, or NULL */
} FN(attn_mm);

/* C (M,N) = alpha op(A) op(B) + beta C (see kernels.h). */
static inline void FN(attn_mm_gemm)(const FN(attn_mm) *mm, attn_trans trans_a,
                                    attn_trans trans_b, size_t M, size_t N, size_t K, real alpha,
                                    const real *A, size_t lda, const real *B, size_t ldb,
                                    real beta, real *C, size_t ldc)
{
    if (mm->blas && !attn_gemm_is_direct(M, N, K))
        FN(attn_gemm)(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        mm->own((int)trans_a, (int)trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                mm->pack);
}

/* C_m = alpha op(A) op(B_m) + beta C_m for m < count: one packing of op(A)
 * for all of them on the own kernel, which reads each op(B_m) from
 * prepacked[m] when that is not NULL (kernels.h); `count` calls of BLAS. */
static inline void FN(attn_mm_gemm_shared_a)(const FN(attn_mm) *mm, attn_trans trans_a,
                                             attn_trans trans_b, size_t M, size_t N, size_t K,
                                             real alpha, const real *A, size_t lda,
                                             size_t count, const real *const *B, size_t ldb,
                                             const real *const *prepacked, real beta,
                                             real *const *C, size_t ldc)
{
    if (mm->blas && !attn_gemm_is_direct(M, N, K)) {
        for (size_t m = 0; m < count; m++)
            FN(attn_gemm)(trans_a, trans_b, M, N, K, alpha, A, lda, B[m], ldb, beta, C[m], ldc);
    } else {
        mm->own_shared_a((int)trans_a, (int)trans_b, M, N, K, alpha, A, lda, count, B, ldb,
                         prepacked, beta, C, ldc, mm->pack);
    }
}

/* One product whose op(B) may be prepacked (Bp NULL: not). */
static inline void FN(attn_mm_gemm_prepacked)(const FN(attn_mm) *mm, attn_trans trans_a,
                                              attn_trans trans_b, size_t M, size_t N, size_t K,
                                              real alpha, const real *A, size_t lda,
                                              const real *B, size_t ldb, const real *Bp,
                                              real beta, real *C, size_t ldc)
{
    FN(attn_mm_gemm_shared_a)(mm, trans_a, trans_b, M, N, K, alpha, A, lda, 1, &B, ldb,
                              Bp != NULL ? &Bp : NULL, beta, &C, ldc);
}

/* C (M,N) = tril(A) (M,M) B (M,N): row i of C never reads rows of B after i,
 * on every engine the own kernel's triangular product (OpenBLAS's TRMM
 * multiplies the zeros above the diagonal too: a NaN in a later row of B,
 * the value of a key a causal query must not see, reached earlier rows). */
static inline void FN(attn_mm_lower)(const FN(attn_mm) *mm, size_t M, size_t N, const real *A,
                                     size_t lda, const real *B, size_t ldb, real *C, size_t ldc)
{
    mm->own_lower(M, N, A, lda, B, ldb, REAL_C(0.0), C, ldc, mm->pack);
}

#endif /* ATTN_MATMUL_H */
