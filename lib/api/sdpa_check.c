/*
 * The checks of an sdpa call (sdpa_check.h), on addresses and element sizes
 * whatever the precision, and the one-shot of every precision.
 */
#include "api/sdpa_check.h"

#include "core/check.h"
#include "core/strided.h"

/* The shape a forward's arrays are judged by (attn.h): the plan's, with K
 * and V as rows (the mask as columns) of the keys that exist, max(1, the
 * largest key length), since a forward reads no other; a length above Tk
 * counts as Tk (it is BAD_LENGTH after the strides). Without key lengths,
 * the plan's. */
static attn_sdpa_shape forward_read_shape(const attn_sdpa_shape *s, const size_t *key_lengths)
{
    attn_sdpa_shape judged = *s;
    if (key_lengths == NULL)
        return judged;
    size_t rows = 1;
    for (size_t b = 0; b < s->B; b++)
        if (key_lengths[b] > rows)
            rows = key_lengths[b];
    judged.Tk = rows < s->Tk ? rows : s->Tk;
    return judged;
}

/* BAD_STRIDE, then SIZE_OVERFLOW, then BLAS_RANGE: default strides from
 * the plan's shape, the arrays (and the mask's columns, the keys) judged
 * by x->judged. */
static attn_status check_strides(const attn_sdpa_layout *l, const attn_sdpa_call *c,
                                 attn_sdpa_checked *x)
{
    const attn_sdpa_shape s = l->shape; /* the plan's: its products are known to fit */
    attn_sdpa_dense_strides(&s, c->given, x->st);
    if (!attn_sdpa_strides_distinct(&x->judged, x->st))
        return ATTN_ERR_BAD_STRIDE;
    const size_t keys = x->judged.Tk;
    size_t head = keys, sequence, mask = 0;
    if (c->mask != NULL) {
        /* each nonzero stride steps over the whole of what it repeats; an
         * extent that overflows is above every stride (BAD_STRIDE comes
         * first), and SIZE_OVERFLOW if the strides are 0 */
        int overflow = 0;
        if (c->mask_ld != 0 && c->mask_ld < keys)
            return ATTN_ERR_BAD_STRIDE;
        if (c->mask_ld != 0 && !attn_rows_extent(s.Tq, c->mask_ld, keys, &head))
            overflow = 1;
        if (c->mask_sh != 0 && (overflow || c->mask_sh < head))
            return ATTN_ERR_BAD_STRIDE;
        sequence = head;
        if (c->mask_sh != 0 && !attn_rows_extent(s.NH, c->mask_sh, head, &sequence))
            overflow = 1;
        if (c->mask_sb != 0 && (overflow || c->mask_sb < sequence))
            return ATTN_ERR_BAD_STRIDE;
        mask = sequence;
        if (overflow || (c->mask_sb != 0 && !attn_rows_extent(s.B, c->mask_sb, sequence, &mask)))
            return ATTN_ERR_SIZE_OVERFLOW;
    }
    x->mask = mask;
    size_t bytes;
    if (!attn_sdpa_extents(&x->judged, x->st, c->element, x->extent) ||
        !attn_mul3(s.B, s.NH, s.Tq, &x->lse) || !attn_mul(x->mask, c->stat_element, &bytes) ||
        !attn_mul(x->lse, c->stat_element, &bytes))
        return ATTN_ERR_SIZE_OVERFLOW;
    if (!attn_sdpa_rows_in_blas_range(x->st))
        return ATTN_ERR_BLAS_RANGE;
    return ATTN_OK;
}

/* Array `array` (ATTN_SDPA_Q...) of the call at p, in bytes. */
static attn_strided strided(const attn_sdpa_call *c, const attn_sdpa_checked *x, int array,
                            const void *p)
{
    return attn_sdpa_strided(&x->judged, array, &x->st[array], p, c->element);
}

/* PLAN_KIND, DTYPE_MISMATCH, strides and extents, BAD_LENGTH; a forward's
 * arrays judged by the keys it reads, a backward's by every slot (it
 * writes every row of dK and dV, with K's and V's strides). */
