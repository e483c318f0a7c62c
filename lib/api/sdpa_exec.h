/*
 * For the half-precision entry points (sdpa_half.inc.c): the float sdpa
 * calls on a half plan, run on its float copies (plan.h, ATTN_BUF_STAGE_*)
 * with every check of attn_sdpa_forward_f32 / _backward_f32 except that
 * the plan's dtype is the half one.
 */
#ifndef ATTN_SDPA_EXEC_H
#define ATTN_SDPA_EXEC_H

#include <stdint.h>

#include <attn/attn.h>

#include "api/sdpa_strides.h"
#include "kernels/kernels.h"

/* A decode step's K and V read in place in 16 bits (engine/sdpa.h, K_half):
 * their resolved strides and the few-row kernels on them. */
typedef struct attn_sdpa_half_kv {
    const uint16_t *K, *V;
    attn_sdpa_strides k, v;
    attn_rows_dot_half_fn rows_dot;
    attn_rows_axpy_half_fn rows_axpy;
} attn_sdpa_half_kv;

/* A half call's out (engine/sdpa.h, out_half): each row rounded into it
 * as the engine finishes the row. */
typedef struct attn_sdpa_half_out {
    uint16_t *out;
    attn_sdpa_strides st;
    attn_half_narrow_fn narrow;
} attn_sdpa_half_out;

/* The forward on a's arrays, or with K and V of kv when kv is not NULL (a
 * holds float K, V that pass the checks and are not read); out rounded
 * into ho's (a->out: the engine's float rows, scratch). */
attn_status attn_sdpa_forward_staged(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                     const attn_sdpa_half_kv *kv, const attn_sdpa_half_out *ho);
attn_status attn_sdpa_backward_staged(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                      const float *dout, float *dQ, float *dK, float *dV);

#endif /* ATTN_SDPA_EXEC_H */
