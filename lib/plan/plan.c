/*
 * attn_plan_create / attn_plan_destroy: validation of a plan's shape and
 * options and the layout of its arena. The arena is one 64-byte aligned
 * allocation; each buffer starts on a 64-byte boundary.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <attn/attn.h>

#include "core/check.h"
#include "plan/plan.h"
#include "engine/profile.h"
#include "engine/shared_threads.h"
#include "engine/tiling.h"

#define ATTN_KNOWN_FLAGS (ATTN_CAUSAL | ATTN_INFERENCE | ATTN_MATERIALIZED | ATTN_TILED)
#define ATTN_ALIGNMENT ((size_t)64)
/* Each worker's scratch starts on a 64-byte boundary in either precision. */
#define ATTN_WORKER_ROUND ((size_t)16)

/* A 64-byte aligned block of `bytes`, freed by aligned_free: malloc's block
 * with the distance to the boundary (1 to 64 bytes) in the byte before it.
 * Not aligned_alloc: glibc gives the bytes it skips back as small free
 * chunks, and the next large malloc then consolidates the heap (a quarter
 * of a one-shot's time at T=6, C=64). */
static void *aligned_block(size_t bytes)
{
    size_t padded;
    if (!attn_add(bytes, ATTN_ALIGNMENT, &padded))
        return NULL;
    unsigned char *raw = malloc(padded);
    if (raw == NULL)
        return NULL;
    const size_t skip = ATTN_ALIGNMENT - (size_t)((uintptr_t)raw % ATTN_ALIGNMENT);
    raw[skip - 1] = (unsigned char)skip;
    return raw + skip;
}

static void aligned_free(void *block)
{
    if (block != NULL) {
        unsigned char *at = block;
        free(at - at[-1]);
    }
}

/* Whether an inference plan computes heads without requested weights on the
 * tiled path. */
static int takes_tiled_path(size_t T, unsigned flags)
{
    if (flags & ATTN_TILED)
        return 1;
    return !(flags & ATTN_MATERIALIZED) && T >= ATTN_TILED_MIN_T;
}

/* Elements of one slot of the packed weights: W (C,D) or W^T (D,C), packed
 * whole for the own kernel (attn_gemm_packed_b_elements: K*(N + NR_MAX)),
 * rounded up to ATTN_WORKER_ROUND; false when that does not fit size_t.
 * (With C and D in the BLAS range it is below 2^62 + 2^38 on a 64-bit
 * size_t, but 4 slots of it need not be, nor is size_t always 64 bits.) */
static int packed_weight_elements(size_t C, size_t D, size_t *elements)
{
    size_t a, b;
    if (!attn_add(D, ATTN_GEMM_NR_MAX, &a) || !attn_mul(C, a, &a) ||
        !attn_add(C, ATTN_GEMM_NR_MAX, &b) || !attn_mul(D, b, &b) ||
        !attn_add(a > b ? a : b, ATTN_WORKER_ROUND - 1, elements))
        return 0;
    *elements = *elements / ATTN_WORKER_ROUND * ATTN_WORKER_ROUND;
    return 1;
}

/* The own threads' buffers of a projected plan (plan.h): KT of *kt elements
 * (B*T*D rounded up; with heads, the sdpa engine's layout of them, at
 * least its packed K^T and V), VT as many in training, 4 slots of packed
 * weights of *slot elements; *own in all, rounded up to ATTN_WORKER_ROUND.
 * Every step checked: false on overflow. */
static int own_buffer_elements(attn_shape s, int inference, const attn_sdpa_layout *heads,
                               size_t *kt, size_t *slot, size_t *own)
{
    size_t D, slots, transposes;
    attn_sdpa_packs packs;
    if (!attn_mul(s.NH, s.hs, &D) || !attn_mul3(s.B, s.T, D, kt) ||
        (heads != NULL && !attn_sdpa_packs_of(heads, 0, &packs)))
        return 0;
    if (heads != NULL && packs.total > *kt)
        *kt = packs.total;
    if (!attn_add(*kt, ATTN_WORKER_ROUND - 1, kt))
        return 0;
    *kt = *kt / ATTN_WORKER_ROUND * ATTN_WORKER_ROUND;
    if (!attn_mul(inference ? 1 : 2, *kt, &transposes) ||
        !packed_weight_elements(s.C, D, slot) || !attn_mul(4, *slot, &slots) ||
        !attn_add(transposes, slots, own) || !attn_add(*own, ATTN_WORKER_ROUND - 1, own))
        return 0;
    *own = *own / ATTN_WORKER_ROUND * ATTN_WORKER_ROUND; /* the workers start aligned */
    return 1;
}

