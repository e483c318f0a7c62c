/*
 * The plan object (opaque to users): shape, options, and one arena holding
 * every buffer a forward and a backward need, laid out at creation.
 */
#ifndef ATTN_PLAN_H
#define ATTN_PLAN_H

#include <stddef.h>

#include <attn/attn.h>

#include "kernels.h"
#include "shape.h"

typedef enum attn_buffer {
    ATTN_BUF_Q,       /* (B,T,D) */
    ATTN_BUF_K,       /* (B,T,D) */
    ATTN_BUF_V,       /* (B,T,D) */
    ATTN_BUF_HEADS,   /* (B,T,D) concatenated head outputs (before Wo) */
    ATTN_BUF_SCORES,  /* (T,T) scores reused per head: inference, T < ATTN_TILED_MIN_T */
    ATTN_BUF_TILED,   /* attn_tiled_workspace(T): inference, T >= ATTN_TILED_MIN_T */
    ATTN_BUF_SAVED_P, /* (B,NH,T,T) weights kept for the backward */
    ATTN_BUF_DQ,      /* (B,T,D) */
    ATTN_BUF_DK,      /* (B,T,D) */
    ATTN_BUF_DV,      /* (B,T,D) */
    ATTN_BUF_DHEADS,  /* (B,T,D) gradient of the head outputs */
    ATTN_BUF_DSCORES, /* (T,T) gradient tile, reused per (batch, head) */
    ATTN_BUF_COUNT
} attn_buffer;

struct attn_plan {
    attn_dtype dtype;
    attn_shape shape;
    double scale; /* resolved: never <= 0 */
    int causal;
    int inference;
    attn_isa isa;
    int has_forward;    /* a forward has run and kept its state */
    int forward_had_Wo; /* ... with an output projection */
    void *arena;
    size_t offset[ATTN_BUF_COUNT]; /* bytes into arena; ATTN_ABSENT if unused */
};

#define ATTN_ABSENT ((size_t)-1)

/* Base address of a buffer, or NULL when the plan has none. */
static inline void *attn_plan_buffer(const attn_plan *plan, attn_buffer buffer)
{
    size_t offset = plan->offset[buffer];
    return offset == ATTN_ABSENT ? NULL : (char *)plan->arena + offset;
}

#endif /* ATTN_PLAN_H */
