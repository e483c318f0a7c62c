/*
 * Backward pass of multi-head attention: every product is a matrix product
 * (matmul.h); the softmax backward is O(T^2) per head, never the O(T^3)
 * Jacobian.
 *
 * Shapes: X (B,T,C); D = NH*hs; Q, K, V, Y, dQ, dK, dV, dY (B*T,D) with head h
 * in columns [h*hs, (h+1)*hs) (leading dimension D); P (T,T) per (b,h); dS
 * (rows, keys) per query block.
 *
 * Each step cites the forward formula (forward.c) it differentiates:
 *   out = Y Wo        ->  dWo = Y^T dout (D,C),  dY = dout Wo^T (B*T,D)
 *                         (without Wo, out = Y and dY = dout)
 *   Y_bh = P V_bh     ->  dV_bh = P^T dY_bh (T,hs),  dP = dY_bh V_bh^T (T,T)
 *                         (by query blocks, causal ones meeting only the keys
 *                         up to their last query, see head_backward)
 *   P = softmax(S)    ->  dS = P o (dP - rowsum(dP o P))   row by row, in place
 *   S = scale Q K^T   ->  dQ_bh = scale dS K_bh,  dK_bh = scale dS^T Q_bh (T,hs)
 *   Q = X Wq, ...     ->  dWq = X^T dQ, dWk = X^T dK, dWv = X^T dV (C,D)
 *                         dX = dQ Wq^T + dK Wk^T + dV Wv^T (B*T,C)
 * Three phases of work items (engine.h): the Wo products (rows of dWo, rows
 * of dY); the heads, one (batch, head) per item; the weight gradients (rows
 * of dWq, dWk, dWv) and dX (rows).
 */
#include "backward.h"

#include "tiling.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* dS = P o (dP - <dP, P>) for one row of n_valid unmasked entries out of n;
 * masked entries (P = 0) get dS = 0. dP is overwritten by dS. */
static void FN(softmax_backward_row)(const real *P, real *dP, size_t n_valid, size_t n)
{
    real dot = REAL_C(0.0);
    for (size_t j = 0; j < n_valid; j++)
        dot += dP[j] * P[j];
    for (size_t j = 0; j < n_valid; j++)
        dP[j] = P[j] * (dP[j] - dot);
    for (size_t j = n_valid; j < n; j++)
        dP[j] = REAL_C(0.0);
}

/*
 * One head. P (T,T); dY, Q, K, V, dQ, dK, dV (T,hs) with leading dimension
 * D; dS: one block of ATTN_QUERY_BLOCK rows. Query block [t0,t1) meets keys
 * [0,t1) with a causal mask (P and dS vanish beyond), all T without. Blocks
 * run from the last to the first: the last meets every key, so its products
 * initialize dK and dV (beta 0) and the earlier ones accumulate into their
 * leading rows (beta 1).
 */
static void FN(head_backward)(const FN(attn_backward_args) *a, const FN(attn_mm) *mm, size_t D,
                              const real *P, const real *dY, const real *Q, const real *K,
                              const real *V, real *dQ, real *dK, real *dV, real *dS)
{
    const size_t T = a->T, hs = a->hs;
    const size_t blocks = (T + ATTN_QUERY_BLOCK - 1) / ATTN_QUERY_BLOCK;
    for (size_t index = blocks; index-- > 0;) {
        const size_t t0 = index * ATTN_QUERY_BLOCK, rows = MIN((size_t)ATTN_QUERY_BLOCK, T - t0);
        const size_t keys = a->causal ? t0 + rows : T;
        const real accumulate = index + 1 < blocks ? REAL_C(1.0) : REAL_C(0.0);
        const real *P_blk = P + t0 * T;
        FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, keys, hs, rows, REAL_C(1.0), P_blk, T,
                         dY + t0 * D, D, accumulate, dV, D);
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_TRANS, rows, keys, hs, REAL_C(1.0), dY + t0 * D,
                         D, V, D, REAL_C(0.0), dS, keys);
        for (size_t i = 0; i < rows; i++)
            FN(softmax_backward_row)(P_blk + i * T, dS + i * keys, a->causal ? t0 + i + 1 : T,
                                     keys);
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, keys, a->scale, dS, keys, K,
                         D, REAL_C(0.0), dQ + t0 * D, D);
        FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, keys, hs, rows, a->scale, dS, keys,
                         Q + t0 * D, D, accumulate, dK, D);
    }
}

/* ---- the phases -------------------------------------------------------------- */

