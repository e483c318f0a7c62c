/*
 * attn's own matrix product, written once over the SIMD vocabulary of
 * lib/simd/ (see its README) in the manner of BLIS: op(B) is packed into
 * contiguous micro-panels and one register-blocked micro-kernel does all the
 * arithmetic, broadcasting op(A)'s elements from where they lie (packing
 * op(A) as well cost more than it saved at attn's sizes: 1024x64x768 NN went
 * from 175 to 236 GFLOP/s on one thread without it). It is single-threaded
 * and never allocates: the caller hands it attn_gemm_pack_elements(M, N, K)
 * elements of scratch. The including file has already included one
 * vocabulary header and defines
 *   GEMM_NAME        the product's symbol, e.g. attn_gemm_avx2_f32
 *   GEMM_SHARED_A_NAME  the products sharing op(A), e.g. attn_gemm_shared_a_avx2_f32
 *   PACK_B_NAME      the packing of a whole op(B), e.g. attn_gemm_pack_b_avx2_f32
 *   GEMM_LOWER_NAME  the triangular product's, e.g. attn_gemm_lower_avx2_f32
 * All follow the contracts in kernels.h.
 *
 * Shapes (row-major, op(X) = X or X^T as the trans flag says):
 *   C (M,N) = alpha op(A) (M,K) op(B) (K,N) + beta C,   beta 0 (C not read) or 1
 * beta takes no other value: the kernel has no multiplication by beta (any
 * nonzero beta would act as 1), so debug builds (no NDEBUG) assert it at
 * every entry point (CHECK_BETA).
 * Loops, outermost first (BLIS's names):
 *   pc: K in spans of ATTN_GEMM_KSPAN; jc: N in blocks of ATTN_GEMM_NC, the
 *   span's K blocks of ATTN_GEMM_KC (kc x nc) of op(B) packed into
 *   NR-column micro-panels (the last one zero-padded); ic: M in blocks of
 *   ATTN_GEMM_MC rows of op(A); jr, ir: the micro-kernel on one MR x NR
 *   tile, C += op(A) rows x B_panels over the span's blocks, stored for the
 *   rows and columns that exist. The first span applies beta, later ones
 *   add. Several products with the same op(A) (X Wq, X Wk, X Wv) run
 *   through each block of its rows together (the fused projection).
 * Order of the sums (the same whatever the thread that computes a product:
 * results depend on the shape and the kernel set only):
 *   packed path: for each span [s0, s0 + ks) in increasing s0, the span's
 *     products are accumulated in increasing k into one accumulator per
 *     element, from 0 (the vocabulary's v_fmadd); the span's sum times
 *     alpha is then stored (first span, beta 0) or added to C;
 *   unpacked path (attn_gemm_is_direct): two accumulators per element, one
 *     over even k and one over odd k, each in increasing k; C = alpha (even
 *     + odd) (+ C when beta is 1);
 *   triangular product (GEMM_LOWER_NAME): a triangle of more than
 *     LOWER_DIRECT_ROWS rows is split into its top half's triangle, the
 *     rectangle below that (one product as above, added to C) and the
 *     bottom triangle (added to C), each recursively; in a smaller one the
 *     group of MR rows from g first takes the product of columns [0, g) as
 *     above, then row i adds a_ik b_k for k = g .. i in increasing k, one
 *     multiplication and one addition each.
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "kernels/kernels.h"

/* beta is 0 or 1 (kernels.h); checked in debug builds only */
#define CHECK_BETA(beta) assert((beta) == REAL_C(0.0) || (beta) == REAL_C(1.0))

#define NV ATTN_GEMM_NV  /* vectors per row of the tile */
#define NR (NV * VLEN) /* its columns */
#define MR ATTN_GEMM_MR
_Static_assert(MR >= 4 && MR <= 7, "SWITCH_ROWS has cases for 1 .. MR - 1 rows");

/* CALL(m) with m = rows (1 .. MR) a constant in each case: tiles of fewer
 * rows than MR get their own unrolled copies of the arithmetic. */
