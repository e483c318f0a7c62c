/*
 * fuzz_api's projected plans: attn_plan_create, its threads, up to 6
 * forwards and backwards in either precision, attn_plan_destroy.
 */
#include "fuzz_common.h"

/* ---- plans ------------------------------------------------------------------------------ */

/* the inputs of the last successful forward, which a backward is given again */
typedef struct kept {
    const void *X, *Wq, *Wk, *Wv, *Wo;
} kept;

typedef struct plan_state {
    attn_plan *plan;
    const prec *p; /* the plan's precision */
    shape s;
    double scale;
    unsigned flags;
    int has_forward;
    kept k; /* the last forward's inputs: its backward must be given them */
    dropout_setting dropout;
} plan_state;

/* registers an existing array as an input argument (snapshot, compare) */
static const void *add_existing(call *c, const void *ptr, size_t bytes)
{
    ORACLE(c->n < MAX_ARGS, "harness: too many arguments");
    arg *a = &c->a[c->n++];
    memset(a, 0, sizeof *a);
    a->ptr = (void *)(uintptr_t)ptr;
    a->alloc_bytes = bytes;
    a->bytes = bytes;
    return ptr;
}

static void plan_forward_step(plan_state *ps, reader *r, const prec *cp, uint8_t sb)
{
    current_op = cp->f64 ? "attn_forward_f64" : "attn_forward_f32";
    const int with_Wo = (sb >> 2) & 1, with_weights = (sb >> 3) & 1;
    const int null_at = take_null(r, 6); /* X Wq Wk Wv out plan */
    const alias al = take_alias(r, 2, 7);
    TRACE("%s(Wo %d, weights %d, null %d, alias %d)\n", current_op, with_Wo, with_weights, null_at,
          al.output);
    const shape s = ps->s;
    extents e;
    forward_extents(s, cp->es, with_Wo, &e);
    call c = {cp, {{0}}, 0, 0};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, 4 Wo, 5 out, 6 weights */
    void *inputs[5];
    add_head_inputs(&c, r, &e, null_at, with_Wo, inputs);
    void *X = inputs[0], *Wq = inputs[1], *Wk = inputs[2], *Wv = inputs[3], *Wo = inputs[4];
    add_array(&c, r, e.out / cp->es, 1, null_at != 4);
    add_array(&c, r, e.weights / cp->es, 1, with_weights);
    snapshot(&c);
    apply_alias(&c, al, 5);
    void *out = c.a[5].ptr, *weights = c.a[6].ptr;
    attn_plan *plan = null_at == 5 ? NULL : ps->plan;

    attn_status want = ATTN_OK;
    if (!plan || !X || !Wq || !Wk || !Wv || !out) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (cp->f64 != ps->p->f64) {
        want = ATTN_ERR_DTYPE_MISMATCH;
    } else {
        const region in[5] = {{X, e.x}, {Wq, e.w}, {Wk, e.w}, {Wv, e.w}, {Wo, e.w}};
        const region outs[2] = {{out, e.out}, {weights, e.weights}};
        if (outputs_alias(outs, 2, in, 5))
            want = ATTN_ERR_ALIASING;
    }
    if (!settle(&c, call_forward(cp->f64, plan, X, Wq, Wk, Wv, Wo, out, weights), want))
        return;
    if (!(ps->flags & ATTN_INFERENCE)) {
        ps->has_forward = 1;
        ps->k = (kept){X, Wq, Wk, Wv, Wo};
    }
    void *out2 = alloc(e.out), *w2 = with_weights ? alloc(e.weights) : NULL;
    ORACLE(call_forward(cp->f64, plan, X, Wq, Wk, Wv, Wo, out2, w2) == ATTN_OK &&
               memcmp(out, out2, e.out) == 0 && (w2 == NULL || memcmp(weights, w2, e.weights) == 0),
           "the same forward again gave other bytes");
    if (ps->dropout.on) { /* the oracles on the undropped twin */
        const void *const in[5] = {X, Wq, Wk, Wv, Wo};
        dropout_twin_projected(cp, plan, &ps->dropout, in, out, weights, e.out, e.weights, &out,
                               &weights);
    }
    head_ref h = head_ref_make(cp, s, ps->scale, (ps->flags & ATTN_CAUSAL) != 0, X, Wq, Wk, Wv, Wo);
    check_forward(&h, X, Wq, Wk, Wv, Wo, weights, out);
}

