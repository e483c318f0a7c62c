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
 * Phases of work items (engine.h): the Wo products (rows of dWo, rows of
 * dY); the heads, one (batch, head) per item (head_backward), or, on the
 * plan's own threads with fewer than ATTN_HEADS_PER_ITEM_MIN heads, query
 * blocks then key blocks of every head (query_block_backward,
 * key_block_backward, with dS of every head kept between them); the weight gradients (rows of dWq, dWk, dWv) and dX
 * (rows).
 */
#include "backward.h"

#include "tiling.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

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
                              const real *V, const real *VT, real *dQ, real *dK, real *dV,
                              real *dS)
{
    const size_t T = a->T, hs = a->hs;
    const size_t blocks = (T + ATTN_QUERY_BLOCK - 1) / ATTN_QUERY_BLOCK;
    for (size_t index = blocks; index-- > 0;) {
        const size_t t0 = index * ATTN_QUERY_BLOCK, rows = MIN((size_t)ATTN_QUERY_BLOCK, T - t0);
        const size_t keys = a->causal ? t0 + rows : T;
        const real accumulate = index + 1 < blocks ? REAL_C(1.0) : REAL_C(0.0);
        const real *P_blk = P + t0 * T;
        const double flops = attn_product_flops(rows, keys, hs);
        ATTN_PROFILED(mm->profile, ATTN_PHASE_BACKWARD_VALUES, flops,
                      FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, keys, hs, rows, REAL_C(1.0),
                                       P_blk, T, dY + t0 * D, D, accumulate, dV, D));
        uint64_t start = attn_profile_begin(mm->profile);
        if (VT != NULL) /* dS = dY V^T, from V transposed on the own kernel */
            FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, keys, hs, REAL_C(1.0),
                             dY + t0 * D, D, VT, T, REAL_C(0.0), dS, keys);
        else
            FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_TRANS, rows, keys, hs, REAL_C(1.0),
                             dY + t0 * D, D, V, D, REAL_C(0.0), dS, keys);
        attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_WEIGHTS, start, flops);
        start = attn_profile_begin(mm->profile);
        for (size_t i = 0; i < rows; i++)
            a->softmax_backward(P_blk + i * T, dS + i * keys, a->causal ? t0 + i + 1 : T, keys,
                                NULL);
        attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_SOFTMAX, start, 0.0);
        start = attn_profile_begin(mm->profile);
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, keys, a->scale, dS, keys, K,
                         D, REAL_C(0.0), dQ + t0 * D, D);
        FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, keys, hs, rows, a->scale, dS, keys,
                         Q + t0 * D, D, accumulate, dK, D);
        attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_SCORES, start, 2 * flops);
    }
}

/*
 * The same head on a plan's own threads, in two phases of blocks so that
 * one head keeps every thread busy (FlashAttention-2's split), with dS kept
 * whole (T,T) between them and V^T copied out once per head (VT), as the own
 * kernel wants:
 *   query block [t0,t1):  dS = P o (dY V^T - rowsum(dP o P)),  dQ_blk = scale dS K
 *   key block [k0,k1):    the queries that see it, q >= k0 with a causal
 *                         mask: dV_blk = P[:, blk]^T dY,  dK_blk = scale dS[:, blk]^T Q
 * A causal query block writes dS up to its own last key, a key block reads
 * it from its own first query on: with blocks of one size, every entry read
 * was written (0 where masked).
 */
static void FN(query_block_backward)(const FN(attn_backward_args) *a, const FN(attn_mm) *mm,
                                     size_t D, size_t t0, const real *P, const real *dY,
                                     const real *K, const real *VT, real *dQ, real *dS)
{
    const size_t T = a->T, hs = a->hs, rows = MIN((size_t)ATTN_QUERY_BLOCK, T - t0);
    const size_t keys = a->causal ? t0 + rows : T;
    real *dS_blk = dS + t0 * T;
    const double flops = attn_product_flops(rows, keys, hs);
    ATTN_PROFILED(mm->profile, ATTN_PHASE_BACKWARD_WEIGHTS, flops,
                  FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, keys, hs, REAL_C(1.0),
                                   dY + t0 * D, D, VT, T, REAL_C(0.0), dS_blk, T));
    const uint64_t start = attn_profile_begin(mm->profile);
    for (size_t i = 0; i < rows; i++)
        a->softmax_backward(P + (t0 + i) * T, dS_blk + i * T, a->causal ? t0 + i + 1 : T, keys,
                            NULL);
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_SOFTMAX, start, 0.0);
    ATTN_PROFILED(mm->profile, ATTN_PHASE_BACKWARD_SCORES, flops,
                  FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, keys, a->scale,
                                   dS_blk, T, K, D, REAL_C(0.0), dQ + t0 * D, D));
}

