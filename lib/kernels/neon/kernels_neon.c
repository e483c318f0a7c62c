/* The kernels of the neon vocabulary: softmax, polynomial exp, matrix product,
 * few-row products, dropout's draws. */
#include "kernels/neon/neon.h"

#define SOFTMAX_ROW_NAME FN(attn_softmax_row_neon)
#define SOFTMAX_ROWS_NAME FN(attn_softmax_rows_neon)
#define SOFTMAX_ONLINE_NAME FN(attn_softmax_online_neon)
#define EXP_ARRAY_NAME FN(attn_exp_neon)
#define SOFTMAX_BACKWARD_NAME FN(attn_softmax_backward_neon)
#define SOFTMAX_FROM_LSE_NAME FN(attn_softmax_from_lse_neon)
#include "kernels/softmax_kernel.inc.c"

#define GEMM_NAME FN(attn_gemm_neon)
#define GEMM_SHARED_A_NAME FN(attn_gemm_shared_a_neon)
#define GEMM_LOWER_NAME FN(attn_gemm_lower_neon)
#define PACK_B_NAME FN(attn_gemm_pack_b_neon)
#define PANEL_NAME FN(attn_gemm_panel_neon)
#include "kernels/gemm_kernel.inc.c"

#define ROWS_DOT_NAME FN(attn_rows_dot_neon)
#define ROWS_AXPY_NAME FN(attn_rows_axpy_neon)
#include "kernels/rows_kernel.inc.c"

#define DROPOUT_MASK_NAME FN(attn_dropout_mask_neon)
#include "kernels/dropout_kernel.inc.c"
