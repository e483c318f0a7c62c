/*
 * Products of a few rows against many (the decode step of sdpa_forward.c),
 * written in one vector vocabulary (simd/<isa>.h, VLEN lanes of `real`);
 * the including kernels_<isa>.c defines the names:
 *   ROWS_DOT_NAME   S (G*R, n) = A_g (R, d) B_g^T for G groups: group g's rows
 *                   of A and S from row g*R, its B_g (n, d) at B + g*ldg
 *                   (the key/value heads of one cache row side by side,
 *                   ldg = d, or of a (NH_kv, Tk, d) cache, ldg = its head
 *                   stride); row j of B_g read once, whole,
 *                   against every row (no transposed copy, unlike a GEMM's
 *                   packing of op(B) = B^T)
 *   ROWS_AXPY_NAME  C (G*R, m) += P_g (R, n) B_g (n, m), groups likewise: B
 *                   read once; one group's R rows of C held in registers a
 *                   block of columns at a time, several groups' ROWS_AXPY_KEYS
 *                   keys at a time (C loaded and stored once for them)
 * Groups whose rows of B lie apart (a (NH_kv, Tk, d) cache) are read one
 * at a time, their keys in four parts side by side (rows_apart below).
 * R <= ATTN_ROWS_MAX. Each result is summed in a fixed order (lanes, then
 * their sum; keys in increasing j, but for groups apart the axpy's split
 * order below), the same on every call with the same strides.
 * B's element type is ROWS_B, loaded as vectors of `real` by ROWS_LOAD_B(p)
 * and ROWS_LOAD_B_PART(p, n) (the rest 0): by default `real` itself;
 * rows_half.inc.c sets them to widen bfloat16 or float16 keys and values.
 */
#include "kernels/kernels.h"

#ifndef ROWS_B
#define ROWS_B real
#define ROWS_LOAD_B(p) v_load(p)
#define ROWS_LOAD_B_PART(p, n) v_load_part(p, n, REAL_C(0.0))
#endif

/* Rows of B are prefetched ahead of their use: B's rows are often far
 * apart (one head's slice of a (Tk, NH_kv*hs) cache: 512 bytes every 4 KiB;
 * a decode step's whole cache row: one 4 KiB page per key), and the
 * hardware prefetchers, which work within a page, do not run ahead of them.
 *
 * The dot and the grouped axpy prefetch each cache line of the row
 * ROWS_AHEAD keys ahead next to their load of the same line of this row:
 * one prefetch per line loaded, spread over the row's arithmetic. Issued
 * a whole row at a time instead (64 prefetches for a 4 KiB row, 32 rows
 * ahead), they took the decode step at Tk = 8192, 32 heads on 8, hs = 128
 * from 2.9-3.4 ms to 1.6-2.1 ms (min of 60 cold calls; 2-vCPU AMD EPYC,
 * Zen 5): the burst held the line-fill buffers full and the loads of this
 * row waited behind it. 4 and 8 keys ahead measured the same; 2 and 16
 * slower. The one-row axpy (rows_axpy_columns) reads two lines of a row
 * and prefetches them ROWS_COLUMNS_AHEAD rows ahead. */
enum { ROWS_AHEAD = 4, ROWS_COLUMNS_AHEAD = 32 };

/* Whether G > 1 groups' B_g lie apart (ldg >= ldb: each group's rows are
 * its own run of memory, the heads of a (NH_kv, Tk, d) cache) rather than
 * side by side in each row (a (Tk, NH_kv, d) cache, whose whole rows the
 * kernels read in order, every group's slice of a row at once).
 *
 * Groups apart are read one at a time, and each group's n keys, when n >=
 * ROWS_SPLIT_MIN, as ROWS_PARTS parts of q = n / ROWS_PARTS keys read side
 * by side: a step takes keys u, u + q, u + 2q, u + 3q (then u + 1 ...), the
 * n - 4q keys left after the parts last. One group at a time in key order
 * is a single stream of memory, which AMD's Zen 3 reads at two thirds of
 * the rate of the other layout's (whose consecutive rows are a whole row of
 * every head apart); two groups at a time did not close it, four streams a
 * quarter of a tile apart do. A decode step (2 threads, 2-vCPU AMD EPYC Zen
 * 3, attn-bench sdpa, (NH_kv, Tk, d) time over (Tk, NH_kv, d) time, warm,
 * medians of eight alternating runs, bench/results/amd-epyc-zen3/sdpa-client/
 * decode-layouts/): NH 32 on 32, Tk 2048, d 128: 1.37 two groups at a time
 * in key order, 0.99 split; 32 on 8, Tk 8192: 1.02 and 0.88; at d 64 (16 on
 * 4, 12 on 12) 0.94-1.02 both ways. The dot's sums do not depend on the
 * order its keys are read in. The axpy's do: the split order adds the keys
 * of each row of C in another order than the side-by-side layout's
 * increasing j, so the outputs of a decode step on a (NH_kv, Tk, d) cache
 * may differ from those on a (Tk, NH_kv, d) cache by rounding (attn.h);
 * each is the same on every call.
 * (Keeping the increasing order for both, as per-part accumulators summed
 * at the end, cost their extra loads and stores of C: 1.05-1.51.) */
