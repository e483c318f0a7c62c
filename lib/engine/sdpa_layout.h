/*
 * How the sdpa engines (sdpa_forward.c, sdpa_backward.c) split a shape into
 * work items, and the size of everything they need. Not templated: the plan
 * (sdpa_plan.c) sizes its buffers from it. A function of the shape alone,
 * never of the thread count, so results are the same for every count.
 *
 * Forward item: one sequence b, one key/value head g (all of them, for a
 * decode step: all_groups), `heads` of the query heads that read it and a
 * block of `queries` query positions; its rows are
 * the heads' queries stacked head by head (row r = head r / n of the item,
 * query r % n), at most ATTN_QUERY_BLOCK of them, so that K and V are read
 * once for all the heads of a group (a prefill's query block of NH = 32,
 * NH_kv = 8 stacks the 4 heads of a group); a decode step (Tq = 1) with
 * all_groups takes all the groups of a sequence, 32 rows. When there are fewer than
 * ATTN_SDPA_ITEMS items, each is split further over its key tiles
 * (flash-decoding), and the splits' partial results are merged through
 * their log-sum-exp.
 *
 * Backward item: one (b, g) and one group of its key blocks of
 * ATTN_SDPA_BACKWARD_KEYS keys (j = group, group + groups, ...), against every
 * query of every head of g: dK and dV of those keys are the item's alone
 * (summed over the group's heads), dQ the item's when groups = 1, else a
 * part of its own that a last phase sums.
 */
#ifndef ATTN_SDPA_LAYOUT_H
#define ATTN_SDPA_LAYOUT_H

#include <stddef.h>

#include <attn/attn.h>

#include "core/check.h"
#include "kernels/kernels.h"
#include "engine/tiling.h"

/* Fewer work items than this and the engines split keys too. */
#define ATTN_SDPA_ITEMS 8

/* Keys per block of the backward, and the row stride of its tiles P and dS
 * (ATTN_QUERY_BLOCK rows each; not a power of two). Twice the query block:
 * fewer, larger products (dQ read and written half as often). A multiple
 * of ATTN_GEMM_NR_MAX, so that a block starts on a panel of the packed K^T,
 * and the kernel's K block, so that a block is one K block of the packed K
 * (sdpa_layout.h's packs). */
#define ATTN_SDPA_BACKWARD_KEYS 256
#define ATTN_SDPA_BACKWARD_LD (ATTN_SDPA_BACKWARD_KEYS + 16)
_Static_assert(ATTN_SDPA_BACKWARD_KEYS % ATTN_GEMM_NR_MAX == 0,
               "a backward key block starts on a panel");
_Static_assert(ATTN_SDPA_BACKWARD_KEYS == ATTN_GEMM_KC,
               "a backward key block is one K block of the packed K");

/* Elements of the scores part of a worker's tile: the forward's tile of
 * one item's rows against ATTN_TILE_KEYS keys, or the backward's P and dS. */
#define ATTN_SDPA_SCORES_ELEMENTS                                                          \
    ((size_t)ATTN_QUERY_BLOCK * ATTN_TILE_KEYS > 2 * (size_t)ATTN_QUERY_BLOCK * ATTN_SDPA_BACKWARD_LD \
         ? (size_t)ATTN_QUERY_BLOCK * ATTN_TILE_KEYS                                       \
         : 2 * (size_t)ATTN_QUERY_BLOCK * ATTN_SDPA_BACKWARD_LD)

typedef struct attn_sdpa_layout {
    attn_sdpa_shape shape; /* hs_v resolved */
    size_t group;          /* NH / NH_kv: query heads per key/value head */
    int all_groups;        /* a forward item covers every key/value head */
    size_t heads;          /* query heads per forward item, a divisor of group */
    size_t queries;        /* query positions per forward item block */
    size_t query_blocks;   /* ceil(Tq / queries) */
    size_t items;          /* forward items before the key split */
    size_t splits;         /* key splits per forward item (1: none) */
    size_t groups;         /* backward key block groups per (b, g) */
} attn_sdpa_layout;

