/*
 * Products of a few rows against many (the decode step of sdpa_forward.c),
 * written in one vector vocabulary (simd/<isa>.h, VLEN lanes of `real`);
 * the including kernels_<isa>.c defines the names:
 *   ROWS_DOT_NAME   S (G*R, n) = A_g (R, d) B_g^T for G groups: group g's rows
 *                   of A and S from row g*R, its B (n, d) the columns
 *                   [g*d, g*d + d) of B's rows (the key/value heads of one
 *                   cache row side by side); row j of B read once, whole,
 *                   against every row (no transposed copy, unlike a GEMM's
 *                   packing of op(B) = B^T)
 *   ROWS_AXPY_NAME  C (G*R, m) += P_g (R, n) B_g (n, m), groups likewise: B
 *                   read once; one group's R rows of C held in registers a
 *                   block of columns at a time, several groups' key by key
 * R <= ATTN_ROWS_MAX. Each result is summed in a fixed order (lanes, then
 * their sum; keys in increasing j), the same on every call.
 */
#include "kernels.h"

/* Rows of B this far ahead are prefetched: B's rows are often far apart
 * (one head's slice of a (Tk, NH_kv*hs) cache: 512 bytes every 4 KiB), which
 * the hardware prefetchers, working within a page, do not run ahead on. */
#define ROWS_PREFETCH_DISTANCE 32

static inline void rows_prefetch(const real *row, size_t d)
{
    for (size_t i = 0; i < d; i += 64 / sizeof(real))
        __builtin_prefetch(row + i);
}

/* One row j of B against R rows of A: S[r * lds] = <A_r, B_j>. */
static inline __attribute__((always_inline)) void rows_dot_key(size_t R, size_t d,
                                                               const real *A, size_t lda,
                                                               const real *Bj, real *S,
                                                               size_t lds)
{
    vec acc[ATTN_ROWS_MAX];
    for (size_t r = 0; r < R; r++)
        acc[r] = v_set1(REAL_C(0.0));
    size_t i = 0;
    for (; i + VLEN <= d; i += VLEN) {
        const vec b = v_load(Bj + i);
        for (size_t r = 0; r < R; r++)
            acc[r] = v_fmadd(v_load(A + r * lda + i), b, acc[r]);
    }
    if (i < d) {
        const vec b = v_load_part(Bj + i, d - i, REAL_C(0.0));
        for (size_t r = 0; r < R; r++)
            acc[r] = v_fmadd(v_load_part(A + r * lda + i, d - i, REAL_C(0.0)), b, acc[r]);
    }
    for (size_t r = 0; r < R; r++)
        S[r * lds] = v_hsum(acc[r]);
}

void ROWS_DOT_NAME(size_t G, size_t R, size_t n, size_t d, const real *A, size_t lda,
                   const real *B, size_t ldb, real *S, size_t lds);
void ROWS_DOT_NAME(size_t G, size_t R, size_t n, size_t d, const real *A, size_t lda,
                   const real *B, size_t ldb, real *S, size_t lds)
{
#define ROWS_DOT_CASE(rows)                                                             \
    case rows:                                                                          \
        for (size_t j = 0; j < n; j++) {                                                \
            if (j + ROWS_PREFETCH_DISTANCE < n)                                         \
                rows_prefetch(B + (j + ROWS_PREFETCH_DISTANCE) * ldb, G * d);           \
            for (size_t g = 0; g < G; g++)                                              \
                rows_dot_key(rows, d, A + g * rows * lda, lda, B + j * ldb + g * d,     \
                             S + g * rows * lds + j, lds);                              \
        }                                                                               \
        return;
    switch (R) {
        ROWS_DOT_CASE(1)
        ROWS_DOT_CASE(2)
        ROWS_DOT_CASE(3)
        ROWS_DOT_CASE(4)
        ROWS_DOT_CASE(5)
        ROWS_DOT_CASE(6)
        ROWS_DOT_CASE(7)
        ROWS_DOT_CASE(8)
    default:
        return;
    }
#undef ROWS_DOT_CASE
}

