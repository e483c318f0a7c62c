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

/* A decode step's K and V read in place in 16 bits (engine/sdpa.h, K16):
 * their resolved strides and the few-row kernels on them. */
typedef struct attn_sdpa_half_kv {
    const uint16_t *K, *V;
    attn_sdpa_strides k, v;
    attn_rows_dot_half_fn rows_dot;
    attn_rows_axpy_half_fn rows_axpy;
} attn_sdpa_half_kv;

/* A half call's out (engine/sdpa.h, out_half): each row rounded into it
 * as the engine finishes the row; and Q, or NULL: a bf16 call whose
 * forward makes its scores in bf16 whole (attn_sdpa_bf16_forward, no
 * window) reads Q's rows in place (engine/sdpa.h, Q_half), its float copy
 * not filled. */
typedef struct attn_sdpa_half_out {
    uint16_t *out;
    attn_sdpa_strides st;
    attn_half_narrow_fn narrow;
    attn_half_narrow_scaled_fn narrow_scaled;
    const uint16_t *Q;
    attn_sdpa_strides q;
    attn_half_widen_fn widen;
    /* with Q: K and V read in place too (engine/sdpa.h, K16) */
    const uint16_t *K, *V;
    attn_sdpa_strides k, v;
    attn_rows_dot_half_fn rows_dot;
    attn_rows_axpy_half_fn rows_axpy;
} attn_sdpa_half_out;

/* Whether the plan's forward of several queries makes its products in
 * bf16 (engine/sdpa_bf16.h): a bf16 plan on its own threads with packed
 * operands, hs a multiple of ATTN_BF16_K_STEP, a kernel set with bf16
 * products. */
int attn_sdpa_bf16_forward(const attn_plan *plan);
/* Whether its backward makes its products in bf16 (engine/
 * sdpa_bf16_backward.h): the same, with hs_v a multiple of
 * ATTN_BF16_K_STEP too. */
int attn_sdpa_bf16_backward(const attn_plan *plan);

/* The forward on a's arrays, or with K and V of kv when kv is not NULL (a
 * holds float K, V that pass the checks and are not read); out rounded
 * into ho's (a->out: the engine's float rows, scratch). */
attn_status attn_sdpa_forward_staged(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                     const attn_sdpa_half_kv *kv, const attn_sdpa_half_out *ho);
/* A bf16 backward on bf16 products (attn_sdpa_bf16_backward): the
 * caller's out and dout (out's strides: engine/sdpa.h, out_bf16), whose
 * row sums it takes, and its Q, K and V: the products copy their rows
 * and pack them from the caller's bf16 arrays, and the float copies are
 * filled only for a (b, g) whose K or V has a value that is not finite
 * (widened by the pack phase, engine/sdpa_bf16.h). (The products do not
 * multiply dout's or Q's rows in place: rows NH hs apart alias in L1, 18
 * ms slower than copies into dense rows at T 2048, NH 32, hs 128 on the
 * Zen 5.) */
typedef struct attn_sdpa_half_backward {
    const uint16_t *out, *dout, *Q, *K, *V;
    attn_sdpa_strides st, q, k, v;
    attn_half_widen_fn widen;
} attn_sdpa_half_backward;

/* The backward on a's arrays, or with hb's (a's out then checked, not
 * read). */
attn_status attn_sdpa_backward_staged(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                      const float *dout, float *dQ, float *dK, float *dV,
                                      const attn_sdpa_half_backward *hb);

#endif /* ATTN_SDPA_EXEC_H */
