/*
 * Forward pass of multi-head scaled dot-product attention.
 *
 * Shapes: X (B,T,C); Wq, Wk, Wv (C,D) with D = NH*hs; Wo (D,C) or none.
 *   Q = X Wq, K = X Wk, V = X Wv            (B*T, D)   products over all rows
 *   for each batch element b and head h (columns [h*hs, (h+1)*hs) of Q, K, V
 *   and Y, addressed in place with leading dimension D, no copies), and each
 *   block of ATTN_QUERY_BLOCK queries [t0, t1) of it:
 *     Y_bh[t0:t1] = softmax_rows(scale * Q_bh[t0:t1] K_bh^T [+ causal mask]) V_bh
 *   out = Y Wo (B*T, C) with Wo, else out = Y (B*T, D)
 * Three phases of work items (engine.h): the projections, the query blocks
 * of every head, the output projection. An inference forward on the tiled
 * path on own threads hands the heads to the sdpa engine instead
 * (forward.h: args.sdpa, Q, K, V read in place; sdpa_forward.c), which
 * packs each head's K^T and V once for all its query blocks.
 *
 * Two paths compute a query block:
 *  - materialized: S = Q_blk K^T (rows, keys) as one product, the fused row
 *    softmax in place (giving the weights P), then P V. With a causal mask
 *    the block only meets keys [0,t1): nothing right of the diagonal's block
 *    is computed, and the diagonal block's P V is triangular, so that a query
 *    never multiplies the value of a later key, even by a weight of 0.
 *    Rows of P without weight (every score -inf) are set to 0 after P V,
 *    which gave 0 * V there (unweighted.h).
 *  - tiled (FlashAttention-style, when P is not wanted): loop over blocks of
 *    ATTN_TILE_KEYS keys: S_tile = Q_blk K_blk^T, online softmax (running max
 *    and sum per query, partial output rescaled by alpha), Y_blk += P_tile
 *    V_blk; key blocks wholly above the diagonal are skipped. Memory is O(T):
 *    one tile, not the T*T matrix. A query row whose scores reach +inf is
 *    redone on its own (one row of T) by the materialized row kernel; one
 *    whose sum stays 0 (every score -inf) is set to 0.
 *    A training forward always takes it and keeps each row's statistics,
 *    its max and the log of its sum (lse = max + log_sum; max = +inf for
 *    such a row, log_sum = -inf for a row that saw no key), with the heads,
 *    from which the backward recomputes P; weights asked of it are
 *    recomputed so too: P = exp((scale Q_blk K^T - max) - log_sum).
 *  - dropout (training plans, engine/dropout.h): each tile's P is multiplied
 *    by M/(1-p) after the online sum, so the statistics (and weights asked
 *    for, recomputed from them) are the undropped softmax's, and
 *    Y = (P o M/(1-p)) V.
 */
#include <math.h>
#include <string.h>

#include <attn/attn.h>

#include "engine/forward.h"
#include "engine/unweighted.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* One head's K: rows (T,hs) with ld D, and its transpose KT (hs,T) or NULL. */
typedef struct FN(head_keys) {
    const real *K, *KT;
} FN(head_keys);

/* S (rows, keys) = Q_blk K[k0, k0+keys)^T for query block [t0, t0+rows),
 * from KT when there is one. With a causal mask row i only up to key
 * t0 + i, where the softmax stops reading (matmul.h's staircase). */
static void FN(scores)(const FN(attn_forward_args) *a, const FN(attn_mm) *mm, size_t D,
                       const real *Q, size_t t0, size_t rows, FN(head_keys) k, size_t k0,
                       size_t keys, real *S, size_t lds)
{
    const uint64_t start = attn_profile_begin(mm->profile);
    const ptrdiff_t n0 = a->causal ? (ptrdiff_t)(t0 + 1) - (ptrdiff_t)k0 : (ptrdiff_t)keys;
    const double flops =
        k.KT != NULL ? FN(attn_mm_gemm_staircase)(mm, ATTN_NO_TRANS, rows, keys, a->hs, n0,
                                                  Q + t0 * D, D, k.KT + k0, a->T, NULL, S, lds)
                     : FN(attn_mm_gemm_staircase)(mm, ATTN_TRANS, rows, keys, a->hs, n0,
                                                  Q + t0 * D, D, k.K + k0 * D, D, NULL, S, lds);
    attn_profile_end(mm->profile, ATTN_PHASE_SCORES, start, flops);
}

