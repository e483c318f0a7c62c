/*
 * The unpacked path of attn's own matrix product (gemm_kernel.inc.c, which
 * includes this file after its micro-kernel: the vocabulary, real, vec and
 * VLEN are its). Shapes as there: C (M,N) = alpha op(A) (M,K) op(B) (K,N)
 * + beta C, row-major, beta 0 or 1; products for which attn_gemm_is_direct
 * holds (kernels.h).
 */
/* Small products skip the packing: rows of C in groups of DIRECT_ROWS, each
 * a vector of columns at a time, op(A) broadcast from where it lies and op(B)
 * rows loaded in place (op(B) = B^T is first copied to the scratch as a
 * K x N row-major block). Even and odd k go to two accumulators per row, so
 * that 2 * DIRECT_ROWS dependency chains overlap; they are added at the end.
 * Each group size (the last group of M rows may be smaller) has its own
 * unrolled copy. */
#define DIRECT_ROWS ATTN_GEMM_DIRECT_ROWS
_Static_assert(DIRECT_ROWS == 4 || DIRECT_ROWS == 8, "direct_group has cases for 4 or 8 rows");

/* One vector of columns j .. j+cols of a group's `rows` rows; `rows` and
 * `full` (cols == VLEN) are constants in each inlined copy, so the k loop
 * has no branch and the accumulators stay in registers. */
static inline __attribute__((always_inline)) void direct_columns(
    const int rows, int full, size_t cols, size_t K, vec valpha, const real *const *a,
    size_t a_cs, const real *B, size_t ldb, int add, real *C, size_t ldc)
{
    vec even[DIRECT_ROWS], odd[DIRECT_ROWS];
    for (int r = 0; r < rows; r++)
        even[r] = odd[r] = v_set1(REAL_C(0.0));
    size_t k = 0;
    for (; k + 2 <= K; k += 2) {
        const real *b = B + k * ldb;
        const vec b0 = full ? v_load(b) : v_load_part(b, cols, REAL_C(0.0));
        const vec b1 = full ? v_load(b + ldb) : v_load_part(b + ldb, cols, REAL_C(0.0));
        for (int r = 0; r < rows; r++) {
            even[r] = v_fmadd(v_set1(a[r][k * a_cs]), b0, even[r]);
            odd[r] = v_fmadd(v_set1(a[r][(k + 1) * a_cs]), b1, odd[r]);
        }
    }
    if (k < K) {
        const real *b = B + k * ldb;
        const vec b0 = full ? v_load(b) : v_load_part(b, cols, REAL_C(0.0));
        for (int r = 0; r < rows; r++)
            even[r] = v_fmadd(v_set1(a[r][k * a_cs]), b0, even[r]);
    }
    for (int r = 0; r < rows; r++) {
        real *c = C + r * ldc;
        const vec x = v_mul(v_add(even[r], odd[r]), valpha);
        if (full)
            v_store(c, add ? v_add(v_load(c), x) : x);
        else
            v_store_part(c, add ? v_add(v_load_part(c, cols, REAL_C(0.0)), x) : x, cols);
    }
}

static inline __attribute__((always_inline)) void direct_rows(
    const int rows, size_t N, size_t K, real alpha, const real *A, size_t a_rs, size_t a_cs,
    const real *B, size_t ldb, int add, real *C, size_t ldc)
{
    const real *a[DIRECT_ROWS];
    for (int r = 0; r < rows; r++)
        a[r] = A + (size_t)r * a_rs;
    const vec valpha = v_set1(alpha);
    size_t j = 0;
    for (; j + VLEN <= N; j += VLEN)
        direct_columns(rows, 1, VLEN, K, valpha, a, a_cs, B + j, ldb, add, C + j, ldc);
    if (j < N)
        direct_columns(rows, 0, N - j, K, valpha, a, a_cs, B + j, ldb, add, C + j, ldc);
}

/* A group of 1 .. DIRECT_ROWS rows, each count its own copy of the code. */
static void direct_group(size_t rows, size_t N, size_t K, real alpha, const real *A, size_t a_rs,
                         size_t a_cs, const real *B, size_t ldb, int add, real *C, size_t ldc)
{
    switch (rows) {
#define DIRECT_CASE(n)                                                                 \
    case n:                                                                            \
        direct_rows(n, N, K, alpha, A, a_rs, a_cs, B, ldb, add, C, ldc);               \
        break;
        DIRECT_CASE(1)
        DIRECT_CASE(2)
        DIRECT_CASE(3)
        DIRECT_CASE(4)
#if DIRECT_ROWS > 4
        DIRECT_CASE(5)
        DIRECT_CASE(6)
        DIRECT_CASE(7)
        DIRECT_CASE(8)
#endif
#undef DIRECT_CASE
    default:
        break;
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

#undef DIRECT_ROWS
