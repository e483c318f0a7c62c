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
 *                   block of columns at a time, several groups' ROWS_AXPY_KEYS
 *                   keys at a time (C loaded and stored once for them)
 * R <= ATTN_ROWS_MAX. Each result is summed in a fixed order (lanes, then
 * their sum; keys in increasing j), the same on every call.
 */
#include "kernels.h"

/* Rows of B this far ahead are prefetched: B's rows are often far apart
 * (one head's slice of a (Tk, NH_kv*hs) cache: 512 bytes every 4 KiB), which
 * the hardware prefetchers, working within a page, do not run ahead on.
 * For whole cache rows (a decode step's item of every key/value head) no
 * other choice measured better, within the noise of a shared machine:
 * 0 to 64 rows ahead, into L2 or non-temporal, a row's first lines only,
 * or the next tile's K (V) while V (K) of this one is read. */
#define ROWS_PREFETCH_DISTANCE 32

/* The first d elements of the rows ROWS_PREFETCH_DISTANCE after rows
 * j .. j + keys - 1 of B (ldb apart), those below row n. */
static inline void rows_prefetch_ahead(const real *B, size_t ldb, size_t j, size_t keys,
                                       size_t n, size_t d)
{
    for (size_t k = 0; k < keys && j + k + ROWS_PREFETCH_DISTANCE < n; k++) {
        const real *row = B + (j + k + ROWS_PREFETCH_DISTANCE) * ldb;
        for (size_t i = 0; i < d; i += 64 / sizeof(real))
            __builtin_prefetch(row + i);
    }
}

/* Rows j .. j + keys - 1 of B (ldb apart, keys <= ROWS_DOT_KEYS) against R
 * rows of A: S[r * lds + k] = <A_r, B_{j+k}>. Each vector of A is loaded
 * once for the keys (one load feeds `keys` multiply-adds); each sum runs
 * over its own accumulator, as for a single key. */
enum { ROWS_DOT_KEYS = 2 };
static inline __attribute__((always_inline)) void rows_dot_keys(size_t R, size_t keys, size_t d,
                                                                const real *A, size_t lda,
                                                                const real *Bj, size_t ldb,
                                                                real *S, size_t lds)
{
    vec acc[ATTN_ROWS_MAX][ROWS_DOT_KEYS];
    for (size_t r = 0; r < R; r++)
        for (size_t k = 0; k < keys; k++)
            acc[r][k] = v_set1(REAL_C(0.0));
    size_t i = 0;
    for (; i + VLEN <= d; i += VLEN) {
        vec b[ROWS_DOT_KEYS];
        for (size_t k = 0; k < keys; k++)
            b[k] = v_load(Bj + k * ldb + i);
        for (size_t r = 0; r < R; r++) {
            const vec q = v_load(A + r * lda + i);
            for (size_t k = 0; k < keys; k++)
                acc[r][k] = v_fmadd(q, b[k], acc[r][k]);
        }
    }
    if (i < d) {
        vec b[ROWS_DOT_KEYS];
        for (size_t k = 0; k < keys; k++)
            b[k] = v_load_part(Bj + k * ldb + i, d - i, REAL_C(0.0));
        for (size_t r = 0; r < R; r++) {
            const vec q = v_load_part(A + r * lda + i, d - i, REAL_C(0.0));
            for (size_t k = 0; k < keys; k++)
                acc[r][k] = v_fmadd(q, b[k], acc[r][k]);
        }
    }
    for (size_t r = 0; r < R; r++)
        for (size_t k = 0; k < keys; k++)
            S[r * lds + k] = v_hsum(acc[r][k]);
}

/* Rows j .. j + keys - 1 of B, every group, and the rows this far ahead
 * prefetched. */
static inline __attribute__((always_inline)) void rows_dot_step(size_t keys, size_t j, size_t n,
                                                                size_t G, size_t R, size_t d,
                                                                const real *A, size_t lda,
                                                                const real *B, size_t ldb,
                                                                real *S, size_t lds)
{
    rows_prefetch_ahead(B, ldb, j, keys, n, G * d);
    for (size_t g = 0; g < G; g++)
        rows_dot_keys(R, keys, d, A + g * R * lda, lda, B + j * ldb + g * d, ldb,
                      S + g * R * lds + j, lds);
}

/* The kernels' dispatch on their row count R <= ATTN_ROWS_MAX: CASE(rows)
 * gives the code of each count (a constant in it), which returns. */
#ifndef ROWS_SWITCH
#define ROWS_SWITCH(R, CASE)                                                           \
    switch (R) {                                                                       \
        CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)                \
    default:                                                                           \
        return;                                                                        \
    }
_Static_assert(ATTN_ROWS_MAX == 8, "ROWS_SWITCH has a case for every row count");
/* Keys [0, n) through STEP(keys, j, n, ...): KEYS at a time, then one by one. */
#define ROWS_KEY_STEPS(STEP, KEYS, n, ...)                                             \
    do {                                                                               \
        size_t j_ = 0;                                                                 \
        for (; j_ + (KEYS) <= (n); j_ += (KEYS))                                       \
            STEP(KEYS, j_, n, __VA_ARGS__);                                            \
        for (; j_ < (n); j_++)                                                         \
            STEP(1, j_, n, __VA_ARGS__);                                               \
    } while (0)
