/*
 * test_backward: the gradients of L = sum(out * dout) computed by
 * attn_mha_backward_* and by plans (attn_backward_* after attn_forward_*).
 *
 * 1. Central finite differences, in double, of every element of dX, dWq,
 *    dWk, dWv and dWo, on small random shapes (B <= 2, T <= 5, C <= 8,
 *    NH = 1..4), causal and not, with and without Wo: through
 *    attn_mha_backward_f64 (hs = C/NH, default scale) and through plans
 *    (NH*hs != C, custom scales).
 *
 *    g_fd = (L(theta + h) - L(theta - h)) / (h+ + h-), where h+ and h- are
 *    the steps actually taken after rounding theta +- h (h = 2^-17 ~ 7.6e-6),
 *    and L is evaluated by the library's f64 forward (an ATTN_INFERENCE
 *    plan: nothing is allocated per evaluation). Error measure, per gradient
 *    array G (mha.h): max_i |g_fd_i - G_i| / max(max_i |G_i|, 0.01 M), M the
 *    largest max|G| of the five arrays; bound 1e-7.
 *    Why that bound is meaningful here:
 *      truncation: g_fd - g = (h^2/6) L''' + O(h^4). L is a composition of
 *        bilinear maps and a softmax of scores of a few units; along one
 *        coordinate its third derivative is ~(dS/dtheta)^3 times O(|g|),
 *        with dS/dtheta up to ~10 for the largest scores drawn here: up to
 *        ~1e-11 * 1e3 = 1e-8 relative.
 *      rounding: each evaluation of L carries an absolute error
 *        delta ~ c u S, u = 1.1e-16, S = sum|out * dout| (<= ~30 here), c a
 *        small growth factor (products of length <= 10, the softmax, the
 *        exp kernel at ~3e-16 relative, test_exp); it reaches g_fd as
 *        delta/h ~ 1e-15 * 30 / 7.6e-6 ~ 4e-9 absolute, against gradients
 *        of 0.1 and more (the floor 0.01 M keeps an array that is small by
 *        cancellation from dividing this absolute noise by its own size).
 *      h balances the two. Measured on these cases, largest error over all
 *      arrays: h = 2^-14: 1.2e-7, 2^-15: 3.0e-8 (truncation: 4x per halving
 *      of h), 2^-17: 4.2e-9, 2^-19: 1.3e-8, 2^-20: 3.7e-8 (rounding: 2x per
 *      halving). So 1e-7 keeps a 20x margin at the chosen step, while a
 *      wrong formula (a missing scale, a transposed product, a gradient
 *      leaking through the mask, a missing term of dX) is off by O(|G|):
 *      relative error ~0.01..1. A looser bound could not tell O(h^2) from a
 *      real error of 1e-6; a tighter one would measure rounding noise.
 *
 * 2. A naive double reference backward (ref_mha_backward: loops, the
 *    softmax through its explicit Jacobian, not the library's rowsum form)
 *    on larger shapes (T up to 260: causal heads are differentiated in query
 *    blocks of 128), both precisions, same residual: f64 <= 1e-12 (unit
 *    roundoff 1.1e-16; products of length <= B*T = 260 and the softmax
 *    backward's cancellation give ~1e-14 at most; observed 7e-15), f32
 *    <= 1e-4 (below; observed 1.5e-6).
 *
 * 3. f32 gradients against f64 gradients, the same inputs rounded to float
 *    for both, same residual, <= 1e-4: u = 6e-8; each gradient passes
 *    through a chain of about four products (dout Wo^T, dY V^T, the softmax
 *    backward dS = P o (dP - rowsum(dP o P)), dS K, X^T dQ) of lengths up to
 *    B*T = 300, each adding ~sqrt(n) u ~ 1e-6 relative, and the softmax
 *    backward's cancellation amplifies by a few: up to ~1e-5 expected
 *    (observed 1.6e-6), 1e-4 leaves a 10x margin over that, and a real
 *    defect gives O(1).
 *
 * 4. A plan's backward after two forwards differentiates the last one (bit
 *    for bit the backward of a fresh plan run once on the second inputs).
 *    Given other arrays than its forward's it is FORWARD_MISMATCH with
 *    every gradient untouched; given other values in the same arrays it
 *    runs (the values are the caller's promise) and the gradients differ.
 *
 * 5. Without Wo, dWo is ignored: a sentinel dWo is left untouched, dWo =
 *    NULL is accepted, and both give the same bits.
 *
 * Every gradient buffer is filled with a sentinel pattern before the call,
 * so a gradient accumulated into, or not written, fails the comparisons.
 */
