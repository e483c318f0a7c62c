/* The kernels of the avx512 vocabulary: softmax, polynomial exp, matrix product,
 * few-row products, dropout's draws. */
#include "kernels/avx512/avx512.h"

#define SOFTMAX_ROW_NAME FN(attn_softmax_row_avx512)
#define SOFTMAX_ROWS_NAME FN(attn_softmax_rows_avx512)
#define SOFTMAX_ONLINE_NAME FN(attn_softmax_online_avx512)
#define EXP_ARRAY_NAME FN(attn_exp_avx512)
#define SOFTMAX_BACKWARD_NAME FN(attn_softmax_backward_avx512)
#define SOFTMAX_FROM_LSE_NAME FN(attn_softmax_from_lse_avx512)
#include "kernels/softmax_kernel.inc.c"

#define GEMM_NAME FN(attn_gemm_avx512)
#define GEMM_SHARED_A_NAME FN(attn_gemm_shared_a_avx512)
#define GEMM_LOWER_NAME FN(attn_gemm_lower_avx512)
#define PACK_B_NAME FN(attn_gemm_pack_b_avx512)
#define PANEL_NAME FN(attn_gemm_panel_avx512)
#include "kernels/gemm_kernel.inc.c"

#define ROWS_DOT_NAME FN(attn_rows_dot_avx512)
#define ROWS_AXPY_NAME FN(attn_rows_axpy_avx512)
#include "kernels/rows_kernel.inc.c"

#define DROPOUT_MASK_NAME FN(attn_dropout_mask_avx512)
#include "kernels/dropout_kernel.inc.c"
