/*
 * Backward pass of multi-head attention: every product is a matrix product
 * (matmul.h); the softmax backward is O(T^2) work per head, never the O(T^3)
 * Jacobian, and O(T) memory: the weights are recomputed from the forward's
 * log-sum-exp block by block, never stored.
 *
 * Shapes: X (B,T,C); D = NH*hs; Q, K, V, Y, dQ, dK, dV, dY (B*T,D) with head h
 * in columns [h*hs, (h+1)*hs) (leading dimension D); stats (T,2), rowdot (T) per
 * (b,h); P and dS tiles of at most ATTN_QUERY_BLOCK x ATTN_QUERY_BLOCK.
 *
 * Each step cites the forward formula (forward.c) it differentiates:
 *   out = Y Wo        ->  dWo = Y^T dout (D,C),  dY = dout Wo^T (B*T,D)
 *                         (without Wo, out = Y and dY = dout)
 *   Y_bh = Pd V_bh    ->  dV_bh = Pd^T dY_bh (T,hs),  dPd = dY_bh V_bh^T (T,T)
 *   Pd = P o Md       ->  dP = dPd o Md  (dropout: Md = M/(1-p) regenerated from the
 *                         forward's seed and offset; without it Pd = P)
 *   P = softmax(S)    ->  dS = P o (dP - rowdot),  rowdot_t = <dP_t, P_t> = <dY_t, Y_t>
 *                         (sum_j P dP = sum_j Pd <dY_t, V_j> = <dY_t, Y_t> with dropout too)
 *   S = scale Q K^T   ->  dQ_bh = scale dS K_bh,  dK_bh = scale dS^T Q_bh (T,hs)
 *   Q = X Wq, ...     ->  dWq = X^T dQ, dWk = X^T dK, dWv = X^T dV (C,D)
 *                         dX = dQ Wq^T + dK Wk^T + dV Wv^T (B*T,C)
 * the middle three by tiles of (key block, query block), see
 * head_group_backward. Phases of work items (engine.h): the Wo products
 * (rows of dWo, rows of dY); V^T of each head (own threads); rowdot of each
 * head; the heads, one group of key blocks of one (batch, head) per item;
 * the sums of the groups' dQ parts; the weight gradients (rows of dWq, dWk,
 * dWv) and dX (rows).
 */
#include <string.h>

#include "engine/backward.h"

#include "engine/tiling.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/*
 * The heads, from the forward's row statistics (FlashAttention-2's backward):
 * nothing of size T x T is formed. For each key block j (keys [k0, k1)) and
 * each query block i (queries [t0, t1)) that sees it, with the statistics
 * (max, log_sum) and rowdot of the block's queries:
 *   S = Q_i K_j^T,  P = exp((scale S - max) - log_sum)   (P = softmax(scale Q K^T))
 *   dV_j += P^T dY_i                         (Y = P V)
 *   dP = dY_i V_j^T
 *   dS = P o (dP - rowdot)                   (rowdot_t = <dY_t, Y_t> = <dP_t, P_t>)
 *   dK_j += scale dS^T Q_i,  dQ_i += scale dS K_j   (S = scale Q K^T)
 * S/P and dP/dS are tiles of at most ATTN_QUERY_BLOCK x ATTN_QUERY_BLOCK in
 * the worker's scratch (ld TILE_LD). With a causal mask a key block is seen
 * by query blocks i >= j only, the diagonal one up to each query's own key.
 * An item is one (batch, head) and one group of its key blocks (j = g,
 * g + G, ...): G = 1 (the item owns dQ of the head) from
 * ATTN_HEADS_PER_ITEM_MIN heads on, else a few groups per head so that one
 * head keeps every thread busy, each adding its dQ into a part of its own
 * that a last phase sums in group order. G depends on the shape alone.
 */
#define TILE_LD ATTN_BACKWARD_TILE_LD

/* One head's arrays: Q, K, V, dY, dQ, dK, dV (T,hs) with ld D (dQ with ld
 * ldq), KT and VT (hs,T) or NULL, stats (T,2) and rowdot (T). */
typedef struct FN(head_arrays) {
    const real *Q, *K, *V, *dY, *KT, *VT, *stats, *rowdot;
    real *dQ, *dK, *dV;
    size_t ldq;
    size_t b, h; /* its sequence and head: the key of its dropout draws */
} FN(head_arrays);