#include <math.h>
#include <string.h>

#include "support/inputs.h"
#include "reference/mha.h"
#include "support/test_common.h"

#define FD_STEP 0x1p-17
#define FD_TOL 1e-7
#define F32_VS_F64_TOL 1e-4 /* = mha_grad_tol(&test_prec_f32), see 3 */

/* typed gradients `got` against double arrays `ref`, the residual of mha.h */
static void expect_grads(const test_prec *p, const mha_shape *s, const mha_grads *got,
                         const mha_grads *ref, double tol, const char *what)
{
    mha_grads converted = mha_grads_doubles(p, s, got);
    mha_grads_residual(s, &converted, ref, tol, what);
}

/* ---- 1. finite differences ---------------------------------------------- */

/* L = sum(out * dout) by the f64 forward of `plan` on the given inputs */
static double loss(attn_plan *plan, const mha_shape *s, double *const in[5], const double *dout,
                   double *out)
{
    attn_status st = attn_forward_f64(plan, in[0], in[1], in[2], in[3], in[4], out, NULL);
    check_true(st == ATTN_OK, "finite differences: attn_forward_f64: %s", attn_status_string(st));
    double sum = 0.0;
    for (size_t i = 0; i < mha_out_elems(s); i++)
        sum += out[i] * dout[i];
    return sum;
}

/* Every element of every gradient in g (double arrays, computed by the
 * library on d) against central differences of L. */
static void fd_check(const mha_data *d, const mha_grads *g, const char *what)
{
    const test_prec *p = &test_prec_f64;
    const mha_shape *s = &d->s;
    attn_plan *plan = mha_plan(p, s, ATTN_INFERENCE);
    double *out = talloc_doubles(mha_out_elems(s));
    /* perturbed copies of X, Wq, Wk, Wv, Wo, in the order of the gradients */
    const double *inputs[MHA_GRADS] = {d->X, d->Wq, d->Wk, d->Wv, d->Wo};
    double *in[MHA_GRADS] = {NULL};
    for (int i = 0; i < MHA_GRADS; i++)
        if (inputs[i] != NULL)
            in[i] = rounded_copy(p, inputs[i], mha_grad_elems(s, i));

    mha_grads fd = {{NULL}};
    for (int i = 0; i < MHA_GRADS; i++) {
        if (in[i] == NULL)
            continue;
        double *fd_i = talloc_doubles(mha_grad_elems(s, i));
        for (size_t e = 0; e < mha_grad_elems(s, i); e++) {
            const double theta = in[i][e];
            const double up = theta + FD_STEP, down = theta - FD_STEP;
            in[i][e] = up;
            const double l_up = loss(plan, s, in, d->dout, out);
            in[i][e] = down;
            const double l_down = loss(plan, s, in, d->dout, out);
            in[i][e] = theta;
            fd_i[e] = (l_up - l_down) / ((up - theta) + (theta - down));
        }
        fd.g[i] = fd_i;
    }
    mha_grads_residual(s, &fd, g, FD_TOL, what);
}

/* the gradients of d computed by the library: the one-shot (context
 * points to 1) or a plan's forward and backward (0); checked against finite
 * differences */