static inline size_t attn_sdpa_ceil_div(size_t n, size_t d)
{
    return n / d + (n % d != 0);
}

/* The layout of a valid shape (no zero, NH % NH_kv == 0, B*NH*Tq and
 * B*NH_kv*Tk without overflow). */
static inline attn_sdpa_layout attn_sdpa_layout_of(attn_sdpa_shape s)
{
    attn_sdpa_layout l = {.shape = s};
    if (l.shape.hs_v == 0)
        l.shape.hs_v = s.hs;
    l.group = s.NH / s.NH_kv;
    l.queries = s.Tq < ATTN_QUERY_BLOCK ? s.Tq : ATTN_QUERY_BLOCK;
    l.heads = 1;
    const size_t most = ATTN_QUERY_BLOCK / l.queries; /* heads that fit a block */
    for (size_t h = l.group < most ? l.group : most; h >= 1; h--)
        if (l.group % h == 0) {
            l.heads = h;
            break;
        }
    l.query_blocks = attn_sdpa_ceil_div(s.Tq, l.queries);
    l.items = s.B * s.NH_kv * (l.group / l.heads) * l.query_blocks;
    /* A decode step's item takes every key/value head of its sequence: the
     * heads of one cache row lie side by side, and one item reading whole
     * rows streams K and V from memory once, in order (an item per head
     * read 512 of every 4096 bytes: 48% of the read bandwidth with a cold
     * cache where whole rows reach 61%, NH = 32, NH_kv = 8, hs = 128,
     * Tk = 8192, 2 threads, Xeon SPR; both with the few-row kernels of one
     * key per load, before rows_kernel.inc.c took two and four). */
    l.all_groups = s.Tq == 1 && s.NH_kv > 1 && s.NH <= ATTN_QUERY_BLOCK &&
                   l.group <= ATTN_ROWS_MAX;
    if (l.all_groups) {
        l.heads = s.NH;
        l.items = s.B;
    }
    const size_t key_tiles = attn_sdpa_ceil_div(s.Tk, ATTN_TILE_KEYS);
    l.splits = 1;
    if (l.items < ATTN_SDPA_ITEMS) {
        l.splits = attn_sdpa_ceil_div(ATTN_SDPA_ITEMS, l.items);
        if (l.splits > key_tiles)
            l.splits = key_tiles;
    }
    const size_t pairs = s.B * s.NH_kv,
                 key_blocks = attn_sdpa_ceil_div(s.Tk, ATTN_SDPA_BACKWARD_KEYS);
    l.groups = 1;
    if (pairs < ATTN_HEADS_PER_ITEM_MIN) {
        l.groups = attn_sdpa_ceil_div(ATTN_BACKWARD_ITEMS, pairs);
        if (l.groups > key_blocks)
            l.groups = key_blocks;
    }
    return l;
}

/* Whether an sdpa plan on attn's own threads packs K^T and V (in training
 * V^T too) once per call, in the kernel's panels (kernels.h), so that the
 * products of every query block read them as they are instead of packing
 * their own copies: from a query block of queries on (each key is read by
 * many rows), for head sizes of one K block. A decode step reads K once
 * and takes it as it lies. */
static inline int attn_sdpa_prepacks(const attn_sdpa_layout *l)
{
    return l->shape.Tq >= ATTN_QUERY_BLOCK && l->shape.hs <= ATTN_GEMM_KC &&
           l->shape.hs_v <= ATTN_GEMM_KC;
}