/* Keys of block [k0, k0+kc) that query t sees. */
static size_t FN(visible_keys)(const FN(attn_backward_args) *a, size_t t, size_t k0, size_t kc)
{
    if (!a->causal)
        return kc;
    return t < k0 ? 0 : MIN(kc, t - k0 + 1);
}

/* The products of key block [k0, k0+kc) with query block [t0, t0+rows). */
static void FN(tile_backward)(const FN(attn_backward_args) *a, const FN(attn_mm) *mm, size_t D,
                              const FN(head_arrays) *h, size_t k0, size_t kc, size_t t0,
                              size_t rows, int first_for_keys, int first_for_queries,
                              real *P, real *dS)
{
    const size_t T = a->T, hs = a->hs;
    const double flops = attn_product_flops(rows, kc, hs);
    uint64_t start = attn_profile_begin(mm->profile);
    if (h->KT != NULL)
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, kc, hs, REAL_C(1.0),
                         h->Q + t0 * D, D, h->KT + k0, T, REAL_C(0.0), P, TILE_LD);
    else
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_TRANS, rows, kc, hs, REAL_C(1.0), h->Q + t0 * D,
                         D, h->K + k0 * D, D, REAL_C(0.0), P, TILE_LD);
    for (size_t r = 0; r < rows; r++)
        a->softmax_from_lse(P + r * TILE_LD, P + r * TILE_LD,
                            FN(visible_keys)(a, t0 + r, k0, kc), kc, a->scale,
                            h->stats[2 * (t0 + r)], h->stats[2 * (t0 + r) + 1]);
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_RECOMPUTE, start, flops);

    /* The causal diagonal block (k0 = t0, kc = rows) is lower triangular:
     * its three products that pair a key with the queries before it (P^T dY,
     * dS^T Q, dS K) are triangular, so that a NaN or Inf in dY, Q or K of a
     * pair the mask removes reaches no gradient (zero weights times it
     * would). */
    const int diagonal = a->causal && k0 == t0;
    const real beta_keys = first_for_keys ? REAL_C(0.0) : REAL_C(1.0);
    start = attn_profile_begin(mm->profile);
    if (h->VT != NULL)
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, kc, hs, REAL_C(1.0),
                         h->dY + t0 * D, D, h->VT + k0, T, REAL_C(0.0), dS, TILE_LD);
    else
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_TRANS, rows, kc, hs, REAL_C(1.0),
                         h->dY + t0 * D, D, h->V + k0 * D, D, REAL_C(0.0), dS, TILE_LD);
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_WEIGHTS, start, flops);
    start = attn_profile_begin(mm->profile);
    real factors[TILE_LD]; /* a row's dropout factors */
    for (size_t r = 0; r < rows; r++) {
        const size_t n = FN(visible_keys)(a, t0 + r, k0, kc);
        /* a query that sees a single key has P = 1 whatever its score: dS = 0
         * exactly (dP - rowdot would leave their rounding difference) */
        if (a->causal ? t0 + r == 0 : T == 1) {
            memset(dS + r * TILE_LD, 0, kc * sizeof(real));
            FN(attn_dropout_row)(a->dropout, a->dropout_mask, h->b, h->h, t0 + r, k0, n,
                                 P + r * TILE_LD, NULL);
        } else {
            /* dP = (dY V^T) o M/(1-p) with dropout, the row's draws made
             * once; P itself is dropped after the softmax backward, for dV */
            FN(attn_dropout_row)(a->dropout, a->dropout_mask, h->b, h->h, t0 + r, k0, n,
                                 dS + r * TILE_LD, factors);
            a->softmax_backward(P + r * TILE_LD, dS + r * TILE_LD, n, kc, h->rowdot + t0 + r);
            FN(attn_dropout_scale)(a->dropout, factors, n, P + r * TILE_LD);
        }
    }
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_SOFTMAX, start, 0.0);
    start = attn_profile_begin(mm->profile);
    if (diagonal)
        FN(attn_mm_lower_t)(mm, kc, hs, P, TILE_LD, h->dY + t0 * D, D, beta_keys, h->dV + k0 * D,
                            D);
    else
        FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, kc, hs, rows, REAL_C(1.0), P, TILE_LD,
                         h->dY + t0 * D, D, beta_keys, h->dV + k0 * D, D);
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_VALUES, start, flops);
    start = attn_profile_begin(mm->profile);
    const real beta_queries = first_for_queries ? REAL_C(0.0) : REAL_C(1.0);
    if (diagonal) { /* the triangular products take no alpha: dS scaled first */
        for (size_t r = 0; r < rows; r++)
            for (size_t j = 0; j < kc; j++)
                dS[r * TILE_LD + j] *= a->scale;
        FN(attn_mm_lower_t)(mm, kc, hs, dS, TILE_LD, h->Q + t0 * D, D, beta_keys, h->dK + k0 * D,
                            D);
        FN(attn_mm_lower_add)(mm, rows, hs, dS, TILE_LD, h->K + k0 * D, D, beta_queries,
                              h->dQ + t0 * h->ldq, h->ldq);
    } else {
        FN(attn_mm_gemm)(mm, ATTN_TRANS, ATTN_NO_TRANS, kc, hs, rows, a->scale, dS, TILE_LD,
                         h->Q + t0 * D, D, beta_keys, h->dK + k0 * D, D);
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs, kc, a->scale, dS, TILE_LD,
                         h->K + k0 * D, D, beta_queries, h->dQ + t0 * h->ldq, h->ldq);
    }
    attn_profile_end(mm->profile, ATTN_PHASE_BACKWARD_SCORES, start, 2 * flops);
}

