/*
 * attn_sdpa_plan_create: validation of an sdpa plan's shape and options, its
 * work items (sdpa_layout.h) and the layout of its arena (plan.h). The
 * plan's threads, scratch and destruction are those of every plan (plan.c).
 */
#include <math.h>

#include <attn/attn.h>

#include "core/check.h"
#include "plan/plan.h"
#include "engine/sdpa_layout.h"

#define ATTN_SDPA_FLAGS (ATTN_CAUSAL | ATTN_INFERENCE)
#define ATTN_WORKER_ROUND ((size_t)16)

/* A half plan's float copies (plan.h, ATTN_BUF_STAGE_*): of Q, K, V, out,
 * and in training of dout and the gradients; false on overflow. */
static int sdpa_stage_elements(const attn_sdpa_shape s, int inference,
                               size_t counts[ATTN_BUF_COUNT])
{
    size_t q_rows, k_rows, q, k, v, o;
    if (!attn_mul3(s.B, s.Tq, s.NH, &q_rows) || !attn_mul3(s.B, s.Tk, s.NH_kv, &k_rows) ||
        !attn_mul(q_rows, s.hs, &q) || !attn_mul(k_rows, s.hs, &k) ||
        !attn_mul(k_rows, s.hs_v, &v) || !attn_mul(q_rows, s.hs_v, &o))
        return 0;
    counts[ATTN_BUF_STAGE_Q] = q;
    counts[ATTN_BUF_STAGE_K] = k;
    counts[ATTN_BUF_STAGE_V] = v;
    counts[ATTN_BUF_STAGE_OUT] = o;
    counts[ATTN_BUF_STAGE_DOUT] = inference ? 0 : o;
    counts[ATTN_BUF_STAGE_DQ] = inference ? 0 : q;
    counts[ATTN_BUF_STAGE_DK] = inference ? 0 : k;
    counts[ATTN_BUF_STAGE_DV] = inference ? 0 : v;
    return 1;
}

/* Element counts of the arena's buffers; false on overflow. */
static int sdpa_buffer_elements(const attn_sdpa_layout *l, int inference, int half,
                                size_t counts[ATTN_BUF_COUNT])
{
    const attn_sdpa_shape s = l->shape;
    size_t rows, partials, parts;
    if (!attn_mul3(s.B, s.NH, s.Tq, &rows) ||
        !attn_mul3(rows, l->splits, attn_sdpa_partial_elements(l), &partials) ||
        !attn_mul3(rows, l->groups, s.hs, &parts))
        return 0;
    for (int b = 0; b < ATTN_BUF_COUNT; b++)
        counts[b] = 0;
    counts[ATTN_BUF_PARTIALS] = l->splits > 1 ? partials : 0;
    counts[ATTN_BUF_ROWDOT] = inference ? 0 : rows;
    counts[ATTN_BUF_DQ_PARTS] = !inference && l->groups > 1 ? parts : 0;
    return !half || sdpa_stage_elements(s, inference, counts);
}

/* Elements of one worker's scratch (plan.h): the own kernel's packing for
 * every product of the engines (no dimension above max(Tk, hs, hs_v,
 * ATTN_TILE_KEYS)), then the tile (sdpa_layout.h). False on overflow. */
int attn_sdpa_worker_elements(const attn_sdpa_layout *l, size_t *pack, size_t *total)
{
    const attn_sdpa_shape s = l->shape;
    size_t largest = s.Tk > s.hs ? s.Tk : s.hs;
    largest = largest > s.hs_v ? largest : s.hs_v;
    largest = largest > ATTN_TILE_KEYS ? largest : ATTN_TILE_KEYS;
    /* attn_sdpa_tile_elements, checked */
    size_t tile, head_rows;
    const size_t fixed =
        ATTN_SDPA_SCORES_ELEMENTS + ATTN_SDPA_BF16_ELEMENTS + 3 * (size_t)ATTN_QUERY_BLOCK;
    if (!attn_mul(ATTN_QUERY_BLOCK, s.hs_v, &head_rows) || !attn_add(head_rows, s.Tk, &tile) ||
        !attn_add(tile, fixed + 2 * ATTN_WORKER_ROUND, &tile))
        return 0;
    *pack = attn_gemm_pack_bound(largest, largest, largest) / ATTN_WORKER_ROUND *
                ATTN_WORKER_ROUND +
            ATTN_WORKER_ROUND;
    return attn_add(*pack, tile / ATTN_WORKER_ROUND * ATTN_WORKER_ROUND, total);
}

