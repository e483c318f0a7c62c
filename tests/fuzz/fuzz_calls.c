/*
 * fuzz_api's calls without a plan of their own: attn_softmax_rows,
 * attn_lookup and attn_self_attention, and the typed plan calls they and
 * the multi-head calls share.
 */
#include "fuzz_common.h"

/* ---- attn_softmax_rows ---------------------------------------------------------------- */

void fuzz_softmax_rows(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_softmax_rows_f64" : "attn_softmax_rows_f32";
    const size_t rows = take_dim(r), cols = take_dim(r);
    const uint8_t ldb = take(r);
    size_t ld = cols;
    if (ldb >= 0x80 && ldb < 0xC0)
        ld = cols + (ldb & 7);
    else if (ldb >= 0xC0 && ldb < 0xE0)
        ld = cols - 1 - (ldb & 3); /* below cols, or a wrapped huge value */
    else if (ldb >= 0xE0)
        ld = take_dim(r);
    const int null_x = take_null(r, 1) == 0;

    attn_status want = ATTN_OK;
    int ok = 1;
    size_t elements = 0;
    if (null_x) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (rows == 0 || cols == 0) {
        want = ATTN_ERR_ZERO_DIMENSION;
    } else {
        const size_t span = PRODUCT(&ok, rows - 1, ld);
        if (ok && __builtin_add_overflow(span, cols, &elements))
            ok = 0;
        if (ok)
            PRODUCT(&ok, elements, p->es);
        if (!ok)
            want = ATTN_ERR_SIZE_OVERFLOW;
        else if (ld < cols)
            want = ATTN_ERR_BAD_STRIDE;
    }
    TRACE("%s(x %s, rows %zu, cols %zu, ld %zu)\n", current_op, null_x ? "NULL" : "set", rows, cols,
          ld);
    call c = {p, {{0}}, 0, !(ok && elements <= CAP_ELEMENTS)};
    if (c.huge && want == ATTN_OK)
        return; /* a legitimate call on more memory than the harness gives */
    void *x = add_array(&c, r, elements, 0, !null_x); /* an input: it gets values */
    c.a[0].output = 1;
    snapshot(&c);
    const attn_status st = p->f64 ? attn_softmax_rows_f64(x, rows, cols, ld)
                                  : attn_softmax_rows_f32(x, rows, cols, ld);
    if (!settle(&c, st, want))
        return;
    const unsigned char *before = c.a[0].snapshot;
    double *row = doubles(cols);
    for (size_t rr = 0; rr < rows; rr++) {
        for (size_t j = 0; j < cols; j++)
            row[j] = get(p, before, rr * ld + j);
        check_softmax_row(p, row, x, rr * ld, cols);
        if (rr + 1 < rows)
            ORACLE(memcmp((unsigned char *)x + (rr * ld + cols) * p->es,
                          before + (rr * ld + cols) * p->es, (ld - cols) * p->es) == 0,
                   "bytes between cols %zu and ld %zu after row %zu changed", cols, ld, rr);
    }
}

/* ---- attn_lookup -------------------------------------------------------------------- */

static attn_status call_lookup(const prec *p, size_t Tq, size_t Tk, size_t d, size_t dv,
                               double scale, const void *q, const void *k, const void *v, void *out,
                               void *weights)
{
    return p->f64 ? attn_lookup_f64(Tq, Tk, d, dv, scale, q, k, v, out, weights)
                  : attn_lookup_f32(Tq, Tk, d, dv, scale, q, k, v, out, weights);
}

