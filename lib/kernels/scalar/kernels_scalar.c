/* The kernels of the scalar vocabulary: softmax, polynomial exp, matrix product,
 * few-row products, dropout's draws. */
#include "kernels/scalar/scalar.h"

#define SOFTMAX_ROW_NAME FN(attn_softmax_row_scalar)
#define SOFTMAX_ROWS_NAME FN(attn_softmax_rows_scalar)
#define SOFTMAX_ONLINE_NAME FN(attn_softmax_online_scalar)
#define EXP_ARRAY_NAME FN(attn_exp_scalar)
#define SOFTMAX_BACKWARD_NAME FN(attn_softmax_backward_scalar)
#define SOFTMAX_FROM_LSE_NAME FN(attn_softmax_from_lse_scalar)
#include "kernels/softmax_kernel.inc.c"

#define GEMM_NAME FN(attn_gemm_scalar)
#define GEMM_SHARED_A_NAME FN(attn_gemm_shared_a_scalar)
#define GEMM_LOWER_NAME FN(attn_gemm_lower_scalar)
#define PACK_B_NAME FN(attn_gemm_pack_b_scalar)
#define PANEL_NAME FN(attn_gemm_panel_scalar)
#include "kernels/gemm_kernel.inc.c"

#define ROWS_DOT_NAME FN(attn_rows_dot_scalar)
#define ROWS_AXPY_NAME FN(attn_rows_axpy_scalar)
#include "kernels/rows_kernel.inc.c"

#define DROPOUT_MASK_NAME FN(attn_dropout_mask_scalar)
#include "kernels/dropout_kernel.inc.c"