/* Element counts of every buffer; 0 for absent ones. False on overflow. */
static int buffer_elements(attn_shape s, unsigned flags, size_t counts[ATTN_BUF_COUNT])
{
    size_t D, rows_by_D, rows_by_heads, stats, parts, tile, weights;
    const size_t groups = attn_backward_groups(s.B, s.NH, s.T);
    /* no buffer holds the (B,NH,T,T) weights, but a forward may be asked for them */
    if (!attn_mul(s.NH, s.hs, &D) || !attn_mul3(s.B, s.T, D, &rows_by_D) ||
        !attn_mul3(s.B, s.NH, s.T, &rows_by_heads) || !attn_mul(rows_by_heads, 2, &stats) ||
        !attn_mul(rows_by_D, groups, &parts) ||
        !attn_mul(s.T, s.T, &tile) || !attn_mul3(s.B, s.NH, tile, &weights))
        return 0;
    const int inference = (flags & ATTN_INFERENCE) != 0;
    const size_t training = inference ? 0 : 1;
    for (int b = 0; b < ATTN_BUF_COUNT; b++)
        counts[b] = 0;
    counts[ATTN_BUF_Q] = counts[ATTN_BUF_K] = counts[ATTN_BUF_V] = rows_by_D;
    counts[ATTN_BUF_HEADS] = rows_by_D;
    counts[ATTN_BUF_STATS] = stats * training;
    counts[ATTN_BUF_ROWDOT] = rows_by_heads * training;
    counts[ATTN_BUF_DQ_PARTS] = groups > 1 ? parts * training : 0;
    counts[ATTN_BUF_DQ] = counts[ATTN_BUF_DK] = counts[ATTN_BUF_DV] = rows_by_D * training;
    counts[ATTN_BUF_DHEADS] = rows_by_D * training;
    return 1;
}

/* Elements of one worker's scratch (engine.h): the own kernel's packing for
 * any product of the plan (no dimension exceeds the largest of B*T, C and
 * D), then the tile of one query block: the tiled path's (which a training
 * forward takes too, and which holds the backward's tiles), or a block of
 * scores (materialized inference); each part at least the sdpa engine's on
 * the layout `heads` when there is one. False on overflow. */
static int worker_elements(attn_shape s, int tiled, const attn_sdpa_layout *heads, size_t *pack,
                           size_t *total)
{
    size_t rows, D, tile, sdpa_pack = 0, sdpa_total = 0;
    const int ok = attn_mul(s.B, s.T, &rows) && attn_mul(s.NH, s.hs, &D) &&
                   (tiled ? attn_add(attn_tiled_workspace(0), s.T, &tile)
                          : attn_mul(ATTN_QUERY_BLOCK, s.T, &tile)) &&
                   attn_add(tile, ATTN_WORKER_ROUND, &tile) &&
                   (heads == NULL || attn_sdpa_worker_elements(heads, &sdpa_pack, &sdpa_total));
    if (!ok)
        return 0;
    size_t largest = rows > s.C ? rows : s.C;
    largest = largest > D ? largest : D;
    /* at most a few hundred thousand: KC (NC + MC + ...), or the direct bound */
    *pack = attn_gemm_pack_bound(largest, largest, largest) / ATTN_WORKER_ROUND *
                ATTN_WORKER_ROUND + ATTN_WORKER_ROUND;
    tile = tile / ATTN_WORKER_ROUND * ATTN_WORKER_ROUND;
    if (sdpa_total - sdpa_pack > tile) /* both multiples of ATTN_WORKER_ROUND */
        tile = sdpa_total - sdpa_pack;
    if (sdpa_pack > *pack)
        *pack = sdpa_pack;
    return attn_add(*pack, tile, total);
}

/* The scratch allocation of `plan` on `threads` threads (see plan.h), 64-byte
 * aligned, and the elements of its own-thread buffers; NULL when it cannot
 * be had (*status says why). */
