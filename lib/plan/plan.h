/*
 * The plan object (opaque to users): shape, options, one arena holding the
 * buffers a forward keeps and a backward needs, laid out at creation, and
 * the scratch of each thread that executes the plan (engine.h), replaced by
 * attn_plan_set_threads together with the plan's pool of threads.
 */
#ifndef ATTN_PLAN_H
#define ATTN_PLAN_H

#include <stddef.h>

#include <attn/attn.h>

#include "core/dropout.h"
#include "kernels/kernels.h"
#include "engine/pool.h"
#include "engine/sdpa_layout.h"
#include "plan/shape.h"

typedef enum attn_buffer {
    ATTN_BUF_Q,       /* (B,T,D) */
    ATTN_BUF_K,       /* (B,T,D) */
    ATTN_BUF_V,       /* (B,T,D) */
    ATTN_BUF_HEADS,   /* (B,T,D) concatenated head outputs (before Wo) */
    ATTN_BUF_STATS,   /* (B,NH,T,2) each row's max and log of its sum, kept for the backward */
    ATTN_BUF_ROWDOT,  /* (B,NH,T) the backward's <dY_t, Y_t> */
    ATTN_BUF_DQ_PARTS, /* (B,NH,groups,T,hs) dQ of each key block group (tiling.h) */
    ATTN_BUF_DQ,      /* (B,T,D) */
    ATTN_BUF_DK,      /* (B,T,D) */
    ATTN_BUF_DV,      /* (B,T,D) */
    ATTN_BUF_DHEADS,  /* (B,T,D) gradient of the head outputs */
    ATTN_BUF_PARTIALS, /* sdpa: (splits,B,NH,Tq,hs_v+2) each key split's rows (sdpa_layout.h) */
    /* half-precision sdpa plans: the float copies the float engine runs on
     * (api/sdpa_half.inc.c), dense and head-major: (B,NH,T,hs) */
    ATTN_BUF_STAGE_Q,    /* (B,NH,Tq,hs) */
    ATTN_BUF_STAGE_K,    /* (B,NH_kv,Tk,hs) */
    ATTN_BUF_STAGE_V,    /* (B,NH_kv,Tk,hs_v) */
    ATTN_BUF_STAGE_OUT,  /* (B,NH,Tq,hs_v) */
    ATTN_BUF_STAGE_DOUT, /* training: (B,NH,Tq,hs_v) */
    ATTN_BUF_STAGE_DQ,   /* training: (B,NH,Tq,hs) */
    ATTN_BUF_STAGE_DK,   /* training: (B,NH_kv,Tk,hs) */
    ATTN_BUF_STAGE_DV,   /* training: (B,NH_kv,Tk,hs_v) */
    ATTN_BUF_COUNT
} attn_buffer;

/* A plan of projected heads (attn_plan_create: X and weights in), of
 * attention on given Q, K, V (attn_sdpa_plan_create), or a ring plan of
 * libattn_mpi (attn_ring_plan_create, lib/ring/). */
typedef enum attn_plan_kind {
    ATTN_PLAN_PROJECTED = 0,
    ATTN_PLAN_SDPA = 1,
    ATTN_PLAN_RING = 2
} attn_plan_kind;

