/*
 * Forward of attention on given Q, K, V (attn.h, "sdpa"), tiled with the
 * online softmax (FlashAttention): O(Tq + Tk) memory, lse at no extra cost.
 *
 * Shapes, per sequence b (rows addressed through the caller's strides):
 *   Q (NH, Tq, hs), K (NH_kv, Tk, hs), V (NH_kv, Tk, hs_v), out (NH, Tq, hs_v)
 *   (sdpa.h: rows ld apart, heads sh apart), lse (NH, Tq).
 * One item (sdpa_layout.h) is one key/value head g of one sequence, a few
 * of its query heads and a block of queries: rows R = heads x queries.
 * For its key tiles [k0, k1) (the whole multiples of ATTN_TILE_KEYS that
 * meet the keys its rows see), from the last to the first:
 *   S (R, kc)   = Q_rows K[k0:k1]^T        per head, from K^T packed once per
 *                                         call (own threads, many queries),
 *                                         or for a single query with the
 *                                         few-row kernels (rows_kernel.inc.c);
 *                                         a causal diagonal's rows only up to
 *                                         the keys they see (matmul.h)
 *   P, m, l     = online softmax of scale S + mask over each row's visible keys
 *   P          *= M / (1 - p)  with dropout (engine/dropout.h): l stays the
 *                                undropped sum, so out = (P o M/(1-p)) V / l
 *   Y (R, hs_v) = alpha Y + P V[k0:k1]     V packed likewise
 * then out = Y / l, lse = m + log l. A causal diagonal is a triangular
 * product: no query multiplies the value of a key after it (a bf16 plan on
 * a CPU with bf16 products makes the two products in bf16, sdpa_bf16.h,
 * the diagonal's too where its values are finite). An item split
 * over its key tiles (few items: a decode step) leaves Y, m, l of each
 * split, merged by a last phase: m = max m_s, l = sum e^(m_s - m) l_s,
 * out = sum e^(m_s - m) Y_s / l. A row whose scores reach +inf is redone
 * alone over its visible keys with the row kernel (its limit: equal shares).
 */
#include <math.h>
#include <string.h>

#include "engine/sdpa.h"
#include "engine/sdpa_bf16.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* One item: sequence b, key/value head g, query heads [h0, h0 + heads),
 * queries [t0, t0 + queries), split `split`; keys [kmin, kmax) seen by any
 * of its rows. */
typedef struct FN(sdpa_item) {
    size_t b, g, h0, heads, t0, queries, rows, split;
    int all_groups; /* g is 0 and the item covers every key/value head */
    ptrdiff_t kmin, kmax;
} FN(sdpa_item);

/* The worker's tile: scores (ATTN_QUERY_BLOCK x ATTN_TILE_KEYS), output rows
 * (R, hs_v), running max, sum and alpha per row, a row of Tk, bf16 rows
 * (ATTN_SDPA_BF16_ELEMENTS). */
typedef struct FN(sdpa_tile) {
    real *S, *Y, *max, *sum, *alpha, *row;
    uint16_t *rows16, *q16;
} FN(sdpa_tile);

static FN(sdpa_tile) FN(tile_of)(const FN(attn_sdpa_run_args) *a, real *work)
{
    FN(sdpa_tile) t;
    t.S = work;
    t.Y = t.S + ATTN_SDPA_SCORES_ELEMENTS;
    t.max = t.Y + (size_t)ATTN_QUERY_BLOCK * a->layout.shape.hs_v;
    t.sum = t.max + ATTN_QUERY_BLOCK;
    t.alpha = t.sum + ATTN_QUERY_BLOCK;
    t.row = t.alpha + ATTN_QUERY_BLOCK;
    t.rows16 = FN(attn_sdpa_bf16_aligned)(t.row + a->layout.shape.Tk);
    t.q16 = t.rows16 + ATTN_SDPA_BF16_P;
    return t;
}

