/*
 * fuzz_api's sdpa plans and steps: attn_sdpa_plan_create, its threads,
 * up to 6 attn_sdpa_forward and attn_sdpa_backward calls in the plan's
 * precision or another (_f32, _f64, _bf16, _f16: DTYPE_MISMATCH), PLAN_KIND
 * calls both ways, and the one-shots; the 16-bit types' pieces are in
 * fuzz_sdpa_half.c.
 */
#include "fuzz_sdpa.h"

/* ---- plans and steps -------------------------------------------------------------------- */

typedef struct sdpa_plan_state {
    attn_plan *plan;
    const prec *p;
    sdpa_dims s;
    attn_sdpa_shape shape; /* as given (hs_v maybe 0) */
    double scale;          /* as given */
    unsigned flags;
    size_t window;
    dropout_setting dropout;
} sdpa_plan_state;

/* attn_forward / attn_backward on an sdpa plan, or attn_sdpa_forward /
 * attn_sdpa_backward on a projected plan: PLAN_KIND (every pointer set, so
 * no NULL_POINTER; the arrays are dummies that must not be touched) */
static void sdpa_kind_step(const sdpa_plan_state *ps, const prec *cp, uint8_t sb)
{
    call c = {cp, {{0}}, 0, 1};
    void *d[12];
    for (int i = 0; i < 12; i++)
        d[i] = add_array(&c, NULL, 0, i >= 5, 1);
    snapshot(&c);
    attn_status st;
    if (sb & 0x08) {
        current_op = cp->f64 ? "attn_sdpa_forward_f64 on a projected plan"
                             : "attn_sdpa_forward_f32 on a projected plan";
        attn_plan *proj = NULL;
        ORACLE(attn_plan_create(&proj, cp->f64 ? ATTN_F64 : ATTN_F32, 1, 2, 2, 1, 2, 0.0, 0u) ==
                   ATTN_OK,
               "a projected plan");
        sdpa_call a;
        memset(&a, 0, sizeof a);
        const sdpa_io x = {d[0], d[1], d[2], NULL, d[3], NULL, d[5], d[6], d[7], d[8], d[9]};
        st = call_sdpa(cp, (sb & 4) ? 1 : 0, proj, 0, &a, &x, NULL, 0.0, 0u, 0);
        attn_plan_destroy(proj);
    } else if (sb & 4) {
        current_op = cp->f64 ? "attn_backward_f64 on an sdpa plan" : "attn_backward_f32 on an sdpa plan";
        void *g[5] = {d[6], d[7], d[8], d[9], d[10]};
        st = call_backward(cp->f64, ps->plan, d[0], d[1], d[2], d[3], d[4], d[5], g);
    } else {
        current_op = cp->f64 ? "attn_forward_f64 on an sdpa plan" : "attn_forward_f32 on an sdpa plan";
        st = call_forward(cp->f64, ps->plan, d[0], d[1], d[2], d[3], d[4], d[5], d[6]);
    }
    TRACE("%s\n", current_op);
    settle(&c, st, ATTN_ERR_PLAN_KIND);
}