/* One query block [t0, t0+rows) of one head, materialized. Q, V, Y (T,hs)
 * with ld D, K as head_keys; P: the block's rows of weights, ld ldp, each
 * written over `width` entries (T for the weights, keys for a tile). */
static void FN(block_materialized)(const FN(attn_forward_args) *a, const FN(attn_mm) *mm,
                                   size_t D, size_t bh, size_t t0, size_t rows, const real *Q,
                                   FN(head_keys) K, const real *V, real *P, size_t ldp,
                                   size_t width, real *Y)
{
    const size_t T = a->T, hs = a->hs;
    const size_t keys = a->causal ? t0 + rows : T;
    real *Y_blk = Y + t0 * D;
    FN(scores)(a, mm, D, Q, t0, rows, K, 0, keys, P, ldp);
    ATTN_PROFILED(mm->profile, ATTN_PHASE_SOFTMAX, 0.0,
                  a->softmax_rows(P, P, rows, ldp, a->causal ? t0 + 1 : T, a->causal ? 1 : 0,
                                  width, a->scale));
    FN(attn_dropout_rows)(a->dropout, a->dropout_mask, bh / a->NH, bh % a->NH, t0, rows, 0, keys, P, ldp);
    const uint64_t start = attn_profile_begin(mm->profile);
    if (!a->causal) {
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, keys, REAL_C(1.0), P, ldp, V,
                         D, REAL_C(0.0), Y_blk, D);
    } else {
        /* keys [t0, t1) triangular, keys [0, t0) seen by every row of the block */
        FN(attn_mm_lower)(mm, rows, hs, P + t0, ldp, V + t0 * D, D, Y_blk, D);
        if (t0 > 0)
            FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, t0, REAL_C(1.0), P, ldp,
                             V, D, REAL_C(1.0), Y_blk, D);
    }
    /* rows without weight: 0, not 0 * V (NaN where V is not finite) */
    FN(attn_clear_unweighted_rows)(P, ldp, rows, a->causal ? t0 + 1 : T, a->causal ? 1 : 0,
                                   Y_blk, D, hs);
    attn_profile_end(mm->profile, ATTN_PHASE_WEIGHTED_SUM, start,
                     attn_product_flops(rows, hs, a->causal ? t0 + (rows + 1) / 2 : keys));
}

/* Query t of head bh recomputed alone through a row of its visible keys. */
static void FN(row_materialized)(const FN(attn_forward_args) *a, const FN(attn_mm) *mm,
                                 size_t D, size_t bh, size_t t, const real *Q, FN(head_keys) K,
                                 const real *V, real *row, real *Y)
{
    FN(block_materialized)(a, mm, D, bh, t, 1, Q, K, V, row, a->causal ? t + 1 : a->T,
                           a->causal ? t + 1 : a->T, Y);
}

static void FN(scale_row)(real *y, size_t n, real factor)
{
    for (size_t i = 0; i < n; i++)
        y[i] *= factor;
}

/* One query block [t0, t0+rows) of one head, tiled. Q, K, V, Y (T,hs) with
 * ld D; work: attn_tiled_workspace(T) elements; stats: the block's rows of
 * the head's statistics (max, log_sum) pairs, or NULL. */
