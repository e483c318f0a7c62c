/*
 * attn_sdpa_forward_<half>, attn_sdpa_backward_<half>, attn_sdpa_<half>
 * (attn.h, "half precision"), written once for bfloat16 and float16 and
 * instantiated by sdpa_bf16.c and sdpa_f16.c with
 *   HALF        the element type (attn_bf16, attn_f16)
 *   HALF_DTYPE  its attn_dtype
 *   HALF_IS_BF16  1 or 0 (attn_half_kernels_of)
 *   HN(name)    name_bf16 or name_f16
 *   HALF_CONVERT(op)  attn_bf16_op or attn_f16_op
 * The call is checked as the float one (sdpa_check.h) on 2-byte elements,
 * its half arrays widened into the plan's float copies (plan.h,
 * ATTN_BUF_STAGE_*: dense (B,NH,T,hs), each head's rows side by side: rows
 * NH hs apart alias in L1 and L2, which took the bf16 backward's products
 * 4-9% longer at T 2048, NH 32, hs 128 on the Zen 5), the float engine run on them
 * (sdpa_exec.h), and out (row by row, as the engine finishes it) or the
 * gradients narrowed back through the caller's strides: each element
 * rounded once. The conversions run on the
 * plan's threads, in chunks of rows.
 */
#include <stdint.h>

#include <attn/attn.h>

#include "api/sdpa_check.h"
#include "api/sdpa_exec.h"
#include "engine/shared_threads.h"
#include "kernels/kernels.h"
#include "plan/plan.h"

typedef HN(attn_sdpa_args) HN(half_args);

/* One array's rows in half (through strides st) and in its float copy
 * (dense (B, heads, T, width): rows width apart): rows[b] rows of each of
 * `heads` heads of each of B sequences, `width` elements each. */
typedef struct HN(half_rows) {
    size_t B, heads, width;
    const size_t *rows; /* per sequence, or NULL: all_rows */
    size_t all_rows;
    attn_sdpa_strides st;
} HN(half_rows);

static size_t HN(rows_of)(const HN(half_rows) *r, size_t b)
{
    return r->rows != NULL ? r->rows[b] : r->all_rows;
}

/* The float copy's element of (b, h, t) in a dense (B, heads, T, width)
 * array of T = all_rows rows. */
static size_t HN(dense_at)(const HN(half_rows) *r, size_t b, size_t h, size_t t)
{
    return ((b * r->heads + h) * r->all_rows + t) * r->width;
}

/* Rows [t0, t1) of sequence b widened (widen set) or narrowed. */
static void HN(convert_rows)(const HN(half_rows) *r, size_t b, size_t t0, size_t t1,
                             const uint16_t *half_src, uint16_t *half_dst, const float *src,
                             float *dst, attn_half_widen_fn widen, attn_half_narrow_fn narrow)
{
    const size_t n = r->width;
    for (size_t t = t0; t < t1; t++)
        for (size_t h = 0; h < r->heads; h++) {
            const size_t at = b * r->st.sb + t * r->st.ld + h * r->st.sh;
            if (widen != NULL)
                widen(half_src + at, dst + HN(dense_at)(r, b, h, t), n);
            else
                narrow(src + HN(dense_at)(r, b, h, t), half_dst + at, n);
        }
}

/* One array's conversion, in chunks of CHUNK_ROWS rows of a sequence. */
enum { CHUNK_ROWS = 16 };
typedef struct HN(conversion) {
    const HN(half_rows) *r;
    const uint16_t *half_src;
    uint16_t *half_dst;
    const float *src;
    float *dst;
    attn_half_widen_fn widen;
    attn_half_narrow_fn narrow;
    size_t chunks; /* per sequence */
} HN(conversion);

static void HN(convert_chunk)(void *context, size_t item, unsigned worker)
{
    const HN(conversion) *c = context;
    const size_t b = item / c->chunks, t0 = item % c->chunks * CHUNK_ROWS;
    const size_t rows = HN(rows_of)(c->r, b);
    (void)worker;
    if (t0 < rows)
        HN(convert_rows)(c->r, b, t0, t0 + CHUNK_ROWS < rows ? t0 + CHUNK_ROWS : rows, c->half_src,
                         c->half_dst, c->src, c->dst, c->widen, c->narrow);
}

/* The conversion on the plan's threads (its own pool or the shared one when
 * free; else the caller's alone). */
static void HN(convert)(const attn_plan *plan, HN(conversion) *c)
{
    c->chunks = (c->r->all_rows + CHUNK_ROWS - 1) / CHUNK_ROWS;
    if (c->r->B * c->chunks <= 1) { /* a decode step's rows: no threads */
        for (size_t b = 0; b < c->r->B; b++)
            HN(convert_chunk)(c, b * c->chunks, 0);
        return;
    }
    attn_pool *pool = plan->alone                          ? NULL
                      : plan->shared && plan->threads > 1 ? attn_shared_pool_acquire()
                                                          : plan->pool;
    attn_pool_run(pool, c->r->B * c->chunks, HN(convert_chunk), c);
    if (plan->shared && !plan->alone)
        attn_shared_pool_release(pool);
}