/* One forward (backward: 0) or backward (1) on the plan, in precision cp. */
static void sdpa_step(const sdpa_plan_state *ps, reader *r, const prec *cp, uint8_t sb,
                      int backward)
{
    static const char *const names[2][4] = {
        {"attn_sdpa_forward_f32", "attn_sdpa_forward_f64", "attn_sdpa_forward_bf16",
         "attn_sdpa_forward_f16"},
        {"attn_sdpa_backward_f32", "attn_sdpa_backward_f64", "attn_sdpa_backward_bf16",
         "attn_sdpa_backward_f16"}};
    current_op = names[backward][sdpa_dtype_of(cp) - ATTN_F32];
    const sdpa_dims s = ps->s;
    /* the backward's out and lse: from a forward of the same inputs (0x80 clear), or values */
    const int from_forward = backward && !(sb & 0x80);
    TRACE("%s(from forward %d)\n", current_op, from_forward);
    const sdpa_call a = backward ? take_sdpa_call(r, s, 11, 3, 11) : take_sdpa_call(r, s, 6, 2, 7);
    const double elements = (double)a.nQ + (double)a.nK + (double)a.nV + 3.0 * (double)a.nO +
                            (double)a.nM + (double)a.nL;
    call c = {cp, {{0}}, 0, !(elements <= (double)CAP_ELEMENTS)};
    sdpa_arrays arr = add_sdpa_arrays(&c, r, s, &a, backward, backward, !(sb & 4));
    const int null_plan = a.null_at == (backward ? 9 : 4), null_args = a.null_at == (backward ? 10 : 5);
    attn_plan *plan = null_plan ? NULL : ps->plan;

    /* the status model */
    attn_status want = ATTN_OK;
    sdpa_io x = io_from(&c, &arr, backward);
    const int any_null = !arr.Q || !arr.K || !arr.V || !x.out ||
                         (backward && (!x.lse || !arr.dout || !x.dQ || !x.dK || !x.dV));
    if (null_plan || null_args || any_null)
        want = ATTN_ERR_NULL_POINTER;
    else if (cp != ps->p)
        want = ATTN_ERR_DTYPE_MISMATCH;
    else if (backward && (ps->flags & ATTN_INFERENCE))
        want = ATTN_ERR_INFERENCE_PLAN;
    else
        want = model_sdpa_args(s, cp, &a);
    if (c.huge && want == ATTN_OK)
        return;
    const double scale = used_scale(cp, ps->scale, s.hs);
    const int causal = (ps->flags & ATTN_CAUSAL) != 0;
    if (from_forward && want == ATTN_OK) {
        /* out and lse of the forward of these inputs (the same plan) */
        const char *op = current_op;
        current_op = "the forward before a backward";
        sdpa_io f = x;
        ORACLE(call_sdpa(cp, 0, plan, 0, &a, &f, NULL, 0.0, 0u, 0) == ATTN_OK,
               "the forward of a valid backward's inputs failed");
        current_op = op;
    }
    snapshot(&c);
    apply_alias(&c, a.al, backward ? 8 : 5);
    x = io_from(&c, &arr, backward);
    if (want == ATTN_OK)
        want = sdpa_aliases(cp, s, &a, &x, backward) ? ATTN_ERR_ALIASING : ATTN_OK;
    const attn_status st = call_sdpa(cp, backward, plan, null_args, &a, &x, NULL, 0.0, 0u, 0);
    if (st == ATTN_OK && want == ATTN_OK) {
        settle_sdpa_outputs(&c, cp, s, &a, &x, backward);
        check_sdpa_disjoint(cp, s, &a, &x, backward);
    }
    if (!settle(&c, st, want))
        return;
    /* the same call again, into new outputs: the same bytes */
    sdpa_io y = x;
    const size_t es = cp->es, ls = stat_prec(cp)->es; /* lse: float in half calls */
    if (backward) {
        y.dQ = alloc(a.nQ * es), y.dK = alloc(a.nK * es), y.dV = alloc(a.nV * es);
        fill_sentinel(y.dQ, a.nQ * es), fill_sentinel(y.dK, a.nK * es);
        fill_sentinel(y.dV, a.nV * es);
    } else {
        y.out = alloc(a.nO * es);
        fill_sentinel(y.out, a.nO * es);
        y.lse = x.lse != NULL ? alloc(a.nL * ls) : NULL;
    }
    ORACLE(call_sdpa(cp, backward, plan, 0, &a, &y, NULL, 0.0, 0u, 0) == ATTN_OK,
           "the same call again failed");
    if (backward)
        ORACLE(sdpa_same(cp, s, &a, SQ, x.dQ, y.dQ) && sdpa_same(cp, s, &a, SK, x.dK, y.dK) &&
                   sdpa_same(cp, s, &a, SV, x.dV, y.dV),
               "the same backward again gave other bytes");
    else
        ORACLE(sdpa_same(cp, s, &a, SO, x.out, y.out) &&
                   (x.lse == NULL || memcmp(x.lse, y.lse, a.nL * ls) == 0),
               "the same forward again gave other bytes");
    if (backward) {
        /* dropped weights: the structure only, no finiteness bound */
        check_sdpa_backward(cp, s, scale, causal, ps->window, &a, &x,
                            from_forward && !ps->dropout.on);
    } else if (ps->dropout.on) {
        sdpa_io twin;
        dropout_twin_sdpa(cp, s, plan, &ps->dropout, &a, &x, &twin);
        check_sdpa_forward(cp, s, scale, causal, ps->window, &a, &twin);
    } else {
        check_sdpa_forward(cp, s, scale, causal, ps->window, &a, &x);
    }
}