static FN(sdpa_item) FN(item_of)(const FN(attn_sdpa_run_args) *a, size_t index)
{
    const attn_sdpa_layout *l = &a->layout;
    const attn_sdpa_shape *s = &l->shape;
    const size_t head_groups = l->group / l->heads, per_block = s->B * s->NH_kv * head_groups;
    FN(sdpa_item) it;
    it.split = index % l->splits;
    index /= l->splits;
    it.all_groups = l->all_groups;
    if (l->all_groups) { /* one query of every head of sequence b */
        it.b = index;
        it.g = 0;
        it.h0 = 0;
        it.heads = s->NH;
        it.t0 = 0;
        it.queries = 1;
        it.rows = s->NH;
        const attn_key_range r = FN(attn_sdpa_visible)(a, it.b, 0);
        it.kmin = MAX(r.lo, 0);
        it.kmax = MAX(r.hi, it.kmin);
        return it;
    }
    const size_t bgh = index % per_block;
    /* the last query blocks first: with a causal mask they cost the most */
    const size_t block = l->query_blocks - 1 - index / per_block;
    it.b = bgh / (s->NH_kv * head_groups);
    it.g = bgh / head_groups % s->NH_kv;
    it.heads = l->heads;
    it.h0 = it.g * l->group + bgh % head_groups * l->heads;
    it.t0 = block * l->queries;
    it.queries = MIN(l->queries, s->Tq - it.t0);
    it.rows = it.heads * it.queries;
    const attn_key_range first = FN(attn_sdpa_visible)(a, it.b, it.t0);
    const attn_key_range last = FN(attn_sdpa_visible)(a, it.b, it.t0 + it.queries - 1);
    it.kmin = MAX(first.lo, 0);
    it.kmax = MAX(last.hi, it.kmin);
    return it;
}

/* Row r of an item: its head and query. */
static size_t FN(row_head)(const FN(sdpa_item) *it, size_t r)
{
    return it->h0 + r / it->queries;
}
static size_t FN(row_query)(const FN(sdpa_item) *it, size_t r)
{
    return it->t0 + r % it->queries;
}

/* The packed K^T of the item's columns from key k0, or NULL (not packed,
 * or k0 not on a panel). */
static const real *FN(packed_keys)(const FN(attn_sdpa_run_args) *a, const FN(sdpa_item) *it,
                                   size_t k0)
{
    const real *kt = FN(attn_sdpa_packed_kt)(a, it->b * a->layout.shape.NH_kv + it->g);
    return kt != NULL && k0 % a->panel == 0 ? kt + k0 * a->layout.shape.hs : NULL;
}

/* S (rows, kc) = Q_rows K[k0, k0+kc)^T: per head, from the packed K^T when
 * there is one; for a single query (its heads' rows shq apart) with the
 * few-row kernel, every key read once for all the rows. */
