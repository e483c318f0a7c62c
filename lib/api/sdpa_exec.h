/*
 * For the half-precision entry points (sdpa_half.inc.c): the float sdpa
 * calls on a half plan, run on its float copies (plan.h, ATTN_BUF_STAGE_*)
 * with every check of attn_sdpa_forward_f32 / _backward_f32 except that
 * the plan's dtype is the half one.
 */
#ifndef ATTN_SDPA_EXEC_H
#define ATTN_SDPA_EXEC_H

#include <attn/attn.h>

attn_status attn_sdpa_forward_staged(attn_plan *plan, const attn_sdpa_args_f32 *a);
attn_status attn_sdpa_backward_staged(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                      const float *dout, float *dQ, float *dK, float *dV);

#endif /* ATTN_SDPA_EXEC_H */
