/*
 * attn_ring_plan_create: validation of a ring plan's shape and options on
 * every rank, the ranks' agreement on them, and the plan's state (ring.h):
 * its communicator, buffers and the sdpa plans of its blocks. Freed by
 * attn_plan_destroy through the plan's release (ring_release).
 *
 * Two agreements (ring_comm.h's rule: the lowest failing rank's status):
 *   1. the local checks, in attn_mpi.h's order up to BAD_SCALE, together
 *      with every rank's parameters (one MPI_Allreduce of MAX over the
 *      values and their complements gives their max and min: ranks that
 *      disagree are BAD_SHAPE);
 *   2. after MPI_Comm_dup, the allocations (OUT_OF_MEMORY).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <attn/attn.h>
#include <attn/attn_mpi.h>

#include "core/check.h"
#include "plan/plan.h"
#include "ring/ring.h"
#include "ring/ring_comm.h"
#include "ring/ring_schedule.h"

#define RING_FLAGS (ATTN_CAUSAL | ATTN_INFERENCE | ATTN_ZIGZAG)
#define RING_ALIGNMENT ((size_t)64)
/* What attn_plan_set_threads allocates per thread for a ring plan (whose
 * work runs on its block plans): a token amount, never 0 bytes. */
#define RING_WORKER_ELEMENTS 16

enum { RING_PARAMS = 10 };

/* The checks of one rank, in attn_mpi.h's order up to BAD_SCALE. */
static attn_status local_checks(attn_plan **plan, attn_dtype dtype, const attn_sdpa_shape *local,
                                double scale, unsigned flags, int size)
{
    if (plan == NULL || local == NULL)
        return ATTN_ERR_NULL_POINTER;
    if (dtype != ATTN_F32 && dtype != ATTN_F64)
        return ATTN_ERR_BAD_DTYPE;
    if ((flags & ~(unsigned)RING_FLAGS) != 0)
        return ATTN_ERR_BAD_FLAGS;
    const attn_sdpa_shape s = *local;
    const size_t dims[] = {s.B, s.NH, s.NH_kv, s.Tq, s.Tk, s.hs};
    if (attn_any_zero(dims, ATTN_COUNT(dims)))
        return ATTN_ERR_ZERO_DIMENSION;
    if (s.NH % s.NH_kv != 0 || s.Tq != s.Tk || ((flags & ATTN_ZIGZAG) && s.Tq % 2 != 0))
        return ATTN_ERR_BAD_SHAPE;
    const size_t hs_v = s.hs_v != 0 ? s.hs_v : s.hs;
    const size_t element = dtype == ATTN_F32 ? sizeof(float) : sizeof(double);
    const size_t widest = s.hs > hs_v ? s.hs : hs_v;
    size_t global, rows, q_width, k_width, o_width, kv_width, extent;
    size_t both;
    if (!attn_mul((size_t)size, s.Tq, &global) || !attn_mul(s.B, s.Tq, &rows) ||
        !attn_mul(s.NH, widest, &q_width) || !attn_add(s.hs, hs_v, &both) ||
        !attn_mul(s.NH_kv, both, &kv_width) || !attn_mul3(rows, q_width, element, &extent) ||
        !attn_mul3(rows, kv_width, element, &extent) || !attn_mul3(rows, s.NH, element, &extent))
        return ATTN_ERR_SIZE_OVERFLOW;
    q_width = s.NH * s.hs; /* below NH * widest */
    k_width = s.NH_kv * widest;
    o_width = s.NH * hs_v;
    const size_t blas_dims[] = {s.Tk, s.hs, hs_v, q_width, k_width, o_width};
    if (!attn_all_at_most(blas_dims, ATTN_COUNT(blas_dims), ATTN_BLAS_INT_MAX))
        return ATTN_ERR_BLAS_RANGE;
    if (!attn_scale_valid(scale, dtype == ATTN_F32 ? (double)FLT_MAX : DBL_MAX))
        return ATTN_ERR_BAD_SCALE;
    return ATTN_OK;
}

/* Agreement 1: the lowest failing rank's status, else BAD_SHAPE when the
 * ranks' parameters differ, else OK. Collective over comm. */