static void HN(widen_rows)(const attn_plan *plan, const HN(half_rows) *r, const HALF *src,
                           float *dst, attn_half_widen_fn widen)
{
    HN(conversion) c = {r, (const uint16_t *)src, NULL, NULL, dst, widen, NULL, 0};
    HN(convert)(plan, &c);
}

static void HN(narrow_rows)(const attn_plan *plan, const HN(half_rows) *r, const float *src,
                            HALF *dst, attn_half_narrow_fn narrow)
{
    HN(conversion) c = {r, NULL, (uint16_t *)dst, src, NULL, NULL, narrow, 0};
    HN(convert)(plan, &c);
}

/* The rows of array `array` (ATTN_SDPA_Q...) of the call; keys only below
 * each key length when `lengths` is set. */
static HN(half_rows) HN(rows)(const attn_plan *plan, const attn_sdpa_checked *x, int array,
                              const size_t *lengths)
{
    const attn_sdpa_shape *s = &plan->sdpa.shape;
    HN(half_rows) r;
    attn_sdpa_dims(s, array, &r.heads, &r.all_rows, &r.width);
    r.B = s->B;
    r.rows = lengths;
    r.st = x->st[array];
    return r;
}

/* The float call on the plan's copies, with Q widened unless `q_in_place`
 * (a bf16 forward or backward whose products read Q, K and V in bf16), and K and V
 * too unless `in_place` (a decode step reads them in 16 bits) or
 * q_in_place. */
static attn_sdpa_args_f32 HN(staged)(attn_plan *plan, const HN(half_args) *a,
                                     const attn_sdpa_checked *x, attn_half_widen_fn widen,
                                     int in_place, int q_in_place)
{
    float *Q = attn_plan_buffer(plan, ATTN_BUF_STAGE_Q);
    float *K = attn_plan_buffer(plan, ATTN_BUF_STAGE_K);
    float *V = attn_plan_buffer(plan, ATTN_BUF_STAGE_V);
    const HN(half_rows) q = HN(rows)(plan, x, ATTN_SDPA_Q, NULL);
    if (!q_in_place)
        HN(widen_rows)(plan, &q, a->Q, Q, widen);
    if (!in_place && !q_in_place) {
        const HN(half_rows) k = HN(rows)(plan, x, ATTN_SDPA_K, a->key_lengths);
        const HN(half_rows) v = HN(rows)(plan, x, ATTN_SDPA_V, a->key_lengths);
        HN(widen_rows)(plan, &k, a->K, K, widen); /* keys j >= L_b are never read */
        HN(widen_rows)(plan, &v, a->V, V, widen);
    }
    const attn_sdpa_shape *s = &plan->sdpa.shape;
    const size_t hs_v = s->hs_v;
    const attn_sdpa_args_f32 f = { /* head-major copies (dense_at) */
        .Q = Q, .ldq = s->hs, .sbq = s->NH * s->Tq * s->hs, .shq = s->Tq * s->hs,
        .K = K, .ldk = s->hs, .sbk = s->NH_kv * s->Tk * s->hs, .shk = s->Tk * s->hs,
        .V = V, .ldv = hs_v, .sbv = s->NH_kv * s->Tk * hs_v, .shv = s->Tk * hs_v,
        .mask = a->mask, .mask_ld = a->mask_ld, .mask_sb = a->mask_sb, .mask_sh = a->mask_sh,
        .key_lengths = a->key_lengths,
        .out = attn_plan_buffer(plan, ATTN_BUF_STAGE_OUT), .ldo = hs_v,
        .sbo = s->NH * s->Tq * hs_v, .sho = s->Tq * hs_v,
        .lse = a->lse};
    return f;
}

/* A call of one query reads K and V in place: every product it makes is
 * one of the few-row kernels' (engine/sdpa.h). Others widen them. The
 * engine rounds each row of out into the caller's as it finishes it. */
attn_status HN(attn_sdpa_forward)(attn_plan *plan, const HN(half_args) *a)
{
    if (plan == NULL || a == NULL)
        return ATTN_ERR_NULL_POINTER;
    const attn_sdpa_call c = ATTN_SDPA_CALL_OF(a, HALF_DTYPE, sizeof(HALF), sizeof(float));
    attn_sdpa_checked x;
    attn_status status = attn_sdpa_check_forward(plan, &c, &x);
    if (status != ATTN_OK)
        return status;
    const attn_half_kernels hk = attn_half_kernels_of(plan->isa, HALF_IS_BF16);
    const int in_place = plan->sdpa.shape.Tq == 1;
    const attn_sdpa_half_kv kv = {(const uint16_t *)a->K, (const uint16_t *)a->V,
                                  x.st[ATTN_SDPA_K], x.st[ATTN_SDPA_V], hk.rows_dot,
                                  hk.rows_axpy};
    const int q_in_place = HALF_IS_BF16 && !in_place && plan->window == 0 &&
                           attn_sdpa_bf16_forward(plan);
    const attn_sdpa_half_out ho = {(uint16_t *)a->out, x.st[ATTN_SDPA_OUT], hk.narrow,
                                   hk.narrow_scaled,
                                   q_in_place ? (const uint16_t *)a->Q : NULL,
                                   x.st[ATTN_SDPA_Q], hk.widen,
                                   (const uint16_t *)a->K, (const uint16_t *)a->V,
                                   x.st[ATTN_SDPA_K], x.st[ATTN_SDPA_V], hk.rows_dot,
                                   hk.rows_axpy};
    const attn_sdpa_args_f32 f = HN(staged)(plan, a, &x, hk.widen, in_place, q_in_place);
    return attn_sdpa_forward_staged(plan, &f, in_place ? &kv : NULL, &ho);
}