/* Key blocks g, g + groups, ... of one head, each against every query block
 * that sees it. With one group, dQ is the head's and its first key block
 * (which every query block sees) initializes it; with several, dQ is the
 * group's part, zeroed here first. */
static void FN(head_group_backward)(const FN(attn_backward_args) *a, const FN(attn_mm) *mm,
                                    size_t D, const FN(head_arrays) *h, size_t g, size_t groups,
                                    real *tile)
{
    const size_t T = a->T, blocks = (T + ATTN_QUERY_BLOCK - 1) / ATTN_QUERY_BLOCK;
    if (groups > 1)
        memset(h->dQ, 0, T * a->hs * sizeof(real));
    real *P = tile, *dS = tile + ATTN_QUERY_BLOCK * TILE_LD;
    for (size_t j = g; j < blocks; j += groups) {
        const size_t k0 = j * ATTN_QUERY_BLOCK, kc = MIN((size_t)ATTN_QUERY_BLOCK, T - k0);
        const size_t first = a->causal ? j : 0; /* the first query block that sees it */
        for (size_t i = first; i < blocks; i++) {
            const size_t t0 = i * ATTN_QUERY_BLOCK, rows = MIN((size_t)ATTN_QUERY_BLOCK, T - t0);
            FN(tile_backward)(a, mm, D, h, k0, kc, t0, rows, i == first,
                              groups == 1 && j == 0, P, dS);
        }
    }
}

/* ---- the phases -------------------------------------------------------------- */

typedef struct FN(backward_phases) {
    const FN(attn_backward_args) *a;
    const FN(attn_engine) *e;
    size_t D, rows;
    size_t D_block, D_blocks;       /* rows of dWo per item */
    size_t C_block, C_blocks;       /* rows of dWq, dWk, dWv per item */
    attn_split dY_split, dX_split;  /* the items of dY and of dX (engine.h) */
    int prepacked;                  /* Wq^T, Wk^T, Wv^T, Wo^T are packed once */
    size_t groups;                  /* key block groups per head (attn_backward_groups) */
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

/* Rows per item of a weight gradient dW = X^T dQ (M = C or D rows, K = B*T):
 * all on BLAS threads; on own threads equal blocks of at most
 * ATTN_WEIGHT_GRADIENT_ROWS, multiples of 16. Each item packs all of its
 * op(B) (B*T rows), so it pays to give it many rows: 384 rather than 96 took
 * these products from 137 to 150 GFLOP/s a thread (GPT-2 block, Xeon
 * Sapphire Rapids), and the rows of dX in the same phase keep the threads
 * busy. A function of the shape alone. */
#define ATTN_WEIGHT_GRADIENT_ROWS 384
static size_t FN(weight_gradient_block)(const FN(attn_engine) *e, size_t rows)
{
    if (e->blas)
        return rows;
    const size_t items = FN(blocks_of)(rows, ATTN_WEIGHT_GRADIENT_ROWS);
    return (FN(blocks_of)(rows, items) + 15) / 16 * 16;
}

/* Items: rows of dWo = Y^T dout (D_blocks), then blocks of dY = dout Wo^T. */
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
    const attn_split *split = &f->dY_split;
    const size_t r0 = (item - f->D_blocks) / split->col_blocks * split->row_block;
    const size_t c0 = (item - f->D_blocks) % split->col_blocks * split->col_block;
    const size_t rows = MIN(split->row_block, f->rows - r0);
    const size_t cols = MIN(split->col_block, D - c0);
    ATTN_PROFILED(mm.profile, ATTN_PHASE_BACKWARD_OUTPUT, attn_product_flops(rows, cols, C),
                  FN(attn_mm_gemm_prepacked)(&mm, ATTN_NO_TRANS, ATTN_TRANS, rows, cols, C,
                                             REAL_C(1.0), a->dout + r0 * C, C, a->Wo + c0 * C,
                                             C, FN(packed_weight)(f, 3), REAL_C(0.0),
                                             a->dheads + r0 * D + c0, D));
}