static attn_status agree_on_parameters(MPI_Comm comm, int rank, int size, attn_status local,
                                       const unsigned long long params[RING_PARAMS])
{
    unsigned long long mine[2 * RING_PARAMS + 1], all[2 * RING_PARAMS + 1];
    for (int i = 0; i < RING_PARAMS; i++) {
        mine[i] = params[i];
        mine[RING_PARAMS + i] = ~params[i];
    }
    mine[2 * RING_PARAMS] =
        local != ATTN_OK ? (unsigned long long)(size - rank) * 256u + (unsigned long long)local : 0;
    MPI_Allreduce(mine, all, 2 * RING_PARAMS + 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    if (all[2 * RING_PARAMS] != 0)
        return (attn_status)(all[2 * RING_PARAMS] % 256u);
    for (int i = 0; i < RING_PARAMS; i++)
        if (all[i] != ~all[RING_PARAMS + i]) /* max != min */
            return ATTN_ERR_BAD_SHAPE;
    return ATTN_OK;
}

static size_t round_up(size_t bytes)
{
    return (bytes + RING_ALIGNMENT - 1) / RING_ALIGNMENT * RING_ALIGNMENT;
}

/* Whether the schedule of `ring` ever computes a block of `kind`. */
static int uses_block(const attn_ring *ring, ring_block kind)
{
    for (int src = 0; src < ring->size; src++)
        if (ring_block_of(ring, src) == kind)
            return 1;
    return 0;
}

static void ring_release(void *extension)
{
    attn_ring *ring = extension;
    if (ring == NULL)
        return;
    for (int k = 0; k < RING_BLOCK_KINDS; k++)
        attn_plan_destroy(ring->block_plans[k]);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (ring->comm != MPI_COMM_NULL && !finalized)
        MPI_Comm_free(&ring->comm);
    free(ring->requests);
    free(ring->memory);
    free(ring);
}

/* The block plans, buffers and requests of `ring` (its shape, options and
 * communicator set). */
static attn_status ring_allocate(attn_ring *ring, attn_dtype dtype)
{
    const attn_sdpa_shape s = ring->shape;
    const size_t T = s.Tq, e = ring->element_size;
    const size_t widest = s.hs > s.hs_v ? s.hs : s.hs_v;
    const int travels = ring->size > 1, training = !ring->inference;
    /* every product below is bounded by an array checked in local_checks */
    ring->pieces = 1; /* alone (P = 1) nothing travels: no pieces */
    for (size_t n = travels ? RING_MAX_PIECES : 1; n > 1; n--)
        if (s.NH_kv % n == 0) {
            ring->pieces = n;
            break;
        }
    ring->k_elements = s.B * T * s.NH_kv * s.hs;
    ring->kv_elements = ring->k_elements + s.B * T * s.NH_kv * s.hs_v;
    ring->chunks = ring->kv_elements / RING_CHUNK_ELEMENTS +
                   (ring->kv_elements % RING_CHUNK_ELEMENTS != 0);
    const size_t kv = travels ? round_up(ring->kv_elements * e) : 0;
    const size_t dkv = travels && training ? kv : 0;
    const size_t out = travels ? round_up(T * s.NH * widest * e) : 0;
    const size_t lse = round_up(s.NH * T * e);
    const size_t block_dkv = travels && training ? round_up(T * s.NH_kv * (s.hs + s.hs_v) * e) : 0;
    const size_t lse_acc = round_up(s.B * s.NH * T * e);
    const size_t q_dense = travels && training ? round_up(T * s.NH * s.hs * e) : 0;
    size_t total = 0;
    const size_t parts[] = {kv, kv, dkv, dkv, out, lse, block_dkv, lse_acc, q_dense};
    for (size_t i = 0; i < ATTN_COUNT(parts); i++)
        if (!attn_add(total, parts[i], &total))
            return ATTN_ERR_SIZE_OVERFLOW;
    ring->memory = aligned_alloc(RING_ALIGNMENT, total);
    ring->requests = malloc((size_t)RING_REQUEST_SLOTS * ring->chunks * sizeof(MPI_Request));
    if (ring->memory == NULL || ring->requests == NULL)
        return ATTN_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < (size_t)RING_REQUEST_SLOTS * ring->chunks; i++)
        ring->requests[i] = MPI_REQUEST_NULL;
    char *at = ring->memory;
    void **slots[] = {&ring->kv[0], &ring->kv[1], &ring->dkv[0], &ring->dkv[1],
                      &ring->block_out, &ring->block_lse, &ring->block_dkv, &ring->lse_acc,
                      &ring->q_dense};
    for (size_t i = 0; i < ATTN_COUNT(parts); i++) {
        *slots[i] = parts[i] > 0 ? at : NULL;
        at += parts[i];
    }

    for (int k = 0; k < RING_BLOCK_KINDS; k++) {
        if (!uses_block(ring, (ring_block)k))
            continue;
        const ring_geometry g = ring_geometry_of((ring_block)k, T);
        const attn_sdpa_shape block = {1, s.NH / ring->pieces, s.NH_kv / ring->pieces, g.Tq,
                                       g.Tk, s.hs, s.hs_v};
        const unsigned flags = (k == RING_DIAG ? ATTN_CAUSAL : 0u) |
                               (ring->inference ? ATTN_INFERENCE : 0u);
        const attn_status status =
            attn_sdpa_plan_create(&ring->block_plans[k], dtype, &block, ring->scale, flags, 0);
        if (status != ATTN_OK)
            return status;
    }
    ring->block_threads = ATTN_THREADS_AUTO;
    return ATTN_OK;
}

