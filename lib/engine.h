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

#include "matmul.h"
#include "pool.h"
#include "real.h"
#include "tiling.h"

typedef struct FN(attn_engine) {
    attn_pool *pool;           /* NULL: the calling thread alone */
    int blas;                  /* see above */
    attn_gemm_fn own;          /* the kernel set's products */
    attn_gemm_lower_fn own_lower;
    real *scratch;             /* worker w's at scratch + w * worker_elements: */
    size_t worker_elements;    /*   pack_elements of the own kernel's packing, */
    size_t pack_elements;      /*   then the worker's tile (tiling.h) */
} FN(attn_engine);

/* The product dispatch and tile of worker `worker`. */
static inline FN(attn_mm) FN(attn_engine_mm)(const FN(attn_engine) *e, unsigned worker)
{
    const FN(attn_mm) mm = {e->own, e->own_lower, e->blas, e->scratch + worker * e->worker_elements};
    return mm;
}
static inline real *FN(attn_engine_tile)(const FN(attn_engine) *e, unsigned worker)
{
    return e->scratch + worker * e->worker_elements + e->pack_elements;
}

/* Rows per item when a phase splits `rows` rows of a matrix. */
static inline size_t FN(attn_engine_row_block)(const FN(attn_engine) *e, size_t rows)
{
    return e->blas ? rows : (size_t)ATTN_ROW_BLOCK;
}

#endif /* ATTN_ENGINE_H */