attn_status HN(attn_sdpa_backward)(attn_plan *plan, const HN(half_args) *a, const HALF *dout,
                                   HALF *dQ, HALF *dK, HALF *dV)
{
    if (plan == NULL || a == NULL)
        return ATTN_ERR_NULL_POINTER;
    const attn_sdpa_call c = ATTN_SDPA_CALL_OF(a, HALF_DTYPE, sizeof(HALF), sizeof(float));
    attn_sdpa_checked x;
    attn_status status = attn_sdpa_check_backward(plan, &c, dout, dQ, dK, dV, &x);
    if (status != ATTN_OK)
        return status;
    const attn_half_kernels cv = attn_half_kernels_of(plan->isa, HALF_IS_BF16);
    /* bf16 products: Q, K, V and dout read from the call's arrays (their
     * float copies filled only where a (b, g) takes the float products:
     * sdpa_exec.h), and out too */
    const int products = HALF_IS_BF16 && attn_sdpa_bf16_backward(plan);
    const attn_sdpa_args_f32 f = HN(staged)(plan, a, &x, cv.widen, 0, products);
    const HN(half_rows) q = HN(rows)(plan, &x, ATTN_SDPA_Q, NULL);
    const HN(half_rows) k = HN(rows)(plan, &x, ATTN_SDPA_K, NULL);
    const HN(half_rows) v = HN(rows)(plan, &x, ATTN_SDPA_V, NULL);
    const HN(half_rows) o = HN(rows)(plan, &x, ATTN_SDPA_OUT, NULL);
    float *dout_f = attn_plan_buffer(plan, ATTN_BUF_STAGE_DOUT);
    float *dQ_f = attn_plan_buffer(plan, ATTN_BUF_STAGE_DQ);
    float *dK_f = attn_plan_buffer(plan, ATTN_BUF_STAGE_DK);
    float *dV_f = attn_plan_buffer(plan, ATTN_BUF_STAGE_DV);
    /* The row sums <dout, out> (attn_half.h): from the caller's out and
     * dout where the products are made in bf16 (they round P and dS to
     * bf16, an error of the same size), as PyTorch's and FlashAttention's
     * flash backward do; else from out made again in float (lse not
     * written: the caller's is the forward's), so that they carry no
     * rounding. */
    const attn_sdpa_half_backward hb = {
        (const uint16_t *)a->out, (const uint16_t *)dout, (const uint16_t *)a->Q,
        (const uint16_t *)a->K, (const uint16_t *)a->V, x.st[ATTN_SDPA_OUT], x.st[ATTN_SDPA_Q],
        x.st[ATTN_SDPA_K], x.st[ATTN_SDPA_V], cv.widen};
    if (!products) {
        attn_sdpa_args_f32 f_out = f;
        f_out.lse = NULL;
        status = attn_sdpa_forward_staged(plan, &f_out, NULL, NULL);
        HN(widen_rows)(plan, &o, dout, dout_f, cv.widen);
    }
    if (status == ATTN_OK)
        status = attn_sdpa_backward_staged(plan, &f, dout_f, dQ_f, dK_f, dV_f,
                                           products ? &hb : NULL);
    if (status == ATTN_OK) {
        HN(narrow_rows)(plan, &q, dQ_f, dQ, cv.narrow);
        HN(narrow_rows)(plan, &k, dK_f, dK, cv.narrow); /* rows j >= L_b: 0 */
        HN(narrow_rows)(plan, &v, dV_f, dV, cv.narrow);
    }
    return status;
}

static attn_status HN(forward_of_any)(attn_plan *plan, const void *a)
{
    return HN(attn_sdpa_forward)(plan, a);
}

attn_status HN(attn_sdpa)(const attn_sdpa_shape *shape, double scale, unsigned flags,
                          size_t window, const HN(half_args) *a)
{
    return attn_sdpa_one_shot(shape, scale, flags, window, HALF_DTYPE, a, HN(forward_of_any));
}

/* attn.h's conversions, on the process's kernel set. */
void HALF_CONVERT(from_f32)(const float *src, HALF *dst, size_t n)
{
    attn_half_kernels_of(attn_isa_active(), HALF_IS_BF16).narrow(src, (uint16_t *)dst, n);
}

void HALF_CONVERT(to_f32)(const HALF *src, float *dst, size_t n)
{
    attn_half_kernels_of(attn_isa_active(), HALF_IS_BF16).widen((const uint16_t *)src, dst, n);
}
