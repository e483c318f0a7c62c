/*
 * attn_lookup_*: the soft lookup of one set of queries against keys/values.
 *   q (Tq,d), k (Tk,d), v (Tk,dv)
 *   S = q k^T (Tq,Tk)          GEMM
 *   P = softmax_rows(scale*S)  fused row kernel, in place
 *   out = P v (Tq,dv)          GEMM; rows of P without weight (every score
 *                              -inf) give out 0 even where v is not finite
 * P lives in the caller's weights buffer, or, without one, in a workspace of
 * LOOKUP_BLOCK_ELEMENTS (or one row of Tk, if larger) that is reused for
 * successive blocks of query rows, so memory stays O(Tk) not O(Tq*Tk).
 */
#include <stdlib.h>

#include <attn/attn.h>

#include "blas/blas.h"
#include "core/check.h"
#include "kernels/kernels.h"
#include "core/scale.h"
#include "engine/unweighted.h"

#define LOOKUP_BLOCK_ELEMENTS ((size_t)1 << 18)

static attn_status FN(check_lookup)(size_t Tq, size_t Tk, size_t d, size_t dv, double scale,
                                    const real *q, const real *k, const real *v, const real *out,
                                    const real *weights)
{
    const void *required[] = {q, k, v, out};
    if (attn_any_null(required, ATTN_COUNT(required)))
        return ATTN_ERR_NULL_POINTER;
    const size_t dims[] = {Tq, Tk, d, dv};
    if (attn_any_zero(dims, ATTN_COUNT(dims)))
        return ATTN_ERR_ZERO_DIMENSION;
    size_t q_bytes, k_bytes, v_bytes, out_bytes, weights_bytes;
    if (!attn_mul3(Tq, d, sizeof(real), &q_bytes) || !attn_mul3(Tk, d, sizeof(real), &k_bytes) ||
        !attn_mul3(Tk, dv, sizeof(real), &v_bytes) ||
        !attn_mul3(Tq, dv, sizeof(real), &out_bytes) ||
        !attn_mul3(Tq, Tk, sizeof(real), &weights_bytes))
        return ATTN_ERR_SIZE_OVERFLOW;
    if (!attn_all_at_most(dims, ATTN_COUNT(dims), ATTN_BLAS_INT_MAX))
        return ATTN_ERR_BLAS_RANGE;
    if (!attn_scale_ok(scale))
        return ATTN_ERR_BAD_SCALE;
    const attn_region inputs[] = {{q, q_bytes}, {k, k_bytes}, {v, v_bytes}};
    const attn_region outputs[] = {{out, out_bytes}, {weights, weights_bytes}};
    if (attn_outputs_alias(outputs, ATTN_COUNT(outputs), inputs, ATTN_COUNT(inputs)))
        return ATTN_ERR_ALIASING;
    return ATTN_OK;
}

/* One block of `rows` queries: P (rows,Tk) and out (rows,dv). */
static void FN(lookup_block)(size_t rows, size_t Tk, size_t d, size_t dv, real scale,
                             attn_softmax_rows_fn softmax_rows, const real *q, const real *k,
                             const real *v, real *out, real *P)
{
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_TRANS, rows, Tk, d, REAL_C(1.0), q, d, k, d, REAL_C(0.0), P,
                  Tk);
    softmax_rows(P, P, rows, Tk, Tk, 0, Tk, scale);
    FN(attn_gemm)(ATTN_NO_TRANS, ATTN_NO_TRANS, rows, dv, Tk, REAL_C(1.0), P, Tk, v, dv,
                  REAL_C(0.0), out, dv);
    FN(attn_clear_unweighted_rows)(P, Tk, rows, Tk, 0, out, dv, dv); /* 0, not 0 * Inf */
}

attn_status FN(attn_lookup)(size_t Tq, size_t Tk, size_t d, size_t dv, double scale,
                            const real *q, const real *k, const real *v, real *out, real *weights)
{
    attn_status status = FN(check_lookup)(Tq, Tk, d, dv, scale, q, k, v, out, weights);
    if (status != ATTN_OK)
        return status;
    const real used_scale = attn_scale_or_default(scale, d);
    const attn_softmax_rows_fn softmax_rows = FN(attn_softmax_rows_kernel)(attn_isa_active());

    if (weights != NULL) {
        FN(lookup_block)(Tq, Tk, d, dv, used_scale, softmax_rows, q, k, v, out, weights);
        return ATTN_OK;
    }
    size_t block_rows = LOOKUP_BLOCK_ELEMENTS / Tk;
    block_rows = block_rows == 0 ? 1 : (block_rows > Tq ? Tq : block_rows);
    real *P = malloc(block_rows * Tk * sizeof(real));
    if (P == NULL)
        return ATTN_ERR_OUT_OF_MEMORY;
    for (size_t t0 = 0; t0 < Tq; t0 += block_rows) {
        size_t rows = Tq - t0 < block_rows ? Tq - t0 : block_rows;
        FN(lookup_block)(rows, Tk, d, dv, used_scale, softmax_rows, q + t0 * d, k, v,
                         out + t0 * dv, P);
    }
    free(P);
    return ATTN_OK;
}
