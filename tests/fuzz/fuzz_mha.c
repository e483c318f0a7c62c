/*
 * fuzz_api's multi-head one-shots: attn_mha_forward and attn_mha_backward.
 */
#include "fuzz_common.h"

/* ---- attn_mha_forward / attn_mha_backward ---------------------------------------------- */

/* The shared checks of the multi-head one-shots up to extent (documented
 * order): zero dimensions, C % NH, sizes, BLAS range. NULL is the caller's. */
static attn_status model_mha_shape(shape s, int ok)
{
    const size_t dims[4] = {s.B, s.T, s.C, s.NH};
    if (any_zero(4, dims))
        return ATTN_ERR_ZERO_DIMENSION;
    if (s.C % s.NH != 0)
        return ATTN_ERR_BAD_SHAPE;
    if (!ok)
        return ATTN_ERR_SIZE_OVERFLOW;
    const size_t blas[4] = {s.B * s.T, s.T, s.C, s.C};
    if (over_int(4, blas))
        return ATTN_ERR_BLAS_RANGE;
    return ATTN_OK;
}

/* The decoded head of a multi-head one-shot call. */
typedef struct mha_args {
    shape s; /* hs = C/NH, or 1 before NH divides C */
    extents e;
    int ok; /* no array's byte count overflows */
    uint8_t opt;
    int causal, with_Wo, null_at;
    alias al;
} mha_args;

/* dimensions B, T, C, NH, the options byte (1 causal, 2 Wo, ...), the NULL
 * choice among n_null pointers and the aliasing choice */
static mha_args take_mha_args(const prec *p, reader *r, int n_null, int n_outputs, int n_args)
{
    mha_args m;
    memset(&m, 0, sizeof m);
    const size_t B = take_dim(r), T = take_dim(r), C = take_dim(r), NH = take_dim(r);
    m.opt = take(r);
    m.causal = causal_arg(m.opt);
    m.with_Wo = (m.opt >> 1) & 1;
    m.null_at = take_null(r, n_null);
    m.al = take_alias(r, n_outputs, n_args);
    TRACE("%s(B %zu, T %zu, C %zu, NH %zu, causal %d, Wo %d, null %d, alias %d)\n", current_op, B,
          T, C, NH, m.causal, m.with_Wo, m.null_at, m.al.output);
    m.s = (shape){B, T, C, NH, (NH != 0 && C % NH == 0) ? C / NH : 1};
    m.ok = 1;
    if (!any_zero(4, (size_t[]){B, T, C, NH})) {
        m.ok = forward_extents(m.s, p->es, m.with_Wo, &m.e);
    } else { /* zero dimensions: the arrays are empty */
        int ok = 1;
        m.e.x = PRODUCT(&ok, B, T, C, p->es);
        m.e.w = PRODUCT(&ok, C, C, p->es);
        m.e.out = m.e.x;
        m.e.weights = PRODUCT(&ok, B, NH, T, T, p->es);
    }
    return m;
}

void fuzz_mha_forward(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_mha_forward_f64" : "attn_mha_forward_f32";
    const mha_args m = take_mha_args(p, r, 5, 1, 6);
    const size_t B = m.s.B, T = m.s.T, C = m.s.C, NH = m.s.NH, es = p->es;
    const int causal = m.causal, ok = m.ok;
    const shape s = m.s;
    const extents e = m.e;
    call c = {p, {{0}}, 0, !(ok && head_small(s, &e, es, 0, 0))};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, 4 Wo, 5 out */
    void *inputs[5];
    add_head_inputs(&c, r, &e, m.null_at, m.with_Wo, inputs);
    add_array(&c, r, e.out / es, 1, m.null_at != 4);
    snapshot(&c);
    apply_alias(&c, m.al, 5);
    void *X = inputs[0], *Wq = inputs[1], *Wk = inputs[2], *Wv = inputs[3], *Wo = inputs[4];
    void *out = c.a[5].ptr;

    const unsigned flags = ATTN_INFERENCE | (causal ? ATTN_CAUSAL : 0u);
    attn_status want = ATTN_OK;
    if (!X || !Wq || !Wk || !Wv || !out)
        want = ATTN_ERR_NULL_POINTER;
    else
        want = model_mha_shape(s, ok);
    if (want == ATTN_OK) {
        const region in[5] = {{X, e.x}, {Wq, e.w}, {Wk, e.w}, {Wv, e.w}, {Wo, e.w}};
        const region outs[1] = {{out, e.out}};
        if (outputs_alias(outs, 1, in, 5))
            want = ATTN_ERR_ALIASING;
        else if (!arena_fits(s, es, flags))
            want = ATTN_ERR_SIZE_OVERFLOW;
    }
    if (c.huge && want == ATTN_OK)
        return;
    const attn_status st = p->f64
                               ? attn_mha_forward_f64(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo, out)
                               : attn_mha_forward_f32(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo, out);
    if (!settle(&c, st, want))
        return;

    void *out2 = alloc(e.out);
    attn_plan *plan = plan_for(p, s, flags);
    const attn_status st2 = call_forward(p->f64, plan, X, Wq, Wk, Wv, Wo, out2, NULL);
    attn_plan_destroy(plan);
    ORACLE(st2 == ATTN_OK && memcmp(out, out2, e.out) == 0,
           "mha_forward and its plan give other bytes (%s)", attn_status_string(st2));
    head_ref h = head_ref_make(p, s, 0.0, causal != 0, X, Wq, Wk, Wv, Wo);
    check_forward(&h, X, Wq, Wk, Wv, Wo, NULL, out);
}

