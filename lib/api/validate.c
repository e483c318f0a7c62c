/* Boundary validation of attention calls; see validate.h. */
#include "api/validate.h"

#include "core/check.h"

attn_status FN(attn_validate_presence)(attn_shape s, const FN(attn_forward_arrays) *a)
{
    const void *required[] = {a->X, a->Wq, a->Wk, a->Wv, a->out};
    if (attn_any_null(required, ATTN_COUNT(required)))
        return ATTN_ERR_NULL_POINTER;
    const size_t dims[] = {s.B, s.T, s.C, s.NH, s.hs};
    if (attn_any_zero(dims, ATTN_COUNT(dims)))
        return ATTN_ERR_ZERO_DIMENSION;
    return ATTN_OK;
}

attn_status FN(attn_validate_extent)(attn_shape s, const FN(attn_forward_arrays) *a)
{
    size_t D, rows, x_bytes, w_bytes, out_bytes, weights_elems, weights_bytes;
    if (!attn_mul(s.NH, s.hs, &D) || !attn_mul(s.B, s.T, &rows) ||
        !attn_mul3(rows, s.C, sizeof(real), &x_bytes) ||
        !attn_mul3(s.C, D, sizeof(real), &w_bytes) ||
        !attn_mul3(rows, a->Wo != NULL ? s.C : D, sizeof(real), &out_bytes) ||
        !attn_mul3(s.B, s.NH, s.T, &weights_elems) ||
        !attn_mul3(weights_elems, s.T, sizeof(real), &weights_bytes))
        return ATTN_ERR_SIZE_OVERFLOW;

    const size_t blas_dims[] = {rows, s.T, s.C, D};
    if (!attn_all_at_most(blas_dims, ATTN_COUNT(blas_dims), ATTN_BLAS_INT_MAX))
        return ATTN_ERR_BLAS_RANGE;

    const attn_region inputs[] = {{a->X, x_bytes}, {a->Wq, w_bytes}, {a->Wk, w_bytes},
                                  {a->Wv, w_bytes}, {a->Wo, w_bytes}};
    const attn_region outputs[] = {{a->out, out_bytes}, {a->weights, weights_bytes}};
    if (attn_outputs_alias(outputs, ATTN_COUNT(outputs), inputs, ATTN_COUNT(inputs)))
        return ATTN_ERR_ALIASING;
    return ATTN_OK;
}

attn_status FN(attn_validate_forward)(attn_shape s, const FN(attn_forward_arrays) *a)
{
    attn_status status = FN(attn_validate_presence)(s, a);
    return status != ATTN_OK ? status : FN(attn_validate_extent)(s, a);
}

attn_status FN(attn_validate_backward_presence)(const FN(attn_backward_arrays) *a)
{
    const void *required[] = {a->X, a->Wq, a->Wk, a->Wv, a->dout, a->dX, a->dWq, a->dWk, a->dWv};
    if (attn_any_null(required, ATTN_COUNT(required)) || (a->Wo != NULL && a->dWo == NULL))
        return ATTN_ERR_NULL_POINTER;
    return ATTN_OK;
}

attn_status FN(attn_validate_backward_aliasing)(attn_shape s, const FN(attn_backward_arrays) *a)
{
    const size_t D = s.NH * s.hs, rows = s.B * s.T;
    const size_t x_bytes = rows * s.C * sizeof(real), w_bytes = s.C * D * sizeof(real);
    const size_t dout_bytes = rows * (a->Wo != NULL ? s.C : D) * sizeof(real);
    const real *dWo = a->Wo != NULL ? a->dWo : NULL;
    const attn_region inputs[] = {{a->X, x_bytes},  {a->Wq, w_bytes}, {a->Wk, w_bytes},
                                  {a->Wv, w_bytes}, {a->Wo, w_bytes}, {a->dout, dout_bytes}};
    const attn_region outputs[] = {{a->dX, x_bytes},  {a->dWq, w_bytes}, {a->dWk, w_bytes},
                                   {a->dWv, w_bytes}, {dWo, w_bytes}};
    if (attn_outputs_alias(outputs, ATTN_COUNT(outputs), inputs, ATTN_COUNT(inputs)))
        return ATTN_ERR_ALIASING;
    return ATTN_OK;
}