struct attn_plan {
    attn_plan_kind kind;
    attn_dtype dtype;
    attn_shape shape;         /* projected plans */
    attn_sdpa_layout sdpa;    /* sdpa plans: shape and work items; projected plans with
                               * sdpa_heads: those of their heads */
    int sdpa_heads; /* a projected inference plan on the tiled path whose heads, on own
                     * threads, the sdpa engine computes (forward.h) */
    size_t window;            /* sdpa plans: 0 or the sliding window */
    double scale; /* resolved: never <= 0 */
    int causal;
    int inference;
    int tiled; /* an inference forward without weights takes the tiled path */
    attn_isa isa;
    attn_dropout dropout; /* attn_plan_set_dropout's (off: p = 0) */
    int has_forward;    /* a forward has run and kept its state */
    attn_dropout forward_dropout; /* projected plans: the dropout of that forward */
    /* ... on these X, Wq, Wk, Wv, Wo (NULL: none), as passed: its backward
     * must be handed the same (FORWARD_MISMATCH) */
    const void *forward_inputs[5];
    void *arena;
    size_t offset[ATTN_BUF_COUNT]; /* bytes into arena; ATTN_ABSENT if unused */
    unsigned threads_setting; /* attn_plan_set_threads's: ATTN_THREADS_AUTO, 0 or n */
    unsigned threads;      /* resolved: 0 BLAS threads; n >= 1 attn's own engine on at
                            * most n threads (the shared pool's with ATTN_THREADS_AUTO) */
    int shared;            /* the own engine on the process's shared pool */
    attn_pool *pool;       /* the plan's own workers when set to n >= 2, else NULL */
    int alone;             /* calls too small to share: on the calling thread only */
    double *profile;       /* ATTN_MAX_THREADS rows of profile.h, or NULL: not profiling */
    /* One allocation, replaced by attn_plan_set_threads: with threads >= 1
     * first the own threads' buffers, KT (B,NH,hs,T: K of each head
     * transposed; with sdpa_heads the sdpa engine's packed K^T and V,
     * sdpa_layout.h, where they are larger), for a training plan VT (V of each head transposed, the
     * same size), then 4 slots of packed weights (Wq, Wk, Wv, Wo or their
     * transposes) of packed_slot_elements each; then the scratch of
     * max(threads, 1) workers, worker_elements each. In elements of dtype. */
    void *scratch;
    size_t own_elements;    /* KT, VT and the packed weights; 0 while threads == 0 */
    size_t kt_elements;     /* ... of which KT, rounded up (and VT as many) */
    size_t packed_offset;   /* ... and the packed weights from here */
    size_t worker_elements; /* pack_elements, then the tile */
    size_t pack_elements;
    size_t packed_slot_elements;
    /* A plan built by another library on top of this one (libattn_mpi's
     * ring plans): its state, which attn_plan_destroy hands to release
     * before freeing the rest; NULL for attn's own plans. */
    void *extension;
    void (*release)(void *extension);
};

#define ATTN_ABSENT ((size_t)-1)

/* The precision a plan of `dtype` computes in (its arena and scratch):
 * float for the half types (attn.h, "half precision"). */
static inline attn_dtype attn_compute_dtype(attn_dtype dtype)
{
    return dtype == ATTN_F64 ? ATTN_F64 : ATTN_F32;
}
static inline size_t attn_compute_size(attn_dtype dtype)
{
    return dtype == ATTN_F64 ? sizeof(double) : sizeof(float);
}
static inline int attn_is_half(attn_dtype dtype)
{
    return dtype == ATTN_BF16 || dtype == ATTN_F16;
}

/* For the creators: BLAS_RANGE when a dimension handed to BLAS exceeds its
 * range, then BAD_SCALE (attn.h's rule for `scale` in dtype), else OK. */
attn_status attn_plan_check_ranges(const size_t *blas_dims, size_t count, attn_dtype dtype,
                                   double scale);

/* For the creators (plan.c, sdpa_plan.c): *plan = a new plan with the
 * settings of `fields`, its kernel set, an arena of arena_bytes with the
 * buffers at `offsets`, and its threads at ATTN_THREADS_AUTO; on error
 * (OUT_OF_MEMORY, or attn_plan_set_threads's) *plan is left untouched. */
attn_status attn_plan_build(const attn_plan *fields, size_t arena_bytes,
                            const size_t offsets[ATTN_BUF_COUNT], attn_plan **plan);

/* For sdpa_plan.c: the buffers' byte offsets in an arena of *total bytes,
 * 64-byte aligned (absent when a count is 0); false on overflow. */
int attn_plan_layout(const size_t counts[ATTN_BUF_COUNT], size_t element_size,
                     size_t offsets[ATTN_BUF_COUNT], size_t *total);

/* For plan.c (sdpa_plan.c's): elements of one worker's scratch of the sdpa
 * engines on layout l, *pack of the own kernel's packing, then the tile
 * (sdpa_layout.h), in *total; false on overflow. */
int attn_sdpa_worker_elements(const attn_sdpa_layout *l, size_t *pack, size_t *total);

/* Base address of a buffer, or NULL when the plan has none. */
static inline void *attn_plan_buffer(const attn_plan *plan, attn_buffer buffer)
{
    size_t offset = plan->offset[buffer];
    return offset == ATTN_ABSENT ? NULL : (char *)plan->arena + offset;
}

#endif /* ATTN_PLAN_H */
