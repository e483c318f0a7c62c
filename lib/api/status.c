/* Status descriptions and the library's version. */
#include <attn/attn.h>

const char *attn_status_string(attn_status status)
{
    switch (status) {
    case ATTN_OK:
        return "success";
    case ATTN_ERR_NULL_POINTER:
        return "a required pointer argument is NULL";
    case ATTN_ERR_ZERO_DIMENSION:
        return "a dimension is zero";
    case ATTN_ERR_SIZE_OVERFLOW:
        return "a product of dimensions overflows size_t";
    case ATTN_ERR_BLAS_RANGE:
        return "a dimension exceeds the BLAS integer range";
    case ATTN_ERR_BAD_STRIDE:
        return "a row stride is smaller than the row length, or strides place two elements at one address";
    case ATTN_ERR_BAD_SCALE:
        return "the scale is NaN, infinite, or too large for the precision";
    case ATTN_ERR_ALIASING:
        return "an output array overlaps an input or another output";
    case ATTN_ERR_OUT_OF_MEMORY:
        return "a workspace allocation failed";
    case ATTN_ERR_BAD_SHAPE:
        return "C is not a multiple of NH, or NH not a multiple of NH_kv";
    case ATTN_ERR_BAD_DTYPE:
        return "the dtype is not one this plan creator takes (ATTN_F32, ATTN_F64; sdpa plans also ATTN_BF16, ATTN_F16)";
    case ATTN_ERR_BAD_FLAGS:
        return "unknown plan flag bits, or ATTN_MATERIALIZED with ATTN_TILED";
    case ATTN_ERR_DTYPE_MISMATCH:
        return "the call's precision differs from the plan's";
    case ATTN_ERR_INFERENCE_PLAN:
        return "backward on a plan created with ATTN_INFERENCE";
    case ATTN_ERR_NO_FORWARD:
        return "backward on a plan that has run no forward";
    case ATTN_ERR_FORWARD_MISMATCH:
        return "backward given other X or weights (pointers, or Wo's presence) than its forward";
    case ATTN_ERR_BAD_THREADS:
        return "thread count above ATTN_MAX_THREADS";
    case ATTN_ERR_PLAN_KIND:
        return "a projected-plan call on an sdpa plan, or the reverse";
    case ATTN_ERR_BAD_LENGTH:
        return "a key length is above Tk";
    case ATTN_ERR_BAD_DROPOUT:
        return "the dropout probability is NaN or outside [0, 1)";
    }
    return "unknown attn_status";
}

unsigned attn_version_number(void)
{
    return ATTN_VERSION_NUMBER;
}

const char *attn_version_string(void)
{
    return ATTN_VERSION_STRING;
}
