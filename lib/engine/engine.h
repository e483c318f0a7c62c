/*
 * How a plan executes (templated over `real`, see real.h): on which threads
 * and with which matrix products. Filled by the plan for each call and
 * passed to the forward and backward engines, which split their work into
 * items (pool.h) and give each item the scratch of the thread that runs it.
 *
 *   BLAS threads (pool NULL, blas 1): one thread, the caller's; products to
 *     BLAS (threaded as the BLAS library is set), small ones to the own
 *     kernel (matmul.h). Each phase is one item per matrix.
 *   own threads (pool set or NULL for one thread, blas 0): every product by
 *     the own kernel; the projections in items of ATTN_ROW_BLOCK rows, the
 *     heads in items of one (batch, head, query block). The items do not
 *     depend on the thread count, and each is computed by one thread in a
 *     fixed order, so the results are the same for every thread count.
 */
#ifndef ATTN_ENGINE_H
#define ATTN_ENGINE_H

#include <stddef.h>

#include "engine/matmul.h"
#include "engine/pool.h"
#include "engine/profile.h"
#include "core/real.h"
#include "engine/tiling.h"

typedef struct FN(attn_engine) {
    attn_pool *pool;           /* NULL: the calling thread alone */
    int blas;                  /* see above */
    attn_gemm_fn own;          /* the kernel set's products */
    attn_gemm_shared_a_fn own_shared_a;
    attn_gemm_pack_b_fn own_pack_b;
    attn_gemm_lower_fn own_lower;
    real *packed;              /* own threads: 4 weight matrices packed once per call, */
    size_t packed_elements;    /*   each in a slot of this many elements; else NULL */
    double *profile;           /* profiling rows (profile.h), or NULL */
    real *scratch;             /* worker w's at scratch + w * worker_elements: */
    size_t worker_elements;    /*   pack_elements of the own kernel's packing, */
    size_t pack_elements;      /*   then the worker's tile (tiling.h) */
} FN(attn_engine);

/* The product dispatch and tile of worker `worker`. */
static inline FN(attn_mm) FN(attn_engine_mm)(const FN(attn_engine) *e, unsigned worker)
{
    const FN(attn_mm) mm = {e->own, e->own_shared_a, e->own_lower, e->blas,
                            e->scratch + worker * e->worker_elements,
                            attn_profile_row(e->profile, worker)};
    return mm;
}
static inline real *FN(attn_engine_tile)(const FN(attn_engine) *e, unsigned worker)
{
    return e->scratch + worker * e->worker_elements + e->pack_elements;
}

/* dst (cols, rows) with ld ldd = src (rows, cols) with ld lds, transposed:
 * the own kernel packs op(B) = B^T slowly (element by element), so its
 * engines transpose K and V once per call and multiply by the copy. */
static inline void FN(attn_transpose)(size_t rows, size_t cols, const real *src, size_t lds,
                                      real *dst, size_t ldd)
{
    enum { TILE = 16 };
    for (size_t r0 = 0; r0 < rows; r0 += TILE)
        for (size_t c0 = 0; c0 < cols; c0 += TILE)
            for (size_t c = c0; c < c0 + TILE && c < cols; c++)
                for (size_t r = r0; r < r0 + TILE && r < rows; r++)
                    dst[c * ldd + r] = src[r * lds + c];
}

/* Slot `m` of the packed weights, NULL on BLAS threads. */
static inline real *FN(attn_engine_packed)(const FN(attn_engine) *e, size_t m)
{
    return e->packed != NULL ? e->packed + m * e->packed_elements : NULL;
}

/* Packing the weights into the slots, K block by K block, as work items:
 * Wq, Wk, Wv (C,D) into slots 0-2 and Wo (D,C) into slot 3 for the forward's
 * products (trans 0), or their transposes for the backward's (trans 1). */