attn_status attn_ring_plan_create(attn_plan **plan, MPI_Comm comm, attn_dtype dtype,
                                  const attn_sdpa_shape *local, double scale, unsigned flags)
{
    if (comm == MPI_COMM_NULL)
        return ATTN_ERR_NULL_POINTER;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    attn_status status = local_checks(plan, dtype, local, scale, flags, size);
    unsigned long long params[RING_PARAMS] = {0};
    if (status == ATTN_OK) {
        const attn_sdpa_shape s = *local;
        const double resolved = scale > 0.0 ? scale : 1.0 / sqrt((double)s.hs);
        unsigned long long scale_bits;
        memcpy(&scale_bits, &resolved, sizeof scale_bits);
        const unsigned long long values[RING_PARAMS] = {
            (unsigned long long)dtype, flags, s.B, s.NH, s.NH_kv, s.Tq, s.Tk, s.hs,
            s.hs_v != 0 ? s.hs_v : s.hs, scale_bits};
        memcpy(params, values, sizeof params);
    }
    status = agree_on_parameters(comm, rank, size, status, params);
    if (status != ATTN_OK)
        return status;

    attn_ring *ring = calloc(1, sizeof *ring);
    attn_plan *created = calloc(1, sizeof *created);
    MPI_Comm own = MPI_COMM_NULL;
    MPI_Comm_dup(comm, &own); /* collective: every rank is here */
    if (ring == NULL || created == NULL) {
        status = ATTN_ERR_OUT_OF_MEMORY;
    } else {
        ring->comm = own;
        ring->rank = rank;
        ring->size = size;
        ring->shape = *local;
        if (ring->shape.hs_v == 0)
            ring->shape.hs_v = ring->shape.hs;
        ring->causal = (flags & ATTN_CAUSAL) != 0;
        ring->zigzag = (flags & ATTN_ZIGZAG) != 0;
        ring->inference = (flags & ATTN_INFERENCE) != 0;
        ring->scale = scale > 0.0 ? scale : 1.0 / sqrt((double)local->hs);
        ring->element_size = dtype == ATTN_F32 ? sizeof(float) : sizeof(double);
        status = ring_allocate(ring, dtype);
    }
    status = ring_agree(own, status);
    if (status != ATTN_OK) {
        if (ring != NULL)
            ring_release(ring);
        else
            MPI_Comm_free(&own);
        free(created);
        return status;
    }

    created->kind = ATTN_PLAN_RING;
    created->dtype = dtype;
    created->scale = ring->scale;
    created->causal = ring->causal;
    created->inference = ring->inference;
    created->window = 0;
    for (int b = 0; b < ATTN_BUF_COUNT; b++)
        created->offset[b] = ATTN_ABSENT;
    created->worker_elements = RING_WORKER_ELEMENTS;
    /* the threads are the block plans' (ATTN_THREADS_AUTO, as every plan starts) */
    created->threads_setting = ATTN_THREADS_AUTO;
    created->shared = 1;
    for (int k = 0; k < RING_BLOCK_KINDS; k++)
        if (ring->block_plans[k] != NULL) {
            (void)attn_plan_get_threads(ring->block_plans[k], &created->threads);
            break;
        }
    created->extension = ring;
    created->release = ring_release;
    *plan = created;
    return ATTN_OK;
}

attn_status ring_sync_threads(attn_plan *plan, attn_ring *ring)
{
    if (ring->block_threads == plan->threads_setting)
        return ATTN_OK;
    for (int k = 0; k < RING_BLOCK_KINDS; k++) {
        if (ring->block_plans[k] == NULL)
            continue;
        const attn_status status = attn_plan_set_threads(ring->block_plans[k],
                                                         plan->threads_setting);
        if (status != ATTN_OK)
            return status;
    }
    ring->block_threads = plan->threads_setting;
    return ATTN_OK;
}