static void FN(block_tiled)(const FN(attn_forward_args) *a, const FN(attn_mm) *mm, size_t D,
                            size_t bh, size_t t0, size_t rows, const real *Q, FN(head_keys) K,
                            const real *V, real *Y, real *work, real *stats)
{
    const size_t hs = a->hs;
    real *tile = work;
    real *max = tile + (size_t)ATTN_QUERY_BLOCK * ATTN_TILE_KEYS;
    real *sum = max + ATTN_QUERY_BLOCK;
    real *alpha = sum + ATTN_QUERY_BLOCK;
    real *row = alpha + ATTN_QUERY_BLOCK;

    const size_t key_end = a->causal ? t0 + rows : a->T;
    real *Y_blk = Y + t0 * D;
    for (size_t i = 0; i < rows; i++) {
        max[i] = -ATTN_REAL_MAX;
        sum[i] = REAL_C(0.0);
    }
    /* Key blocks from the last to the first: with a causal mask the last
     * holds the diagonal, whose product must be triangular, and coming first
     * it can write Y_blk. */
    const size_t key_blocks = (key_end + ATTN_TILE_KEYS - 1) / ATTN_TILE_KEYS;
    for (size_t index = key_blocks; index-- > 0;) {
        const size_t k0 = index * ATTN_TILE_KEYS;
        const size_t keys = MIN((size_t)ATTN_TILE_KEYS, key_end - k0);
        const int first = index + 1 == key_blocks;
        FN(scores)(a, mm, D, Q, t0, rows, K, k0, keys, tile, keys);
        uint64_t start = attn_profile_begin(mm->profile);
        for (size_t i = 0; i < rows; i++) {
            const size_t visible = t0 + i + 1 > k0 ? t0 + i + 1 - k0 : 0;
            const size_t n_valid = a->causal ? MIN(visible, keys) : keys;
            alpha[i] = a->softmax_online(tile + i * keys, tile + i * keys, n_valid, keys,
                                         a->scale, &max[i], &sum[i]);
            /* dropout after the sum: the statistics are the undropped weights' */
            FN(attn_dropout_row)(a->dropout, a->dropout_mask, bh / a->NH, bh % a->NH, t0 + i,
                                 k0, n_valid, tile + i * keys, NULL);
            if (!first && alpha[i] != REAL_C(1.0))
                FN(scale_row)(Y_blk + i * D, hs, alpha[i] < REAL_C(0.0) ? REAL_C(0.0) : alpha[i]);
        }
        attn_profile_end(mm->profile, ATTN_PHASE_SOFTMAX, start, 0.0);
        start = attn_profile_begin(mm->profile);
        size_t summed_keys = keys; /* per query, for the FLOP count */
        if (a->causal && first) {
            const size_t diagonal = t0 - k0; /* tile column of key t0 */
            FN(attn_mm_lower)(mm, rows, hs, tile + diagonal, keys, V + t0 * D, D, Y_blk, D);
            if (diagonal > 0)
                FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, diagonal,
                                 REAL_C(1.0), tile, keys, V + k0 * D, D, REAL_C(1.0), Y_blk, D);
            summed_keys = diagonal + (rows + 1) / 2;
        } else {
            FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, keys, REAL_C(1.0), tile,
                             keys, V + k0 * D, D, first ? REAL_C(0.0) : REAL_C(1.0), Y_blk, D);
        }
        attn_profile_end(mm->profile, ATTN_PHASE_WEIGHTED_SUM, start,
                         attn_product_flops(rows, hs, summed_keys));
    }
    const uint64_t start = attn_profile_begin(mm->profile);
    for (size_t i = 0; i < rows; i++) {
        if (max[i] == (real)INFINITY)
            FN(row_materialized)(a, mm, D, bh, t0 + i, Q, K, V, row, Y);
        else if (sum[i] == REAL_C(0.0)) /* no weight: 0, not 0 * V (NaN where V is not finite) */
            memset(Y_blk + i * D, 0, hs * sizeof(real));
        else
            FN(scale_row)(Y_blk + i * D, hs, REAL_C(1.0) / sum[i]);
        if (stats != NULL) {
            stats[2 * i] = max[i];
            stats[2 * i + 1] =
                sum[i] == REAL_C(0.0) ? (real)-INFINITY : (real)log((double)sum[i]);
        }
    }
    attn_profile_end(mm->profile, ATTN_PHASE_SOFTMAX, start, 0.0);
}

/* The weights of query block [t0, t0+rows) of one head (P: its rows, ld T)
 * recomputed from the rows' statistics: S = Q_blk K^T,
 * P = exp((scale S - max) - log_sum). */
static void FN(block_weights_from_lse)(const FN(attn_forward_args) *a, const FN(attn_mm) *mm,
                                       size_t D, size_t t0, size_t rows, const real *Q,
                                       FN(head_keys) K, const real *stats, real *P)
{
    const size_t T = a->T, keys = a->causal ? t0 + rows : T;
    FN(scores)(a, mm, D, Q, t0, rows, K, 0, keys, P, T);
    ATTN_PROFILED(mm->profile, ATTN_PHASE_SOFTMAX, 0.0,
                  for (size_t i = 0; i < rows; i++) a->softmax_from_lse(
                      P + i * T, P + i * T, a->causal ? t0 + i + 1 : T, T, a->scale,
                      stats[2 * i], stats[2 * i + 1]));
}