/* Where the packed operands of (b, g) = bg lie in the plan's own-thread
 * buffer (element offsets; each of B*NH_kv blocks):
 *   kt  K^T (hs, Tk): columns from key j (a multiple of the panel) at j*hs
 *   v   V (Tk, hs_v) in the forward: K blocks of ATTN_GEMM_KC keys, block
 *       at k0 * panel width of hs_v; in the backward K (Tk, hs) alike (the
 *       op(B) of dQ += dS K), block at k0 * panel width of hs
 *   vt  V^T (hs_v, Tk), training plans only
 * Sizes round Tk up to ATTN_GEMM_KC and hs_v (training: the larger of hs
 * and hs_v) up to ATTN_GEMM_NR_MAX. False on overflow. */
typedef struct attn_sdpa_packs {
    size_t kt, v, vt;             /* offsets of the first block */
    size_t kt_each, v_each, vt_each; /* elements per (b, g) */
    size_t total;
} attn_sdpa_packs;

static inline size_t attn_sdpa_round_up(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

static inline int attn_sdpa_packs_of(const attn_sdpa_layout *l, int training, attn_sdpa_packs *p)
{
    const attn_sdpa_shape s = l->shape;
    const size_t pairs = s.B * s.NH_kv; /* an array's rows: no overflow (plan create) */
    const size_t Tk = attn_sdpa_round_up(s.Tk, ATTN_GEMM_KC);
    const size_t v_cols = training && s.hs > s.hs_v ? s.hs : s.hs_v; /* V, or K in training */
    size_t kt, v, vt;
    if (!attn_mul(s.hs, Tk, &p->kt_each) || !attn_mul(Tk, v_cols + ATTN_GEMM_NR_MAX, &p->v_each) ||
        !attn_mul(s.hs_v, Tk, &p->vt_each) || !attn_mul(pairs, p->kt_each, &kt) ||
        !attn_mul(pairs, p->v_each, &v) || !attn_mul(pairs, p->vt_each, &vt))
        return 0;
    p->kt = 0;
    p->v = kt;
    p->vt = kt + v; /* kt + v + vt are elements of real arrays of the plan's size: they fit */
    p->total = p->vt + (training ? vt : 0);
    return p->total >= p->vt;
}

/* Elements of one forward partial result: the unnormalized output row, its
 * running max and sum. */
static inline size_t attn_sdpa_partial_elements(const attn_sdpa_layout *l)
{
    return l->shape.hs_v + 2;
}

/* Elements (of any precision: at least 4 bytes) holding a bf16 plan's
 * rows in bf16 for the bf16 products (engine/sdpa_bf16.h): P, up to
 * ATTN_QUERY_BLOCK rows of ATTN_TILE_KEYS and ATTN_BF16_M_STEP more that
 * the products may read past the last head's rows, then an item's Q rows, up to
 * ATTN_SDPA_BF16_Q bf16 numbers; from a 64-byte boundary (tile loads of
 * rows across two cache lines ran at half the rate: 1.59 against 0.77
 * TFLOP/s a core for 128 x 512 x 128 on the AMX Xeon, model 167), so 16
 * elements more. */
#define ATTN_SDPA_BF16_P ((size_t)(ATTN_QUERY_BLOCK + ATTN_BF16_M_STEP) * ATTN_TILE_KEYS)
#define ATTN_SDPA_BF16_Q ((size_t)2 * ATTN_QUERY_BLOCK * ATTN_GEMM_KC)
#define ATTN_SDPA_BF16_ELEMENTS \
    ((ATTN_SDPA_BF16_P + ATTN_SDPA_BF16_Q) / 2 + 16)

/* Elements of a worker's tile: the scores (ATTN_SDPA_SCORES_ELEMENTS), the
 * item's output rows, three statistics per row, one row of Tk scores (a
 * row recomputed alone) and the bf16 rows. */
static inline size_t attn_sdpa_tile_elements(const attn_sdpa_layout *l)
{
    return ATTN_SDPA_SCORES_ELEMENTS + ATTN_SDPA_BF16_ELEMENTS +
           (size_t)ATTN_QUERY_BLOCK * l->shape.hs_v + 3 * (size_t)ATTN_QUERY_BLOCK +
           l->shape.Tk;
}

#endif /* ATTN_SDPA_LAYOUT_H */