/* Columns [c, c + width) of C (R rows) += P B, width <= ROWS_COLUMNS lanes. */
enum { ROWS_VECTORS = 2, ROWS_COLUMNS = ROWS_VECTORS * VLEN };
static inline __attribute__((always_inline)) void rows_axpy_columns(
    size_t R, size_t n, size_t width, const real *P, size_t ldp, const real *B, size_t ldb,
    real *C, size_t ldc)
{
    vec acc[ATTN_ROWS_MAX][ROWS_VECTORS];
    size_t lanes[ROWS_VECTORS];
    for (size_t v = 0; v < ROWS_VECTORS; v++)
        lanes[v] = width <= v * VLEN ? 0 : width - v * VLEN < VLEN ? width - v * VLEN : VLEN;
    for (size_t r = 0; r < R; r++)
        for (size_t v = 0; v < ROWS_VECTORS; v++)
            acc[r][v] = v_load_part(C + r * ldc + v * VLEN, lanes[v], REAL_C(0.0));
    for (size_t j = 0; j < n; j++) {
        if (j + ROWS_PREFETCH_DISTANCE < n)
            rows_prefetch(B + (j + ROWS_PREFETCH_DISTANCE) * ldb, width);
        vec b[ROWS_VECTORS];
        for (size_t v = 0; v < ROWS_VECTORS; v++)
            b[v] = lanes[v] == VLEN ? v_load(B + j * ldb + v * VLEN)
                                    : v_load_part(B + j * ldb + v * VLEN, lanes[v], REAL_C(0.0));
        for (size_t r = 0; r < R; r++) {
            const vec p = v_set1(P[r * ldp + j]);
            for (size_t v = 0; v < ROWS_VECTORS; v++)
                acc[r][v] = v_fmadd(p, b[v], acc[r][v]);
        }
    }
    for (size_t r = 0; r < R; r++)
        for (size_t v = 0; v < ROWS_VECTORS; v++)
            v_store_part(C + r * ldc + v * VLEN, acc[r][v], lanes[v]);
}

/* Key j of every group: C rows (g*R + r) += P[g*R + r][j] B_j[g*m, g*m + m). */
static inline __attribute__((always_inline)) void rows_axpy_key(size_t G, size_t R, size_t m,
                                                                const real *P, size_t ldp,
                                                                const real *Bj, real *C,
                                                                size_t ldc)
{
    for (size_t g = 0; g < G; g++)
        for (size_t r = 0; r < R; r++) {
            const vec p = v_set1(P[(g * R + r) * ldp]);
            const real *b = Bj + g * m;
            real *c = C + (g * R + r) * ldc;
            size_t i = 0;
            for (; i + VLEN <= m; i += VLEN)
                v_store(c + i, v_fmadd(p, v_load(b + i), v_load(c + i)));
            if (i < m)
                v_store_part(c + i,
                             v_fmadd(p, v_load_part(b + i, m - i, REAL_C(0.0)),
                                     v_load_part(c + i, m - i, REAL_C(0.0))),
                             m - i);
        }
}

void ROWS_AXPY_NAME(size_t G, size_t R, size_t n, size_t m, const real *P, size_t ldp,
                    const real *B, size_t ldb, real *C, size_t ldc);
void ROWS_AXPY_NAME(size_t G, size_t R, size_t n, size_t m, const real *P, size_t ldp,
                    const real *B, size_t ldb, real *C, size_t ldc)
{
    if (G > 1) { /* key by key, each row of B read whole: C's rows stay in L1 */
        for (size_t j = 0; j < n; j++) {
            if (j + ROWS_PREFETCH_DISTANCE < n)
                rows_prefetch(B + (j + ROWS_PREFETCH_DISTANCE) * ldb, G * m);
            rows_axpy_key(G, R, m, P + j, ldp, B + j * ldb, C, ldc);
        }
        return;
    }
#define ROWS_AXPY_CASE(rows)                                                          \
    case rows:                                                                        \
        for (size_t c = 0; c < m; c += ROWS_COLUMNS)                                  \
            rows_axpy_columns(rows, n, m - c < ROWS_COLUMNS ? m - c : ROWS_COLUMNS, P, \
                              ldp, B + c, ldb, C + c, ldc);                           \
        return;
    switch (R) {
        ROWS_AXPY_CASE(1)
        ROWS_AXPY_CASE(2)
        ROWS_AXPY_CASE(3)
        ROWS_AXPY_CASE(4)
        ROWS_AXPY_CASE(5)
        ROWS_AXPY_CASE(6)
        ROWS_AXPY_CASE(7)
        ROWS_AXPY_CASE(8)
    default:
        return;
    }
#undef ROWS_AXPY_CASE
}
