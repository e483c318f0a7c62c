/* The kernels of the avx2 vocabulary: softmax, polynomial exp, matrix product,
 * few-row products, dropout's draws. */
#include "kernels/avx2/avx2.h"

#define SOFTMAX_ROW_NAME FN(attn_softmax_row_avx2)
#define SOFTMAX_ROWS_NAME FN(attn_softmax_rows_avx2)
#define SOFTMAX_ONLINE_NAME FN(attn_softmax_online_avx2)
#define EXP_ARRAY_NAME FN(attn_exp_avx2)
#define SOFTMAX_BACKWARD_NAME FN(attn_softmax_backward_avx2)
#define SOFTMAX_FROM_LSE_NAME FN(attn_softmax_from_lse_avx2)
#include "kernels/softmax_kernel.inc.c"

#define GEMM_NAME FN(attn_gemm_avx2)
#define GEMM_SHARED_A_NAME FN(attn_gemm_shared_a_avx2)
#define GEMM_LOWER_NAME FN(attn_gemm_lower_avx2)
#define PACK_B_NAME FN(attn_gemm_pack_b_avx2)
#define PANEL_NAME FN(attn_gemm_panel_avx2)
#include "kernels/gemm_kernel.inc.c"

#define ROWS_DOT_NAME FN(attn_rows_dot_avx2)
#define ROWS_AXPY_NAME FN(attn_rows_axpy_avx2)
#include "kernels/rows_kernel.inc.c"

#define DROPOUT_MASK_NAME FN(attn_dropout_mask_avx2)
#include "kernels/dropout_kernel.inc.c"
