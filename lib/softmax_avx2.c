/* The softmax row kernel and polynomial exp for the avx2 vocabulary. */
#include "simd/avx2.h"

#define SOFTMAX_ROW_NAME FN(attn_softmax_row_avx2)
#define SOFTMAX_ONLINE_NAME FN(attn_softmax_online_avx2)
#define EXP_ARRAY_NAME FN(attn_exp_avx2)
#include "softmax_kernel.inc.c"