void fuzz_lookup(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_lookup_f64" : "attn_lookup_f32";
    const size_t Tq = take_dim(r), Tk = take_dim(r), d = take_dim(r), dv = take_dim(r);
    const double scale = take_scale(r);
    const uint8_t opt = take(r);
    const int with_weights = opt & 1, share_k = (opt >> 1) & 1, share_v = (opt >> 2) & 1;
    const int null_at = take_null(r, 4);
    const alias al = take_alias(r, 2, 5);

    const size_t dims[4] = {Tq, Tk, d, dv};
    int ok = 1;
    const size_t nq = PRODUCT(&ok, Tq, d, p->es) / p->es, nk = PRODUCT(&ok, Tk, d, p->es) / p->es;
    const size_t nv = PRODUCT(&ok, Tk, dv, p->es) / p->es, no = PRODUCT(&ok, Tq, dv, p->es) / p->es;
    const size_t nw = PRODUCT(&ok, Tq, Tk, p->es) / p->es;
    call c = {p, {{0}}, 0, 0};
    c.huge =
        !(ok &&
          (double)nq + (double)nk + (double)nv + (double)no + (double)nw <= (double)CAP_ELEMENTS &&
          (double)Tq * (double)Tk * ((double)d + (double)dv) <= (double)CAP_WORK);
    /* arguments: 0 q, 1 k, 2 v, 3 out, 4 weights */
    void *q = add_array(&c, r, nq, 0, null_at != 0);
    void *k = add_array(&c, r, nk, 0, null_at != 1);
    void *v = add_array(&c, r, nv, 0, null_at != 2);
    add_array(&c, r, no, 1, null_at != 3);
    add_array(&c, r, nw, 1, with_weights);
    if (!c.huge && share_k && Tk == Tq && q != NULL && k != NULL)
        k = c.a[1].ptr = q; /* one buffer passed twice as an input is allowed */
    if (!c.huge && share_v && dv == d && k != NULL && v != NULL)
        v = c.a[2].ptr = k;
    snapshot(&c);
    apply_alias(&c, al, 3);
    void *out = c.a[3].ptr, *weights = c.a[4].ptr;

    attn_status want = ATTN_OK;
    if (q == NULL || k == NULL || v == NULL || out == NULL) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (any_zero(4, dims)) {
        want = ATTN_ERR_ZERO_DIMENSION;
    } else if (!ok) {
        want = ATTN_ERR_SIZE_OVERFLOW;
    } else if (over_int(4, dims)) {
        want = ATTN_ERR_BLAS_RANGE;
    } else if (scale_bad(scale, p->max)) {
        want = ATTN_ERR_BAD_SCALE;
    } else {
        const region in[3] = {{q, nq * p->es}, {k, nk * p->es}, {v, nv * p->es}};
        const region outs[2] = {{out, no * p->es}, {weights, nw * p->es}};
        if (outputs_alias(outs, 2, in, 3))
            want = ATTN_ERR_ALIASING;
    }
    if (c.huge && want == ATTN_OK)
        return;
    TRACE("%s(Tq %zu, Tk %zu, d %zu, dv %zu, scale %g, q %p, k %p, v %p, out %p, weights %p)"
          " expecting %d\n",
          current_op, Tq, Tk, d, dv, scale, q, k, v, out, weights, (int)want);
    if (!settle(&c, call_lookup(p, Tq, Tk, d, dv, scale, q, k, v, out, weights), want))
        return;

    void *out2 = alloc(no * p->es), *w2 = with_weights ? alloc(nw * p->es) : NULL;
    ORACLE(call_lookup(p, Tq, Tk, d, dv, scale, q, k, v, out2, w2) == ATTN_OK &&
               memcmp(out, out2, no * p->es) == 0 &&
               (w2 == NULL || memcmp(weights, w2, nw * p->es) == 0),
           "a second identical call gave other bytes");

    double mq, mk, mv;
    const int finite =
        all_finite(p, q, nq, &mq) & all_finite(p, k, nk, &mk) & all_finite(p, v, nv, &mv);
    const double L = p->max / 4, sb = (double)d * mq * mk, sc = used_scale(p, scale, d);
    const int bounded = finite && sb <= L && mv <= L;
    if (weights != NULL)
        for (size_t t = 0; t < Tq; t++) {
            const int kind = check_weights_row(p, weights, t * Tk, Tk, Tk, "weights");
            if (bounded) {
                ORACLE(kind != 0, "weights row %zu NaN from finite, bounded inputs", t);
                ORACLE(kind != 1 || !(sc * sb <= L), "weights row %zu all 0", t);
            }
        }
    if (bounded)
        expect_finite(p, out, no, "out");
    if (!bounded)
        return;
    /* accuracy: one core, q, k, v given exactly (no projection rounding) */
    double *Q = doubles(nq), *K = doubles(nk), *V = doubles(nv), *aQ = doubles(nq),
           *aK = doubles(nk), *aV = doubles(nv);
    for (size_t i = 0; i < nq; i++)
        Q[i] = get(p, q, i), aQ[i] = fabs(Q[i]);
    for (size_t i = 0; i < nk; i++)
        K[i] = get(p, k, i), aK[i] = fabs(K[i]);
    for (size_t i = 0; i < nv; i++)
        V[i] = get(p, v, i);
    const core kc = {Tq, Tk, d, dv, d, d, dv, Q, K, V, aQ, aK, aV, (double)(d + 2), 0.0, sc, 0};
    double *Y = doubles(no), *errY = doubles(no);
    unsigned char *row_ok = alloc(Tq);
    memset(row_ok, 1, Tq);
    core_check(p, &kc, weights, 0, Y, errY, dv, row_ok, doubles(2 * Tk));
    check_projected(p, Y, errY, Tq, dv, dv, NULL, out, row_ok, "out");
}