static void *new_scratch(const attn_plan *plan, unsigned threads, size_t *own_elements,
                         size_t *kt_elements, attn_status *status)
{
    const attn_shape s = plan->shape;
    const size_t element_size = attn_compute_size(plan->dtype);
    /* a plan too small to share runs on its calling thread alone, without
     * K^T, V^T or packed weights (plan_engine.h): one worker's scratch */
    const size_t workers = threads > 1 && !plan->alone ? threads : 1;
    size_t bytes, own = 0, kt = 0, slot, total;
    /* KT, VT and the packed weights: projected plans on own threads only */
    if (threads > 0 && plan->kind == ATTN_PLAN_PROJECTED && !plan->alone &&
        !own_buffer_elements(s, plan->inference, plan->sdpa_heads ? &plan->sdpa : NULL, &kt,
                             &slot, &own)) {
        *status = ATTN_ERR_SIZE_OVERFLOW;
        return NULL;
    }
    /* sdpa plans of many queries on own threads: K^T and V packed (and V^T
     * in training), sdpa_layout.h */
    if (threads > 0 && plan->kind == ATTN_PLAN_SDPA && attn_sdpa_prepacks(&plan->sdpa)) {
        attn_sdpa_packs packs;
        if (!attn_sdpa_packs_of(&plan->sdpa, !plan->inference, &packs) ||
            !attn_add(packs.total, ATTN_WORKER_ROUND, &own)) {
            *status = ATTN_ERR_SIZE_OVERFLOW;
            return NULL;
        }
        own = own / ATTN_WORKER_ROUND * ATTN_WORKER_ROUND;
    }
    if (!attn_mul(workers, plan->worker_elements, &total) || !attn_add(total, own, &total) ||
        !attn_mul(total, element_size, &bytes)) {
        *status = ATTN_ERR_SIZE_OVERFLOW;
        return NULL;
    }
    void *scratch = aligned_block(bytes);
    *status = scratch != NULL ? ATTN_OK : ATTN_ERR_OUT_OF_MEMORY;
    *own_elements = own;
    *kt_elements = kt;
    return scratch;
}

/* Byte offsets of the buffers in the arena and its total size. */
int attn_plan_layout(const size_t counts[ATTN_BUF_COUNT], size_t element_size,
                     size_t offsets[ATTN_BUF_COUNT], size_t *total)
{
    size_t at = 0;
    for (int b = 0; b < ATTN_BUF_COUNT; b++) {
        size_t bytes, padded;
        if (counts[b] == 0) {
            offsets[b] = ATTN_ABSENT;
            continue;
        }
        if (!attn_mul(counts[b], element_size, &bytes) ||
            !attn_add(bytes, ATTN_ALIGNMENT - 1, &padded))
            return 0;
        offsets[b] = at;
        if (!attn_add(at, padded / ATTN_ALIGNMENT * ATTN_ALIGNMENT, &at))
            return 0;
    }
    *total = at;
    return 1;
}