static inline size_t FN(attn_engine_pack_items)(int trans, size_t C, size_t D, int with_Wo)
{
    const size_t K = trans ? D : C, N = trans ? C : D;
    return 3 * ((K + ATTN_GEMM_KC - 1) / ATTN_GEMM_KC) +
           (with_Wo ? (N + ATTN_GEMM_KC - 1) / ATTN_GEMM_KC : 0);
}
static inline void FN(attn_engine_pack_item)(const FN(attn_engine) *e, size_t item, int trans,
                                             size_t C, size_t D, const real *const W[4])
{
    const size_t K = trans ? D : C, N = trans ? C : D;
    const size_t blocks = (K + ATTN_GEMM_KC - 1) / ATTN_GEMM_KC;
    if (item < 3 * blocks)
        e->own_pack_b(trans, K, N, W[item / blocks], D, item % blocks * ATTN_GEMM_KC,
                      FN(attn_engine_packed)(e, item / blocks));
    else
        e->own_pack_b(trans, N, K, W[3], C, (item - 3 * blocks) * ATTN_GEMM_KC,
                      FN(attn_engine_packed)(e, 3));
}

/* Head bh = b*NH + h of src (B,T,NH*hs), its columns [h*hs, (h+1)*hs),
 * transposed into dst (B,NH,hs,T): the K^T or V^T of the own threads. */
static inline void FN(attn_transpose_head)(size_t T, size_t NH, size_t hs, const real *src,
                                           real *dst, size_t bh)
{
    const size_t D = NH * hs;
    FN(attn_transpose)(T, hs, src + bh / NH * T * D + bh % NH * hs, D, dst + bh * hs * T, T);
}

/* How a phase splits a product of `rows` x `cols` outputs into items
 * (projections, output projection, dY, dX): one on BLAS threads; on own
 * threads row blocks of at most ATTN_ROW_BLOCK rows, equal multiples of 16,
 * rounded up to a multiple of 8 blocks (so that 2, 4 or 8 threads get equal
 * shares: 1024 rows are 8 items of 128, not 7 of 144 and one of 16) and,
 * when there are fewer than 8 row blocks, column blocks too (of whole
 * multiples of 64 columns, so that they start on a panel of every kernel
 * set), so that even a short sequence gives every thread work: T = 128,
 * C = 768 is 6 column blocks of 128, not 8 row blocks of 16 (which ran at
 * three quarters of a BLAS call's speed). A function of the shape alone. */
typedef struct attn_split {
    size_t row_block, row_blocks, col_block, col_blocks;
} attn_split;

static inline attn_split attn_engine_split(int blas, size_t rows, size_t cols)
{
    attn_split s = {rows, 1, cols, 1};
    if (blas)
        return s;
    size_t blocks = (rows + ATTN_ROW_BLOCK - 1) / ATTN_ROW_BLOCK;
    if (blocks >= 8) {
        blocks = (blocks + 7) / 8 * 8;
    } else {
        const size_t wanted = (8 + blocks - 1) / blocks, widest = (cols + 63) / 64;
        s.col_blocks = wanted < widest ? wanted : widest;
        s.col_block = ((cols + s.col_blocks - 1) / s.col_blocks + 63) / 64 * 64;
        s.col_blocks = (cols + s.col_block - 1) / s.col_block;
    }
    s.row_block = ((rows + blocks - 1) / blocks + 15) / 16 * 16;
    s.row_blocks = (rows + s.row_block - 1) / s.row_block;
    return s;
}

/* The forward projections' split, finer where the product is too narrow
 * for column blocks (one head of 64 is one column block) and has fewer
 * than 4 items: row blocks of at least ATTN_ROW_BLOCK_MIN rows, up to 4
 * items, so that a short sequence still gives every thread work. A single
 * head of 64, C = 768, causal f32 forward, 2 threads, Xeon model 167: T =
 * 128 0.23 ms against 0.30 (one item before), T = 64 0.13 against 0.15,
 * T = 256 and 512 unchanged (up to 8 items took T = 256 5% slower). The
 * backward's own products keep attn_engine_split (there T = 64 lost 6%). */
static inline attn_split attn_engine_split_narrow(int blas, size_t rows, size_t cols)
{
    attn_split s = attn_engine_split(blas, rows, cols);
    const size_t most = rows / ATTN_ROW_BLOCK_MIN;
    const size_t wanted = (4 + s.col_blocks - 1) / s.col_blocks;
    const size_t blocks = wanted < most ? wanted : most;
    if (blas || s.row_blocks * s.col_blocks >= 4 || blocks <= s.row_blocks)
        return s;
    s.row_block = ((rows + blocks - 1) / blocks + 15) / 16 * 16;
    s.row_blocks = (rows + s.row_block - 1) / s.row_block;
    return s;
}

#endif /* ATTN_ENGINE_H */