/* ---- typed calls ------------------------------------------------------------------- */

attn_status call_forward(int f64, attn_plan *plan, const void *X, const void *Wq,
                         const void *Wk, const void *Wv, const void *Wo, void *out,
                         void *weights)
{
    return f64 ? attn_forward_f64(plan, X, Wq, Wk, Wv, Wo, out, weights)
               : attn_forward_f32(plan, X, Wq, Wk, Wv, Wo, out, weights);
}

attn_status call_backward(int f64, attn_plan *plan, const void *X, const void *Wq,
                          const void *Wk, const void *Wv, const void *Wo, const void *dout,
                          void *const g[5])
{
    return f64 ? attn_backward_f64(plan, X, Wq, Wk, Wv, Wo, dout, g[0], g[1], g[2], g[3], g[4])
               : attn_backward_f32(plan, X, Wq, Wk, Wv, Wo, dout, g[0], g[1], g[2], g[3], g[4]);
}

/* A plan the one-shot equivalence oracle runs (small shapes: it must work). */
attn_plan *plan_for(const prec *p, shape s, unsigned flags)
{
    attn_plan *plan = NULL;
    const attn_status st = attn_plan_create(&plan, p->f64 ? ATTN_F64 : ATTN_F32, s.B, s.T, s.C,
                                            s.NH, s.hs, 0.0, flags);
    ORACLE(st == ATTN_OK, "the plan of a successful one-shot: %s", attn_status_string(st));
    return plan;
}

/* whether the arrays of a head call fit the harness's budget */
int head_small(shape s, const extents *e, size_t es, int training, int with_weights)
{
    /* in double: the sizes may be anything up to SIZE_MAX */
    const double B = (double)s.B, T = (double)s.T, NH = (double)s.NH, hs = (double)s.hs;
    const double elements = ((double)e->x + 4.0 * (double)e->w + 2.0 * (double)e->out +
                             (with_weights ? (double)e->weights : 0.0)) /
                            (double)es;
    const double work = B * NH * T * T * (hs + 1.0) + B * T * (double)s.C * NH * hs;
    const double arena = 8.0 * B * T * NH * hs + (training ? 8.0 * T * hs : 0.0) + B * NH * T * T;
    return elements <= (double)CAP_ELEMENTS && work <= (double)CAP_WORK &&
           arena <= 8.0 * (double)CAP_ELEMENTS;
}

/* causal as the one-shots take it: 0 or any nonzero int */
int causal_arg(uint8_t opt)
{
    return (opt & 1) ? ((opt & 0x40) ? -7 : 1) : 0;
}

/* ---- attn_self_attention ------------------------------------------------------------ */