enum { ROWS_PARTS = 4, ROWS_SPLIT_MIN = 64 };
static inline int rows_apart(size_t G, size_t ldb, size_t ldg)
{
    return G > 1 && ldg >= ldb;
}

/* How many of rows j .. j + keys - 1 have a row ROWS_AHEAD after them below
 * row n. */
static inline size_t rows_with_ahead(size_t j, size_t keys, size_t n)
{
    if (j + ROWS_AHEAD >= n)
        return 0;
    return n - j - ROWS_AHEAD < keys ? n - j - ROWS_AHEAD : keys;
}

/* Prefetches the line at offset i of the rows ROWS_AHEAD after the first
 * `ahead` keys of a step (key k's row at Bj + k * bstep; rows ldb apart),
 * once per cache line of i. */
static inline __attribute__((always_inline)) void rows_prefetch_line(const ROWS_B *Bj, size_t ldb,
                                                                     size_t bstep, size_t ahead,
                                                                     size_t i)
{
    if (i % (64 / sizeof(ROWS_B)) != 0)
        return;
    for (size_t k = 0; k < ahead; k++)
        __builtin_prefetch(Bj + k * bstep + ROWS_AHEAD * ldb + i);
}

/* `keys` <= ROWS_DOT_KEYS rows of B, key k's at Bj + k * bstep (rows ldb
 * apart; bstep = ldb: consecutive keys), against R rows of A:
 * S[r * lds + k * sstep] = <A_r, B_k>. Each vector of A is loaded once for
 * the keys (one load feeds `keys` multiply-adds); each sum runs over its
 * own accumulator, as for a single key. The first `ahead` keys' rows
 * ROWS_AHEAD rows on are prefetched line by line. */
enum { ROWS_DOT_KEYS = 2 };
static inline __attribute__((always_inline)) void rows_dot_keys(
    size_t R, size_t keys, size_t d, const real *A, size_t lda, const ROWS_B *Bj, size_t ldb,
    size_t bstep, real *S, size_t lds, size_t sstep, size_t ahead)
{
    vec acc[ATTN_ROWS_MAX][ROWS_DOT_KEYS];
    for (size_t r = 0; r < R; r++)
        for (size_t k = 0; k < keys; k++)
            acc[r][k] = v_set1(REAL_C(0.0));
    size_t i = 0;
    for (; i + VLEN <= d; i += VLEN) {
        vec b[ROWS_DOT_KEYS];
        for (size_t k = 0; k < keys; k++)
            b[k] = ROWS_LOAD_B(Bj + k * bstep + i);
        rows_prefetch_line(Bj, ldb, bstep, ahead, i);
        for (size_t r = 0; r < R; r++) {
            const vec q = v_load(A + r * lda + i);
            for (size_t k = 0; k < keys; k++)
                acc[r][k] = v_fmadd(q, b[k], acc[r][k]);
        }
    }
    if (i < d) {
        vec b[ROWS_DOT_KEYS];
        for (size_t k = 0; k < keys; k++)
            b[k] = ROWS_LOAD_B_PART(Bj + k * bstep + i, d - i);
        for (size_t r = 0; r < R; r++) {
            const vec q = v_load_part(A + r * lda + i, d - i, REAL_C(0.0));
            for (size_t k = 0; k < keys; k++)
                acc[r][k] = v_fmadd(q, b[k], acc[r][k]);
        }
    }
    for (size_t r = 0; r < R; r++)
        for (size_t k = 0; k < keys; k++)
            S[r * lds + k * sstep] = v_hsum(acc[r][k]);
}

/* Rows j .. j + keys - 1 of B, every group. */
static inline __attribute__((always_inline)) void rows_dot_step(size_t keys, size_t j, size_t n,
                                                                size_t G, size_t R, size_t d,
                                                                const real *A, size_t lda,
                                                                const ROWS_B *B, size_t ldb,
                                                                size_t ldg, real *S, size_t lds)
{
    const size_t ahead = rows_with_ahead(j, keys, n);
    for (size_t g = 0; g < G; g++)
        rows_dot_keys(R, keys, d, A + g * R * lda, lda, B + j * ldb + g * ldg, ldb, ldb,
                      S + g * R * lds + j, lds, 1, ahead);
}