#define AT_MOST_MR(m) ((m) < MR ? (m) : MR)
#define SWITCH_ROWS(rows, CALL)                                                            \
    switch (rows) {                                                                        \
    case 1: CALL(1); break;                                                                \
    case 2: CALL(2); break;                                                                \
    case 3: CALL(3); break;                                                                \
    case 4: CALL(AT_MOST_MR(4)); break;                                                    \
    case 5: CALL(AT_MOST_MR(5)); break;                                                    \
    case 6: CALL(AT_MOST_MR(6)); break;                                                    \
    default: CALL(MR); break;                                                              \
    }

/* The n > 0 columns at p, as many as a vector holds, 0 past them. */
static inline vec load_cols(const real *p, size_t n)
{
    return n >= VLEN ? v_load(p) : v_load_part(p, n, REAL_C(0.0));
}

_Static_assert(NR <= ATTN_GEMM_NR_MAX && MR <= ATTN_GEMM_MR_MAX,
               "the micro-tile must fit the scratch sizes of kernels.h");

/* dst[k * NR + j] = src[j * lds + k] for j < nj, k < nk: VLEN x VLEN blocks
 * transposed in registers (element by element, a 16 x 16 square took most
 * of the packing of sdpa's K^T: 6.5% of a T = 1024, 12 heads, hs 64 causal
 * forward on 2 threads, AMD EPYC Zen 5), the edges element by element. */
static inline void transpose_square(const real *src, size_t lds, size_t nj, size_t nk, real *dst)
{
    size_t j = 0;
    for (; j + VLEN <= nj; j += VLEN) {
        size_t k = 0;
        for (; k + VLEN <= nk; k += VLEN) {
            vec r[VLEN];
            for (size_t i = 0; i < VLEN; i++)
                r[i] = v_load(src + (j + i) * lds + k);
            v_transpose(r);
            for (size_t i = 0; i < VLEN; i++)
                v_store(dst + (k + i) * NR + j, r[i]);
        }
        for (; k < nk; k++)
            for (size_t i = 0; i < VLEN; i++)
                dst[k * NR + j + i] = src[(j + i) * lds + k];
    }
    for (; j < nj; j++)
        for (size_t k = 0; k < nk; k++)
            dst[k * NR + j] = src[j * lds + k];
}

/* op(B)[k0 + k][j0 + j] for k < kc, j < nc, as micro-panels of NR columns:
 * panel p holds columns [p*NR, p*NR + NR) at pack + p*kc*NR, row k at k*NR. */
static void pack_b(const real *B, size_t ldb, int trans_b, size_t k0, size_t kc, size_t j0,
                   size_t nc, real *pack)
{
    for (size_t p = 0; p * NR < nc; p++) {
        const size_t cols = nc - p * NR < NR ? nc - p * NR : NR;
        real *panel = pack + p * kc * NR;
        if (!trans_b) { /* rows of B: NV vectors each, zero-filled past N */
            const real *src = B + k0 * ldb + j0 + p * NR;
            if (cols == NR) {
                for (size_t k = 0; k < kc; k++, src += ldb)
                    for (size_t v = 0; v < NV; v++)
                        v_store(panel + k * NR + v * VLEN, v_load(src + v * VLEN));
                continue;
            }
            for (size_t k = 0; k < kc; k++, src += ldb)
                for (size_t v = 0; v < NV; v++) {
                    const size_t at = v * VLEN;
                    const size_t n = cols <= at ? 0 : cols - at < VLEN ? cols - at : VLEN;
                    v_store(panel + k * NR + at, n == VLEN ? v_load(src + at)
                                                          : v_load_part(src + at, n, REAL_C(0.0)));
                }
            continue;
        }
        /* rows of B^T, read along and stored across, in squares of
         * TRANS_TILE so that both sides stay in a few cache lines */
        enum { TRANS_TILE = 16 };
        for (size_t jt = 0; jt < cols; jt += TRANS_TILE) {
            /* the next square's rows (in this panel or the next one of
             * the block) requested now: rows lie ldb apart, and waiting on
             * each in turn took most of the packing's time (K^T of sdpa's
             * forward at T=1024, 12 heads, hs 64: 9% of the forward, 5.5%
             * with the requests; Xeon model 167) */
            for (size_t j = jt + TRANS_TILE; j < jt + 2 * TRANS_TILE && p * NR + j < nc; j++)
                for (size_t k = 0; k < kc; k += 64 / sizeof(real))
                    __builtin_prefetch(B + (j0 + p * NR + j) * ldb + k0 + k, 0, 3);
            for (size_t kt = 0; kt < kc; kt += TRANS_TILE)
                transpose_square(B + (j0 + p * NR + jt) * ldb + k0 + kt, ldb,
                                 cols - jt < TRANS_TILE ? cols - jt : TRANS_TILE,
                                 kc - kt < TRANS_TILE ? kc - kt : TRANS_TILE, panel + kt * NR + jt);
        }
        for (size_t k = 0; k < kc && cols < NR; k++)
            for (size_t j = cols; j < NR; j++)
                panel[k * NR + j] = REAL_C(0.0);
    }
}

