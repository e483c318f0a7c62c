/* The softmax row kernel and polynomial exp for the scalar vocabulary. */
#include "simd/scalar.h"

#define SOFTMAX_ROW_NAME FN(attn_softmax_row_scalar)
#define SOFTMAX_ONLINE_NAME FN(attn_softmax_online_scalar)
#define EXP_ARRAY_NAME FN(attn_exp_scalar)
#include "softmax_kernel.inc.c"