static attn_status check_call(const attn_plan *plan, const attn_sdpa_call *c, int forward,
                              attn_sdpa_checked *x)
{
    if (plan->kind != ATTN_PLAN_SDPA)
        return ATTN_ERR_PLAN_KIND;
    if (plan->dtype != c->dtype)
        return ATTN_ERR_DTYPE_MISMATCH;
    x->judged = forward ? forward_read_shape(&plan->sdpa.shape, c->key_lengths)
                        : plan->sdpa.shape;
    const attn_status status = check_strides(&plan->sdpa, c, x);
    if (status != ATTN_OK)
        return status;
    for (size_t b = 0; c->key_lengths != NULL && b < plan->sdpa.shape.B; b++)
        if (c->key_lengths[b] > plan->sdpa.shape.Tk)
            return ATTN_ERR_BAD_LENGTH;
    return ATTN_OK;
}

/* The inputs every call reads. */
static void input_regions(const attn_plan *plan, const attn_sdpa_call *c,
                          const attn_sdpa_checked *x, attn_strided in[5])
{
    in[0] = strided(c, x, ATTN_SDPA_Q, c->Q);
    in[1] = strided(c, x, ATTN_SDPA_K, c->K);
    in[2] = strided(c, x, ATTN_SDPA_V, c->V);
    in[3] = attn_strided_run(c->mask, x->mask * c->stat_element);
    in[4] = attn_strided_run(c->key_lengths,
                             (c->key_lengths != NULL ? plan->sdpa.shape.B : 0) * sizeof(size_t));
}

attn_status attn_sdpa_check_forward(const attn_plan *plan, const attn_sdpa_call *c,
                                    attn_sdpa_checked *x)
{
    if (c->Q == NULL || c->K == NULL || c->V == NULL || c->out == NULL)
        return ATTN_ERR_NULL_POINTER;
    const attn_status status = check_call(plan, c, 1, x);
    if (status != ATTN_OK)
        return status;
    attn_strided in[5];
    input_regions(plan, c, x, in);
    const attn_strided out[] = {strided(c, x, ATTN_SDPA_OUT, c->out),
                                attn_strided_run(c->lse, x->lse * c->stat_element)};
    return attn_strided_outputs_alias(out, ATTN_COUNT(out), in, ATTN_COUNT(in))
               ? ATTN_ERR_ALIASING
               : ATTN_OK;
}

attn_status attn_sdpa_check_backward(const attn_plan *plan, const attn_sdpa_call *c,
                                     const void *dout, const void *dQ, const void *dK,
                                     const void *dV, attn_sdpa_checked *x)
{
    if (c->Q == NULL || c->K == NULL || c->V == NULL || c->out == NULL || c->lse == NULL ||
        dout == NULL || dQ == NULL || dK == NULL || dV == NULL)
        return ATTN_ERR_NULL_POINTER;
    if (plan->kind != ATTN_PLAN_SDPA)
        return ATTN_ERR_PLAN_KIND;
    if (plan->dtype != c->dtype)
        return ATTN_ERR_DTYPE_MISMATCH;
    if (plan->inference)
        return ATTN_ERR_INFERENCE_PLAN;
    const attn_status status = check_call(plan, c, 0, x);
    if (status != ATTN_OK)
        return status;
    attn_strided in[8];
    input_regions(plan, c, x, in);
    in[5] = strided(c, x, ATTN_SDPA_OUT, c->out);
    in[6] = attn_strided_run(c->lse, x->lse * c->stat_element);
    in[7] = strided(c, x, ATTN_SDPA_OUT, dout);
    const attn_strided grads[] = {strided(c, x, ATTN_SDPA_Q, dQ),
                                  strided(c, x, ATTN_SDPA_K, dK),
                                  strided(c, x, ATTN_SDPA_V, dV)};
    return attn_strided_outputs_alias(grads, ATTN_COUNT(grads), in, ATTN_COUNT(in))
               ? ATTN_ERR_ALIASING
               : ATTN_OK;
}

attn_status attn_sdpa_one_shot(const attn_sdpa_shape *shape, double scale, unsigned flags,
                               size_t window, attn_dtype dtype, const void *a,
                               attn_status (*forward)(attn_plan *plan, const void *a))
{
    if (shape == NULL || a == NULL)
        return ATTN_ERR_NULL_POINTER;
    attn_plan *plan = NULL;
    attn_status status =
        attn_sdpa_plan_create(&plan, dtype, shape, scale, flags | ATTN_INFERENCE, window);
    if (status == ATTN_OK)
        status = forward(plan, a);
    attn_plan_destroy(plan);
    return status;
}