typedef struct FN(backward_phases) {
    const FN(attn_backward_args) *a;
    const FN(attn_engine) *e;
    size_t D, rows;
    size_t D_block, D_blocks;       /* rows of dWo per item */
    size_t C_block, C_blocks;       /* rows of dWq, dWk, dWv per item */
    size_t row_block, row_blocks;   /* rows of dY and dX per item */
    const real *dY;
} FN(backward_phases);

static size_t FN(blocks_of)(size_t n, size_t block)
{
    return (n + block - 1) / block;
}

/* Items: rows of dWo = Y^T dout (D_blocks), then rows of dY = dout Wo^T. */
static void FN(output_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_backward_args) *a = f->a;
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    const size_t C = a->C, D = f->D;
    if (item < f->D_blocks) {
        const size_t r0 = item * f->D_block;
        FN(attn_mm_gemm)(&mm, ATTN_TRANS, ATTN_NO_TRANS, MIN(f->D_block, D - r0), C, f->rows,
                         REAL_C(1.0), a->heads + r0, D, a->dout, C, REAL_C(0.0), a->dWo + r0 * C,
                         C);
        return;
    }
    const size_t r0 = (item - f->D_blocks) * f->row_block;
    FN(attn_mm_gemm)(&mm, ATTN_NO_TRANS, ATTN_TRANS, MIN(f->row_block, f->rows - r0), D, C,
                     REAL_C(1.0), a->dout + r0 * C, C, a->Wo, C, REAL_C(0.0), a->dheads + r0 * D,
                     D);
}

/* Item: one (batch, head). */
static void FN(head_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_backward_args) *a = f->a;
    const size_t T = a->T, b = item / a->NH, h = item % a->NH;
    const size_t head = b * T * f->D + h * a->hs;
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    FN(head_backward)(a, &mm, f->D, a->P + item * T * T, f->dY + head, a->Q + head, a->K + head,
                      a->V + head, a->dQ + head, a->dK + head, a->dV + head,
                      FN(attn_engine_tile)(f->e, worker));
}

/* Items: rows of dWq, dWk, dWv (3 x C_blocks), then rows of dX. */
static void FN(input_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_backward_args) *a = f->a;
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    const size_t C = a->C, D = f->D;
    const real *dQKV[3] = {a->dQ, a->dK, a->dV};
    if (item < 3 * f->C_blocks) {
        const size_t which = item / f->C_blocks, r0 = item % f->C_blocks * f->C_block;
        real *dW = which == 0 ? a->dWq : which == 1 ? a->dWk : a->dWv;
        FN(attn_mm_gemm)(&mm, ATTN_TRANS, ATTN_NO_TRANS, MIN(f->C_block, C - r0), D, f->rows,
                         REAL_C(1.0), a->X + r0, C, dQKV[which], D, REAL_C(0.0), dW + r0 * D, D);
        return;
    }
    const size_t r0 = (item - 3 * f->C_blocks) * f->row_block;
    const size_t rows = MIN(f->row_block, f->rows - r0);
    const real *W[3] = {a->Wq, a->Wk, a->Wv};
    for (int which = 0; which < 3; which++)
        FN(attn_mm_gemm)(&mm, ATTN_NO_TRANS, ATTN_TRANS, rows, C, D, REAL_C(1.0),
                         dQKV[which] + r0 * D, D, W[which], D,
                         which == 0 ? REAL_C(0.0) : REAL_C(1.0), a->dX + r0 * C, C);
}

void FN(attn_backward_run)(const FN(attn_backward_args) *a, const FN(attn_engine) *e)
{
    FN(backward_phases) f = {.a = a, .e = e, .D = a->NH * a->hs, .rows = a->B * a->T};
    f.D_block = FN(attn_engine_row_block)(e, f.D);
    f.C_block = FN(attn_engine_row_block)(e, a->C);
    f.row_block = FN(attn_engine_row_block)(e, f.rows);
    f.D_blocks = FN(blocks_of)(f.D, f.D_block);
    f.C_blocks = FN(blocks_of)(a->C, f.C_block);
    f.row_blocks = FN(blocks_of)(f.rows, f.row_block);
    f.dY = a->dout;
    if (a->Wo != NULL) {
        attn_pool_run(e->pool, f.D_blocks + f.row_blocks, FN(output_item), &f);
        f.dY = a->dheads;
    }
    attn_pool_run(e->pool, a->B * a->NH, FN(head_item), &f);
    attn_pool_run(e->pool, 3 * f.C_blocks + f.row_blocks, FN(input_item), &f);
}
