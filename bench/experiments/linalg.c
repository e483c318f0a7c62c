#include "experiments/linalg.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void bench_matmul(const double *A, const double *B, double *C, size_t M, size_t K, size_t N,
                  int transpose_b)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, (int)M,
                (int)N, (int)K, 1.0, A, (int)K, B, transpose_b ? (int)K : (int)N, 0.0, C,
                (int)N);
}

int bench_singular_values(const double *A, size_t M, size_t N, double *values)
{
    double *copy = malloc(M * N * sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, A, M * N * sizeof *copy);
    const lapack_int m = (lapack_int)M, n = (lapack_int)N;
    lapack_int info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'N', m, n, copy, n, values, NULL, m, NULL, n);
    free(copy);
    return info == 0 ? 0 : -1;
}

size_t bench_numerical_rank(const double *values, size_t count, size_t M, size_t N)
{
    const double tolerance = values[0] * (double)(M > N ? M : N) * DBL_EPSILON;
    size_t rank = 0;
    while (rank < count && values[rank] > tolerance)
        rank++;
    return rank;
}

int bench_orthonormal_columns(double *W, size_t rows, size_t cols, bench_rng *rng)
{
    double *tau = malloc(cols * sizeof *tau);
    double *diagonal = malloc(cols * sizeof *diagonal);
    int result = -1;
    if (tau && diagonal) {
        for (size_t i = 0; i < rows * cols; ++i)
            W[i] = bench_rng_normal(rng);
        const lapack_int m = (lapack_int)rows, n = (lapack_int)cols;
        if (LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, m, n, W, n, tau) == 0) {
            for (size_t j = 0; j < cols; ++j)
                diagonal[j] = W[j * cols + j];
            if (LAPACKE_dorgqr(LAPACK_ROW_MAJOR, m, n, n, W, n, tau) == 0) {
                for (size_t i = 0; i < rows; ++i)
                    for (size_t j = 0; j < cols; ++j)
                        W[i * cols + j] *= diagonal[j] < 0.0 ? -1.0 : 1.0;
                result = 0;
            }
        }
    }
    free(tau);
    free(diagonal);
    return result;
}

double bench_frobenius(const double *A, size_t count)
{
    double sum = 0.0;
    for (size_t i = 0; i < count; ++i)
        sum += A[i] * A[i];
    return sqrt(sum);
}
