/* The scalar set's few-row products on bfloat16 keys and values. */
#define ROWS_HALF_VOCABULARY "kernels/scalar/scalar.h"
#define ROWS_HALF_BF16 1
#define ROWS_HALF_NAME(kernel) attn_rows_##kernel##_bf16_scalar
#include "kernels/rows_half.inc.c"