/* The parts' length q of a group apart with n keys: 0 (no split) below
 * ROWS_SPLIT_MIN keys. */
static inline size_t rows_part_keys(size_t n)
{
    return n >= ROWS_SPLIT_MIN ? n / ROWS_PARTS : 0;
}

/* One group apart (G = 1), its keys split (rows_apart): step u takes keys
 * u, u + q, u + 2q, u + 3q, ROWS_DOT_KEYS at a time; then the keys left
 * (all of them, in order, without a split). */
static inline __attribute__((always_inline)) void rows_dot_split(size_t R, size_t n, size_t d,
                                                                 const real *A, size_t lda,
                                                                 const ROWS_B *B, size_t ldb,
                                                                 real *S, size_t lds)
{
    const size_t q = rows_part_keys(n);
    for (size_t u = 0; u < q; u++) {
        const size_t ahead = u + ROWS_AHEAD < q ? ROWS_DOT_KEYS : 0;
        for (size_t k = 0; k < ROWS_PARTS; k += ROWS_DOT_KEYS)
            rows_dot_keys(R, ROWS_DOT_KEYS, d, A, lda, B + (u + k * q) * ldb, ldb, q * ldb,
                          S + u + k * q, lds, q, ahead);
    }
    for (size_t j = ROWS_PARTS * q; j < n; j++)
        rows_dot_keys(R, 1, d, A, lda, B + j * ldb, ldb, ldb, S + j, lds, 1, 0);
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
_Static_assert((int)ROWS_PARTS % (int)ROWS_DOT_KEYS == 0, "a dot step takes whole pairs of parts");
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
                   const ROWS_B *B, size_t ldb, size_t ldg, real *S, size_t lds);
void ROWS_DOT_NAME(size_t G, size_t R, size_t n, size_t d, const real *A, size_t lda,
                   const ROWS_B *B, size_t ldb, size_t ldg, real *S, size_t lds)
{
    const int apart = rows_apart(G, ldb, ldg);
#define ROWS_DOT_CASE(rows)                                                             \
    case rows:                                                                          \
        for (size_t g = 0; apart && g < G; g++)                                         \
            rows_dot_split(rows, n, d, A + g * rows * lda, lda, B + g * ldg, ldb,       \
                           S + g * rows * lds, lds);                                    \
        if (!apart)                                                                     \
            ROWS_KEY_STEPS(rows_dot_step, ROWS_DOT_KEYS, n, G, rows, d, A, lda, B, ldb, \
                           ldg, S, lds);                                                \
        return;
    ROWS_SWITCH(R, ROWS_DOT_CASE)
#undef ROWS_DOT_CASE
}