/* The precision of a step's call on a plan of precision p: p, or with bits
 * 0x42 both set another: with 0x08 a 16-bit type's (bf16, or f16 on a bf16
 * plan), else on a float plan the other float precision, on a 16-bit plan
 * f32 (f64 with 0x10). */
static const prec *step_prec(const prec *p, uint8_t sb)
{
    if ((sb & 0x42) != 0x42)
        return p;
    if (sb & 0x08)
        return p == &prec_bf16 ? &prec_f16 : &prec_bf16;
    if (p->half)
        return (sb & 0x10) ? &prec_f64 : &prec_f32;
    return p->f64 ? &prec_f32 : &prec_f64;
}

/* dtype byte, B NH NH_kv Tq Tk hs, hs_v byte (>= 0x80: a dimension follows),
 * scale, flags byte (bits 0-1 ATTN_CAUSAL/ATTN_INFERENCE, 4 ATTN_MATERIALIZED,
 * 8 ATTN_TILED, 0x20 the one-shot instead of a plan, 0x80 an unknown bit
 * follows), window byte (>= 0x80: a dimension follows), NULL choice (plan,
 * shape); then the one-shot's call, or the threads byte and up to 6 steps
 * (step byte: 1 backward, 0x42 another precision (step_prec), 0x30 a PLAN_KIND call
 * (0x08 on a projected plan, 4 backward), 0x80 a backward's out and lse not
 * from a forward, then the call's fields: take_sdpa_call, the arrays). */
