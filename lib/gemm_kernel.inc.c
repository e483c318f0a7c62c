/*
 * attn's own matrix product, written once over the SIMD vocabulary of
 * lib/simd/ (see its README) in the manner of BLIS: the operands are packed
 * into contiguous micro-panels and one register-blocked micro-kernel does
 * all the arithmetic. It is single-threaded and never allocates: the caller
 * hands it attn_gemm_pack_elements(M, N, K) elements of scratch. The including
 * file has already included one vocabulary header and defines
 *   GEMM_NAME        the product's symbol, e.g. attn_gemm_avx2_f32
 *   GEMM_LOWER_NAME  the triangular product's, e.g. attn_gemm_lower_avx2_f32
 * Both follow the contracts in kernels.h.
 *
 * Shapes (row-major, op(X) = X or X^T as the trans flag says):
 *   C (M,N) = alpha op(A) (M,K) op(B) (K,N) + beta C,   beta 0 (C not read) or 1
 * Loops, outermost first (BLIS's names):
 *   pc: K in blocks of ATTN_GEMM_KC; jc: N in blocks of ATTN_GEMM_NC, whose
 *   op(B) block (kc x nc) is packed into NR-column micro-panels (the last one
 *   zero-padded); ic: M in blocks of ATTN_GEMM_MC, op(A) block (mc x kc)
 *   packed into MR-row micro-panels (zero-padded); jr, ir: the micro-kernel
 *   on one MR x NR tile, C += A_panel B_panel over kc, stored for the rows
 *   and columns that exist. The first K block applies beta, later ones add.
 * Every element of C is a sum over k in increasing order, the same whatever
 * the thread that computes it: results depend on the shape and the kernel
 * set only.
 */
#include <stddef.h>
#include <string.h>

#include "kernels.h"

#define NR (2 * VLEN) /* two vectors per row of the tile */
#define MR ATTN_GEMM_MR

_Static_assert(NR <= ATTN_GEMM_NR_MAX && MR <= ATTN_GEMM_MR_MAX,
               "the micro-tile must fit the scratch sizes of kernels.h");

/* op(X)(i, j) of a row-major X with leading dimension ld. */
static inline real element(const real *X, size_t ld, int trans, size_t i, size_t j)
{
    return trans ? X[j * ld + i] : X[i * ld + j];
}

/* op(B)[k0 + k][j0 + j] for k < kc, j < nc, as micro-panels of NR columns:
 * panel p holds columns [p*NR, p*NR + NR) at pack + p*kc*NR, row k at k*NR. */
static void pack_b(const real *B, size_t ldb, int trans_b, size_t k0, size_t kc, size_t j0,
                   size_t nc, real *pack)
{
    for (size_t p = 0; p * NR < nc; p++) {
        const size_t cols = nc - p * NR < NR ? nc - p * NR : NR;
        real *panel = pack + p * kc * NR;
        for (size_t k = 0; k < kc; k++) {
            real *row = panel + k * NR;
            if (!trans_b) {
                memcpy(row, B + (k0 + k) * ldb + j0 + p * NR, cols * sizeof(real));
            } else {
                for (size_t j = 0; j < cols; j++)
                    row[j] = B[(j0 + p * NR + j) * ldb + k0 + k];
            }
            for (size_t j = cols; j < NR; j++)
                row[j] = REAL_C(0.0);
        }
    }
}

/* op(A)[i0 + i][k0 + k] for i < mc, k < kc, as micro-panels of MR rows:
 * panel p at pack + p*kc*MR, column k at k*MR. */
static void pack_a(const real *A, size_t lda, int trans_a, size_t i0, size_t mc, size_t k0,
                   size_t kc, real *pack)
{
    for (size_t p = 0; p * MR < mc; p++) {
        const size_t rows = mc - p * MR < MR ? mc - p * MR : MR;
        real *panel = pack + p * kc * MR;
        for (size_t k = 0; k < kc; k++) {
            real *col = panel + k * MR;
            for (size_t i = 0; i < rows; i++)
                col[i] = element(A, lda, trans_a, i0 + p * MR + i, k0 + k);
            for (size_t i = rows; i < MR; i++)
                col[i] = REAL_C(0.0);
        }
    }
}