attn_status attn_sdpa_plan_create(attn_plan **plan, attn_dtype dtype,
                                  const attn_sdpa_shape *shape, double scale, unsigned flags,
                                  size_t window)
{
    if (plan == NULL || shape == NULL)
        return ATTN_ERR_NULL_POINTER;
    if (dtype != ATTN_F32 && dtype != ATTN_F64 && !attn_is_half(dtype))
        return ATTN_ERR_BAD_DTYPE;
    if ((flags & ~(unsigned)ATTN_SDPA_FLAGS) != 0)
        return ATTN_ERR_BAD_FLAGS;
    const attn_sdpa_shape s = *shape;
    const size_t dims[] = {s.B, s.NH, s.NH_kv, s.Tq, s.Tk, s.hs};
    if (attn_any_zero(dims, ATTN_COUNT(dims)))
        return ATTN_ERR_ZERO_DIMENSION;
    if (s.NH % s.NH_kv != 0)
        return ATTN_ERR_BAD_SHAPE;

    const int inference = (flags & ATTN_INFERENCE) != 0;
    /* a half plan computes in float, on float copies of its arrays */
    const size_t element_size = attn_compute_size(dtype);
    size_t counts[ATTN_BUF_COUNT], offsets[ATTN_BUF_COUNT], arena_bytes, pack, worker;
    size_t q_rows, k_rows, q_width, k_width, o_width, extent, rows, items;
    /* the work items' counts first (the layout divides by them) */
    if (!attn_mul3(s.B, s.NH, s.Tq, &rows) || !attn_mul3(s.B, s.NH_kv, s.Tk, &items) ||
        !attn_mul(s.B, s.Tq, &q_rows) || !attn_mul(s.B, s.Tk, &k_rows))
        return ATTN_ERR_SIZE_OVERFLOW;
    const attn_sdpa_layout layout = attn_sdpa_layout_of(s);
    /* the arrays' dense extents must be addressable, and the work */
    if (!attn_mul(s.NH, s.hs, &q_width) ||
        !attn_mul(s.NH_kv, s.hs > layout.shape.hs_v ? s.hs : layout.shape.hs_v, &k_width) ||
        !attn_mul(s.NH, layout.shape.hs_v, &o_width) ||
        !attn_mul3(q_rows, q_width > o_width ? q_width : o_width, element_size, &extent) ||
        !attn_mul3(k_rows, k_width, element_size, &extent) ||
        !sdpa_buffer_elements(&layout, inference, attn_is_half(dtype), counts) ||
        !attn_sdpa_worker_elements(&layout, &pack, &worker) ||
        !attn_plan_layout(counts, element_size, offsets, &arena_bytes))
        return ATTN_ERR_SIZE_OVERFLOW;
    const size_t blas_dims[] = {s.Tk, s.hs, layout.shape.hs_v, q_width, k_width, o_width};
    const attn_status status = attn_plan_check_ranges(blas_dims, ATTN_COUNT(blas_dims),
                                                      attn_compute_dtype(dtype), scale);
    if (status != ATTN_OK)
        return status;

    attn_plan fields = {0};
    fields.kind = ATTN_PLAN_SDPA;
    fields.dtype = dtype;
    fields.sdpa = layout;
    fields.window = window;
    fields.tiled = 1;
    fields.worker_elements = worker;
    fields.pack_elements = pack;
    fields.scale = scale > 0.0 ? scale : 1.0 / sqrt((double)s.hs);
    fields.causal = (flags & ATTN_CAUSAL) != 0;
    fields.inference = inference;
    const double widest = (double)(s.hs > layout.shape.hs_v ? s.hs : layout.shape.hs_v);
    fields.alone = 4.0 * (double)s.B * (double)s.NH * (double)s.Tq * (double)s.Tk * widest <
                   ATTN_PARALLEL_MIN_FLOPS;
    return attn_plan_build(&fields, arena_bytes, offsets, plan);
}
