/* Multi-head problems, calls and checks (see mha.h). */
#include "reference/mha.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/check.h"
#include "support/inputs.h"
#include "reference/reference.h"
#include "support/talloc.h"

mha_shape mha_shape_of(mha_dims dims, int causal, int with_Wo)
{
    mha_shape s = {dims.B, dims.T, dims.C, dims.NH, dims.hs, dims.scale, causal, with_Wo};
    return s;
}

size_t mha_D(const mha_shape *s)
{
    return s->NH * s->hs;
}

size_t mha_x_elems(const mha_shape *s)
{
    return s->B * s->T * s->C;
}

size_t mha_w_elems(const mha_shape *s)
{
    return s->C * mha_D(s);
}

size_t mha_out_elems(const mha_shape *s)
{
    return s->B * s->T * (s->with_Wo ? s->C : mha_D(s));
}

size_t mha_weights_elems(const mha_shape *s)
{
    return s->B * s->NH * s->T * s->T;
}

unsigned mha_flags(const mha_shape *s, unsigned extra)
{
    return (s->causal ? ATTN_CAUSAL : 0u) | extra;
}

mha_data mha_random(const test_prec *p, test_rng *rng, mha_shape s, double w_gain)
{
    const size_t nw = mha_w_elems(&s);
    const double w_stddev = w_gain / sqrt((double)s.C);
    mha_data d = {s, NULL, NULL, NULL, NULL, NULL, NULL};
    d.X = random_rounded(p, rng, mha_x_elems(&s), 1.0);
    d.Wq = random_rounded(p, rng, nw, w_stddev);
    d.Wk = random_rounded(p, rng, nw, w_stddev);
    d.Wv = random_rounded(p, rng, nw, w_stddev);
    if (s.with_Wo)
        d.Wo = random_rounded(p, rng, nw, 1.0 / sqrt((double)mha_D(&s)));
    d.dout = random_rounded(p, rng, mha_out_elems(&s), 1.0);
    return d;
}

mha_typed mha_typed_copy(const test_prec *p, const mha_data *d)
{
    const size_t nw = mha_w_elems(&d->s);
    mha_typed t = {prec_typed(p, d->X, mha_x_elems(&d->s)),
                   prec_typed(p, d->Wq, nw),
                   prec_typed(p, d->Wk, nw),
                   prec_typed(p, d->Wv, nw),
                   d->Wo != NULL ? prec_typed(p, d->Wo, nw) : NULL,
                   prec_typed(p, d->dout, mha_out_elems(&d->s))};
    return t;
}

void mha_each_case(const test_prec *p, unsigned long seed, const mha_dims *dims, size_t n,
                   int wo, mha_case_fn fn, void *context)
{
    test_rng rng;
    rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++)
        for (int causal = 0; causal <= 1; causal++)
            for (int with_Wo = 0; with_Wo <= 1; with_Wo++) {
                if (!(wo & (with_Wo ? MHA_WO_SET : MHA_WO_NONE)))
                    continue;
                mha_data d = mha_random(p, &rng, mha_shape_of(dims[i], causal, with_Wo),
                                        MHA_W_GAIN);
                mha_typed t = mha_typed_copy(p, &d);
                fn(p, &d, &t, context);
            }
}

/* ---- gradients ------------------------------------------------------------ */

const char *const mha_grad_names[MHA_GRADS] = {"dX", "dWq", "dWk", "dWv", "dWo"};

size_t mha_grad_elems(const mha_shape *s, int which)
{
    if (which == MHA_DX)
        return mha_x_elems(s);
    if (which == MHA_DWO && !s->with_Wo)
        return 0;
    return mha_w_elems(s);
}

mha_grads mha_grads_alloc(const test_prec *p, const mha_shape *s)
{
    mha_grads g = {{NULL}};
    for (int i = 0; i < MHA_GRADS; i++) {
        const size_t bytes = mha_grad_elems(s, i) * p->size;
        if (bytes == 0)
            continue;
        g.g[i] = talloc(bytes);
        sentinel_fill(g.g[i], bytes);
    }
    return g;
}

mha_grads mha_grads_doubles(const test_prec *p, const mha_shape *s, const mha_grads *typed)
{
    mha_grads g = {{NULL}};
    for (int i = 0; i < MHA_GRADS; i++)
        if (typed->g[i] != NULL)
            g.g[i] = prec_doubles(p, typed->g[i], mha_grad_elems(s, i));
    return g;
}

int mha_grads_identical(const test_prec *p, const mha_shape *s, const mha_grads *a,
                        const mha_grads *b)
{
    for (int i = 0; i < MHA_GRADS; i++) {
        if ((a->g[i] == NULL) != (b->g[i] == NULL))
            return 0;
        if (a->g[i] != NULL && memcmp(a->g[i], b->g[i], mha_grad_elems(s, i) * p->size) != 0)
            return 0;
    }
    return 1;
}

/* ---- plans destroyed by the teardown ----------------------------------- */