/* The tile's arithmetic: acc (mr x NV vectors) += op(A) rows B_panel over
 * kc, op(A)'s element (r, k) at a[r][k * a_cs]; mr <= MR is a constant in
 * each inlined copy. */
static inline __attribute__((always_inline)) void micro_accumulate(
    const int mr, size_t kc, const real *const *a, size_t a_cs, const real *b, vec acc[MR][NV])
{
    /* Unrolled twice: on a Xeon (Sapphire Rapids) this took op(A) = A^T read
     * in place (a stride of lda per k) from 140 to 172 GFLOP/s and A from
     * 194 to 199 on one core (1024x64x768 TN, 144x768x768 NN, f32). */
#pragma GCC unroll 2
    for (size_t k = 0; k < kc; k++, b += NR) {
        vec bv[NV];
        for (int v = 0; v < NV; v++)
            bv[v] = v_load(b + v * VLEN);
        for (int r = 0; r < mr; r++) {
            const vec ar = v_set1(a[r][k * a_cs]);
            for (int v = 0; v < NV; v++)
                acc[r][v] = v_fmadd(ar, bv[v], acc[r][v]);
        }
    }
}

static inline void micro_store(vec acc[MR][NV], real alpha, int add, real *C, size_t ldc,
                               size_t rows, size_t cols)
{
    const vec valpha = v_set1(alpha);
    for (size_t r = 0; r < rows; r++) {
        real *c = C + r * ldc;
        for (int v = 0; v < NV; v++) {
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

/* A span: up to ATTN_GEMM_KSPAN consecutive k of op(B), packed K block by
 * K block (the layout of PACK_B_NAME: a span never changes it); block s,
 * kc[s] rows, has the micro-panel of the columns from jr at
 * panel[s] + jr * kc[s]. */
#define SPAN_BLOCKS (ATTN_GEMM_KSPAN / ATTN_GEMM_KC)
_Static_assert(ATTN_GEMM_KSPAN % ATTN_GEMM_KC == 0, "a span is whole K blocks");
typedef struct span_panels {
    size_t blocks, kc[SPAN_BLOCKS];
    const real *panel[SPAN_BLOCKS];
} span_panels;

/* The tile's arithmetic over a span: acc = op(A) rows B over every block
 * in turn, one accumulator per element from 0, so that C is read and
 * written once a span, not once a K block (the outputs of the GPT-2
 * block's projections, three 128 x 768 tiles, came to the kernel from L3
 * and went back between K blocks: 128 x 768 x 768 x 3 with C cold went
 * from 231-241 to 262-273 GFLOP/s, one thread, AMD EPYC Zen 5). op(A)'s
 * element (r, k) at a[r][k * a_cs], k from the span's start. */
static inline __attribute__((always_inline)) void span_accumulate(
    const int mr, const span_panels *span, size_t jr, const real *const *a, size_t a_cs,
    vec acc[MR][NV])
{
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < NV; v++)
            acc[r][v] = v_set1(REAL_C(0.0));
    /* the first block apart: a span of one (sdpa's scores, K = hs) costs
     * nothing more than the block alone (the loop's copy of the row
     * pointers took 2-4% of a 128 x 256 x 64 product) */
    micro_accumulate(mr, span->kc[0], a, a_cs, span->panel[0] + jr * span->kc[0], acc);
    for (size_t s = 1; s < span->blocks; s++) {
        const real *rows[MR];
        for (int r = 0; r < mr; r++)
            rows[r] = a[r] + s * ATTN_GEMM_KC * a_cs;
        micro_accumulate(mr, span->kc[s], rows, a_cs, span->panel[s] + jr * span->kc[s], acc);
    }
}

/* The tile of the columns from jr over a span, op(A) read where it lies,
 * its row r at rows_of_a[r] and column k a_cs further on: op(A) = A (a_step
 * lda, a_cs 1) or A^T (a_step 1, a_cs lda), from row i and the span's first
 * column of op(A) at `a`. A tile of fewer than MR rows (the last of a block
 * whose rows are not a multiple of MR: 2 of attention's 128-row blocks with
 * MR 6) has its own copy of the arithmetic for its row count, instead of the
 * whole tile's work; the sums are the same. */
static inline void micro_kernel_in_place(const span_panels *span, size_t jr, const real *a,
                                         size_t a_step, size_t a_cs, real alpha, int add,
                                         real *C, size_t ldc, size_t rows, size_t cols)
{
    const real *rows_of_a[MR];
    for (size_t r = 0; r < MR; r++)
        rows_of_a[r] = a + (r < rows ? r : 0) * a_step;
    /* C's tile is read and written last: its lines are fetched now (as
     * BLIS's kernels do; +2-6% on products with cold data, Xeon SPR) */
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c += 64 / sizeof(real))
            __builtin_prefetch(C + r * ldc + c, 1, 3);
    vec acc[MR][NV];
#define PARTIAL_TILE(m) span_accumulate(m, span, jr, rows_of_a, a_cs, acc)
    SWITCH_ROWS(rows, PARTIAL_TILE)
#undef PARTIAL_TILE
    micro_store(acc, alpha, add, C, ldc, rows, cols);
}

#include "kernels/gemm_direct.inc.c"

/* Columns of a K block of a whole packed op(B): N rounded up to panels. */
static inline size_t packed_width(size_t N)
{
    return (N + NR - 1) / NR * NR;
}

/* Rows [i0, i0+mc) of op(A) = A^T over the span [k0, k0+kc), packed as
 * MR-row micro-panels: panel ir at apack + ir*kc, element (r, k) at
 * [k*MR + r] (rows past mc not written: the micro-kernel never reads them).
 * Each k is a run of consecutive elements of one row of A. */
static void pack_a_transposed(const real *A, size_t lda, size_t k0, size_t kc, size_t i0,
                              size_t mc, real *apack)
{
    for (size_t ir = 0; ir < mc; ir += MR) {
        const size_t rows = mc - ir < MR ? mc - ir : MR;
        const real *src = A + k0 * lda + i0 + ir;
        real *dst = apack + ir * kc;
        for (size_t k = 0; k < kc; k++, src += lda, dst += MR) {
            size_t c = 0;
            for (; c + VLEN <= rows; c += VLEN)
                v_store(dst + c, v_load(src + c));
            if (c < rows)
                v_store_part(dst + c, v_load_part(src + c, rows - c, REAL_C(0.0)), rows - c);
        }
    }
}

/* The lines of `rows` rows of n elements, ld apart, fetched into L2: the
 * next micro-tile's rows of op(A) = A read in place. The hardware
 * prefetchers miss them when rows lie far apart (Q of attention on given
 * Q, K, V: rows of 128 elements 16 KiB apart), and the micro-kernel would
 * wait for each line from L3 on its first pass over a row block. */
static inline void prefetch_rows(const real *x, size_t ld, size_t rows, size_t n)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < n; c += 64 / sizeof(real))
            __builtin_prefetch(x + r * ld + c, 0, 2);
}