/* Columns [c, c + width) of C (R rows) += P B, width <= ROWS_COLUMNS lanes. */
enum { ROWS_VECTORS = 2, ROWS_COLUMNS = ROWS_VECTORS * VLEN };
static inline __attribute__((always_inline)) void rows_axpy_columns(
    size_t R, size_t n, size_t width, const real *P, size_t ldp, const ROWS_B *B, size_t ldb,
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
        for (size_t i = 0; j + ROWS_COLUMNS_AHEAD < n && i < width; i += 64 / sizeof(ROWS_B))
            __builtin_prefetch(B + (j + ROWS_COLUMNS_AHEAD) * ldb + i);
        vec b[ROWS_VECTORS];
        for (size_t v = 0; v < ROWS_VECTORS; v++)
            b[v] = lanes[v] == VLEN ? ROWS_LOAD_B(B + j * ldb + v * VLEN)
                                    : ROWS_LOAD_B_PART(B + j * ldb + v * VLEN, lanes[v]);
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

/* `keys` <= ROWS_AXPY_KEYS keys of every group, key k's row of B_g at
 * Bj + g * ldg + k * bstep and its weights at P + k * pstep (rows ldb
 * apart; bstep = ldb and pstep = 1: consecutive keys): C rows (g*R + r) +=
 * sum_k P[g*R + r][k * pstep] B_g row k. A vector of a group's R rows of C
 * is loaded and stored once for the keys, each key's row of B loaded once
 * for the R rows; every element still adds the keys one at a time, in the
 * order k. The first `ahead` keys' rows ROWS_AHEAD rows on are prefetched
 * line by line. */
enum { ROWS_AXPY_KEYS = 4 };
_Static_assert((int)ROWS_PARTS <= (int)ROWS_AXPY_KEYS, "an axpy step takes a key of every part");
static inline __attribute__((always_inline)) void rows_axpy_keys(
    size_t G, size_t R, size_t keys, size_t m, const real *P, size_t ldp, size_t pstep,
    const ROWS_B *Bj, size_t ldb, size_t bstep, size_t ldg, real *C, size_t ldc, size_t ahead)
{
    for (size_t g = 0; g < G; g++) {
        vec p[ATTN_ROWS_MAX][ROWS_AXPY_KEYS];
        for (size_t r = 0; r < R; r++)
            for (size_t k = 0; k < keys; k++)
                p[r][k] = v_set1(P[(g * R + r) * ldp + k * pstep]);
        const ROWS_B *b = Bj + g * ldg;
        real *c = C + g * R * ldc;
        for (size_t i = 0; i < m; i += VLEN) {
            const size_t lanes = m - i < VLEN ? m - i : VLEN;
            vec acc[ATTN_ROWS_MAX];
            for (size_t r = 0; r < R; r++)
                acc[r] = lanes == VLEN ? v_load(c + r * ldc + i)
                                       : v_load_part(c + r * ldc + i, lanes, REAL_C(0.0));
            rows_prefetch_line(b, ldb, bstep, ahead, i);
            for (size_t k = 0; k < keys; k++) {
                const vec bk = lanes == VLEN ? ROWS_LOAD_B(b + k * bstep + i)
                                             : ROWS_LOAD_B_PART(b + k * bstep + i, lanes);
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

/* Keys j .. j + keys - 1 of every group. */
static inline __attribute__((always_inline)) void rows_axpy_step(size_t keys, size_t j, size_t n,
                                                                 size_t G, size_t R, size_t m,
                                                                 const real *P, size_t ldp,
                                                                 const ROWS_B *B, size_t ldb,
                                                                 size_t ldg, real *C, size_t ldc)
{
    const size_t ahead = rows_with_ahead(j, keys, n);
    rows_axpy_keys(G, R, keys, m, P + j, ldp, 1, B + j * ldb, ldb, ldb, ldg, C, ldc, ahead);
}

/* One group apart (G = 1), its keys split (rows_apart): step u adds keys
 * u, u + q, u + 2q, u + 3q to C in that order; then the keys left (all of
 * them, in order, without a split). */
static inline __attribute__((always_inline)) void rows_axpy_split(size_t R, size_t n, size_t m,
                                                                  const real *P, size_t ldp,
                                                                  const ROWS_B *B, size_t ldb,
                                                                  real *C, size_t ldc)
{
    const size_t q = rows_part_keys(n);
    for (size_t u = 0; u < q; u++)
        rows_axpy_keys(1, R, ROWS_PARTS, m, P + u, ldp, q, B + u * ldb, ldb, q * ldb, 0, C, ldc,
                       u + ROWS_AHEAD < q ? ROWS_PARTS : 0);
    for (size_t j = ROWS_PARTS * q; j < n; j++)
        rows_axpy_keys(1, R, 1, m, P + j, ldp, 1, B + j * ldb, ldb, ldb, 0, C, ldc, 0);
}

void ROWS_AXPY_NAME(size_t G, size_t R, size_t n, size_t m, const real *P, size_t ldp,
                    const ROWS_B *B, size_t ldb, size_t ldg, real *C, size_t ldc);
void ROWS_AXPY_NAME(size_t G, size_t R, size_t n, size_t m, const real *P, size_t ldp,
                    const ROWS_B *B, size_t ldb, size_t ldg, real *C, size_t ldc)
{
    const int apart = rows_apart(G, ldb, ldg);
    /* G > 1 groups side by side: a few keys at a time, each row of B read
     * whole, C's rows staying in L1; one group: column strips over all keys */
#define ROWS_AXPY_CASE(rows)                                                          \
    case rows:                                                                        \
        for (size_t g = 0; apart && g < G; g++)                                       \
            rows_axpy_split(rows, n, m, P + g * rows * ldp, ldp, B + g * ldg, ldb,    \
                            C + g * rows * ldc, ldc);                                 \
        if (!apart && G > 1)                                                          \
            ROWS_KEY_STEPS(rows_axpy_step, ROWS_AXPY_KEYS, n, G, rows, m, P, ldp, B,  \
                           ldb, ldg, C, ldc);                                         \
        for (size_t c = 0; !apart && G == 1 && c < m; c += ROWS_COLUMNS)              \
            rows_axpy_columns(rows, n, m - c < ROWS_COLUMNS ? m - c : ROWS_COLUMNS, P, \
                              ldp, B + c, ldb, C + c, ldc);                           \
        return;
    ROWS_SWITCH(R, ROWS_AXPY_CASE)
#undef ROWS_AXPY_CASE
}
