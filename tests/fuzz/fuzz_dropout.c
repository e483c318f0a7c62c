/*
 * fuzz_api's attention dropout: attn_plan_set_dropout on the plans of
 * fuzz_plan and fuzz_sdpa, its status model, and what a forward with
 * dropout on must keep of the one without.
 *
 * take_dropout, right after a plan's threads (when bits 2 and 3 of the
 * threads byte are both set; see plan_created): a dropout byte (bits 0-1:
 * how many calls, 0 to 3; bit 7: the first on a NULL plan), then per call
 * a p byte (below 12 a palette entry: 0, -0, +-1e-300, 0.1, 0.5, the
 * largest double below 1, 1, 1.5, NaN, +-inf; else uniform in [-0.5, 1.5])
 * and two bytes each of seed and offset (spread over 64 bits). The model
 * (attn.h's order): a NULL plan is NULL_POINTER, an ATTN_INFERENCE plan
 * INFERENCE_PLAN (any p), p outside [0, 1) or NaN BAD_DROPOUT, else OK.
 * The plan's setting is the last accepted one.
 *
 * With a setting of p > 0 in force, after a successful forward
 * (dropout_twin_sdpa, dropout_twin_projected): the same call with dropout
 * off (p = 0) gives the undropped results, which the numeric oracles check
 * against the reference as usual; the dropped lse (sdpa) and weights
 * (projected plans) are the undropped ones bit for bit (attn.h: lse and
 * the weights output are those of the undropped softmax); the setting put
 * back, the call gives the dropped bytes again (every draw a function of
 * its key alone). Backwards with dropout on keep their structural oracles;
 * their values are not bounded against the undropped reference (the unit
 * tests test_dropout_grad check them against finite differences).
 */
#include "fuzz_sdpa.h"

static const double dropout_palette[12] = {
    0.0, -0.0, 1e-300, -1e-300, 0.1, 0.5, 0x1.fffffffffffffp-1, 1.0, 1.5,
    (double)NAN, (double)INFINITY, -(double)INFINITY};

/* 16 bits of the input spread over 64 (a multiplicative hash: distinct inputs, distinct values) */
static uint64_t take_wide(reader *r)
{
    const uint64_t lo = take(r), hi = take(r);
    return ((hi << 8 | lo) + 1u) * UINT64_C(0x9E3779B97F4A7C15);
}

static double take_p(reader *r)
{
    const uint8_t pb = take(r);
    return pb < 12 ? dropout_palette[pb] : -0.5 + 2.0 * (double)(pb - 12) / 243.0;
}

dropout_setting take_dropout(reader *r, attn_plan *plan, int inference)
{
    dropout_setting d = {0, 0.0, 0, 0};
    const uint8_t db = take(r);
    for (int i = 0; i < (db & 3); i++) {
        const double p = take_p(r);
        const uint64_t seed = take_wide(r), offset = take_wide(r);
        const int null_plan = i == 0 && (db & 0x80);
        attn_status want = ATTN_OK;
        if (null_plan)
            want = ATTN_ERR_NULL_POINTER;
        else if (inference)
            want = ATTN_ERR_INFERENCE_PLAN;
        else if (!(p >= 0.0 && p < 1.0))
            want = ATTN_ERR_BAD_DROPOUT;
        current_op = "attn_plan_set_dropout";
        TRACE("%s(p %g, seed %llu, offset %llu%s)\n", current_op, p, (unsigned long long)seed,
              (unsigned long long)offset, null_plan ? ", plan NULL" : "");
        expect_status(attn_plan_set_dropout(null_plan ? NULL : plan, p, seed, offset), want,
                      current_op);
        if (want == ATTN_OK)
            d = (dropout_setting){p > 0.0, p, seed, offset};
    }
    return d;
}

/* Turns dropout off (twin: 0) or puts d back (1). */
static void dropout_switch(attn_plan *plan, const dropout_setting *d, int back)
{
    const char *op = current_op;
    current_op = back ? "attn_plan_set_dropout (the setting put back)"
                      : "attn_plan_set_dropout(p = 0) for the undropped twin";
    ORACLE(attn_plan_set_dropout(plan, back ? d->p : 0.0, back ? d->seed : 0,
                                 back ? d->offset : 0) == ATTN_OK,
           "a valid dropout setting was refused");
    current_op = op;
}

void dropout_twin_sdpa(const prec *p, sdpa_dims s, attn_plan *plan, const dropout_setting *d,
                       const sdpa_call *a, const sdpa_io *x, sdpa_io *twin)
{
    const size_t es = p->es, ls = stat_prec(p)->es; /* lse: float in half calls */
    *twin = *x;
    twin->out = alloc(a->nO * es);
    fill_sentinel(twin->out, a->nO * es);
    twin->lse = x->lse != NULL ? alloc(a->nL * ls) : NULL;
    dropout_switch(plan, d, 0);
    ORACLE(call_sdpa(p, 0, plan, 0, a, twin, NULL, 0.0, 0u, 0) == ATTN_OK,
           "the forward without dropout failed where the one with it passed");
    ORACLE(x->lse == NULL || memcmp(x->lse, twin->lse, a->nL * ls) == 0,
           "lse with dropout (p %g) differs from lse without", d->p);
    dropout_switch(plan, d, 1);
    sdpa_io again = *x;
    again.out = alloc(a->nO * es);
    fill_sentinel(again.out, a->nO * es);
    again.lse = x->lse != NULL ? alloc(a->nL * ls) : NULL;
    ORACLE(call_sdpa(p, 0, plan, 0, a, &again, NULL, 0.0, 0u, 0) == ATTN_OK &&
               sdpa_same(p, s, a, SO, x->out, again.out),
           "the dropout setting put back gave other bytes");
}

void dropout_twin_projected(const prec *p, attn_plan *plan, const dropout_setting *d,
                            const void *const in[5], const void *out, const void *weights,
                            size_t out_bytes, size_t weights_bytes, void **out0, void **weights0)
{
    *out0 = alloc(out_bytes);
    *weights0 = weights != NULL ? alloc(weights_bytes) : NULL;
    dropout_switch(plan, d, 0);
    ORACLE(call_forward(p->f64, plan, in[0], in[1], in[2], in[3], in[4], *out0, *weights0) ==
               ATTN_OK,
           "the forward without dropout failed where the one with it passed");
    ORACLE(weights == NULL || memcmp(weights, *weights0, weights_bytes) == 0,
           "the weights with dropout (p %g) differ from those without", d->p);
    /* the setting back, and the plan's last forward one with dropout (its backward's) */
    dropout_switch(plan, d, 1);
    void *again = alloc(out_bytes), *again_w = weights != NULL ? alloc(weights_bytes) : NULL;
    ORACLE(call_forward(p->f64, plan, in[0], in[1], in[2], in[3], in[4], again, again_w) ==
                   ATTN_OK &&
               memcmp(out, again, out_bytes) == 0,
           "the dropout setting put back gave other bytes");
}
