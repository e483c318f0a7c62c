/* The avx2 set's few-row products on float16 keys and values. */
#define ROWS_HALF_VOCABULARY "kernels/avx2/avx2.h"
#define ROWS_HALF_BF16 0
#define ROWS_HALF_NAME(kernel) attn_rows_##kernel##_f16_avx2
#include "kernels/rows_half.inc.c"