static void FN(key_block_backward)(const FN(attn_backward_args) *a, const FN(attn_mm) *mm,
                                   size_t D, size_t k0, const real *P, const real *dY,
                                   const real *Q, const real *dS, real *dK, real *dV)
{
    const size_t T = a->T, hs = a->hs, kc = MIN((size_t)ATTN_QUERY_BLOCK, T - k0);
    const size_t q0 = a->causal ? k0 : 0, queries = T - q0;
    const double flops = attn_product_flops(kc, hs, queries);
    ATTN_PROFILED(mm->profile, ATTN_PHASE_BACKWARD_VALUES, flops,
                  FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, kc, hs, queries, REAL_C(1.0),
                                   P + q0 * T + k0, T, dY + q0 * D, D, REAL_C(0.0),
                                   dV + k0 * D, D));
    ATTN_PROFILED(mm->profile, ATTN_PHASE_BACKWARD_SCORES, flops,
                  FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, kc, hs, queries, a->scale,
                                   dS + q0 * T + k0, T, Q + q0 * D, D, REAL_C(0.0),
                                   dK + k0 * D, D));
}

/* ---- the phases -------------------------------------------------------------- */

typedef struct FN(backward_phases) {
    const FN(attn_backward_args) *a;
    const FN(attn_engine) *e;
    size_t D, rows;
    size_t D_block, D_blocks;       /* rows of dWo per item */
    size_t C_block, C_blocks;       /* rows of dWq, dWk, dWv per item */
    size_t row_block, row_blocks;   /* rows of dY and dX per item */
    int prepacked;                  /* Wq^T, Wk^T, Wv^T, Wo^T are packed once */
    const real *dY;
} FN(backward_phases);

/* Packed transposed weight m (Wq, Wk, Wv, Wo), or NULL. */
static const real *FN(packed_weight)(const FN(backward_phases) *f, size_t m)
{
    return f->prepacked ? FN(attn_engine_packed)(f->e, m) : NULL;
}

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
        const size_t r0 = item * f->D_block, rows = MIN(f->D_block, D - r0);
        ATTN_PROFILED(mm.profile, ATTN_PHASE_BACKWARD_OUTPUT, attn_product_flops(rows, C, f->rows),
                      FN(attn_mm_gemm)(&mm, ATTN_TRANS, ATTN_NO_TRANS, rows, C, f->rows,
                                       REAL_C(1.0), a->heads + r0, D, a->dout, C, REAL_C(0.0),
                                       a->dWo + r0 * C, C));
        return;
    }
    const size_t r0 = (item - f->D_blocks) * f->row_block, rows = MIN(f->row_block, f->rows - r0);
    ATTN_PROFILED(mm.profile, ATTN_PHASE_BACKWARD_OUTPUT, attn_product_flops(rows, D, C),
                  FN(attn_mm_gemm_prepacked)(&mm, ATTN_NO_TRANS, ATTN_TRANS, rows, D, C,
                                             REAL_C(1.0), a->dout + r0 * C, C, a->Wo, C,
                                             FN(packed_weight)(f, 3), REAL_C(0.0),
                                             a->dheads + r0 * D, D));
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
                      a->V + head, a->VT != NULL ? a->VT + item * a->hs * T : NULL,
                      a->dQ + head, a->dK + head, a->dV + head, FN(attn_engine_tile)(f->e, worker));
}

/* Items: the K blocks of Wq^T, Wk^T, Wv^T (for dX) and Wo^T (for dY), packed
 * once for every row block (own threads only). */
static void FN(pack_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_backward_args) *a = f->a;
    const real *const W[4] = {a->Wq, a->Wk, a->Wv, a->Wo};
    ATTN_PROFILED(attn_profile_row(f->e->profile, worker), ATTN_PHASE_BACKWARD_PACK, 0.0,
                  FN(attn_engine_pack_item)(f->e, item, 1, a->C, f->D, W));
}

/* Items of the split heads: query blocks (phase 1) or key blocks (phase 2)
 * of every (batch, head); item = block * B*NH + head. */