static void check_fd(const test_prec *p, const mha_data *d, const mha_typed *t, void *context)
{
    const int one_shot = *(const int *)context;
    mha_grads typed;
    if (one_shot) {
        typed = mha_one_shot_backward(p, &d->s, t);
    } else {
        attn_plan *plan = mha_plan(p, &d->s, 0u);
        mha_plan_forward(p, plan, &d->s, t, NULL);
        typed = mha_plan_backward(p, plan, &d->s, t);
    }
    mha_grads g = mha_grads_doubles(p, &d->s, &typed);
    fd_check(d, &g, one_shot ? "finite differences, one-shot" : "finite differences, plan");
    /* the reference backward of 2 agrees on these cases too (so it is
     * itself checked against finite differences) */
    mha_grads ref = mha_reference_grads(d);
    mha_grads_residual(&d->s, &g, &ref, mha_grad_tol(p), "reference, finite-difference cases");
}

/* Random small shapes, three per NH = 1..4, each causal and not, with and
 * without Wo; B <= 2, T <= 5, C <= 8. One-shots: C = NH*hs, the default
 * scale, and the first shape of each NH a single position. Plans: C and hs
 * drawn apart (NH*hs != C mostly) and a custom scale in [0.2, 1.5], but for
 * every third shape (scale argument 0, the default). */
static void finite_differences(void **state)
{
    const int one_shot = *(const int *)*state;
    enum { PER_NH = 3 };
    mha_dims dims[4 * PER_NH];
    test_rng rng;
    rng_seed(&rng, one_shot ? 401 : 402);
    for (size_t NH = 1; NH <= 4; NH++)
        for (int rep = 0; rep < PER_NH; rep++) {
            mha_dims *x = &dims[(NH - 1) * PER_NH + (size_t)rep];
            x->B = 1 + rng_below(&rng, 2);
            x->NH = NH;
            if (one_shot) {
                x->T = rep == 0 ? 1 : 2 + rng_below(&rng, 4);
                x->hs = 1 + rng_below(&rng, 8 / NH);
                x->C = NH * x->hs;
                x->scale = 0.0;
            } else {
                x->T = 1 + rng_below(&rng, 5);
                x->C = 1 + rng_below(&rng, 8);
                x->hs = 1 + rng_below(&rng, 4);
                x->scale = rep == 1 ? 0.0 : rng_range(&rng, 0.2, 1.5);
            }
        }
    mha_each_case(&test_prec_f64, one_shot ? 411 : 412, dims, 4 * PER_NH, MHA_WO_BOTH, check_fd,
                  (void *)&one_shot);
    check_worst_report(one_shot ? "largest |g_fd - g| / max|g|, one-shot"
                                : "largest |g_fd - g| / max|g|, plans");
}

/* ---- 2. the reference backward -------------------------------------------- */

/* a plan's gradients and, where the shape allows, the one-shot's */
static void check_reference(const test_prec *p, const mha_data *d, const mha_typed *t,
                            void *context)
{
    (void)context;
    const mha_shape *s = &d->s;
    mha_grads ref = mha_reference_grads(d);
    attn_plan *plan = mha_plan(p, s, 0u);
    mha_plan_forward(p, plan, s, t, NULL);
    mha_grads planned = mha_plan_backward(p, plan, s, t);
    expect_grads(p, s, &planned, &ref, mha_grad_tol(p), "reference, plan");
    if (s->hs * s->NH == s->C && s->scale <= 0.0) {
        mha_grads one = mha_one_shot_backward(p, s, t);
        expect_grads(p, s, &one, &ref, mha_grad_tol(p), "reference, one-shot");
    }
}

static void reference_shapes(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const mha_dims dims[] = {
        {1, 6, 64, 4, 16, 0},  {2, 17, 12, 3, 4, 0},  {3, 9, 10, 2, 7, 0.4},
        {1, 40, 16, 4, 4, 0},  {2, 70, 8, 1, 8, 0},   {1, 33, 6, 2, 5, 1.1},
        {4, 5, 20, 4, 5, 0},   {1, 1, 8, 2, 4, 0},
        /* causal heads go in query blocks of 128: one block and a bit, three
         * with a short last one */
        {2, 129, 6, 2, 3, 0},  {1, 260, 8, 2, 4, 0.6},
    };
    mha_each_case(p, 403, dims, sizeof dims / sizeof dims[0], MHA_WO_BOTH, check_reference,
                  NULL);
    check_worst_report(p->name);
}

/* ---- 3. f32 against f64 --------------------------------------------------- */