/* The arrays of head bh = b*NH + h, its dQ the group's part when there are
 * several groups. */
static FN(head_arrays) FN(head_of)(const FN(backward_phases) *f, size_t bh, size_t g)
{
    const FN(attn_backward_args) *a = f->a;
    const size_t T = a->T, hs = a->hs;
    const size_t head = bh / a->NH * T * f->D + bh % a->NH * hs;
    FN(head_arrays) h = {
        .Q = a->Q + head, .K = a->K + head, .V = a->V + head, .dY = f->dY + head,
        .KT = a->KT != NULL ? a->KT + bh * hs * T : NULL,
        .VT = a->VT != NULL ? a->VT + bh * hs * T : NULL,
        .stats = a->stats + 2 * bh * T, .rowdot = a->rowdot + bh * T,
        .dQ = a->dQ + head, .dK = a->dK + head, .dV = a->dV + head, .ldq = f->D,
        .b = bh / a->NH, .h = bh % a->NH};
    if (f->groups > 1) {
        h.dQ = a->dQ_parts + (bh * f->groups + g) * T * hs;
        h.ldq = hs;
    }
    return h;
}

/* Item: one group of key blocks of one (batch, head); item = bh * groups + g. */
static void FN(head_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    const FN(head_arrays) h = FN(head_of)(f, item / f->groups, item % f->groups);
    FN(head_group_backward)(f->a, &mm, f->D, &h, item % f->groups, f->groups,
                            FN(attn_engine_tile)(f->e, worker));
}

/* Item: rowdot_t = <dY_t, Y_t> over every query of one (batch, head), in
 * double. */
static void FN(rowdot_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_backward_args) *a = f->a;
    const size_t T = a->T, hs = a->hs;
    const size_t head = item / a->NH * T * f->D + item % a->NH * hs;
    const uint64_t start = attn_profile_begin(attn_profile_row(f->e->profile, worker));
    for (size_t t = 0; t < T; t++) {
        const real *dy = f->dY + head + t * f->D, *y = a->heads + head + t * f->D;
        double dot = 0.0;
        for (size_t c = 0; c < hs; c++)
            dot += (double)dy[c] * (double)y[c];
        a->rowdot[item * T + t] = (real)dot;
    }
    attn_profile_end(attn_profile_row(f->e->profile, worker), ATTN_PHASE_BACKWARD_SOFTMAX, start,
                     0.0);
}

/* Item: dQ of one query block of one (batch, head), the sum of its groups'
 * parts in group order; item = bh * query_blocks + block. */
static void FN(dq_sum_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_backward_args) *a = f->a;
    const size_t T = a->T, hs = a->hs;
    const size_t blocks = (T + ATTN_QUERY_BLOCK - 1) / ATTN_QUERY_BLOCK;
    const size_t bh = item / blocks, t0 = item % blocks * ATTN_QUERY_BLOCK;
    const size_t t1 = MIN(T, t0 + ATTN_QUERY_BLOCK);
    real *dQ = a->dQ + bh / a->NH * T * f->D + bh % a->NH * hs;
    const real *parts = a->dQ_parts + bh * f->groups * T * hs;
    (void)worker;
    for (size_t t = t0; t < t1; t++)
        for (size_t c = 0; c < hs; c++) {
            real sum = parts[t * hs + c];
            for (size_t g = 1; g < f->groups; g++)
                sum += parts[(g * T + t) * hs + c];
            dQ[t * f->D + c] = sum;
        }
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