/* C_m = alpha op(A) op(B_m) + beta C_m for m < count, op(A) shared. Loops:
 * pc (K, a span of up to ATTN_GEMM_KSPAN at a time), m, jc (N: the span's K
 * blocks of op(B_m) packed once, unless `prepacked` holds them: see
 * PACK_B_NAME), ic (M: op(A) = A^T packed when op(B) has more than two
 * panels to share it: read in place, its rows lie lda apart, and with lda a
 * multiple of 256 bytes (C = 768, T = 1024) they fill a few cache sets of
 * L1 and are read from L2 for every panel; see pack_a below), jr, ir. */
static void gemm_packed(int trans_a, int trans_b, size_t M, size_t N, size_t K, real alpha,
                        const real *A, size_t lda, size_t count, const real *const *B,
                        size_t ldb, const real *const *prepacked, real beta, real *const *C,
                        size_t ldc, real *pack)
{
    /* A^T read in place costs L1 misses when lda is a multiple of 1 KiB (its
     * rows fill a few cache sets), a copy costs a pass: pack when more than
     * two panels share the copy, or when the stride is such. At two panels
     * the copy did not pay: sdpa's backward dV += P^T dout and
     * dK += dS^T Q (256x128x128, lda 272) went from 122-125 to 140-151
     * GFLOP/s in a loop of one product, about +7% in the backward's loop
     * (f32, one core, Xeon model 207). Either way the sums are the same. */
    const int pack_a = trans_a && (N > 2 * NR || lda * sizeof(real) % 1024 == 0);
    real *apack = pack + attn_gemm_pack_b_elements(N, K);
    /* one packed K block of the scratch: KC rows of up to NC + NR columns */
    const size_t block_elements = ATTN_GEMM_KC * (attn_gemm_min(N, ATTN_GEMM_NC) + NR);
    for (size_t s0 = 0; s0 < K; s0 += ATTN_GEMM_KSPAN) {
        const size_t ks = K - s0 < ATTN_GEMM_KSPAN ? K - s0 : ATTN_GEMM_KSPAN;
        const int add = s0 > 0 || beta != REAL_C(0.0);
        span_panels span = {.blocks = (ks + ATTN_GEMM_KC - 1) / ATTN_GEMM_KC};
        for (size_t m = 0; m < count; m++) {
            for (size_t j0 = 0; j0 < N; j0 += ATTN_GEMM_NC) {
                const size_t nc = N - j0 < ATTN_GEMM_NC ? N - j0 : ATTN_GEMM_NC;
                for (size_t b = 0; b < span.blocks; b++) {
                    const size_t k0 = s0 + b * ATTN_GEMM_KC;
                    span.kc[b] = K - k0 < ATTN_GEMM_KC ? K - k0 : ATTN_GEMM_KC;
                    if (prepacked != NULL) {
                        span.panel[b] = prepacked[m] + k0 * packed_width(N) + j0 * span.kc[b];
                    } else {
                        pack_b(B[m], ldb, trans_b, k0, span.kc[b], j0, nc,
                               pack + b * block_elements);
                        span.panel[b] = pack + b * block_elements;
                    }
                }
                for (size_t i0 = 0; i0 < M; i0 += ATTN_GEMM_MC) {
                    const size_t mc = M - i0 < ATTN_GEMM_MC ? M - i0 : ATTN_GEMM_MC;
                    if (pack_a)
                        pack_a_transposed(A, lda, s0, ks, i0, mc, apack);
                    for (size_t jr = 0; jr < nc; jr += NR) {
                        const size_t cols = nc - jr < NR ? nc - jr : NR;
                        for (size_t ir = 0; ir < mc; ir += MR) {
                            const size_t rows = mc - ir < MR ? mc - ir : MR;
                            const size_t i = i0 + ir;
                            real *tile = C[m] + i * ldc + j0 + jr;
                            if (!trans_a && jr == 0 && ir + MR < mc)
                                prefetch_rows(A + (i + MR) * lda + s0, lda,
                                              mc - ir - MR < MR ? mc - ir - MR : MR, ks);
                            if (pack_a)
                                micro_kernel_in_place(&span, jr, apack + ir * ks, 1, MR, alpha,
                                                      add, tile, ldc, rows, cols);
                            else
                                micro_kernel_in_place(
                                    &span, jr, trans_a ? A + s0 * lda + i : A + i * lda + s0,
                                    trans_a ? 1 : lda, trans_a ? lda : 1, alpha, add, tile, ldc,
                                    rows, cols);
                        }
                    }
                }
            }
        }
    }
}

