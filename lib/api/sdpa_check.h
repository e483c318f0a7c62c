/*
 * Validation of an sdpa call (attn_sdpa_forward_*, attn_sdpa_backward_*) in
 * the order attn.h documents, for every precision: the call's arrays are
 * seen as addresses, strides and element sizes (attn_sdpa_call), so that
 * the float, double and half entry points share one set of rules.
 */
#ifndef ATTN_SDPA_CHECK_H
#define ATTN_SDPA_CHECK_H

#include <stddef.h>

#include <attn/attn.h>

#include "api/sdpa_strides.h"
#include "plan/plan.h"

/* The arrays of one call, as attn_sdpa_args_* holds them. */
typedef struct attn_sdpa_call {
    attn_dtype dtype;    /* the call's precision */
    size_t element;      /* bytes of an element of Q, K, V, out, dout and the gradients */
    size_t stat_element; /* bytes of an element of the mask and lse */
    const void *Q, *K, *V, *mask, *out, *lse;
    attn_sdpa_strides given[ATTN_SDPA_ARRAYS]; /* Q, K, V, out as passed (0: dense) */
    size_t mask_ld, mask_sb, mask_sh;
    const size_t *key_lengths;
} attn_sdpa_call;

/* The attn_sdpa_call of `a` (a pointer to any attn_sdpa_args_*): a call of
 * dtype_, elements of element_ bytes, the mask and lse of stat_ bytes. */
#define ATTN_SDPA_CALL_OF(a, dtype_, element_, stat_)                                      \
    ((attn_sdpa_call){                                                                     \
        .dtype = (dtype_), .element = (element_), .stat_element = (stat_),                 \
        .Q = (a)->Q, .K = (a)->K, .V = (a)->V, .mask = (a)->mask, .out = (a)->out,         \
        .lse = (a)->lse,                                                                   \
        .given = {{(a)->sbq, (a)->shq, (a)->ldq}, {(a)->sbk, (a)->shk, (a)->ldk},          \
                  {(a)->sbv, (a)->shv, (a)->ldv}, {(a)->sbo, (a)->sho, (a)->ldo}},         \
        .mask_ld = (a)->mask_ld, .mask_sb = (a)->mask_sb, .mask_sh = (a)->mask_sh,         \
        .key_lengths = (a)->key_lengths})

/* The call's strides with 0 resolved, the shape its arrays are judged by
 * (the plan's; in a forward with key lengths, K and V only as rows, the
 * mask as columns, of the keys that exist, attn.h), and the extents (in
 * elements) of its arrays. */
typedef struct attn_sdpa_checked {
    attn_sdpa_strides st[ATTN_SDPA_ARRAYS]; /* Q, K, V, out */
    attn_sdpa_shape judged;
    size_t extent[ATTN_SDPA_ARRAYS];
    size_t mask, lse;
} attn_sdpa_checked;

/* The forward's checks after plan and a: NULL_POINTER (Q, K, V, out),
 * PLAN_KIND, DTYPE_MISMATCH, BAD_STRIDE, SIZE_OVERFLOW, BLAS_RANGE,
 * BAD_LENGTH, ALIASING; *x filled when OK. */
attn_status attn_sdpa_check_forward(const attn_plan *plan, const attn_sdpa_call *c,
                                    attn_sdpa_checked *x);

/* The backward's, after plan and a: NULL_POINTER (Q, K, V, out, lse, dout,
 * dQ, dK, dV), PLAN_KIND, DTYPE_MISMATCH, INFERENCE_PLAN, then the
 * forward's, ALIASING of the gradients with every input and each other. */
attn_status attn_sdpa_check_backward(const attn_plan *plan, const attn_sdpa_call *c,
                                     const void *dout, const void *dQ, const void *dK,
                                     const void *dV, attn_sdpa_checked *x);

/* A one-shot (attn_sdpa_f32 and its siblings): NULL_POINTER for shape or
 * a, else an ATTN_INFERENCE plan of dtype created, `forward` run on it with
 * a, the plan destroyed. */
attn_status attn_sdpa_one_shot(const attn_sdpa_shape *shape, double scale, unsigned flags,
                               size_t window, attn_dtype dtype, const void *a,
                               attn_status (*forward)(attn_plan *plan, const void *a));

#endif /* ATTN_SDPA_CHECK_H */