static void FN(item_scores)(const FN(attn_sdpa_run_args) *a, const FN(attn_mm) *mm,
                            const FN(sdpa_item) *it, size_t k0, size_t kc, real *S,
                            uint16_t *q16, int q16_ready)
{
    const size_t hs = a->layout.shape.hs;
    const real *packed = FN(packed_keys)(a, it, k0);
    const uint64_t start = attn_profile_begin(mm->profile);
    double flops = attn_product_flops(it->rows, kc, hs);
    if (it->all_groups) {
        FN(attn_sdpa_rows_dot)(a, a->layout.shape.NH_kv, a->layout.group, kc,
                               FN(attn_sdpa_q)(a, it->b, 0, it->t0), a->shq, it->b, 0, k0, S, kc);
    } else if (it->queries == 1 && packed == NULL) {
        for (size_t h = 0; h < it->heads; h += ATTN_ROWS_MAX)
            FN(attn_sdpa_rows_dot)(a, 1, MIN((size_t)ATTN_ROWS_MAX, it->heads - h), kc,
                                   FN(attn_sdpa_q)(a, it->b, it->h0 + h, it->t0), a->shq, it->b,
                                   it->g, k0, S + h * kc, kc);
    } else if (a->bf16.gemm != NULL && packed != NULL) {
        const size_t each = (q16_ready ? attn_sdpa_round_up(it->queries, ATTN_BF16_M_STEP) : 0);
        for (size_t h = 0; h < it->heads; h++)
            FN(attn_sdpa_bf16_scores)(a, it->b, it->g, it->h0 + h, it->t0, it->queries, k0, kc,
                                      S + h * it->queries * kc, q16 + h * each * hs, q16_ready);
    } else {
        const ptrdiff_t n0 = FN(attn_sdpa_staircase_n0)(a, it->b, it->t0, k0);
        const real *K = FN(attn_sdpa_k)(a, it->b, it->g, k0);
        flops = 0.0;
        for (size_t h = 0; h < it->heads; h++)
            flops += FN(attn_mm_gemm_staircase)(
                mm, ATTN_TRANS, it->queries, kc, hs, n0,
                FN(attn_sdpa_q)(a, it->b, it->h0 + h, it->t0), a->ldq, K, a->ldk, packed,
                S + h * it->queries * kc, kc);
    }
    attn_profile_end(mm->profile, ATTN_PHASE_SCORES, start, flops);
}

/* The online softmax of every row over key tile [k0, k0+kc); Y rescaled.
 * The weights go to S, or with p16 (sdpa_bf16.h's fused tiles) to bf16
 * rows ld16 apart there. */
static void FN(item_softmax)(const FN(attn_sdpa_run_args) *a, const FN(attn_mm) *mm,
                             const FN(sdpa_item) *it, size_t k0, size_t kc, int first,
                             const FN(sdpa_tile) *w, uint16_t *p16)
{
    const size_t hs_v = a->layout.shape.hs_v, ld16 = attn_sdpa_round_up(kc, ATTN_BF16_K_STEP);
    const uint64_t start = attn_profile_begin(mm->profile);
    for (size_t r = 0; r < it->rows; r++) {
        const size_t h = FN(row_head)(it, r), t = FN(row_query)(it, r);
        const attn_key_range range = FN(attn_sdpa_visible)(a, it->b, t);
        const real *mask = FN(attn_sdpa_mask_row)(a, it->b, h, t);
        real *s = w->S + r * kc;
        uint16_t *s16 = p16 != NULL ? p16 + r * ld16 : NULL;
        const ptrdiff_t lo = range.lo - (ptrdiff_t)k0, hi = range.hi - (ptrdiff_t)k0;
        w->alpha[r] = REAL_C(1.0);
        if (hi <= 0 || lo >= (ptrdiff_t)kc || hi <= lo) { /* sees none of these keys */
            if (s16 != NULL)
                memset(s16, 0, ld16 * sizeof *s16);
            else
                memset(s, 0, kc * sizeof(real));
            continue;
        }
        const size_t n_valid = MIN((size_t)hi, kc);
        real scale = a->scale;
        if (lo > 0 || mask != NULL) {
            FN(attn_sdpa_prepare_row)(s, kc, k0, range, a->scale, mask);
            scale = REAL_C(1.0);
        }
        if (s16 != NULL)
            w->alpha[r] = FN(attn_sdpa_bf16_softmax)(a, s, s16, n_valid, ld16, scale, &w->max[r],
                                                     &w->sum[r]);
        else
            w->alpha[r] = a->softmax_online(s, s, n_valid, kc, scale, &w->max[r], &w->sum[r]);
        /* dropout after the sum: l and lse are the undropped weights' */
        FN(attn_dropout_row)(a->dropout, a->dropout_mask, it->b, h, t, k0, n_valid, s, NULL);
        if (!first && w->alpha[r] != REAL_C(1.0)) {
            const real factor = w->alpha[r] < REAL_C(0.0) ? REAL_C(0.0) : w->alpha[r];
            for (size_t c = 0; c < hs_v; c++)
                w->Y[r * hs_v + c] *= factor;
        }
    }
    attn_profile_end(mm->profile, ATTN_PHASE_SOFTMAX, start, 0.0);
}