static void FN(split_head_item)(const FN(backward_phases) *f, size_t item, unsigned worker,
                                int key_phase)
{
    const FN(attn_backward_args) *a = f->a;
    const size_t T = a->T, heads = a->B * a->NH, bh = item % heads;
    const size_t blocks = (T + ATTN_QUERY_BLOCK - 1) / ATTN_QUERY_BLOCK;
    const size_t block = item / heads;
    const size_t head = bh / a->NH * T * f->D + bh % a->NH * a->hs;
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    const real *P = a->P + bh * T * T, *VT = a->VT + bh * a->hs * T;
    real *dS = a->dS + bh * T * T;
    if (!key_phase) /* the last query blocks, the dearest with a mask, first */
        FN(query_block_backward)(a, &mm, f->D, (blocks - 1 - block) * ATTN_QUERY_BLOCK, P,
                                 f->dY + head, a->K + head, VT, a->dQ + head, dS);
    else /* the first key blocks, seen by the most queries, first */
        FN(key_block_backward)(a, &mm, f->D, block * ATTN_QUERY_BLOCK, P, f->dY + head,
                               a->Q + head, dS, a->dK + head, a->dV + head);
}

/* Item: VT of one (batch, head). */
static void FN(transpose_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_backward_args) *a = f->a;
    ATTN_PROFILED(attn_profile_row(f->e->profile, worker), ATTN_PHASE_BACKWARD_TRANSPOSE, 0.0,
                  FN(attn_transpose_head)(a->T, a->NH, a->hs, a->V, a->VT, item));
}

static void FN(query_block_item)(void *context, size_t item, unsigned worker)
{
    FN(split_head_item)(context, item, worker, 0);
}

static void FN(key_block_item)(void *context, size_t item, unsigned worker)
{
    FN(split_head_item)(context, item, worker, 1);
}

/* Items: rows of dWq, dWk, dWv together (C_blocks: one product sharing
 * X^T's rows), then rows of dX. */
static void FN(input_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_backward_args) *a = f->a;
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    const size_t C = a->C, D = f->D;
    const real *dQKV[3] = {a->dQ, a->dK, a->dV};
    if (item < f->C_blocks) {
        const size_t r0 = item * f->C_block, rows = MIN(f->C_block, C - r0);
        real *dW[3] = {a->dWq + r0 * D, a->dWk + r0 * D, a->dWv + r0 * D};
        ATTN_PROFILED(mm.profile, ATTN_PHASE_BACKWARD_PROJECTIONS,
                      3 * attn_product_flops(rows, D, f->rows),
                      FN(attn_mm_gemm_shared_a)(&mm, ATTN_TRANS, ATTN_NO_TRANS, rows, D, f->rows,
                                                REAL_C(1.0), a->X + r0, C, 3, dQKV, D, NULL,
                                                REAL_C(0.0), dW, D));
        return;
    }
    const size_t r0 = (item - f->C_blocks) * f->row_block;
    const size_t rows = MIN(f->row_block, f->rows - r0);
    const real *W[3] = {a->Wq, a->Wk, a->Wv};
    const uint64_t start = attn_profile_begin(mm.profile);
    for (size_t which = 0; which < 3; which++)
        FN(attn_mm_gemm_prepacked)(&mm, ATTN_NO_TRANS, ATTN_TRANS, rows, C, D, REAL_C(1.0),
                                   dQKV[which] + r0 * D, D, W[which], D,
                                   FN(packed_weight)(f, which),
                                   which == 0 ? REAL_C(0.0) : REAL_C(1.0), a->dX + r0 * C, C);
    attn_profile_end(mm.profile, ATTN_PHASE_BACKWARD_INPUT, start,
                     3 * attn_product_flops(rows, C, D));
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
    f.prepacked = e->packed != NULL && f.row_blocks > 1 &&
                  !attn_gemm_is_direct(f.row_block, a->C, f.D);
    if (f.prepacked)
        attn_pool_run(e->pool, FN(attn_engine_pack_items)(1, a->C, f.D, a->Wo != NULL),
                      FN(pack_item), &f);
    if (a->Wo != NULL) {
        attn_pool_run(e->pool, f.D_blocks + f.row_blocks, FN(output_item), &f);
        f.dY = a->dheads;
    }
    const size_t heads = a->B * a->NH;
    if (!e->blas)
        attn_pool_run(e->pool, heads, FN(transpose_item), &f);
    if (e->blas || heads >= ATTN_HEADS_PER_ITEM_MIN) {
        attn_pool_run(e->pool, heads, FN(head_item), &f);
    } else {
        const size_t items = heads * ((a->T + ATTN_QUERY_BLOCK - 1) / ATTN_QUERY_BLOCK);
        attn_pool_run(e->pool, items, FN(query_block_item), &f);
        attn_pool_run(e->pool, items, FN(key_block_item), &f);
    }
    attn_pool_run(e->pool, f.C_blocks + f.row_blocks, FN(input_item), &f);
}
