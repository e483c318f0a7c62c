/* The neon set's few-row products on bfloat16 keys and values. */
#define ROWS_HALF_VOCABULARY "kernels/neon/neon.h"
#define ROWS_HALF_BF16 1
#define ROWS_HALF_NAME(kernel) attn_rows_##kernel##_bf16_neon
#include "kernels/rows_half.inc.c"