size_t PANEL_NAME(void);
/* NR: the columns of one micro-panel of a packed op(B). */
size_t PANEL_NAME(void)
{
    return NR;
}

void PACK_B_NAME(int trans_b, size_t K, size_t N, const real *B, size_t ldb, size_t k0,
                 real *packed);
/* The K block [k0, k0 + KC) of op(B) (K,N), packed as gemm_packed reads it
 * from `prepacked`: block k0 at packed + k0 * packed_width(N), its panels of
 * NR columns one after the other. */
void PACK_B_NAME(int trans_b, size_t K, size_t N, const real *B, size_t ldb, size_t k0,
                 real *packed)
{
    const size_t kc = K - k0 < ATTN_GEMM_KC ? K - k0 : ATTN_GEMM_KC;
    pack_b(B, ldb, trans_b, k0, kc, 0, N, packed + k0 * packed_width(N));
}

void GEMM_SHARED_A_NAME(int trans_a, int trans_b, size_t M, size_t N, size_t K, real alpha,
                        const real *A, size_t lda, size_t count, const real *const *B,
                        size_t ldb, const real *const *prepacked, real beta, real *const *C,
                        size_t ldc, real *pack);
void GEMM_SHARED_A_NAME(int trans_a, int trans_b, size_t M, size_t N, size_t K, real alpha,
                        const real *A, size_t lda, size_t count, const real *const *B,
                        size_t ldb, const real *const *prepacked, real beta, real *const *C,
                        size_t ldc, real *pack)
{
    CHECK_BETA(beta);
    if (K == 0) { /* C = beta C: nothing to add */
        for (size_t m = 0; m < count; m++)
            for (size_t i = 0; i < M && beta == REAL_C(0.0); i++)
                memset(C[m] + i * ldc, 0, N * sizeof(real));
        return;
    }
    if (attn_gemm_is_direct(M, N, K)) {
        for (size_t m = 0; m < count; m++)
            gemm_direct(trans_a, trans_b, M, N, K, alpha, A, lda, B[m], ldb, beta, C[m], ldc,
                        pack);
        return;
    }
    gemm_packed(trans_a, trans_b, M, N, K, alpha, A, lda, count, B, ldb, prepacked, beta, C, ldc,
                pack);
}