/* oracle 7 on gradients g[5] (dWo only with Wo) */
void check_gradients(const head_ref *h, double md, int with_Wo, void *const g[5])
{
    if (!backward_bounded(h, md, with_Wo))
        return;
    const size_t x = h->rows * h->s.C, w = h->s.C * h->D;
    static const char *const names[5] = {"dX", "dWq", "dWk", "dWv", "dWo"};
    for (int i = 0; i < (with_Wo ? 5 : 4); i++)
        expect_finite(h->p, g[i], i == 0 ? x : w, names[i]);
}

void fuzz_mha_backward(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_mha_backward_f64" : "attn_mha_backward_f32";
    const mha_args m = take_mha_args(p, r, 10, 5, 11);
    const size_t B = m.s.B, T = m.s.T, C = m.s.C, NH = m.s.NH, es = p->es;
    const int causal = m.causal, ok = m.ok, null_at = m.null_at;
    const int dWo_anyway = (m.opt >> 2) & 1; /* dWo passed without Wo: ignored */
    const shape s = m.s;
    const extents e = m.e;
    call c = {p, {{0}}, 0, !(ok && head_small(s, &e, es, 1, 0))};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, 4 Wo, 5 dout, 6 dX, 7 dWq, 8 dWk, 9 dWv, 10 dWo */
    void *inputs[5];
    add_head_inputs(&c, r, &e, null_at, m.with_Wo, inputs);
    void *X = inputs[0], *Wq = inputs[1], *Wk = inputs[2], *Wv = inputs[3], *Wo = inputs[4];
    void *dout = add_array(&c, r, e.out / es, 0, null_at != 4);
    for (int i = 0; i < 5; i++)
        add_array(&c, r, (i == 0 ? e.x : e.w) / es, 1,
                  null_at != 5 + i && (i < 4 || m.with_Wo || dWo_anyway));
    snapshot(&c);
    apply_alias(&c, m.al, 6);
    void *g[5] = {c.a[6].ptr, c.a[7].ptr, c.a[8].ptr, c.a[9].ptr, c.a[10].ptr};

    attn_status want = ATTN_OK;
    if (!X || !Wq || !Wk || !Wv || !dout || !g[0] || !g[1] || !g[2] || !g[3] || (Wo && !g[4]))
        want = ATTN_ERR_NULL_POINTER;
    else
        want = model_mha_shape(s, ok);
    if (want == ATTN_OK) {
        const region in[6] = {{X, e.x}, {Wq, e.w}, {Wk, e.w}, {Wv, e.w}, {Wo, e.w}, {dout, e.out}};
        const region outs[5] = {
            {g[0], e.x}, {g[1], e.w}, {g[2], e.w}, {g[3], e.w}, {Wo != NULL ? g[4] : NULL, e.w}};
        if (outputs_alias(outs, 5, in, 6))
            want = ATTN_ERR_ALIASING;
        else if (!arena_fits(s, es, causal ? ATTN_CAUSAL : 0u))
            want = ATTN_ERR_SIZE_OVERFLOW;
    }
    if (c.huge && want == ATTN_OK)
        return;
    const attn_status st = p->f64 ? attn_mha_backward_f64(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo,
                                                          dout, g[0], g[1], g[2], g[3], g[4])
                                  : attn_mha_backward_f32(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo,
                                                          dout, g[0], g[1], g[2], g[3], g[4]);
    if (!settle(&c, st, want))
        return;

    /* the plan it is: a training plan, forward, backward; the same bytes */
    void *g2[5] = {alloc(e.x), alloc(e.w), alloc(e.w), alloc(e.w), Wo ? alloc(e.w) : NULL};
    void *out2 = alloc(e.out);
    attn_plan *plan = plan_for(p, s, causal ? ATTN_CAUSAL : 0u);
    attn_status st2 = call_forward(p->f64, plan, X, Wq, Wk, Wv, Wo, out2, NULL);
    if (st2 == ATTN_OK)
        st2 = call_backward(p->f64, plan, X, Wq, Wk, Wv, Wo, dout, g2);
    attn_plan_destroy(plan);
    ORACLE(st2 == ATTN_OK, "the plan of mha_backward: %s", attn_status_string(st2));
    for (int i = 0; i < (Wo ? 5 : 4); i++)
        ORACLE(memcmp(g[i], g2[i], i == 0 ? e.x : e.w) == 0,
               "mha_backward and its plan give other bytes in gradient %d", i);
    head_ref h = head_ref_make(p, s, 0.0, causal != 0, X, Wq, Wk, Wv, Wo);
    double md;
    h.finite_inputs &= all_finite(p, dout, e.out / es, &md);
    check_gradients(&h, md, Wo != NULL, g);
}