void fuzz_self_attention(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_self_attention_f64" : "attn_self_attention_f32";
    const size_t B = take_dim(r), T = take_dim(r), C = take_dim(r), hs = take_dim(r);
    const uint8_t opt = take(r);
    const int causal = causal_arg(opt), with_weights = (opt >> 1) & 1, share = (opt >> 2) & 1;
    const int null_at = take_null(r, 5);
    const alias al = take_alias(r, 2, 7);
    TRACE("%s(B %zu, T %zu, C %zu, hs %zu, causal %d, weights %d, null %d, alias %d)\n", current_op,
          B, T, C, hs, causal, with_weights, null_at, al.output);
    const shape s = {B, T, C, 1, hs};
    const size_t es = p->es, dims[4] = {B, T, C, hs};
    extents e = {0, 0, 0, 0};
    const int ok = forward_extents(s, es, 0, &e);
    call c = {p, {{0}}, 0, !(ok && head_small(s, &e, es, 0, with_weights))};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, (4 no Wo), 5 out, 6 weights */
    void *inputs[5];
    add_head_inputs(&c, r, &e, null_at, 0, inputs);
    add_array(&c, r, e.out / es, 1, null_at != 4);
    add_array(&c, r, e.weights / es, 1, with_weights);
    if (share && !c.huge && inputs[1] != NULL) {
        if (inputs[2] != NULL)
            inputs[2] = c.a[2].ptr = inputs[1];
        if (inputs[3] != NULL)
            inputs[3] = c.a[3].ptr = inputs[1];
    }
    snapshot(&c);
    apply_alias(&c, al, 5);
    void *X = inputs[0], *Wq = inputs[1], *Wk = inputs[2], *Wv = inputs[3];
    void *out = c.a[5].ptr, *weights = c.a[6].ptr;

    attn_status want = ATTN_OK;
    const size_t rows = B * T, blas[4] = {rows, T, C, hs};
    const unsigned flags = ATTN_INFERENCE | (causal ? ATTN_CAUSAL : 0u);
    if (!X || !Wq || !Wk || !Wv || !out) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (any_zero(4, dims)) {
        want = ATTN_ERR_ZERO_DIMENSION;
    } else if (!ok) {
        want = ATTN_ERR_SIZE_OVERFLOW;
    } else if (over_int(4, blas)) {
        want = ATTN_ERR_BLAS_RANGE;
    } else {
        const region in[4] = {{X, e.x}, {Wq, e.w}, {Wk, e.w}, {Wv, e.w}};
        const region outs[2] = {{out, e.out}, {weights, e.weights}};
        if (outputs_alias(outs, 2, in, 4))
            want = ATTN_ERR_ALIASING;
        else if (!arena_fits(s, es, flags)) /* the plan made for the call */
            want = ATTN_ERR_SIZE_OVERFLOW;
    }
    if (c.huge && want == ATTN_OK)
        return;
    const attn_status st =
        p->f64 ? attn_self_attention_f64(B, T, C, hs, causal, X, Wq, Wk, Wv, out, weights)
               : attn_self_attention_f32(B, T, C, hs, causal, X, Wq, Wk, Wv, out, weights);
    if (!settle(&c, st, want))
        return;

    /* the plan it is (attn.h): NH = 1, ATTN_INFERENCE, the same bytes */
    void *out2 = alloc(e.out), *w2 = with_weights ? alloc(e.weights) : NULL;
    attn_plan *plan = plan_for(p, s, flags);
    const attn_status st2 = call_forward(p->f64, plan, X, Wq, Wk, Wv, NULL, out2, w2);
    attn_plan_destroy(plan);
    ORACLE(st2 == ATTN_OK && memcmp(out, out2, e.out) == 0 &&
               (w2 == NULL || memcmp(weights, w2, e.weights) == 0),
           "self_attention and its plan give other bytes (%s)", attn_status_string(st2));
    head_ref h = head_ref_make(p, s, 0.0, causal != 0, X, Wq, Wk, Wv, NULL);
    check_forward(&h, X, Wq, Wk, Wv, NULL, weights, out);
}
