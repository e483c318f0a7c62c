/* attn_softmax_rows_*: the public in-place row softmax. */
#include <attn/attn.h>

#include "core/check.h"
#include "kernels/kernels.h"
#include "core/real.h"

attn_status FN(attn_softmax_rows)(real *x, size_t rows, size_t cols, size_t ld)
{
    if (x == NULL)
        return ATTN_ERR_NULL_POINTER;
    if (rows == 0 || cols == 0)
        return ATTN_ERR_ZERO_DIMENSION;
    size_t span, elements, bytes;
    if (!attn_mul(rows - 1, ld, &span) || !attn_add(span, cols, &elements) ||
        !attn_mul(elements, sizeof(real), &bytes))
        return ATTN_ERR_SIZE_OVERFLOW;
    if (ld < cols)
        return ATTN_ERR_BAD_STRIDE;

    FN(attn_softmax_rows_kernel)(attn_isa_active())(x, x, rows, ld, cols, 0, cols, REAL_C(1.0));
    return ATTN_OK;
}