/* Y rows [r0, r0+rows) += P[:, c0, c0+n) V[k0+c0, k0+c0+n): from the packed
 * V when the product's K blocks are blocks of it (the keys start one, and
 * each block of the product is as long as the packed one: panels lie
 * kc * NR apart in a block of kc keys). */
static void FN(add_values)(const FN(attn_sdpa_run_args) *a, const FN(attn_mm) *mm,
                           const FN(sdpa_item) *it, size_t k0, size_t kc, size_t r0, size_t rows,
                           size_t c0, size_t n, const FN(sdpa_tile) *w)
{
    const size_t hs_v = a->layout.shape.hs_v, key = k0 + c0;
    if (rows == 0 || n == 0)
        return;
    const real *packed = FN(attn_sdpa_packed_v)(a, it->b * a->layout.shape.NH_kv + it->g);
    const size_t L = a->key_lengths != NULL ? a->key_lengths[it->b] : a->layout.shape.Tk;
    if (a->bf16.gemm != NULL && packed != NULL &&
        FN(attn_sdpa_bf16_values)(a, it->b, it->g, key, rows, n, w->S + r0 * kc + c0, kc,
                                  w->Y + r0 * hs_v, w->rows16))
        return;
    if (packed != NULL && a->bf16.gemm == NULL && key % ATTN_GEMM_KC == 0 &&
        (n % ATTN_GEMM_KC == 0 || key + n == L))
        packed += key * attn_sdpa_round_up(hs_v, a->panel);
    else
        packed = NULL;
    FN(attn_mm_gemm_prepacked)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, rows, hs_v, n, REAL_C(1.0),
                               w->S + r0 * kc + c0, kc, FN(attn_sdpa_v)(a, it->b, it->g, key), a->ldv,
                               packed, REAL_C(1.0), w->Y + r0 * hs_v, hs_v);
}

/* Y += P V[k0, k0+kc), P in S. A single query multiplies its visible keys
 * only. With a causal mask and several queries, query i of the item sees
 * keys up to d + i (d: the first query's position): the strip of keys
 * [d, d + queries) met in this tile, [u, w), is for each head a triangular
 * product of its rows [u - d, w - d) (which see nothing of later tiles, so
 * the product may write them) and a full one of the rows after; keys
 * [k0, u) are seen by every row that sees the strip. So no query multiplies
 * the value of a key after it, even by a weight of 0. */