/* Item: KT and VT of one (batch, head). */
static void FN(transpose_item)(void *context, size_t item, unsigned worker)
{
    const FN(backward_phases) *f = context;
    const FN(attn_backward_args) *a = f->a;
    ATTN_PROFILED(attn_profile_row(f->e->profile, worker), ATTN_PHASE_BACKWARD_TRANSPOSE, 0.0,
                  FN(attn_transpose_head)(a->T, a->NH, a->hs, a->K, a->KT, item);
                  FN(attn_transpose_head)(a->T, a->NH, a->hs, a->V, a->VT, item));
}

/* Items: rows of dWq, dWk, dWv together (C_blocks: one product sharing
 * X^T's rows), then blocks of dX. */
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
    const attn_split *split = &f->dX_split;
    const size_t r0 = (item - f->C_blocks) / split->col_blocks * split->row_block;
    const size_t c0 = (item - f->C_blocks) % split->col_blocks * split->col_block;
    const size_t rows = MIN(split->row_block, f->rows - r0);
    const size_t cols = MIN(split->col_block, C - c0);
    const real *W[3] = {a->Wq + c0 * D, a->Wk + c0 * D, a->Wv + c0 * D};
    const uint64_t start = attn_profile_begin(mm.profile);
    for (size_t which = 0; which < 3; which++)
        FN(attn_mm_gemm_prepacked)(&mm, ATTN_NO_TRANS, ATTN_TRANS, rows, cols, D, REAL_C(1.0),
                                   dQKV[which] + r0 * D, D, W[which], D,
                                   FN(packed_weight)(f, which),
                                   which == 0 ? REAL_C(0.0) : REAL_C(1.0),
                                   a->dX + r0 * C + c0, C);
    attn_profile_end(mm.profile, ATTN_PHASE_BACKWARD_INPUT, start,
                     3 * attn_product_flops(rows, cols, D));
}

void FN(attn_backward_run)(const FN(attn_backward_args) *a, const FN(attn_engine) *e)
{
    FN(backward_phases) f = {.a = a, .e = e, .D = a->NH * a->hs, .rows = a->B * a->T};
    f.D_block = FN(weight_gradient_block)(e, f.D);
    f.C_block = FN(weight_gradient_block)(e, a->C);
    f.dY_split = attn_engine_split(e->blas, f.rows, f.D);
    f.dX_split = attn_engine_split(e->blas, f.rows, a->C);
    f.D_blocks = FN(blocks_of)(f.D, f.D_block);
    f.C_blocks = FN(blocks_of)(a->C, f.C_block);
    f.dY = a->dout;
    /* as in the forward: whole weights packed once for several row blocks */
    f.prepacked = e->packed != NULL && f.dX_split.row_blocks > 1 &&
                  f.dX_split.col_blocks == 1 && f.dY_split.col_blocks == 1 &&
                  !attn_gemm_is_direct(f.dX_split.row_block, a->C, f.D);
    if (f.prepacked)
        attn_pool_run(e->pool, FN(attn_engine_pack_items)(1, a->C, f.D, a->Wo != NULL),
                      FN(pack_item), &f);
    if (a->Wo != NULL) {
        attn_pool_run(e->pool, f.D_blocks + f.dY_split.row_blocks * f.dY_split.col_blocks,
                      FN(output_item), &f);
        f.dY = a->dheads;
    }
    const size_t heads = a->B * a->NH;
    const size_t query_blocks = (a->T + ATTN_QUERY_BLOCK - 1) / ATTN_QUERY_BLOCK;
    f.groups = e->blas ? 1 : attn_backward_groups(a->B, a->NH, a->T);
    if (a->VT != NULL)
        attn_pool_run(e->pool, heads, FN(transpose_item), &f);
    attn_pool_run(e->pool, heads, FN(rowdot_item), &f);
    attn_pool_run(e->pool, heads * f.groups, FN(head_item), &f);
    if (f.groups > 1)
        attn_pool_run(e->pool, heads * query_blocks, FN(dq_sum_item), &f);
    attn_pool_run(e->pool, f.C_blocks + f.dX_split.row_blocks * f.dX_split.col_blocks,
                  FN(input_item), &f);
}