/* C tile (rows <= MR, cols <= NR) = alpha * A_panel B_panel (+ C when add). */
static inline void micro_kernel(size_t kc, const real *a, const real *b, real alpha, int add,
                                real *C, size_t ldc, size_t rows, size_t cols)
{
    vec acc[MR][2];
    for (int r = 0; r < MR; r++)
        acc[r][0] = acc[r][1] = v_set1(REAL_C(0.0));
    for (size_t k = 0; k < kc; k++, a += MR, b += NR) {
        const vec b0 = v_load(b), b1 = v_load(b + VLEN);
        for (int r = 0; r < MR; r++) {
            const vec ar = v_set1(a[r]);
            acc[r][0] = v_fmadd(ar, b0, acc[r][0]);
            acc[r][1] = v_fmadd(ar, b1, acc[r][1]);
        }
    }
    const vec valpha = v_set1(alpha);
    for (size_t r = 0; r < rows; r++) {
        real *c = C + r * ldc;
        for (int v = 0; v < 2; v++) {
            const size_t at = (size_t)v * VLEN;
            if (cols >= at + VLEN) {
                vec x = v_mul(acc[r][v], valpha);
                v_store(c + at, add ? v_add(v_load(c + at), x) : x);
            } else if (cols > at) {
                const size_t n = cols - at;
                vec x = v_mul(acc[r][v], valpha);
                v_store_part(c + at, add ? v_add(v_load_part(c + at, n, REAL_C(0.0)), x) : x, n);
            }
        }
    }
}


/* Small products skip the packing: rows of C in groups of DIRECT_ROWS, each
 * a vector of columns at a time, op(A) broadcast from where it lies and op(B)
 * rows loaded in place (op(B) = B^T is first copied to the scratch as a
 * K x N row-major block). Rows past M read row 0 again and are not stored,
 * so every group runs the same unrolled code. */
#define DIRECT_ROWS 8

static inline void direct_group(size_t rows, size_t N, size_t K, real alpha, const real *A,
                                size_t a_rs, size_t a_cs, const real *B, size_t ldb, int add,
                                real *C, size_t ldc)
{
    const real *a[DIRECT_ROWS];
    for (size_t r = 0; r < DIRECT_ROWS; r++)
        a[r] = A + (r < rows ? r : 0) * a_rs;
    const vec valpha = v_set1(alpha);
    for (size_t j = 0; j < N; j += VLEN) {
        const size_t cols = N - j < VLEN ? N - j : VLEN;
        vec acc[DIRECT_ROWS];
        for (int r = 0; r < DIRECT_ROWS; r++)
            acc[r] = v_set1(REAL_C(0.0));
        for (size_t k = 0; k < K; k++) {
            const real *b = B + k * ldb + j;
            const vec bk = cols == VLEN ? v_load(b) : v_load_part(b, cols, REAL_C(0.0));
            for (int r = 0; r < DIRECT_ROWS; r++)
                acc[r] = v_fmadd(v_set1(a[r][k * a_cs]), bk, acc[r]);
        }
        for (size_t r = 0; r < rows; r++) {
            real *c = C + r * ldc + j;
            const vec x = v_mul(acc[r], valpha);
            if (cols == VLEN)
                v_store(c, add ? v_add(v_load(c), x) : x);
            else
                v_store_part(c, add ? v_add(v_load_part(c, cols, REAL_C(0.0)), x) : x, cols);
        }
    }
}

static void gemm_direct(int trans_a, int trans_b, size_t M, size_t N, size_t K, real alpha,
                        const real *A, size_t lda, const real *B, size_t ldb, real beta, real *C,
                        size_t ldc, real *pack)
{
    if (trans_b) {
        for (size_t k = 0; k < K; k++)
            for (size_t j = 0; j < N; j++)
                pack[k * N + j] = B[j * ldb + k];
        B = pack;
        ldb = N;
    }
    const size_t a_rs = trans_a ? 1 : lda, a_cs = trans_a ? lda : 1;
    for (size_t i = 0; i < M; i += DIRECT_ROWS) {
        const size_t rows = M - i < DIRECT_ROWS ? M - i : DIRECT_ROWS;
        direct_group(rows, N, K, alpha, A + i * a_rs, a_rs, a_cs, B, ldb, beta != REAL_C(0.0),
                     C + i * ldc, ldc);
    }
}