typedef struct tracked_plan {
    attn_plan *plan;
    struct tracked_plan *next;
} tracked_plan;

static tracked_plan *tracked;

attn_plan *mha_plan(const test_prec *p, const mha_shape *s, unsigned extra)
{
    attn_plan *plan = NULL;
    attn_status st = attn_plan_create(&plan, p->dtype, s->B, s->T, s->C, s->NH, s->hs, s->scale,
                                      mha_flags(s, extra));
    check_true(st == ATTN_OK && plan != NULL,
               "attn_plan_create %s (B %zu T %zu C %zu NH %zu hs %zu, flags %#x): %s", p->name,
               s->B, s->T, s->C, s->NH, s->hs, mha_flags(s, extra), attn_status_string(st));
    tracked_plan *node = talloc(sizeof *node);
    node->plan = plan;
    node->next = tracked;
    tracked = node;
    return plan;
}

int mha_teardown(void **state)
{
    for (tracked_plan *node = tracked; node != NULL; node = node->next)
        attn_plan_destroy(node->plan);
    tracked = NULL; /* the nodes are talloc'd */
    return talloc_teardown(state);
}

/* ---- library calls ----------------------------------------------------- */

static void *filled(size_t bytes)
{
    void *b = talloc(bytes);
    sentinel_fill(b, bytes);
    return b;
}

static void expect_ok(attn_status st, const char *call, const test_prec *p, const mha_shape *s)
{
    check_true(st == ATTN_OK, "%s %s (B %zu T %zu C %zu NH %zu hs %zu causal %d Wo %d): %s",
               call, p->name, s->B, s->T, s->C, s->NH, s->hs, s->causal, s->with_Wo,
               attn_status_string(st));
}

void *mha_one_shot_forward(const test_prec *p, const mha_shape *s, const mha_typed *t)
{
    void *out = filled(mha_out_elems(s) * p->size);
    expect_ok(p->mha_forward(s->B, s->T, s->C, s->NH, s->causal, t->X, t->Wq, t->Wk, t->Wv, t->Wo,
                             out),
              "attn_mha_forward", p, s);
    return out;
}

mha_grads mha_one_shot_backward(const test_prec *p, const mha_shape *s, const mha_typed *t)
{
    mha_grads g = mha_grads_alloc(p, s);
    expect_ok(p->mha_backward(s->B, s->T, s->C, s->NH, s->causal, t->X, t->Wq, t->Wk, t->Wv,
                              t->Wo, t->dout, g.g[MHA_DX], g.g[MHA_DWQ], g.g[MHA_DWK],
                              g.g[MHA_DWV], g.g[MHA_DWO]),
              "attn_mha_backward", p, s);
    return g;
}

void *mha_plan_forward(const test_prec *p, attn_plan *plan, const mha_shape *s,
                       const mha_typed *t, void **weights)
{
    void *out = filled(mha_out_elems(s) * p->size);
    void *w = weights != NULL ? filled(mha_weights_elems(s) * p->size) : NULL;
    expect_ok(p->forward(plan, t->X, t->Wq, t->Wk, t->Wv, t->Wo, out, w), "attn_forward", p, s);
    if (weights != NULL)
        *weights = w;
    return out;
}

mha_grads mha_plan_backward(const test_prec *p, attn_plan *plan, const mha_shape *s,
                            const mha_typed *t)
{
    mha_grads g = mha_grads_alloc(p, s);
    expect_ok(p->backward(plan, t->X, t->Wq, t->Wk, t->Wv, t->Wo, t->dout, g.g[MHA_DX],
                          g.g[MHA_DWQ], g.g[MHA_DWK], g.g[MHA_DWV], g.g[MHA_DWO]),
              "attn_backward", p, s);
    return g;
}

/* ---- checks ------------------------------------------------------------- */

mha_forward_ref mha_reference_forward(const mha_data *d)
{
    const mha_shape *s = &d->s;
    const size_t D = mha_D(s), rows = s->B * s->T;
    mha_forward_ref ref = {talloc_doubles(mha_out_elems(s)),
                           talloc_doubles(mha_weights_elems(s)), 0.0};
    ref_mha(s->B, s->T, s->C, s->NH, s->hs, s->scale, s->causal, d->X, d->Wq, d->Wk, d->Wv,
            d->Wo, ref.out, ref.weights);

    double *V = talloc_doubles(rows * D);
    ref_matmul(rows, D, s->C, d->X, s->C, d->Wv, D, V, D);
    ref.out_scale = max_abs(V, rows * D);
    if (d->Wo != NULL) {
        double widest = 0.0; /* max_c sum_k |Wo[k][c]| */
        for (size_t c = 0; c < s->C; c++) {
            double sum = 0.0;
            for (size_t k = 0; k < D; k++)
                sum += fabs(d->Wo[k * s->C + c]);
            widest = sum > widest ? sum : widest;
        }
        ref.out_scale *= widest;
    }
    return ref;
}