static void FN(item_values)(const FN(attn_sdpa_run_args) *a, const FN(attn_mm) *mm,
                            const FN(sdpa_item) *it, size_t k0, size_t kc,
                            const FN(sdpa_tile) *w, const uint16_t *p16)
{
    const size_t hs_v = a->layout.shape.hs_v, nq = it->queries;
    const size_t ld16 = attn_sdpa_round_up(kc, ATTN_BF16_K_STEP);
    const uint64_t start = attn_profile_begin(mm->profile);
    double flops = 0.0;
    const ptrdiff_t d = FN(attn_sdpa_visible)(a, it->b, it->t0).hi - 1;
    const ptrdiff_t u = MAX((ptrdiff_t)k0, d), wnd = MIN((ptrdiff_t)(k0 + kc), d + (ptrdiff_t)nq);
    if (nq == 1) {
        const attn_key_range range = FN(attn_sdpa_visible)(a, it->b, it->t0);
        const size_t lo = (size_t)MAX(range.lo - (ptrdiff_t)k0, 0);
        const size_t hi = (size_t)MIN(MAX(range.hi - (ptrdiff_t)k0, 0), (ptrdiff_t)kc);
        flops = hi > lo ? attn_product_flops(it->rows, hs_v, hi - lo) : 0.0;
        if (it->all_groups && hi > lo)
            FN(attn_sdpa_rows_axpy)(a, a->layout.shape.NH_kv, a->layout.group, hi - lo,
                                    w->S + lo, kc, it->b, 0, k0 + lo, w->Y, hs_v);
        for (size_t r = 0; !it->all_groups && hi > lo && r < it->rows; r += ATTN_ROWS_MAX)
            FN(attn_sdpa_rows_axpy)(a, 1, MIN((size_t)ATTN_ROWS_MAX, it->rows - r), hi - lo,
                                    w->S + r * kc + lo, kc, it->b, it->g, k0 + lo,
                                    w->Y + r * hs_v, hs_v);
    } else if (a->causal && u < wnd) {
        const size_t first = (size_t)(u - d), strip = (size_t)(wnd - u), c = (size_t)u - k0;
        for (size_t h = 0; h < it->heads; h++) {
            const size_t r0 = h * nq;
            flops += attn_product_flops(strip, hs_v, (strip + 1) / 2) +
                     attn_product_flops(nq - first, hs_v, c) +
                     attn_product_flops(nq - first - strip, hs_v, strip);
            /* bf16: one product, the diagonal's zero weights included */
            if (p16 != NULL) {
                FN(attn_sdpa_bf16_rounded_values)(a, it->b, it->g, k0, nq - first, c + strip,
                                                  p16 + (r0 + first) * ld16, ld16,
                                                  w->Y + (r0 + first) * hs_v);
                continue;
            }
            if (a->bf16.gemm != NULL && a->packed != NULL &&
                FN(attn_sdpa_bf16_values)(a, it->b, it->g, k0, nq - first, c + strip,
                                          w->S + (r0 + first) * kc, kc,
                                          w->Y + (r0 + first) * hs_v, w->rows16))
                continue;
            FN(attn_mm_lower)(mm, strip, hs_v, w->S + (r0 + first) * kc + c, kc,
                              FN(attn_sdpa_v)(a, it->b, it->g, (size_t)u), a->ldv,
                              w->Y + (r0 + first) * hs_v, hs_v);
            FN(add_values)(a, mm, it, k0, kc, r0 + first, nq - first, 0, c, w);
            FN(add_values)(a, mm, it, k0, kc, r0 + first + strip, nq - first - strip, c, strip,
                           w);
        }
    } else {
        flops = attn_product_flops(it->rows, hs_v, kc);
        if (p16 != NULL)
            FN(attn_sdpa_bf16_rounded_values)(a, it->b, it->g, k0, it->rows, kc, p16, ld16, w->Y);
        else
            FN(add_values)(a, mm, it, k0, kc, 0, it->rows, 0, kc, w);
    }
    attn_profile_end(mm->profile, ATTN_PHASE_WEIGHTED_SUM, start, flops);
}

/* A half call's row (b, h, t) of out rounded from its float values y. */
static void FN(round_out_row)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h, size_t t,
                              const real *y)
{
#if ATTN_REAL_BITS == 32
    if (a->out_half != NULL)
        a->narrow_half(y, a->out_half + b * a->sbo_half + h * a->sho_half + t * a->ldo_half,
                       a->layout.shape.hs_v);
#else
    (void)a, (void)b, (void)h, (void)t, (void)y;
#endif
}

/* Row (b, h, t) of Q: in Q, or (Q_half) widened into q_row (hs elements). */
static const real *FN(query_row)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h, size_t t,
                                 real *q_row)
{
#if ATTN_REAL_BITS == 32
    if (a->Q_half != NULL) {
        a->widen_half(a->Q_half + b * a->sbq_half + h * a->shq_half + t * a->ldq_half, q_row,
                      a->layout.shape.hs);
        return q_row;
    }
#endif
    (void)q_row;
    return FN(attn_sdpa_q)(a, b, h, t);
}

/* Row (b, h, t) alone over its visible keys, for a row whose scores reach
 * +inf: the row kernel's limit. row: Tk elements; q_row: hs. */