void fuzz_sdpa(reader *r)
{
    current_op = "attn_sdpa_plan_create";
    const attn_dtype dtype = take_dtype(r);
    const prec *p = sdpa_prec_of(dtype);
    attn_sdpa_shape shape;
    shape.B = take_dim(r);
    shape.NH = take_dim(r);
    shape.NH_kv = take_dim(r);
    shape.Tq = take_dim(r);
    shape.Tk = take_dim(r);
    shape.hs = take_dim(r);
    shape.hs_v = take(r) >= 0x80 ? take_dim(r) : 0;
    const double scale = take_scale(r);
    const uint8_t fb = take(r);
    unsigned flags = fb & 3u;
    if (fb & 4)
        flags |= ATTN_MATERIALIZED;
    if (fb & 8)
        flags |= ATTN_TILED;
    if (fb & 0x80)
        flags |= 1u << (4 + take(r) % 28);
    const int one_shot = (fb >> 5) & 1;
    const size_t window = take(r) >= 0x80 ? take_dim(r) : 0;
    const int null_at = take_null(r, 2);
    const int null_plan = null_at == 0, null_shape = null_at == 1;
    const int valid_dtype = sdpa_dtype_of(p) == dtype;
    const sdpa_dims s = {shape.B,  shape.NH, shape.NH_kv,
                         shape.Tq, shape.Tk, shape.hs, shape.hs_v ? shape.hs_v : shape.hs};
    TRACE("attn_sdpa%s(dtype %d, B %zu, NH %zu, NH_kv %zu, Tq %zu, Tk %zu, hs %zu, hs_v %zu, "
          "scale %g, flags %#x, window %zu, null %d)\n",
          one_shot ? " one-shot" : "_plan_create", (int)dtype, s.B, s.NH, s.NH_kv, s.Tq, s.Tk,
          s.hs, shape.hs_v, scale, flags, window, null_at);

    if (one_shot) {
        /* attn_sdpa_f32/f64/bf16/f16 (by the dtype's precision): the create's
         * checks, then the forward's */
        static const char *const one_shots[4] = {"attn_sdpa_f32", "attn_sdpa_f64",
                                                 "attn_sdpa_bf16", "attn_sdpa_f16"};
        current_op = one_shots[sdpa_dtype_of(p) - ATTN_F32];
        attn_status want = model_sdpa_flags(flags);
        if (want == ATTN_OK)
            want = model_sdpa_create(s, p, scale, flags | ATTN_INFERENCE);
        const int small = want == ATTN_OK && sdpa_small(s);
        if (want == ATTN_OK && !small)
            return; /* it would make a plan larger than the harness runs, whatever the arrays */
        sdpa_dims as = s;
        if (!small) /* the arrays' shape: anything small (dummies anyway) */
            as = (sdpa_dims){1, 1, 1, 1, 1, 1, 1};
        sdpa_call a = take_sdpa_call(r, as, 6, 2, 7);
        if (want == ATTN_OK) { /* the model's extents are those of the real shape */
            a.has_lengths &= s.B <= 8;
            sdpa_call_resolve(&a, s);
        }
        const double elements = (double)a.nQ + (double)a.nK + (double)a.nV + 3.0 * (double)a.nO +
                                (double)a.nM + (double)a.nL;
        call c = {p, {{0}}, 0, !small || !(elements <= (double)CAP_ELEMENTS)};
        sdpa_arrays arr = add_sdpa_arrays(&c, r, as, &a, 0, 0, !(fb & 0x40));
        snapshot(&c);
        apply_alias(&c, a.al, 5);
        const sdpa_io x = io_from(&c, &arr, 0);
        const int null_args = a.null_at == 5 || null_plan;
        if (null_shape || null_args)
            want = ATTN_ERR_NULL_POINTER;
        else if (want == ATTN_OK && (!arr.Q || !arr.K || !arr.V || !x.out))
            want = ATTN_ERR_NULL_POINTER;
        else if (want == ATTN_OK)
            want = model_sdpa_args(s, p, &a);
        if (c.huge && want == ATTN_OK)
            return;
        if (want == ATTN_OK && sdpa_aliases(p, s, &a, &x, 0))
            want = ATTN_ERR_ALIASING;
        const attn_status st = call_sdpa(p, 2, NULL, null_args, &a, &x,
                                         null_shape ? NULL : &shape, scale, flags, window);
        if (st == ATTN_OK && want == ATTN_OK) {
            settle_sdpa_outputs(&c, p, s, &a, &x, 0);
            check_sdpa_disjoint(p, s, &a, &x, 0);
        }
        if (!settle(&c, st, want))
            return;
        /* the plan it is: ATTN_INFERENCE, default threads, the same bytes */
        attn_plan *plan = NULL;
        ORACLE(attn_sdpa_plan_create(&plan, sdpa_dtype_of(p), &shape, scale,
                                     flags | ATTN_INFERENCE, window) == ATTN_OK,
               "the plan of a successful one-shot");
        sdpa_io y = x;
        y.out = alloc(a.nO * p->es);
        fill_sentinel(y.out, a.nO * p->es);
        const size_t ls = stat_prec(p)->es;
        y.lse = x.lse != NULL ? alloc(a.nL * ls) : NULL;
        const attn_status st2 = call_sdpa(p, 0, plan, 0, &a, &y, NULL, 0.0, 0u, 0);
        attn_plan_destroy(plan);
        ORACLE(st2 == ATTN_OK && sdpa_same(p, s, &a, SO, x.out, y.out) &&
                   (x.lse == NULL || memcmp(x.lse, y.lse, a.nL * ls) == 0),
               "the one-shot and its plan give other bytes (%s)", attn_status_string(st2));
        check_sdpa_forward(p, s, used_scale(p, scale, s.hs), (flags & ATTN_CAUSAL) != 0, window,
                           &a, &x);
        return;
    }

    attn_status want;
    if (null_plan || null_shape)
        want = ATTN_ERR_NULL_POINTER;
    else if (!valid_dtype)
        want = ATTN_ERR_BAD_DTYPE;
    else if ((want = model_sdpa_flags(flags)) == ATTN_OK)
        want = model_sdpa_create(s, p, scale, flags);
    if (want == ATTN_OK && !sdpa_small(s))
        return; /* a plan larger than the harness runs */
    static int sentinel_object;
    attn_plan *const sentinel = (attn_plan *)(void *)&sentinel_object;
    attn_plan *plan = sentinel;
    const attn_status st = attn_sdpa_plan_create(null_plan ? NULL : &plan, dtype,
                                                 null_shape ? NULL : &shape, scale, flags, window);
    dropout_setting dropout;
    if (!plan_created(r, st, want, plan, sentinel, "attn_sdpa_plan_create",
                      (flags & ATTN_INFERENCE) != 0, &dropout))
        return;
    const sdpa_plan_state ps = {plan, p, s, shape, scale, flags, window, dropout};
    const int steps = take(r) % 7;
    for (int i = 0; i < steps; i++) {
        const uint8_t sb = take(r);
        const prec *cp = step_prec(p, sb);
        if ((sb & 0x30) == 0x30)
            sdpa_kind_step(&ps, cp, sb);
        else
            sdpa_step(&ps, r, cp, sb, sb & 1);
    }
    attn_plan_destroy(plan);
}
