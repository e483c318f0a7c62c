/*
 * Forward pass of multi-head scaled dot-product attention.
 *
 * Shapes: X (B,T,C); Wq, Wk, Wv (C,D) with D = NH*hs; Wo (D,C) or none.
 *   Q = X Wq, K = X Wk, V = X Wv            (B*T, D)   three GEMMs over all rows
 *   for each batch element b and head h (columns [h*hs, (h+1)*hs) of Q, K, V
 *   and Y, addressed in place with leading dimension D, no copies):
 *     Y_bh = softmax_rows(scale * Q_bh K_bh^T [+ causal mask]) V_bh   (T,hs)
 *   out = Y Wo (B*T, C) with Wo, else out = Y (B*T, D)               GEMM
 *
 * Two paths compute a head:
 *  - materialized: S = Q K^T (T,T) as GEMMs, the fused row softmax in place
 *    (giving the weights P), then P V. With a causal mask the queries go in
 *    blocks of ATTN_CAUSAL_QUERY_BLOCK and block [t0,t1) only meets keys
 *    [0,t1): the GEMMs never compute above the diagonal's block row, and
 *    the diagonal block's P V is triangular (TRMM), so that a query never
 *    multiplies the value of a later key, even by a weight of 0.
 *  - tiled (FlashAttention-style, when P is not wanted): for each block of
 *    ATTN_TILE_QUERIES queries, loop over blocks of ATTN_TILE_KEYS keys:
 *    S_tile = Q_blk K_blk^T (GEMM), online softmax (running max and sum per
 *    query, partial output rescaled by alpha), Y_blk += P_tile V_blk (GEMM);
 *    key blocks wholly above the diagonal are skipped. Memory is O(T): one
 *    tile, not the T*T matrix. A query row whose scores reach +inf is redone
 *    on its own (one row of T) by the materialized row kernel.
 */
#include <math.h>
#include <string.h>

#include <attn/attn.h>

#include "blas.h"
#include "forward.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* Y (rows,hs) = tril(P_diag) V_diag for the diagonal block of a causal query
 * block: V's rows are copied into Y, then multiplied in place by the lower
 * triangle (TRMM). Row t thus never meets V rows after t, whose weight is 0:
 * a NaN there stays out of row t (0 * NaN would be NaN). Y and V have ld D,
 * P_diag has ld ldp. */
static void FN(causal_diagonal_block)(size_t rows, size_t hs, size_t D, const real *P_diag,
                                      size_t ldp, const real *V, real *Y)
{
    for (size_t i = 0; i < rows; i++)
        memcpy(Y + i * D, V + i * D, hs * sizeof(real));
    FN(attn_trmm_lower)(rows, hs, P_diag, ldp, Y, D);
}

/* One head, materialized. Q, K, V, Y (T,hs) with ld D; P (T,T). */
static void FN(head_materialized)(const FN(attn_forward_args) *a, size_t D, const real *Q,
                                  const real *K, const real *V, real *P, real *Y)
{
    const size_t T = a->T, hs = a->hs;
    const size_t block = a->causal ? ATTN_CAUSAL_QUERY_BLOCK : T;
    for (size_t t0 = 0; t0 < T; t0 += block) {
        const size_t rows = MIN(block, T - t0);
        const size_t keys = a->causal ? t0 + rows : T;
        FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, keys, hs, REAL_C(1.0), Q + t0 * D, D, K,
                      D, REAL_C(0.0), P + t0 * T, T);
        for (size_t t = t0; t < t0 + rows; t++)
            a->softmax_row(P + t * T, P + t * T, a->causal ? t + 1 : T, T, a->scale);
        if (!a->causal) {
            FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, keys, REAL_C(1.0), P + t0 * T,
                          T, V, D, REAL_C(0.0), Y + t0 * D, D);
            continue;
        }
        /* keys [t0, t1) triangular, keys [0, t0) seen by every row of the block */
        FN(causal_diagonal_block)(rows, hs, D, P + t0 * T + t0, T, V + t0 * D, Y + t0 * D);
        if (t0 > 0)
            FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, t0, REAL_C(1.0), P + t0 * T, T,
                          V, D, REAL_C(1.0), Y + t0 * D, D);
    }
}

/* Query t of one head recomputed alone through a row of its visible keys. */
static void FN(row_materialized)(const FN(attn_forward_args) *a, size_t D, size_t t,
                                 const real *Q, const real *K, const real *V, real *row, real *Y)
{
    const size_t keys = a->causal ? t + 1 : a->T, hs = a->hs;
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, 1, keys, hs, REAL_C(1.0), Q + t * D, D, K, D,
                  REAL_C(0.0), row, keys);
    a->softmax_row(row, row, keys, keys, a->scale);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, 1, hs, keys, REAL_C(1.0), row, keys, V, D,
                  REAL_C(0.0), Y + t * D, D);
}