/* ---- the phases -------------------------------------------------------------- */

typedef struct FN(forward_phases) {
    const FN(attn_forward_args) *a;
    const FN(attn_engine) *e;
    size_t D, rows, query_blocks;
    attn_split projections, output; /* their items (engine.h) */
    int prepacked; /* the weights are packed once, for every row block */
    real *Y;       /* the heads: ws heads with Wo, else out */
} FN(forward_phases);

/* Packed weight m (Wq, Wk, Wv, Wo), or NULL: each product packs its own. */
static const real *FN(packed_weight)(const FN(forward_phases) *f, size_t m)
{
    return f->prepacked ? FN(attn_engine_packed)(f->e, m) : NULL;
}

/* Item: Q, K and V over one block of rows and columns, one product sharing
 * X's rows. */
static void FN(projection_item)(void *context, size_t item, unsigned worker)
{
    const FN(forward_phases) *f = context;
    const FN(attn_forward_args) *a = f->a;
    const attn_split *split = &f->projections;
    const size_t D = f->D, r0 = item / split->col_blocks * split->row_block;
    const size_t c0 = item % split->col_blocks * split->col_block;
    const real *W[3] = {a->Wq + c0, a->Wk + c0, a->Wv + c0};
    const real *packed[3] = {FN(packed_weight)(f, 0), FN(packed_weight)(f, 1),
                             FN(packed_weight)(f, 2)};
    real *dst[3] = {a->Q + r0 * D + c0, a->K + r0 * D + c0, a->V + r0 * D + c0};
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    const size_t rows = MIN(split->row_block, f->rows - r0);
    const size_t cols = MIN(split->col_block, D - c0);
    ATTN_PROFILED(mm.profile, ATTN_PHASE_PROJECTIONS, 3 * attn_product_flops(rows, cols, a->C),
                  FN(attn_mm_gemm_shared_a)(&mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, cols, a->C,
                                            REAL_C(1.0), a->X + r0 * a->C, a->C, 3, W, D,
                                            packed[0] != NULL ? packed : NULL, REAL_C(0.0), dst,
                                            D));
}

/* Items: the K blocks of Wq, Wk, Wv, Wo, packed once for every row block of
 * the projections (own threads only). */
static void FN(pack_item)(void *context, size_t item, unsigned worker)
{
    const FN(forward_phases) *f = context;
    const FN(attn_forward_args) *a = f->a;
    const real *const W[4] = {a->Wq, a->Wk, a->Wv, a->Wo};
    ATTN_PROFILED(attn_profile_row(f->e->profile, worker), ATTN_PHASE_PACK, 0.0,
                  FN(attn_engine_pack_item)(f->e, item, 0, a->C, f->D, W));
}

/* Item: one query block of one (batch, head). The last query blocks come
 * first: with a causal mask they cost the most, and handing out the largest
 * items first leaves the least imbalance at the end of the phase. */
static void FN(query_block_item)(void *context, size_t item, unsigned worker)
{
    const FN(forward_phases) *f = context;
    const FN(attn_forward_args) *a = f->a;
    const size_t T = a->T, D = f->D, heads = a->B * a->NH;
    const size_t bh = item % heads;
    const size_t t0 = (f->query_blocks - 1 - item / heads) * ATTN_QUERY_BLOCK;
    const size_t b = bh / a->NH, h = bh % a->NH, rows = MIN((size_t)ATTN_QUERY_BLOCK, T - t0);
    const size_t head = b * T * D + h * a->hs;
    const real *Q = a->Q + head, *V = a->V + head;
    const FN(head_keys) K = {a->K + head, a->KT != NULL ? a->KT + bh * a->hs * T : NULL};
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    real *tile = FN(attn_engine_tile)(f->e, worker);
    if (a->stats != NULL) {
        real *stats = a->stats + 2 * (bh * T + t0);
        FN(block_tiled)(a, &mm, D, bh, t0, rows, Q, K, V, f->Y + head, tile, stats);
        if (a->P != NULL)
            FN(block_weights_from_lse)(a, &mm, D, t0, rows, Q, K, stats,
                                       a->P + bh * T * T + t0 * T);
    } else if (a->P != NULL) {
        FN(block_materialized)(a, &mm, D, bh, t0, rows, Q, K, V, a->P + bh * T * T + t0 * T, T, T,
                               f->Y + head);
    } else if (!a->tiled) {
        const size_t keys = a->causal ? t0 + rows : T;
        FN(block_materialized)(a, &mm, D, bh, t0, rows, Q, K, V, tile, keys, keys, f->Y + head);
    } else {
        FN(block_tiled)(a, &mm, D, bh, t0, rows, Q, K, V, f->Y + head, tile, NULL);
    }
}