static void FN(row_alone)(const FN(attn_sdpa_run_args) *a, const FN(attn_mm) *mm, size_t b,
                          size_t h, size_t t, real *row, real *q_row)
{
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t g = h / a->layout.group;
    const attn_key_range range = FN(attn_sdpa_visible)(a, b, t);
    const size_t lo = (size_t)MAX(range.lo, 0), n = (size_t)range.hi - lo;
    real *out = FN(attn_sdpa_out)(a, b, h, t);
    const real *q = FN(query_row)(a, b, h, t, q_row);
    const int half = a->K16 != NULL; /* K, V in 16 bits (sdpa.h) */
    if (half)
        FN(attn_sdpa_rows_dot)(a, 1, 1, n, q, s->hs, b, g, lo, row, n);
    else
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_TRANS, 1, n, s->hs, REAL_C(1.0), q, s->hs,
                         FN(attn_sdpa_k)(a, b, g, lo), a->ldk, REAL_C(0.0), row, n);
    FN(attn_sdpa_prepare_row)(row, n, lo, range, a->scale, FN(attn_sdpa_mask_row)(a, b, h, t));
    a->softmax_row(row, row, n, n, REAL_C(1.0));
    FN(attn_dropout_row)(a->dropout, a->dropout_mask, b, h, t, lo, n, row, NULL);
    if (half) {
        memset(out, 0, s->hs_v * sizeof(real));
        FN(attn_sdpa_rows_axpy)(a, 1, 1, n, row, n, b, g, lo, out, s->hs_v);
    } else
        FN(attn_mm_gemm)(mm, ATTN_NO_TRANS, ATTN_NO_TRANS, 1, s->hs_v, n, REAL_C(1.0), row, n,
                         FN(attn_sdpa_v)(a, b, g, lo), a->ldv, REAL_C(0.0), out, s->hs_v);
    FN(round_out_row)(a, b, h, t, out);
    /* the row kernel makes a row with a NaN all NaN */
    if (a->lse != NULL)
        a->lse[(b * s->NH + h) * s->Tq + t] = row[0] != row[0] ? row[0] : (real)INFINITY;
}

/* out and lse of a row from its max, sum and unnormalized output y: y /
 * sum, or for a half call's out y (1 / sum) rounded in one pass by the
 * kernel (the float multiplication's extra 2^-24 relative is far below the
 * half type's rounding; a division per element took a fifth of a bf16
 * forward's softmax phase, and a second pass over the normalized row 7%
 * of the forward). No weight: 0, even where y met a non-finite value
 * times 0. */
static void FN(finish_row)(const FN(attn_sdpa_run_args) *a, size_t b, size_t h, size_t t,
                           const real *y, real max, real sum)
{
    const attn_sdpa_shape *s = &a->layout.shape;
#if ATTN_REAL_BITS == 32
    if (a->out_half != NULL) {
        uint16_t *o = a->out_half + b * a->sbo_half + h * a->sho_half + t * a->ldo_half;
        if (sum == REAL_C(0.0))
            memset(o, 0, s->hs_v * sizeof *o);
        else
            a->narrow_scaled_half(y, REAL_C(1.0) / sum, o, s->hs_v);
    }
#endif
    real *out = FN(attn_sdpa_out)(a, b, h, t);
    if (sum == REAL_C(0.0) && a->out_half == NULL)
        memset(out, 0, s->hs_v * sizeof(real));
    else if (a->out_half == NULL) /* a plain loop, so that the divisions are vector ones:
                                   * with the tests in its condition they were scalar,
                                   * 7% of a T=1024 hs 64 forward (Xeon model 167) */
        for (size_t c = 0; c < s->hs_v; c++)
            out[c] = y[c] / sum;
    if (a->lse != NULL)
        a->lse[(b * s->NH + h) * s->Tq + t] =
            sum == REAL_C(0.0) ? (real)-INFINITY : (real)((double)max + log((double)sum));
}