void GEMM_NAME(int trans_a, int trans_b, size_t M, size_t N, size_t K, real alpha, const real *A,
               size_t lda, const real *B, size_t ldb, real beta, real *C, size_t ldc, real *pack);
void GEMM_NAME(int trans_a, int trans_b, size_t M, size_t N, size_t K, real alpha, const real *A,
               size_t lda, const real *B, size_t ldb, real beta, real *C, size_t ldc, real *pack)
{
    GEMM_SHARED_A_NAME(trans_a, trans_b, M, N, K, alpha, A, lda, 1, &B, ldb, NULL, beta, &C, ldc,
                       pack);
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
/* Rows of a triangle done row group by row group; larger ones are split in
 * two halves, the block below the top half one packed product: a causal
 * query block of 128 took 5.5% of an sdpa prefill forward in this kernel
 * for 3% of its arithmetic (Xeon SPR). */
#define LOWER_DIRECT_ROWS 32

/* The triangle of a group of `rows` <= MR rows from diagonal element (g, g),
 * columns [j, j + n), 0 < n <= NR: row r adds a_{r,k} b_k for k = g .. g + r
 * in increasing k, one multiplication and one addition each, onto C (fresh:
 * C's old values not read, the first term alone). The rows' NV vectors stay
 * in registers through the k, so that their additions overlap: a row at a
 * time, with C loaded and stored for each k, a causal diagonal's 128-row
 * triangle of 64 columns took 7.4-7.8 us, now 7.0-7.2 (AMD EPYC Zen 5, avx512,
 * best of 15 x 2000 calls). */
static inline __attribute__((always_inline)) void lower_group(
    const int rows, const real *A, size_t lda, const real *B, size_t ldb, int fresh, real *C,
    size_t ldc, size_t n)
{
    vec acc[MR][NV];
    for (int r = 0; r < rows; r++)
        for (size_t v = 0, at = 0; v < NV; v++, at += VLEN) {
            const vec x = v_mul(v_set1(A[(size_t)r * lda]), n > at ? load_cols(B + at, n - at)
                                                                  : v_set1(REAL_C(0.0)));
            const real *c = C + (size_t)r * ldc + at;
            acc[r][v] = fresh || n <= at ? x : v_add(load_cols(c, n - at), x);
        }
    for (int k = 1; k < rows; k++) {
        vec bv[NV];
        for (size_t v = 0, at = 0; v < NV; v++, at += VLEN)
            bv[v] = n > at ? load_cols(B + (size_t)k * ldb + at, n - at) : v_set1(REAL_C(0.0));
        for (int r = k; r < rows; r++) {
            const vec a = v_set1(A[(size_t)r * lda + (size_t)k]);
            for (int v = 0; v < NV; v++)
                acc[r][v] = v_add(acc[r][v], v_mul(a, bv[v]));
        }
    }
    for (int r = 0; r < rows; r++)
        for (size_t v = 0, at = 0; v < NV && at < n; v++, at += VLEN) {
            if (n - at >= VLEN)
                v_store(C + (size_t)r * ldc + at, acc[r][v]);
            else
                v_store_part(C + (size_t)r * ldc + at, acc[r][v], n - at);
        }
}

void GEMM_LOWER_NAME(size_t M, size_t N, const real *A, size_t lda, const real *B, size_t ldb,
                     real beta, real *C, size_t ldc, real *pack)
{
    CHECK_BETA(beta);
    if (M > LOWER_DIRECT_ROWS) {
        const size_t top = (M / 2 + MR - 1) / MR * MR;
        GEMM_LOWER_NAME(top, N, A, lda, B, ldb, beta, C, ldc, pack);
        GEMM_NAME(0, 0, M - top, N, top, REAL_C(1.0), A + top * lda, lda, B, ldb, beta,
                  C + top * ldc, ldc, pack);
        GEMM_LOWER_NAME(M - top, N, A + top * lda + top, lda, B + top * ldb, ldb, REAL_C(1.0),
                        C + top * ldc, ldc, pack);
        return;
    }
    for (size_t g = 0; g < M; g += MR) {
        const size_t rows = M - g < MR ? M - g : MR;
        GEMM_NAME(0, 0, rows, N, g, REAL_C(1.0), A + g * lda, lda, B, ldb, beta, C + g * ldc, ldc,
                  pack);
        const int fresh = g == 0 && beta == REAL_C(0.0);
        for (size_t j = 0; j < N; j += NR) {
            const size_t n = N - j < NR ? N - j : NR;
#define LOWER_GROUP(m) lower_group(m, A + g * lda + g, lda, B + g * ldb + j, ldb, fresh, \
                                   C + g * ldc + j, ldc, n)
            SWITCH_ROWS(rows, LOWER_GROUP)
#undef LOWER_GROUP
        }
    }
}

#undef NR
#undef NV
#undef MR
#undef CHECK_BETA
#undef SWITCH_ROWS
#undef AT_MOST_MR