/* Item: KT of one (batch, head). */
static void FN(transpose_item)(void *context, size_t item, unsigned worker)
{
    const FN(forward_phases) *f = context;
    const FN(attn_forward_args) *a = f->a;
    ATTN_PROFILED(attn_profile_row(f->e->profile, worker), ATTN_PHASE_TRANSPOSE, 0.0,
                  FN(attn_transpose_head)(a->T, a->NH, a->hs, a->K, a->KT, item));
}

/* Item: out = Y Wo over one block of rows and columns (without Wo: out =
 * Y, the heads a training forward keeps, copied by blocks of rows). */
static void FN(output_item)(void *context, size_t item, unsigned worker)
{
    const FN(forward_phases) *f = context;
    const FN(attn_forward_args) *a = f->a;
    const attn_split *split = &f->output;
    const size_t r0 = item / split->col_blocks * split->row_block;
    const size_t c0 = item % split->col_blocks * split->col_block;
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    const size_t rows = MIN(split->row_block, f->rows - r0);
    if (a->Wo == NULL) {
        memcpy(a->out + r0 * f->D, f->Y + r0 * f->D, rows * f->D * sizeof(real));
        return;
    }
    const size_t cols = MIN(split->col_block, a->C - c0);
    ATTN_PROFILED(mm.profile, ATTN_PHASE_OUTPUT, attn_product_flops(rows, cols, f->D),
                  FN(attn_mm_gemm_prepacked)(&mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, cols, f->D,
                                             REAL_C(1.0), f->Y + r0 * f->D, f->D, a->Wo + c0,
                                             a->C, FN(packed_weight)(f, 3), REAL_C(0.0),
                                             a->out + r0 * a->C + c0, a->C));
}

void FN(attn_forward_run)(const FN(attn_forward_args) *a, const FN(attn_engine) *e)
{
    FN(forward_phases) f = {.a = a, .e = e, .D = a->NH * a->hs, .rows = a->B * a->T};
    f.projections = attn_engine_split_narrow(e->blas, f.rows, f.D);
    f.output = attn_engine_split(e->blas, f.rows, a->Wo != NULL ? a->C : f.D);
    if (a->Wo == NULL) /* the copy of the heads goes by whole rows */
        f.output.col_blocks = 1;
    f.query_blocks = (a->T + ATTN_QUERY_BLOCK - 1) / ATTN_QUERY_BLOCK;
    f.Y = a->Wo != NULL || a->stats != NULL ? a->heads : a->out;

    /* Packing the weights once pays when several row blocks use them whole,
     * in products large enough to be packed at all (a column block of a
     * prepacked weight would need its K blocks at the whole width's
     * offsets, which the kernel does not take). */
    f.prepacked = e->packed != NULL && f.projections.row_blocks > 1 &&
                  f.projections.col_blocks == 1 && f.output.col_blocks == 1 &&
                  !attn_gemm_is_direct(f.projections.row_block, f.D, a->C);
    if (f.prepacked)
        attn_pool_run(e->pool, FN(attn_engine_pack_items)(0, a->C, f.D, a->Wo != NULL),
                      FN(pack_item), &f);
    attn_pool_run(e->pool, f.projections.row_blocks * f.projections.col_blocks,
                  FN(projection_item), &f);
    if (a->sdpa != NULL) {
        FN(attn_sdpa_forward_run)(a->sdpa, e);
    } else {
        if (a->KT != NULL)
            attn_pool_run(e->pool, a->B * a->NH, FN(transpose_item), &f);
        attn_pool_run(e->pool, a->B * a->NH * f.query_blocks, FN(query_block_item), &f);
    }
    if (f.Y != a->out)
        attn_pool_run(e->pool, f.output.row_blocks * f.output.col_blocks, FN(output_item), &f);
}
