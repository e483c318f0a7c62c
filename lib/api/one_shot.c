/*
 * The one-shot calls: attn_self_attention_*, attn_mha_forward_*,
 * attn_mha_backward_*. Each validates its arguments in the documented order,
 * then is a plan created for the call, executed once and destroyed.
 */
#include <stdlib.h>

#include <attn/attn.h>

#include "api/validate.h"

#if ATTN_REAL_BITS == 32
#define PLAN_DTYPE ATTN_F32
#else
#define PLAN_DTYPE ATTN_F64
#endif

attn_status FN(attn_self_attention)(size_t B, size_t T, size_t C, size_t hs, int causal,
                                    const real *X, const real *Wq, const real *Wk, const real *Wv,
                                    real *out, real *weights)
{
    const attn_shape shape = {B, T, C, 1, hs};
    const FN(attn_forward_arrays) arrays = {X, Wq, Wk, Wv, NULL, out, weights};
    attn_status status = FN(attn_validate_forward)(shape, &arrays);
    if (status != ATTN_OK)
        return status;
    attn_plan *plan = NULL;
    status = attn_plan_create(&plan, PLAN_DTYPE, B, T, C, 1, hs, 0.0,
                              ATTN_INFERENCE | (causal ? ATTN_CAUSAL : 0u));
    if (status == ATTN_OK)
        status = FN(attn_forward)(plan, X, Wq, Wk, Wv, NULL, out, weights);
    attn_plan_destroy(plan);
    return status;
}

/* Validation shared by the multi-head one-shots: the forward's arrays in the
 * documented order, with C % NH checked once NH is known to be nonzero. The
 * backward passes dout in the place of out: it must be present, but as an
 * input it may overlap other inputs (out_is_input). */
static attn_status FN(check_mha)(size_t B, size_t T, size_t C, size_t NH,
                                 FN(attn_forward_arrays) arrays, int out_is_input)
{
    /* hs = 1 stands in until NH is known to divide C. */
    attn_status status = FN(attn_validate_presence)((attn_shape){B, T, C, NH, 1}, &arrays);
    if (status != ATTN_OK)
        return status;
    if (C % NH != 0)
        return ATTN_ERR_BAD_SHAPE;
    if (out_is_input)
        arrays.out = NULL;
    return FN(attn_validate_extent)((attn_shape){B, T, C, NH, C / NH}, &arrays);
}

attn_status FN(attn_mha_forward)(size_t B, size_t T, size_t C, size_t NH, int causal,
                                 const real *X, const real *Wq, const real *Wk, const real *Wv,
                                 const real *Wo, real *out)
{
    const FN(attn_forward_arrays) arrays = {X, Wq, Wk, Wv, Wo, out, NULL};
    attn_status status = FN(check_mha)(B, T, C, NH, arrays, 0);
    if (status != ATTN_OK)
        return status;
    attn_plan *plan = NULL;
    status = attn_plan_create(&plan, PLAN_DTYPE, B, T, C, NH, C / NH, 0.0,
                              ATTN_INFERENCE | (causal ? ATTN_CAUSAL : 0u));
    if (status == ATTN_OK)
        status = FN(attn_forward)(plan, X, Wq, Wk, Wv, Wo, out, NULL);
    attn_plan_destroy(plan);
    return status;
}

attn_status FN(attn_mha_backward)(size_t B, size_t T, size_t C, size_t NH, int causal,
                                  const real *X, const real *Wq, const real *Wk, const real *Wv,
                                  const real *Wo, const real *dout, real *dX, real *dWq,
                                  real *dWk, real *dWv, real *dWo)
{
    const FN(attn_forward_arrays) forward_arrays = {X, Wq, Wk, Wv, Wo, dout, NULL};
    const FN(attn_backward_arrays) arrays = {X, Wq, Wk, Wv, Wo, dout, dX, dWq, dWk, dWv, dWo};
    attn_status status = FN(attn_validate_backward_presence)(&arrays);
    if (status == ATTN_OK)
        status = FN(check_mha)(B, T, C, NH, forward_arrays, 1);
    if (status == ATTN_OK)
        status = FN(attn_validate_backward_aliasing)((attn_shape){B, T, C, NH, C / NH}, &arrays);
    if (status != ATTN_OK)
        return status;

    /* The plan first: it reports a workspace too large for size_t
     * (SIZE_OVERFLOW) before any allocation is tried. */
    attn_plan *plan = NULL;
    real *out = NULL;
    status = attn_plan_create(&plan, PLAN_DTYPE, B, T, C, NH, C / NH, 0.0,
                              causal ? ATTN_CAUSAL : 0u);
    if (status == ATTN_OK && (out = malloc(B * T * C * sizeof(real))) == NULL)
        status = ATTN_ERR_OUT_OF_MEMORY;
    if (status == ATTN_OK)
        status = FN(attn_forward)(plan, X, Wq, Wk, Wv, Wo, out, NULL);
    if (status == ATTN_OK)
        status = FN(attn_backward)(plan, X, Wq, Wk, Wv, Wo, dout, dX, dWq, dWk, dWv, dWo);
    attn_plan_destroy(plan);
    free(out);
    return status;
}