void mha_check_forward_with(const test_prec *p, const mha_data *d, const mha_forward_ref *ref,
                            const void *out, const void *weights, const char *what)
{
    const mha_shape *s = &d->s;
    const size_t no = mha_out_elems(s), nwts = mha_weights_elems(s);
    check_residual(residual_scaled(prec_doubles(p, out, no), ref->out, no, ref->out_scale),
                   p->tol, "%s: out %s B %zu T %zu C %zu NH %zu hs %zu scale %g causal %d Wo %d",
                   what, p->name, s->B, s->T, s->C, s->NH, s->hs, s->scale, s->causal,
                   s->with_Wo);
    if (weights != NULL)
        check_residual(residual_rows(prec_doubles(p, weights, nwts), ref->weights, nwts / s->T,
                                     s->T),
                       p->tol, "%s: weights %s B %zu T %zu C %zu NH %zu hs %zu causal %d", what,
                       p->name, s->B, s->T, s->C, s->NH, s->hs, s->causal);
}

void mha_check_forward(const test_prec *p, const mha_data *d, const void *out,
                       const void *weights, const char *what)
{
    const mha_forward_ref ref = mha_reference_forward(d);
    mha_check_forward_with(p, d, &ref, out, weights, what);
}

double mha_grads_residual(const mha_shape *s, const mha_grads *got, const mha_grads *ref,
                          double tol, const char *what)
{
    double largest = 0.0, worst = 0.0;
    for (int i = 0; i < MHA_GRADS; i++)
        if (ref->g[i] != NULL) {
            const double m = max_abs(ref->g[i], mha_grad_elems(s, i));
            largest = m > largest ? m : largest;
        }
    for (int i = 0; i < MHA_GRADS; i++) {
        if (ref->g[i] == NULL)
            continue;
        const size_t n = mha_grad_elems(s, i);
        const double m = max_abs(ref->g[i], n);
        const double r = residual_scaled(got->g[i], ref->g[i], n, fmax(m, 0.01 * largest));
        check_residual(r, tol,
                       "%s: %s B %zu T %zu C %zu NH %zu hs %zu scale %g causal %d Wo %d", what,
                       mha_grad_names[i], s->B, s->T, s->C, s->NH, s->hs, s->scale, s->causal,
                       s->with_Wo);
        worst = r > worst ? r : worst;
    }
    return worst;
}

double mha_grad_tol(const test_prec *p)
{
    return p->dtype == ATTN_F64 ? 1e-12 : 1e-4;
}

mha_grads mha_reference_grads(const mha_data *d)
{
    const mha_shape *s = &d->s;
    mha_grads g = {{NULL}};
    for (int i = 0; i < MHA_GRADS; i++) {
        const size_t n = mha_grad_elems(s, i);
        g.g[i] = n > 0 ? talloc_doubles(n) : NULL;
    }
    ref_mha_backward(s->B, s->T, s->C, s->NH, s->hs, s->scale, s->causal, d->X, d->Wq, d->Wk,
                     d->Wv, d->Wo, d->dout, g.g[MHA_DX], g.g[MHA_DWQ], g.g[MHA_DWK],
                     g.g[MHA_DWV], g.g[MHA_DWO]);
    return g;
}

/* ---- jobs -------------------------------------------------------------- */

mha_job mha_job_make(const test_prec *p, const mha_data *d, attn_plan *plan, int training,
                     int with_weights)
{
    mha_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.s = d->s;
    j.plan = plan;
    j.training = training;
    j.in = mha_typed_copy(p, d);
    j.out = filled(mha_out_elems(&j.s) * p->size);
    j.weights = with_weights ? filled(mha_weights_elems(&j.s) * p->size) : NULL;
    j.grads = mha_grads_alloc(p, &j.s);
    j.status = ATTN_OK;
    return j;
}

void mha_job_run(mha_job *j)
{
    const mha_typed *t = &j->in;
    j->status = j->p->forward(j->plan, t->X, t->Wq, t->Wk, t->Wv, t->Wo, j->out, j->weights);
    if (j->status == ATTN_OK && j->training)
        j->status = j->p->backward(j->plan, t->X, t->Wq, t->Wk, t->Wv, t->Wo, t->dout,
                                   j->grads.g[MHA_DX], j->grads.g[MHA_DWQ], j->grads.g[MHA_DWK],
                                   j->grads.g[MHA_DWV], j->grads.g[MHA_DWO]);
}

int mha_job_identical(const mha_job *a, const mha_job *b)
{
    const size_t size = a->p->size;
    if (a->p != b->p || memcmp(&a->s, &b->s, sizeof a->s) != 0 || a->status != b->status ||
        memcmp(a->out, b->out, mha_out_elems(&a->s) * size) != 0)
        return 0;
    if ((a->weights == NULL) != (b->weights == NULL) ||
        (a->weights != NULL &&
         memcmp(a->weights, b->weights, mha_weights_elems(&a->s) * size) != 0))
        return 0;
    return !a->training || mha_grads_identical(a->p, &a->s, &a->grads, &b->grads);
}