void GEMM_NAME(int trans_a, int trans_b, size_t M, size_t N, size_t K, real alpha, const real *A,
               size_t lda, const real *B, size_t ldb, real beta, real *C, size_t ldc, real *pack);
void GEMM_NAME(int trans_a, int trans_b, size_t M, size_t N, size_t K, real alpha, const real *A,
               size_t lda, const real *B, size_t ldb, real beta, real *C, size_t ldc, real *pack)
{
    real *pack_b_block = pack;
    real *pack_a_block = pack + attn_gemm_pack_b_elements(N, K);
    if (K == 0) { /* C = beta C: nothing to add */
        for (size_t i = 0; i < M && beta == REAL_C(0.0); i++)
            memset(C + i * ldc, 0, N * sizeof(real));
        return;
    }
    if (attn_gemm_is_direct(M, N, K)) {
        gemm_direct(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, pack);
        return;
    }
    for (size_t k0 = 0; k0 < K; k0 += ATTN_GEMM_KC) {
        const size_t kc = K - k0 < ATTN_GEMM_KC ? K - k0 : ATTN_GEMM_KC;
        const int add = k0 > 0 || beta != REAL_C(0.0);
        for (size_t j0 = 0; j0 < N; j0 += ATTN_GEMM_NC) {
            const size_t nc = N - j0 < ATTN_GEMM_NC ? N - j0 : ATTN_GEMM_NC;
            pack_b(B, ldb, trans_b, k0, kc, j0, nc, pack_b_block);
            for (size_t i0 = 0; i0 < M; i0 += ATTN_GEMM_MC) {
                const size_t mc = M - i0 < ATTN_GEMM_MC ? M - i0 : ATTN_GEMM_MC;
                pack_a(A, lda, trans_a, i0, mc, k0, kc, pack_a_block);
                for (size_t jr = 0; jr < nc; jr += NR) {
                    const real *b = pack_b_block + jr * kc;
                    const size_t cols = nc - jr < NR ? nc - jr : NR;
                    for (size_t ir = 0; ir < mc; ir += MR) {
                        const size_t rows = mc - ir < MR ? mc - ir : MR;
                        micro_kernel(kc, pack_a_block + ir * kc, b, alpha, add,
                                     C + (i0 + ir) * ldc + j0 + jr, ldc, rows, cols);
                    }
                }
            }
        }
    }
}

void GEMM_LOWER_NAME(size_t M, size_t N, const real *A, size_t lda, const real *B, size_t ldb,
                     real beta, real *C, size_t ldc, real *pack);
/*
 * C (M,N) = tril(A) (M,M) B (M,N) + beta C: row i of C only ever meets rows
 * k <= i of B (a NaN in a later row of B stays out of it, which a product
 * with zeros above the diagonal would not do). Rows go in groups of MR: the
 * part left of the group's diagonal block is one product, then each row of
 * the group adds its own keys of the block, k = g .. i, as vector updates.
 */
void GEMM_LOWER_NAME(size_t M, size_t N, const real *A, size_t lda, const real *B, size_t ldb,
                     real beta, real *C, size_t ldc, real *pack)
{
    for (size_t g = 0; g < M; g += MR) {
        const size_t rows = M - g < MR ? M - g : MR;
        GEMM_NAME(0, 0, rows, N, g, REAL_C(1.0), A + g * lda, lda, B, ldb, beta, C + g * ldc, ldc,
                  pack);
        for (size_t i = g; i < g + rows; i++) {
            real *c = C + i * ldc;
            const int fresh = g == 0 && beta == REAL_C(0.0);
            for (size_t k = g; k <= i; k++) {
                const vec a = v_set1(A[i * lda + k]);
                const real *b = B + k * ldb;
                const int first = fresh && k == g;
                size_t j = 0;
                for (; j + VLEN <= N; j += VLEN) {
                    vec x = v_mul(a, v_load(b + j));
                    v_store(c + j, first ? x : v_add(v_load(c + j), x));
                }
                if (j < N) {
                    vec x = v_mul(a, v_load_part(b + j, N - j, REAL_C(0.0)));
                    v_store_part(c + j, first ? x : v_add(v_load_part(c + j, N - j, REAL_C(0.0)), x),
                                 N - j);
                }
            }
        }
    }
}

#undef NR
#undef MR
#undef DIRECT_ROWS
