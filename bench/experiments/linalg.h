/*
 * The dense linear algebra the experiments need, on row-major double
 * matrices: products through CBLAS, singular values and orthonormal bases
 * through LAPACKE.
 */
#ifndef ATTN_BENCH_LINALG_H
#define ATTN_BENCH_LINALG_H

#include <stddef.h>

#include "util/rng.h"

/* C (M,N) = A (M,K) B (K,N), or A B^T when transpose_b (B is then (N,K)). */
void bench_matmul(const double *A, const double *B, double *C, size_t M, size_t K, size_t N,
                  int transpose_b);

/* The min(M,N) singular values of A (M,N), largest first (LAPACKE_dgesdd,
 * values only; A is not modified). Returns 0, or -1 (memory, LAPACK). */
int bench_singular_values(const double *A, size_t M, size_t N, double *values);

/* The numerical rank: singular values above values[0] * max(M,N) * DBL_EPSILON
 * (the convention of LAPACK's and NumPy's matrix_rank). */
size_t bench_numerical_rank(const double *values, size_t count, size_t M, size_t N);

/* W (rows, cols), rows >= cols: cols orthonormal columns, the Q of the QR
 * factorization of a Gaussian matrix (LAPACKE_dgeqrf + dorgqr) with the
 * signs of R's diagonal folded in, which makes it uniformly (Haar)
 * distributed. Returns 0, or -1 (memory, LAPACK). */
int bench_orthonormal_columns(double *W, size_t rows, size_t cols, bench_rng *rng);

/* Frobenius norm of count elements. */
double bench_frobenius(const double *A, size_t count);

#endif /* ATTN_BENCH_LINALG_H */