attn_status attn_plan_create(attn_plan **plan, attn_dtype dtype, size_t B, size_t T, size_t C,
                             size_t NH, size_t hs, double scale, unsigned flags)
{
    if (plan == NULL)
        return ATTN_ERR_NULL_POINTER;
    if (dtype != ATTN_F32 && dtype != ATTN_F64)
        return ATTN_ERR_BAD_DTYPE;
    if ((flags & ~(unsigned)ATTN_KNOWN_FLAGS) != 0 ||
        (flags & (ATTN_MATERIALIZED | ATTN_TILED)) == (ATTN_MATERIALIZED | ATTN_TILED))
        return ATTN_ERR_BAD_FLAGS;
    const size_t dims[] = {B, T, C, NH, hs};
    if (attn_any_zero(dims, ATTN_COUNT(dims)))
        return ATTN_ERR_ZERO_DIMENSION;

    const attn_shape shape = {B, T, C, NH, hs};
    const int inference = (flags & ATTN_INFERENCE) != 0;
    /* a training forward takes the tiled path and keeps each row's statistics */
    const int tiled = !inference || takes_tiled_path(T, flags);
    /* an inference forward on the tiled path computes its heads with the
     * sdpa engine on own threads (forward.h), where it packs K^T and V once
     * (many queries) and needs no merge of key splits */
    const attn_sdpa_shape heads_shape = {B, NH, NH, T, T, hs, hs};
    size_t heads_rows; /* the layout divides by its item count: no overflow first */
    const int heads_fit = attn_mul3(B, NH, T, &heads_rows);
    const attn_sdpa_layout heads =
        heads_fit ? attn_sdpa_layout_of(heads_shape) : (attn_sdpa_layout){.shape = heads_shape};
    const int sdpa_heads = heads_fit && inference && tiled && attn_sdpa_prepacks(&heads) &&
                           heads.splits == 1;
    const attn_sdpa_layout *heads_layout = sdpa_heads ? &heads : NULL;
    const size_t element_size = dtype == ATTN_F32 ? sizeof(float) : sizeof(double);
    size_t counts[ATTN_BUF_COUNT], offsets[ATTN_BUF_COUNT], arena_bytes, rows, D;
    size_t X_bytes, W_bytes, out_bytes, pack_elements, worker_total, kt, slot, own;
    /* the own threads' buffers too (before any allocation: a plan may be
     * set to own threads at any time), in elements and in bytes */
    if (!buffer_elements(shape, flags, counts) ||
        !own_buffer_elements(shape, inference, heads_layout, &kt, &slot, &own) ||
        !attn_mul(own, element_size, &own) ||
        !worker_elements(shape, tiled, heads_layout, &pack_elements, &worker_total) ||
        !attn_plan_layout(counts, element_size, offsets, &arena_bytes) || !attn_mul(B, T, &rows) ||
        !attn_mul(NH, hs, &D) || !attn_mul3(rows, C, element_size, &X_bytes) ||
        !attn_mul3(C, D, element_size, &W_bytes) ||
        !attn_mul3(rows, C > D ? C : D, element_size, &out_bytes))
        return ATTN_ERR_SIZE_OVERFLOW;
    const size_t blas_dims[] = {rows, T, C, D};
    const attn_status status = attn_plan_check_ranges(blas_dims, ATTN_COUNT(blas_dims), dtype,
                                                      scale);
    if (status != ATTN_OK)
        return status;

    attn_plan fields = {0};
    fields.dtype = dtype;
    fields.tiled = tiled;
    fields.sdpa_heads = sdpa_heads;
    fields.sdpa = heads;
    fields.worker_elements = worker_total;
    fields.pack_elements = pack_elements;
    fields.packed_slot_elements = slot;
    fields.shape = shape;
    fields.scale = scale > 0.0 ? scale : 1.0 / sqrt((double)hs);
    fields.causal = (flags & ATTN_CAUSAL) != 0;
    fields.inference = inference;
    /* the forward's products: Q, K, V, then scores and P V of every head */
    const double Td = (double)T, heads_flops = 4.0 * (double)B * (double)NH * Td * Td * (double)hs;
    fields.alone = 6.0 * (double)rows * (double)C * (double)D + heads_flops <
                   ATTN_PARALLEL_MIN_FLOPS;
    return attn_plan_build(&fields, arena_bytes, offsets, plan);
}

attn_status attn_plan_check_ranges(const size_t *blas_dims, size_t count, attn_dtype dtype,
                                   double scale)
{
    if (!attn_all_at_most(blas_dims, count, ATTN_BLAS_INT_MAX))
        return ATTN_ERR_BLAS_RANGE;
    const double largest = dtype == ATTN_F32 ? (double)FLT_MAX : DBL_MAX;
    return attn_scale_valid(scale, largest) ? ATTN_OK : ATTN_ERR_BAD_SCALE;
}

attn_status attn_plan_build(const attn_plan *fields, size_t arena_bytes,
                            const size_t offsets[ATTN_BUF_COUNT], attn_plan **plan)
{
    attn_plan *created = calloc(1, sizeof *created);
    /* a plan without buffers still gets an arena: a NULL one means failure */
    void *arena = aligned_block(arena_bytes > 0 ? arena_bytes : ATTN_ALIGNMENT);
    if (created == NULL || arena == NULL) {
        free(created);
        aligned_free(arena);
        return ATTN_ERR_OUT_OF_MEMORY;
    }
    *created = *fields;
    created->isa = attn_isa_active();
    created->arena = arena;
    for (int b = 0; b < ATTN_BUF_COUNT; b++)
        created->offset[b] = offsets[b];
    const attn_status status = attn_plan_set_threads(created, ATTN_THREADS_AUTO);
    if (status != ATTN_OK) {
        attn_plan_destroy(created);
        return status;
    }
    *plan = created;
    return ATTN_OK;
}