/* d is drawn rounded to float: both precisions see the same values */
static void check_f32_against_f64(const test_prec *f32, const mha_data *d, const mha_typed *t32,
                                  void *context)
{
    (void)context;
    const test_prec *f64 = f32->other;
    mha_typed t64 = mha_typed_copy(f64, d);
    mha_grads g32 = mha_one_shot_backward(f32, &d->s, t32);
    mha_grads g64 = mha_one_shot_backward(f64, &d->s, &t64);
    mha_grads ref = mha_grads_doubles(f64, &d->s, &g64);
    expect_grads(f32, &d->s, &g32, &ref, F32_VS_F64_TOL, "f32 against f64");
}

static void f32_against_f64(void **state)
{
    (void)state;
    const mha_dims dims[] = {
        {1, 6, 64, 4, 16, 0},  {2, 64, 64, 4, 16, 0}, {1, 130, 32, 2, 16, 0},
        {4, 64, 24, 3, 8, 0},  {2, 33, 48, 1, 48, 0}, {1, 300, 16, 2, 8, 0},
    };
    mha_each_case(&test_prec_f32, 404, dims, sizeof dims / sizeof dims[0], MHA_WO_BOTH,
                  check_f32_against_f64, NULL);
    check_worst_report("f32 gradients against f64");
}

/* ---- 4. two forwards, one backward --------------------------------------- */

static void backward_after_two_forwards(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 405);
    for (int causal = 0; causal <= 1; causal++)
        for (int first_Wo = 0; first_Wo <= 1; first_Wo++)
            for (int second_Wo = 0; second_Wo <= 1; second_Wo++) {
                mha_shape s1 = {2, 7, 6, 2, 4, 0.0, causal, first_Wo};
                mha_shape s2 = s1;
                s2.with_Wo = second_Wo;
                mha_data a = mha_random(p, &rng, s1, MHA_W_GAIN);
                mha_data b = mha_random(p, &rng, s2, MHA_W_GAIN);
                mha_typed ta = mha_typed_copy(p, &a), tb = mha_typed_copy(p, &b);

                attn_plan *plan = mha_plan(p, &s1, 0u);
                mha_plan_forward(p, plan, &s1, &ta, NULL);
                mha_plan_forward(p, plan, &s2, &tb, NULL);
                mha_grads twice = mha_plan_backward(p, plan, &s2, &tb);

                attn_plan *fresh = mha_plan(p, &s2, 0u);
                mha_plan_forward(p, fresh, &s2, &tb, NULL);
                mha_grads once = mha_plan_backward(p, fresh, &s2, &tb);
                check_true(mha_grads_identical(p, &s2, &twice, &once),
                           "causal %d Wo %d then %d: the backward does not follow the last "
                           "forward",
                           causal, first_Wo, second_Wo);
                mha_grads ref = mha_reference_grads(&b);
                expect_grads(p, &s2, &twice, &ref, mha_grad_tol(p), "after two forwards");
                if (first_Wo != second_Wo)
                    continue;
                /* the same backward call after a forward on the first
                 * inputs is refused: they are other arrays (attn.h), and
                 * nothing is written */
                attn_plan *stale = mha_plan(p, &s1, 0u);
                mha_plan_forward(p, stale, &s1, &ta, NULL);
                mha_grads refused = mha_grads_alloc(p, &s2);
                const attn_status st =
                    p->backward(stale, tb.X, tb.Wq, tb.Wk, tb.Wv, tb.Wo, tb.dout,
                                refused.g[MHA_DX], refused.g[MHA_DWQ], refused.g[MHA_DWK],
                                refused.g[MHA_DWV], refused.g[MHA_DWO]);
                check_true(st == ATTN_ERR_FORWARD_MISMATCH,
                           "backward on other inputs than its forward's: %s, not "
                           "FORWARD_MISMATCH", attn_status_string(st));
                for (int g = 0; g < MHA_GRADS; g++)
                    check_true(refused.g[g] == NULL ||
                                   sentinel_intact(refused.g[g],
                                                   mha_grad_elems(&s2, g) * p->size),
                               "the refused backward wrote %s", mha_grad_names[g]);
                /* the second inputs copied into the first's arrays pass the
                 * check (contents are the caller's promise) but give other
                 * numbers: the saved state matters, the comparison above
                 * can fail */
                memcpy(ta.X, tb.X, mha_x_elems(&s2) * p->size);
                void *const from[] = {tb.Wq, tb.Wk, tb.Wv, tb.Wo};
                void *const to[] = {ta.Wq, ta.Wk, ta.Wv, ta.Wo};
                for (int w = 0; w < 4; w++)
                    if (to[w] != NULL)
                        memcpy(to[w], from[w], mha_w_elems(&s2) * p->size);
                mha_grads wrong = mha_plan_backward(p, stale, &s2, &ta);
                check_true(!mha_grads_identical(p, &s2, &wrong, &once),
                           "the saved state of a forward does not matter?");
            }
}