typedef struct FN(sdpa_forward_phase) {
    const FN(attn_sdpa_run_args) *a;
    const FN(attn_engine) *e;
} FN(sdpa_forward_phase);

/* Partial result of split `split` for row (b, h, t). */
static real *FN(partial)(const FN(attn_sdpa_run_args) *a, size_t split, size_t b, size_t h,
                         size_t t)
{
    const attn_sdpa_shape *s = &a->layout.shape;
    return a->partials +
           (((split * s->B + b) * s->NH + h) * s->Tq + t) * attn_sdpa_partial_elements(&a->layout);
}

/* Item: one forward item over its split's key tiles. */
static void FN(forward_item)(void *context, size_t index, unsigned worker)
{
    const FN(sdpa_forward_phase) *f = context;
    const FN(attn_sdpa_run_args) *a = f->a;
    const size_t hs_v = a->layout.shape.hs_v, splits = a->layout.splits;
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    const FN(sdpa_tile) w = FN(tile_of)(a, FN(attn_engine_tile)(f->e, worker));
    const FN(sdpa_item) it = FN(item_of)(a, index);
    memset(w.Y, 0, it.rows * hs_v * sizeof(real));
    for (size_t r = 0; r < it.rows; r++) {
        w.max[r] = -ATTN_REAL_MAX;
        w.sum[r] = REAL_C(0.0);
    }
    /* the tiles are the whole multiples of ATTN_TILE_KEYS (so that they
     * start on the packed operands' panels and K blocks) that meet
     * [kmin, kmax), from the last */
    const size_t high = it.kmax > it.kmin ? ((size_t)it.kmax - 1) / ATTN_TILE_KEYS : 0;
    const size_t low = (size_t)it.kmin / ATTN_TILE_KEYS;
    const size_t tiles = it.kmax > it.kmin ? high - low + 1 : 0;
    const size_t m0 = it.split * tiles / splits, m1 = (it.split + 1) * tiles / splits;
    const int q16_ready = a->bf16.gemm != NULL && a->packed != NULL && m1 > m0 &&
                          FN(attn_sdpa_bf16_queries)(a, it.b, it.h0, it.heads, it.t0, it.queries,
                                                     w.q16);
    for (size_t m = m0; m < m1; m++) {
        const size_t k0 = MAX((high - m) * ATTN_TILE_KEYS, (size_t)it.kmin);
        const size_t k1 = MIN((high - m + 1) * ATTN_TILE_KEYS, (size_t)it.kmax);
        uint16_t *p16 = FN(attn_sdpa_bf16_fused)(a, it.b, it.g, k0, it.queries) ? w.rows16 : NULL;
        FN(item_scores)(a, &mm, &it, k0, k1 - k0, w.S, w.q16, q16_ready);
        FN(item_softmax)(a, &mm, &it, k0, k1 - k0, m == m0, &w, p16);
        FN(item_values)(a, &mm, &it, k0, k1 - k0, &w, p16);
    }
    const uint64_t start = attn_profile_begin(mm.profile);
    for (size_t r = 0; r < it.rows; r++) {
        const size_t h = FN(row_head)(&it, r), t = FN(row_query)(&it, r);
        if (splits > 1) {
            real *p = FN(partial)(a, it.split, it.b, h, t);
            memcpy(p, w.Y + r * hs_v, hs_v * sizeof(real));
            p[hs_v] = w.max[r];
            p[hs_v + 1] = w.sum[r];
        } else if (w.max[r] == (real)INFINITY) {
            FN(row_alone)(a, &mm, it.b, h, t, w.row, w.S); /* S: free by now */
        } else {
            FN(finish_row)(a, it.b, h, t, w.Y + r * hs_v, w.max[r], w.sum[r]);
        }
    }
    attn_profile_end(mm.profile, ATTN_PHASE_SOFTMAX, start, 0.0);
}