static void plan_backward_step(plan_state *ps, reader *r, const prec *cp, uint8_t sb)
{
    current_op = cp->f64 ? "attn_backward_f64" : "attn_backward_f32";
    const int with_Wo = (sb >> 2) & 1, dWo_anyway = (sb >> 3) & 1;
    const int use_kept = ps->has_forward && cp == ps->p && !(sb & 0x80);
    const int null_at = take_null(r, 11); /* X Wq Wk Wv dout dX dWq dWk dWv dWo plan */
    const alias al = take_alias(r, 5, 11);
    TRACE("%s(Wo %d, dWo %d, kept inputs %d, null %d, alias %d)\n", current_op, with_Wo,
          with_Wo || dWo_anyway, use_kept, null_at, al.output);
    const shape s = ps->s;
    extents e;
    forward_extents(s, cp->es, with_Wo, &e);
    call c = {cp, {{0}}, 0, 0};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, 4 Wo, 5 dout, 6 dX, 7 dWq, 8 dWk, 9 dWv, 10 dWo */
    const void *in[5];
    for (int i = 0; i < 5; i++) {
        const int present = (i < 4 ? null_at != i : with_Wo);
        const void *kept_array = (&ps->k.X)[i];
        if (use_kept && present && kept_array != NULL)
            in[i] = add_existing(&c, kept_array, i == 0 ? e.x : e.w);
        else
            in[i] = add_array(&c, r, (i == 0 ? e.x : e.w) / cp->es, 0, present);
    }
    const void *dout = add_array(&c, r, e.out / cp->es, 0, null_at != 4);
    for (int i = 0; i < 5; i++)
        add_array(&c, r, (i == 0 ? e.x : e.w) / cp->es, 1,
                  null_at != 5 + i && (i < 4 || with_Wo || dWo_anyway));
    snapshot(&c);
    apply_alias(&c, al, 6);
    void *g[5] = {c.a[6].ptr, c.a[7].ptr, c.a[8].ptr, c.a[9].ptr, c.a[10].ptr};
    attn_plan *plan = null_at == 10 ? NULL : ps->plan;
    const void *X = in[0], *Wo = in[4];

    attn_status want = ATTN_OK;
    if (!plan || !in[0] || !in[1] || !in[2] || !in[3] || !dout || !g[0] || !g[1] || !g[2] ||
        !g[3] || (Wo && !g[4])) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (cp->f64 != ps->p->f64) {
        want = ATTN_ERR_DTYPE_MISMATCH;
    } else if (ps->flags & ATTN_INFERENCE) {
        want = ATTN_ERR_INFERENCE_PLAN;
    } else if (!ps->has_forward) {
        want = ATTN_ERR_NO_FORWARD;
    } else if (X != ps->k.X || in[1] != ps->k.Wq || in[2] != ps->k.Wk || in[3] != ps->k.Wv ||
               Wo != ps->k.Wo) {
        want = ATTN_ERR_FORWARD_MISMATCH; /* not the forward's arrays (Wo's presence too) */
    } else {
        const region ins[6] = {{X, e.x},     {in[1], e.w}, {in[2], e.w},
                               {in[3], e.w}, {Wo, e.w},    {dout, e.out}};
        const region outs[5] = {
            {g[0], e.x}, {g[1], e.w}, {g[2], e.w}, {g[3], e.w}, {Wo != NULL ? g[4] : NULL, e.w}};
        if (outputs_alias(outs, 5, ins, 6))
            want = ATTN_ERR_ALIASING;
    }
    const attn_status st = call_backward(cp->f64, plan, X, in[1], in[2], in[3], Wo, dout, g);
    if (!settle(&c, st, want))
        return;
    void *g2[5] = {alloc(e.x), alloc(e.w), alloc(e.w), alloc(e.w), alloc(e.w)};
    ORACLE(call_backward(cp->f64, plan, X, in[1], in[2], in[3], Wo, dout, g2) == ATTN_OK,
           "the same backward again failed");
    for (int i = 0; i < (Wo ? 5 : 4); i++)
        ORACLE(memcmp(g[i], g2[i], i == 0 ? e.x : e.w) == 0,
               "the same backward again gave other bytes in gradient %d", i);
    if (!use_kept || in[1] != ps->k.Wq || ps->dropout.on)
        return; /* fresh inputs (another forward's gradients) or dropped weights: no bound */
    head_ref h =
        head_ref_make(cp, s, ps->scale, (ps->flags & ATTN_CAUSAL) != 0, X, in[1], in[2], in[3], Wo);
    double md;
    h.finite_inputs &= all_finite(cp, dout, e.out / cp->es, &md);
    check_gradients(&h, md, Wo != NULL, g);
}

/* A plan's dtype from the input: byte & 3 is 0 f32, 1 f64, 2 either (bit 4),
 * 3 any value (the next byte, signed: bad dtypes too). */
attn_dtype take_dtype(reader *r)
{
    const uint8_t db = take(r);
    switch (db & 3) {
    case 0:
        return ATTN_F32;
    case 1:
        return ATTN_F64;
    case 2:
        return (db & 4) ? ATTN_F64 : ATTN_F32;
    default:
        return (attn_dtype)(int)(int8_t)take(r);
    }
}