attn_status attn_plan_set_threads(attn_plan *plan, unsigned setting)
{
    if (plan == NULL)
        return ATTN_ERR_NULL_POINTER;
    if (setting > ATTN_MAX_THREADS && setting != ATTN_THREADS_AUTO)
        return ATTN_ERR_BAD_THREADS;
    /* ATTN_THREADS_AUTO on own threads: the shared pool's, never the plan's */
    const int shared = setting == ATTN_THREADS_AUTO;
    const unsigned threads = shared ? attn_auto_threads() : setting;
    attn_status status;
    size_t own_elements, kt_elements;
    void *scratch = new_scratch(plan, threads, &own_elements, &kt_elements, &status);
    if (scratch == NULL)
        return status;
    attn_pool *pool = NULL;
    if (!shared && threads > 1 && (status = attn_pool_create(&pool, threads)) != ATTN_OK) {
        aligned_free(scratch);
        return status;
    }
    /* The shared pool is started here, not by the plan's first call (which
     * then allocates nothing); when it cannot be, the plan's calls run on
     * their calling thread alone. */
    if (shared && threads > 1 && !plan->alone)
        attn_shared_pool_release(attn_shared_pool_acquire());
    attn_pool_destroy(plan->pool);
    aligned_free(plan->scratch);
    plan->pool = pool;
    plan->scratch = scratch;
    plan->own_elements = own_elements;
    plan->kt_elements = kt_elements;
    plan->packed_offset = plan->inference ? kt_elements : 2 * kt_elements;
    plan->threads_setting = setting;
    plan->threads = threads;
    plan->shared = shared;
    return ATTN_OK;
}

attn_status attn_plan_set_dropout(attn_plan *plan, double p, uint64_t seed, uint64_t offset)
{
    if (plan == NULL)
        return ATTN_ERR_NULL_POINTER;
    if (plan->kind == ATTN_PLAN_RING)
        return ATTN_ERR_PLAN_KIND;
    if (plan->inference)
        return ATTN_ERR_INFERENCE_PLAN;
    if (!(p >= 0.0 && p < 1.0)) /* NaN too */
        return ATTN_ERR_BAD_DROPOUT;
    plan->dropout = attn_dropout_make(p, seed, offset);
    return ATTN_OK;
}

attn_status attn_plan_get_threads(const attn_plan *plan, unsigned *threads)
{
    if (plan == NULL || threads == NULL)
        return ATTN_ERR_NULL_POINTER;
    *threads = plan->threads;
    return ATTN_OK;
}

attn_status attn_plan_set_profiling(attn_plan *plan, int enabled)
{
    if (plan == NULL)
        return ATTN_ERR_NULL_POINTER;
    free(plan->profile);
    plan->profile = NULL;
    if (!enabled)
        return ATTN_OK;
    plan->profile = calloc((size_t)ATTN_MAX_THREADS * ATTN_PROFILE_ROW_DOUBLES, sizeof(double));
    return plan->profile != NULL ? ATTN_OK : ATTN_ERR_OUT_OF_MEMORY;
}

attn_status attn_plan_profile(const attn_plan *plan, double seconds[ATTN_PHASE_COUNT],
                              double flops[ATTN_PHASE_COUNT])
{
    if (plan == NULL)
        return ATTN_ERR_NULL_POINTER;
    for (int phase = 0; phase < ATTN_PHASE_COUNT; phase++) {
        double phase_seconds = 0.0, phase_flops = 0.0;
        for (unsigned w = 0; plan->profile != NULL && w < ATTN_MAX_THREADS; w++) {
            const double *row = attn_profile_row(plan->profile, w);
            phase_seconds += row[2 * phase];
            phase_flops += row[2 * phase + 1];
        }
        if (seconds != NULL)
            seconds[phase] = phase_seconds;
        if (flops != NULL)
            flops[phase] = phase_flops;
    }
    return ATTN_OK;
}

void attn_plan_destroy(attn_plan *plan)
{
    if (plan == NULL)
        return;
    if (plan->release != NULL)
        plan->release(plan->extension);
    attn_pool_destroy(plan->pool);
    free(plan->profile);
    aligned_free(plan->scratch);
    aligned_free(plan->arena);
    free(plan);
}