#endif

void ROWS_DOT_NAME(size_t G, size_t R, size_t n, size_t d, const real *A, size_t lda,
                   const real *B, size_t ldb, real *S, size_t lds);
void ROWS_DOT_NAME(size_t G, size_t R, size_t n, size_t d, const real *A, size_t lda,
                   const real *B, size_t ldb, real *S, size_t lds)
{
#define ROWS_DOT_CASE(rows)                                                             \
    case rows:                                                                          \
        ROWS_KEY_STEPS(rows_dot_step, ROWS_DOT_KEYS, n, G, rows, d, A, lda, B, ldb, S, lds); \
        return;
    ROWS_SWITCH(R, ROWS_DOT_CASE)
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
        rows_prefetch_ahead(B, ldb, j, 1, n, width);
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

/* Keys j .. j + keys - 1 (B's rows ldb apart, keys <= ROWS_AXPY_KEYS) of
 * every group: C rows (g*R + r) += sum_k P[g*R + r][j + k] B_{j+k}[g*m, g*m + m).
 * A vector of a group's R rows of C is loaded and stored once for the keys,
 * each key's row of B loaded once for the R rows; every element still adds
 * the keys one at a time, in increasing j. */
enum { ROWS_AXPY_KEYS = 4 };
static inline __attribute__((always_inline)) void rows_axpy_keys(size_t G, size_t R, size_t keys,
                                                                 size_t m, const real *P,
                                                                 size_t ldp, const real *Bj,
                                                                 size_t ldb, real *C, size_t ldc)
{
    for (size_t g = 0; g < G; g++) {
        vec p[ATTN_ROWS_MAX][ROWS_AXPY_KEYS];
        for (size_t r = 0; r < R; r++)
            for (size_t k = 0; k < keys; k++)
                p[r][k] = v_set1(P[(g * R + r) * ldp + k]);
        const real *b = Bj + g * m;
        real *c = C + g * R * ldc;
        for (size_t i = 0; i < m; i += VLEN) {
            const size_t lanes = m - i < VLEN ? m - i : VLEN;
            vec acc[ATTN_ROWS_MAX];
            for (size_t r = 0; r < R; r++)
                acc[r] = lanes == VLEN ? v_load(c + r * ldc + i)
                                       : v_load_part(c + r * ldc + i, lanes, REAL_C(0.0));
            for (size_t k = 0; k < keys; k++) {
                const vec bk = lanes == VLEN ? v_load(b + k * ldb + i)
                                             : v_load_part(b + k * ldb + i, lanes, REAL_C(0.0));
                for (size_t r = 0; r < R; r++)
                    acc[r] = v_fmadd(p[r][k], bk, acc[r]);
            }
            for (size_t r = 0; r < R; r++) {
                if (lanes == VLEN)
                    v_store(c + r * ldc + i, acc[r]);
                else
                    v_store_part(c + r * ldc + i, acc[r], lanes);
            }
        }
    }
}

/* Keys j .. j + keys - 1 of every group, and the rows this far ahead
 * prefetched. */
static inline __attribute__((always_inline)) void rows_axpy_step(size_t keys, size_t j, size_t n,
                                                                 size_t G, size_t R, size_t m,
                                                                 const real *P, size_t ldp,
                                                                 const real *B, size_t ldb,
                                                                 real *C, size_t ldc)
{
    rows_prefetch_ahead(B, ldb, j, keys, n, G * m);
    rows_axpy_keys(G, R, keys, m, P + j, ldp, B + j * ldb, ldb, C, ldc);
}

void ROWS_AXPY_NAME(size_t G, size_t R, size_t n, size_t m, const real *P, size_t ldp,
                    const real *B, size_t ldb, real *C, size_t ldc);
void ROWS_AXPY_NAME(size_t G, size_t R, size_t n, size_t m, const real *P, size_t ldp,
                    const real *B, size_t ldb, real *C, size_t ldc)
{
    if (G > 1) { /* a few keys at a time, each row of B read whole: C's rows stay in L1 */
#define ROWS_AXPY_KEYS_CASE(rows)                                                         \
    case rows:                                                                            \
        ROWS_KEY_STEPS(rows_axpy_step, ROWS_AXPY_KEYS, n, G, rows, m, P, ldp, B, ldb, C, ldc); \
        return;
        ROWS_SWITCH(R, ROWS_AXPY_KEYS_CASE)
#undef ROWS_AXPY_KEYS_CASE
    }
#define ROWS_AXPY_CASE(rows)                                                          \
    case rows:                                                                        \
        for (size_t c = 0; c < m; c += ROWS_COLUMNS)                                  \
            rows_axpy_columns(rows, n, m - c < ROWS_COLUMNS ? m - c : ROWS_COLUMNS, P, \
                              ldp, B + c, ldb, C + c, ldc);                           \
        return;
    ROWS_SWITCH(R, ROWS_AXPY_CASE)
#undef ROWS_AXPY_CASE
}