/* A create call's status st against the model's want, and *plan (which
 * held `sentinel`) untouched when it failed (fn: the call); then the new
 * plan's threads from the input: BLAS threads (0), 1-3 of its own, or too
 * many; with bits 2 and 3 of that byte set, dropout settings
 * (take_dropout) into *dropout (else off). Whether there is a plan. */
int plan_created(reader *r, attn_status st, attn_status want, attn_plan *plan,
                 const attn_plan *sentinel, const char *fn, int inference,
                 dropout_setting *dropout)
{
    *dropout = (dropout_setting){0, 0.0, 0, 0};
    expect_status(st, want, current_op);
    if (st != ATTN_OK) {
        ORACLE(plan == sentinel, "*plan was written by a failing %s", fn);
        return 0;
    }
    ORACLE(plan != NULL && plan != sentinel, "%s succeeded without a plan", fn);
    const uint8_t tb = take(r);
    const unsigned threads = (tb & 0x80) && (tb & 0x40) ? ATTN_MAX_THREADS + 1u : tb % 4u;
    current_op = "attn_plan_set_threads";
    TRACE("%s(%u)\n", current_op, threads);
    expect_status(attn_plan_set_threads(plan, threads),
                  threads > ATTN_MAX_THREADS ? ATTN_ERR_BAD_THREADS : ATTN_OK, current_op);
    if ((tb & 0x0C) == 0x0C)
        *dropout = take_dropout(r, plan, inference);
    return 1;
}

void fuzz_plan(reader *r)
{
    current_op = "attn_plan_create";
    const attn_dtype dtype = take_dtype(r);
    const prec *p = dtype == ATTN_F64 ? &prec_f64 : &prec_f32;
    const size_t B = take_dim(r), T = take_dim(r), C = take_dim(r), NH = take_dim(r),
                 hs = take_dim(r);
    const double scale = take_scale(r);
    const uint8_t fb = take(r);
    unsigned flags = fb & 15u;
    if (fb & 0x80)
        flags |= 1u << (4 + take(r) % 28);
    const int null_plan = take_null(r, 1) == 0;
    const int valid_dtype = dtype == ATTN_F32 || dtype == ATTN_F64;
    TRACE("%s(dtype %d, B %zu, T %zu, C %zu, NH %zu, hs %zu, scale %g, flags %#x%s)\n", current_op,
          (int)dtype, B, T, C, NH, hs, scale, flags, null_plan ? ", plan NULL" : "");
    const shape s = {B, T, C, NH, hs};

    attn_status want;
    if (null_plan)
        want = ATTN_ERR_NULL_POINTER;
    else if (!valid_dtype)
        want = ATTN_ERR_BAD_DTYPE;
    else if ((flags & ~15u) != 0 || (flags & 12u) == 12u)
        want = ATTN_ERR_BAD_FLAGS;
    else
        want = model_plan_shape(s, p->es, scale, p->max, flags);
    extents e = {0, 0, 0, 0};
    if (want == ATTN_OK && !(forward_extents(s, p->es, 1, &e) && head_small(s, &e, p->es, 1, 1) &&
                             forward_extents(s, p->es, 0, &e) && head_small(s, &e, p->es, 1, 1)))
        return; /* a plan larger than the harness runs */

    static int sentinel_object;
    attn_plan *const sentinel = (attn_plan *)(void *)&sentinel_object;
    attn_plan *plan = sentinel;
    const attn_status st =
        attn_plan_create(null_plan ? NULL : &plan, dtype, B, T, C, NH, hs, scale, flags);
    dropout_setting dropout;
    if (!plan_created(r, st, want, plan, sentinel, "attn_plan_create",
                      (flags & ATTN_INFERENCE) != 0, &dropout))
        return;

    plan_state ps;
    memset(&ps, 0, sizeof ps);
    ps.dropout = dropout;
    ps.plan = plan;
    ps.p = p;
    ps.s = s;
    ps.scale = scale;
    ps.flags = flags;
    const int steps = take(r) % 7;
    for (int i = 0; i < steps; i++) {
        const uint8_t sb = take(r);
        /* the other precision's function on one step in four */
        const int other = (sb & 0x42) == 0x42;
        const prec *cp = (p->f64 ^ other) ? &prec_f64 : &prec_f32;
        if (sb & 1)
            plan_backward_step(&ps, r, cp, sb);
        else
            plan_forward_step(&ps, r, cp, sb);
    }
    attn_plan_destroy(plan);
    current_op = "attn_plan_destroy(NULL)";
    attn_plan_destroy(NULL);
}