/* ---- 5. dWo without Wo ---------------------------------------------------- */

/* the backward of s (Wo NULL) with the given dWo: one-shot, or a fresh
 * training plan's forward and backward */
static attn_status backward_without_Wo(const test_prec *p, const mha_shape *s, const mha_typed *t,
                                       int planned, const mha_grads *g, void *dWo)
{
    void *const *x = g->g;
    if (!planned)
        return p->mha_backward(s->B, s->T, s->C, s->NH, s->causal, t->X, t->Wq, t->Wk, t->Wv,
                               NULL, t->dout, x[MHA_DX], x[MHA_DWQ], x[MHA_DWK], x[MHA_DWV],
                               dWo);
    attn_plan *plan = mha_plan(p, s, 0u);
    mha_plan_forward(p, plan, s, t, NULL);
    return p->backward(plan, t->X, t->Wq, t->Wk, t->Wv, NULL, t->dout, x[MHA_DX], x[MHA_DWQ],
                       x[MHA_DWK], x[MHA_DWV], dWo);
}

static void check_dWo_ignored(const test_prec *p, const mha_data *d, const mha_typed *t,
                              void *context)
{
    (void)context;
    const mha_shape *s = &d->s;
    mha_grads ref = mha_reference_grads(d);
    const size_t dwo_bytes = mha_w_elems(s) * p->size;
    void *dWo = talloc(dwo_bytes);
    for (int planned = 0; planned <= 1; planned++) {
        mha_grads with_buffer = mha_grads_alloc(p, s), with_null = mha_grads_alloc(p, s);
        sentinel_fill(dWo, dwo_bytes);
        attn_status st = backward_without_Wo(p, s, t, planned, &with_buffer, dWo);
        check_true(st == ATTN_OK, "plan %d, sentinel dWo: %s", planned, attn_status_string(st));
        check_true(sentinel_intact(dWo, dwo_bytes), "plan %d: dWo written without Wo", planned);
        st = backward_without_Wo(p, s, t, planned, &with_null, NULL);
        check_true(st == ATTN_OK, "plan %d, dWo NULL: %s", planned, attn_status_string(st));
        check_true(mha_grads_identical(p, s, &with_buffer, &with_null),
                   "plan %d: dWo NULL changed the gradients", planned);
        expect_grads(p, s, &with_null, &ref, mha_grad_tol(p), "without Wo");
    }
}

static void dWo_ignored_without_Wo(void **state)
{
    const mha_dims dims = {2, 5, 8, 2, 4, 0.0};
    mha_each_case(TEST_PREC(state), 406, &dims, 1, MHA_WO_NONE, check_dWo_ignored, NULL);
}

static const int one_shot_calls = 1, plan_calls = 0;

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        MHA_CASE("f64/finite_differences, one-shot", finite_differences, &one_shot_calls),
        MHA_CASE("f64/finite_differences, plans", finite_differences, &plan_calls),
        MHA_PREC_CASES(reference_shapes),
        MHA_CASE("f32_against_f64", f32_against_f64, NULL),
        MHA_PREC_CASES(backward_after_two_forwards),
        MHA_PREC_CASES(dWo_ignored_without_Wo),
    };
    return cmocka_run_group_tests_name("backward", tests, NULL, NULL);
}