static void FN(scale_row)(real *y, size_t n, real factor)
{
    for (size_t i = 0; i < n; i++)
        y[i] *= factor;
}

/* One head, tiled. Q, K, V, Y (T,hs) with ld D; work attn_tiled_workspace(T). */
static void FN(head_tiled)(const FN(attn_forward_args) *a, size_t D, const real *Q,
                           const real *K, const real *V, real *Y, real *work)
{
    const size_t T = a->T, hs = a->hs;
    real *tile = work;
    real *max = tile + (size_t)ATTN_TILE_QUERIES * ATTN_TILE_KEYS;
    real *sum = max + ATTN_TILE_QUERIES;
    real *alpha = sum + ATTN_TILE_QUERIES;
    real *row = alpha + ATTN_TILE_QUERIES;

    for (size_t t0 = 0; t0 < T; t0 += ATTN_TILE_QUERIES) {
        const size_t rows = MIN((size_t)ATTN_TILE_QUERIES, T - t0);
        const size_t key_end = a->causal ? t0 + rows : T;
        real *Y_blk = Y + t0 * D;
        for (size_t i = 0; i < rows; i++) {
            max[i] = -ATTN_REAL_MAX;
            sum[i] = REAL_C(0.0);
        }
        /* Key blocks from the last to the first: with a causal mask the last
         * holds the diagonal, whose product must be triangular (see
         * causal_diagonal_block), and coming first it can write Y_blk. */
        const size_t key_blocks = (key_end + ATTN_TILE_KEYS - 1) / ATTN_TILE_KEYS;
        for (size_t index = key_blocks; index-- > 0;) {
            const size_t k0 = index * ATTN_TILE_KEYS;
            const size_t keys = MIN((size_t)ATTN_TILE_KEYS, key_end - k0);
            const int first = index + 1 == key_blocks;
            FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, keys, hs, REAL_C(1.0), Q + t0 * D, D,
                          K + k0 * D, D, REAL_C(0.0), tile, keys);
            for (size_t i = 0; i < rows; i++) {
                const size_t visible = t0 + i + 1 > k0 ? t0 + i + 1 - k0 : 0;
                const size_t n_valid = a->causal ? MIN(visible, keys) : keys;
                alpha[i] = a->softmax_online(tile + i * keys, tile + i * keys, n_valid, keys,
                                             a->scale, &max[i], &sum[i]);
                if (!first && alpha[i] != REAL_C(1.0))
                    FN(scale_row)(Y_blk + i * D, hs, alpha[i] < REAL_C(0.0) ? REAL_C(0.0) : alpha[i]);
            }
            if (a->causal && first) {
                const size_t diagonal = t0 - k0; /* tile column of key t0 */
                FN(causal_diagonal_block)(rows, hs, D, tile + diagonal, keys, V + t0 * D, Y_blk);
                if (diagonal > 0)
                    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, diagonal, REAL_C(1.0),
                                  tile, keys, V + k0 * D, D, REAL_C(1.0), Y_blk, D);
            } else {
                FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, keys, REAL_C(1.0), tile, keys,
                              V + k0 * D, D, first ? REAL_C(0.0) : REAL_C(1.0), Y_blk, D);
            }
        }
        for (size_t i = 0; i < rows; i++) {
            if (max[i] == (real)INFINITY)
                FN(row_materialized)(a, D, t0 + i, Q, K, V, row, Y);
            else
                FN(scale_row)(Y_blk + i * D, hs,
                              sum[i] == REAL_C(0.0) ? REAL_C(0.0) : REAL_C(1.0) / sum[i]);
        }
    }
}

void FN(attn_forward_run)(const FN(attn_forward_args) *a, const FN(attn_forward_workspace) *ws)
{
    const size_t B = a->B, T = a->T, C = a->C, NH = a->NH, hs = a->hs;
    const size_t D = NH * hs, rows = B * T;
    const real one = REAL_C(1.0), zero = REAL_C(0.0);

    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, D, C, one, a->X, C, a->Wq, D, zero, ws->Q, D);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, D, C, one, a->X, C, a->Wk, D, zero, ws->K, D);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, D, C, one, a->X, C, a->Wv, D, zero, ws->V, D);

    real *Y = a->Wo != NULL ? ws->heads : a->out;
    for (size_t b = 0; b < B; b++) {
        for (size_t h = 0; h < NH; h++) {
            const size_t head = b * T * D + h * hs;
            const real *Q = ws->Q + head, *K = ws->K + head, *V = ws->V + head;
            if (a->P != NULL)
                FN(head_materialized)(a, D, Q, K, V, a->P + (b * NH + h) * T * T, Y + head);
            else if (ws->scores != NULL)
                FN(head_materialized)(a, D, Q, K, V, ws->scores, Y + head);
            else
                FN(head_tiled)(a, D, Q, K, V, Y + head, ws->tiled);
        }
    }
    if (a->Wo != NULL)
        FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, C, D, one, Y, D, a->Wo, C, zero, a->out,
                      C);
}
