/*
 * attn_self_attention_*: one projected head, the course's self_attention.
 * X (B,T,C); Wq, Wk, Wv (C,hs) -> out (B,T,hs), weights (B,T,T) or NULL.
 * It is the forward pass of forward.c with NH = 1 and no output projection,
 * run on a workspace allocated for the call.
 */
#include <math.h>
#include <stdlib.h>

#include <attn/attn.h>

#include "forward.h"
#include "validate.h"

attn_status FN(attn_self_attention)(size_t B, size_t T, size_t C, size_t hs, int causal,
                                    const real *X, const real *Wq, const real *Wk, const real *Wv,
                                    real *out, real *weights)
{
    const attn_shape shape = {B, T, C, 1, hs};
    const FN(attn_forward_arrays) arrays = {X, Wq, Wk, Wv, NULL, out, weights};
    attn_status status = FN(attn_validate_forward)(shape, &arrays);
    if (status != ATTN_OK)
        return status;

    const int keep_P = weights != NULL;
    size_t elements, bytes;
    if (!FN(attn_forward_workspace_size)(B, T, 1, hs, keep_P, 0, &elements) ||
        __builtin_mul_overflow(elements, sizeof(real), &bytes))
        return ATTN_ERR_SIZE_OVERFLOW;
    real *memory = malloc(bytes);
    if (memory == NULL)
        return ATTN_ERR_OUT_OF_MEMORY;

    const FN(attn_forward_workspace) ws =
        FN(attn_forward_workspace_carve)(memory, B, T, 1, hs, keep_P, 0);
    const FN(attn_forward_args) args = {
        .B = B, .T = T, .C = C, .NH = 1, .hs = hs,
        .scale = (real)(1.0 / sqrt((double)hs)),
        .causal = causal != 0,
        .softmax_row = FN(attn_softmax_row_kernel)(attn_isa_active()),
        .X = X, .Wq = Wq, .Wk = Wk, .Wv = Wv, .Wo = NULL,
        .out = out, .P = weights};
    FN(attn_forward_run)(&args, &ws);
    free(memory);
    return ATTN_OK;
}
