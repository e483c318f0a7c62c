/* The softmax row kernel and polynomial exp for the avx512 vocabulary. */
#include "simd/avx512.h"

#define SOFTMAX_ROW_NAME FN(attn_softmax_row_avx512)
#define SOFTMAX_ONLINE_NAME FN(attn_softmax_online_avx512)
#define EXP_ARRAY_NAME FN(attn_exp_avx512)
#include "softmax_kernel.inc.c"