/* Item: the splits of the rows of one (b, h) and query block merged. */
static void FN(merge_item)(void *context, size_t index, unsigned worker)
{
    const FN(sdpa_forward_phase) *f = context;
    const FN(attn_sdpa_run_args) *a = f->a;
    const attn_sdpa_shape *s = &a->layout.shape;
    const size_t splits = a->layout.splits, hs_v = s->hs_v;
    const size_t blocks = attn_sdpa_ceil_div(s->Tq, ATTN_QUERY_BLOCK);
    const size_t bh = index / blocks, b = bh / s->NH, h = bh % s->NH;
    const size_t t0 = index % blocks * ATTN_QUERY_BLOCK, t1 = MIN(s->Tq, t0 + ATTN_QUERY_BLOCK);
    const FN(attn_mm) mm = FN(attn_engine_mm)(f->e, worker);
    const uint64_t start = attn_profile_begin(mm.profile);
    for (size_t t = t0; t < t1; t++) {
        real max = -ATTN_REAL_MAX;
        for (size_t sp = 0; sp < splits; sp++)
            max = MAX(max, FN(partial)(a, sp, b, h, t)[hs_v]);
        if (max == (real)INFINITY) {
            const FN(sdpa_tile) w = FN(tile_of)(a, FN(attn_engine_tile)(f->e, worker));
            FN(row_alone)(a, &mm, b, h, t, w.row, w.S);
            continue;
        }
        double weight[ATTN_SDPA_ITEMS], sum = 0.0;
        for (size_t sp = 0; sp < splits; sp++) {
            const real *p = FN(partial)(a, sp, b, h, t);
            weight[sp] = p[hs_v + 1] == REAL_C(0.0) ? 0.0 : exp((double)p[hs_v] - (double)max);
            sum += weight[sp] * (double)p[hs_v + 1];
        }
        real *out = FN(attn_sdpa_out)(a, b, h, t);
        for (size_t c = 0; c < hs_v; c++) {
            double y = 0.0;
            for (size_t sp = 0; sp < splits; sp++)
                if (weight[sp] != 0.0)
                    y += weight[sp] * (double)FN(partial)(a, sp, b, h, t)[c];
            out[c] = sum == 0.0 ? REAL_C(0.0) : (real)(y / sum);
        }
        FN(round_out_row)(a, b, h, t, out);
        if (a->lse != NULL)
            a->lse[bh * s->Tq + t] = sum == 0.0 ? (real)-INFINITY : (real)((double)max + log(sum));
    }
    attn_profile_end(mm.profile, ATTN_PHASE_SOFTMAX, start, 0.0);
}

/* Item: the packed K^T and V of one (b, g). */
static void FN(pack_item)(void *context, size_t item, unsigned worker)
{
    const FN(sdpa_forward_phase) *f = context;
    if (f->a->bf16.gemm != NULL)
        ATTN_PROFILED(attn_profile_row(f->e->profile, worker), ATTN_PHASE_PACK, 0.0,
                      FN(attn_sdpa_pack_bf16)(f->a, item, 0));
    else
        ATTN_PROFILED(attn_profile_row(f->e->profile, worker), ATTN_PHASE_PACK, 0.0,
                      FN(attn_sdpa_pack_item)(f->a, f->e, item, 0));
}

void FN(attn_sdpa_forward_run)(const FN(attn_sdpa_run_args) *a, const FN(attn_engine) *e)
{
    const FN(sdpa_forward_phase) f = {a, e};
    const attn_sdpa_layout *l = &a->layout;
    if (a->packed != NULL)
        attn_pool_run(e->pool, l->shape.B * l->shape.NH_kv, FN(pack_item), (void *)&f);
    attn_pool_run(e->pool, l->items * l->splits, FN(forward_item), (void *)&f);
    if (l->splits > 1)
        attn_pool_run(e->pool,
                      l->shape.B * l->shape.NH * attn_sdpa_ceil_div(l->shape.Tq, ATTN_QUERY_BLOCK),
                      FN(merge_item), (void *)&f);
}
