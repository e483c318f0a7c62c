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

#include <stddef.h>
#include <string.h>

#include "blas/blas.h"
#include "engine/profile.h"
#include "kernels/kernels.h"

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

/* C (M,N) = tril(A) (M,M) B (M,N) + beta C (beta 0 or 1; the own kernel's
 * triangular product on every engine, as attn_mm_lower). */
static inline void FN(attn_mm_lower_add)(const FN(attn_mm) *mm, size_t M, size_t N, const real *A,
                                         size_t lda, const real *B, size_t ldb, real beta,
                                         real *C, size_t ldc)
{
    mm->own_lower(M, N, A, lda, B, ldb, beta, C, ldc, mm->pack);
}

/* Rows per product of attn_mm_gemm_staircase: a multiple of the kernels'
 * MR (6). */
#define ATTN_MM_STAIRCASE_ROWS 24

/* The columns row `row` of attn_mm_gemm_staircase wants. */
static inline size_t attn_mm_staircase_cols(size_t N, ptrdiff_t n0, size_t row)
{
    const ptrdiff_t n = n0 + (ptrdiff_t)row;
    return n <= 0 ? 0 : (size_t)n < N ? (size_t)n : N;
}

/* The end of the group of rows from row i of attn_mm_gemm_staircase, and
 * in *cols the columns its product computes: ATTN_MM_STAIRCASE_ROWS more
 * rows while the product would be small enough for the own kernel's
 * unpacked path (whose sums differ from the packed path's), the rest of
 * the rows once they want every column, or when the rest alone would be
 * that small. A whole product that small stays whole. */
static inline size_t attn_mm_staircase_end(size_t M, size_t N, size_t K, ptrdiff_t n0, size_t i,
                                           size_t *cols)
{
    const size_t all = attn_mm_staircase_cols(N, n0, M - 1);
    size_t end = i;
    do {
        end = attn_gemm_min(end + ATTN_MM_STAIRCASE_ROWS, M);
        *cols = attn_mm_staircase_cols(N, n0, end - 1);
    } while (end < M && attn_gemm_is_direct(end - i, *cols, K));
    if (*cols == N || (end < M && attn_gemm_is_direct(M - end, all, K))) {
        *cols = all;
        return M;
    }
    return end;
}

/* C (M,N) = A (M,K) op(B) (K,N) where row i of C is wanted in its first
 * min(N, max(0, n0 + i)) columns only: the scores of a causal query block,
 * row i seeing one key more than row i - 1, of which a softmax reads no
 * further. On the own kernel the rows go in groups, each multiplied against
 * the columns its last row wants (the other columns of a row are left as
 * they were); every computed element is the one of the whole product (the
 * packed path's sums depend on neither M nor N). Products sent to BLAS are
 * whole: there the groups' smaller calls took an sdpa forward 14% longer.
 * Against whole products the scores above a causal diagonal were 11% of
 * the products of a T = 1024 sdpa forward, in groups 2%, and the forward
 * 3-4% faster (AMD EPYC Zen 3, avx2, 16/4 and 12 heads of 64, 2 threads).
 * op(B)'s first columns are those of B (or Bp, op(B) prepacked, or NULL)
 * as they are. Returns the FLOPs computed. */
static inline double FN(attn_mm_gemm_staircase)(const FN(attn_mm) *mm, attn_trans trans_b,
                                                size_t M, size_t N, size_t K, ptrdiff_t n0,
                                                const real *A, size_t lda, const real *B,
                                                size_t ldb, const real *Bp, real *C, size_t ldc)
{
    if (mm->blas)
        n0 = (ptrdiff_t)N;
    double flops = 0.0;
    for (size_t i = 0, end, cols; i < M; i = end) {
        end = attn_mm_staircase_end(M, N, K, n0, i, &cols);
        if (cols == 0)
            continue;
        FN(attn_mm_gemm_prepacked)(mm, ATTN_NO_TRANS, trans_b, end - i, cols, K, REAL_C(1.0),
                                   A + i * lda, lda, B, ldb, Bp, REAL_C(0.0), C + i * ldc, ldc);
        flops += attn_product_flops(end - i, cols, K);
    }
    return flops;
}

/* Rows of a transposed triangle done by plain loops; larger ones split in
 * halves whose off-diagonal block is one product. */
#define ATTN_MM_LOWER_T_DIRECT 16

/* C (M,N) = tril(A)^T (M,M) B (M,N) + beta C (beta 0: C not read, or 1):
 * row j of C only ever meets rows i >= j of B, and entries of A on or below
 * the diagonal (a causal diagonal block's P^T dY: key j takes the rows of
 * the queries that see it, and a NaN in an earlier query's row stays out).
 * With A = [A11 0; A21 A22] (top rows h): C1 = A11^T B1 + A21^T B2,
 * C2 = A22^T B2. */
static inline void FN(attn_mm_lower_t)(const FN(attn_mm) *mm, size_t M, size_t N, const real *A,
                                       size_t lda, const real *B, size_t ldb, real beta, real *C,
                                       size_t ldc)
{
    if (M > ATTN_MM_LOWER_T_DIRECT) {
        const size_t top = M / 2;
        FN(attn_mm_lower_t)(mm, top, N, A, lda, B, ldb, beta, C, ldc);
        FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, top, N, M - top, REAL_C(1.0),
                         A + top * lda, lda, B + top * ldb, ldb, REAL_C(1.0), C, ldc);
        FN(attn_mm_lower_t)(mm, M - top, N, A + top * lda + top, lda, B + top * ldb, ldb, beta,
                            C + top * ldc, ldc);
        return;
    }
    for (size_t j = 0; j < M; j++) {
        real *c = C + j * ldc;
        if (beta == REAL_C(0.0))
            memset(c, 0, N * sizeof(real));
        for (size_t i = j; i < M; i++) {
            const real a = A[i * lda + j];
            const real *b = B + i * ldb;
            for (size_t n = 0; n < N; n++)
                c[n] += a * b[n];
        }
    }
}

#endif /* ATTN_MATMUL_H */
