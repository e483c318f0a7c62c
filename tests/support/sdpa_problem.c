/* The sdpa suites' cases: problems, reference results, typed inputs and
 * sentinel outputs (sdpa_problem.h). */
#include "support/sdpa_problem.h"

#include <math.h>
#include <string.h>

#include "support/check.h"
#include "support/talloc.h"

static size_t extent(size_t rows, size_t ld, size_t width)
{
    return (rows - 1) * ld + width;
}

double rounded_normal(test_rng *rng)
{
    return (double)(float)rng_normal(rng);
}

size_t length_of(const problem *pr, size_t b)
{
    return pr->lengths != NULL ? pr->lengths[b] : pr->c.Tk;
}

static void fill_mask(problem *pr, test_rng *rng)
{
    const spec *c = &pr->c;
    const size_t B = c->B, NH = c->NH, Tq = c->Tq, Tk = c->Tk;
    switch (c->mask) {
    case MASK_NONE:
        return;
    case MASK_FULL:
        pr->mask_ld = Tk + 2;
        pr->mask_sh = Tq * pr->mask_ld;
        pr->mask_sb = NH * pr->mask_sh;
        pr->n_mask = B * pr->mask_sb;
        break;
    case MASK_KEYPAD:
        pr->mask_ld = 0;
        pr->mask_sh = 0;
        pr->mask_sb = Tk;
        pr->n_mask = B * Tk;
        break;
    case MASK_HEADS:
        pr->mask_ld = Tk;
        pr->mask_sh = 0;
        pr->mask_sb = Tq * Tk;
        pr->n_mask = B * Tq * Tk;
        break;
    case MASK_BATCH:
        pr->mask_ld = Tk;
        pr->mask_sh = Tq * Tk;
        pr->mask_sb = 0;
        pr->n_mask = NH * Tq * Tk;
        break;
    case MASK_ROW:
        pr->mask_ld = pr->mask_sh = pr->mask_sb = 0;
        pr->n_mask = Tk;
        break;
    }
    pr->mask = talloc_doubles(pr->n_mask);
    for (size_t i = 0; i < pr->n_mask; i++)
        pr->mask[i] = (double)NAN; /* padding: never read */
    /* the entries: N(0,1), -inf with probability 0.15 */
    const size_t nb = pr->mask_sb ? B : 1, nh = pr->mask_sh ? NH : 1, nt = pr->mask_ld ? Tq : 1;
    for (size_t b = 0; b < nb; b++)
        for (size_t h = 0; h < nh; h++)
            for (size_t t = 0; t < nt; t++)
                for (size_t j = 0; j < Tk; j++) {
                    const double x = rounded_normal(rng);
                    pr->mask[b * pr->mask_sb + h * pr->mask_sh + t * pr->mask_ld + j] =
                        rng_uniform(rng) < 0.15 ? -HUGE_VAL : x;
                }
    /* fully masked rows */
    double *row = NULL;
    switch (c->mask) {
    case MASK_FULL: /* (b B-1, h NH-1, t Tq/2) */
        row = pr->mask + (B - 1) * pr->mask_sb + (NH - 1) * pr->mask_sh + Tq / 2 * pr->mask_ld;
        break;
    case MASK_KEYPAD: /* every row of the last sequence */
        row = B > 1 ? pr->mask + (B - 1) * pr->mask_sb : NULL;
        break;
    case MASK_HEADS: /* query 0 of sequence 0, every head */
        row = pr->mask;
        break;
    case MASK_BATCH: /* query Tq-1 of head 0, every sequence */
        row = pr->mask + (Tq - 1) * pr->mask_ld;
        break;
    default:
        break;
    }
    if (row != NULL)
        for (size_t j = 0; j < Tk; j++)
            row[j] = -HUGE_VAL;
}

problem problem_make(const spec *c, test_rng *rng)
{
    problem pr;
    memset(&pr, 0, sizeof pr);
    pr.c = *c;
    const size_t B = c->B, Tq = c->Tq, Tk = c->Tk;
    pr.hs_v = c->hs_v ? c->hs_v : c->hs;
    pr.wq = c->NH * c->hs;
    pr.wk = c->NH_kv * c->hs;
    pr.wv = c->NH_kv * pr.hs_v;
    pr.wo = c->NH * pr.hs_v;
    if (c->fused) {
        check_true(Tq == Tk && c->lengths == NULL, "%s: a fused case needs Tq == Tk, no lengths",
                   c->name);
        pr.ldq = pr.ldk = pr.ldv = pr.wq + pr.wk + pr.wv + c->pad;
        pr.ldq_arg = pr.ldk_arg = pr.ldv_arg = pr.ldq;
        pr.q_at = 0;
        pr.k_at = pr.wq;
        pr.v_at = pr.wq + pr.wk;
        pr.n_in = B * Tq * pr.ldq;
    } else {
        pr.ldq = pr.wq + c->pad;
        pr.ldk = pr.wk + c->pad;
        pr.ldv = pr.wv + c->pad;
        if (c->pad > 0) {
            pr.ldq_arg = pr.ldq;
            pr.ldk_arg = pr.ldk;
            pr.ldv_arg = pr.ldv;
        }
    }
    pr.ldo = pr.wo + c->pad;
    pr.ldo_arg = c->pad > 0 ? pr.ldo : 0;
    pr.nq = extent(B * Tq, pr.ldq, pr.wq);
    pr.nk = extent(B * Tk, pr.ldk, pr.wk);
    pr.nv = extent(B * Tk, pr.ldv, pr.wv);
    pr.no = extent(B * Tq, pr.ldo, pr.wo);
    pr.nl = B * c->NH * Tq;
    if (!c->fused) {
        pr.q_at = 0;
        pr.k_at = pr.nq;
        pr.v_at = pr.nq + pr.nk;
        pr.n_in = pr.nq + pr.nk + pr.nv;
    }
    if (c->lengths != NULL) {
        pr.lengths = talloc(B * sizeof(size_t));
        memcpy(pr.lengths, c->lengths, B * sizeof(size_t));
    }
    /* inputs: NaN in every gap and unfilled slot, N(0,1) elsewhere */
    pr.in = talloc_doubles(pr.n_in);
    for (size_t i = 0; i < pr.n_in; i++)
        pr.in[i] = (double)NAN;
    for (size_t r = 0; r < B * Tq; r++)
        for (size_t i = 0; i < pr.wq; i++)
            pr.in[pr.q_at + r * pr.ldq + i] = rounded_normal(rng);
    for (size_t b = 0; b < B; b++)
        for (size_t j = 0; j < Tk; j++) {
            const int filled = j < length_of(&pr, b) || c->finite_slots;
            const size_t r = b * Tk + j;
            for (size_t i = 0; i < pr.wk; i++)
                pr.in[pr.k_at + r * pr.ldk + i] = filled ? rounded_normal(rng) : (double)NAN;
            for (size_t i = 0; i < pr.wv; i++)
                pr.in[pr.v_at + r * pr.ldv + i] = filled ? rounded_normal(rng) : (double)NAN;
        }
    fill_mask(&pr, rng);
    pr.dout = talloc_doubles(pr.no);
    for (size_t i = 0; i < pr.no; i++)
        pr.dout[i] = (double)NAN;
    for (size_t r = 0; r < B * Tq; r++)
        for (size_t i = 0; i < pr.wo; i++)
            pr.dout[r * pr.ldo + i] = rounded_normal(rng);

    sdpa_ref *f = &pr.ref;
    f->B = B;
    f->NH = c->NH;
    f->NH_kv = c->NH_kv;
    f->Tq = Tq;
    f->Tk = Tk;
    f->hs = c->hs;
    f->hs_v = pr.hs_v;
    f->scale = sdpa_ref_scale(c->scale, c->hs);
    f->causal = c->causal != 0;
    f->window = c->window;
    f->ldq = pr.ldq;
    f->ldk = pr.ldk;
    f->ldv = pr.ldv;
    f->mask = pr.mask;
    f->mask_ld = pr.mask_ld;
    f->mask_sb = pr.mask_sb;
    f->mask_sh = pr.mask_sh;
    f->key_lengths = pr.lengths;
    return pr;
}

/* the reference's pointers into pr->in (after pr moved or in changed) */
static sdpa_ref ref_of(const problem *pr)
{
    sdpa_ref r = pr->ref;
    r.Q = pr->in + pr->q_at;
    r.K = pr->in + pr->k_at;
    r.V = pr->in + pr->v_at;
    r.mask = pr->mask;
    r.key_lengths = pr->lengths;
    return r;
}

attn_sdpa_shape shape_of(const problem *pr)
{
    attn_sdpa_shape s = {pr->c.B, pr->c.NH, pr->c.NH_kv, pr->c.Tq, pr->c.Tk, pr->c.hs,
                         pr->c.hs_v};
    return s;
}

/* dense (rows, width) doubles of a typed (rows, ld) array */
double *dense_of(const test_prec *p, const void *data, size_t rows, size_t ld, size_t width)
{
    double *d = talloc_doubles(rows * width);
    for (size_t r = 0; r < rows; r++)
        p->to_double(d + r * width, (const unsigned char *)data + r * ld * p->size, width);
    return d;
}

expected expected_make(const problem *pr, int backward)
{
    const spec *c = &pr->c;
    expected e;
    memset(&e, 0, sizeof e);
    e.n_out = c->B * c->Tq * pr->wo;
    e.n_dq = c->B * c->Tq * pr->wq;
    e.n_dk = c->B * c->Tk * pr->wk;
    e.n_dv = c->B * c->Tk * pr->wv;
    e.out = talloc_doubles(e.n_out);
    e.lse = talloc_doubles(pr->nl);
    const sdpa_ref r = ref_of(pr);
    sdpa_ref_forward(&r, e.out, e.lse);
    if (backward) {
        double *dout = talloc_doubles(e.n_out);
        for (size_t row = 0; row < c->B * c->Tq; row++)
            memcpy(dout + row * pr->wo, pr->dout + row * pr->ldo, pr->wo * sizeof(double));
        e.dQ = talloc_doubles(e.n_dq);
        e.dK = talloc_doubles(e.n_dk);
        e.dV = talloc_doubles(e.n_dv);
        sdpa_ref_backward(&r, dout, e.dQ, e.dK, e.dV);
    }
    for (size_t i = 0; i < pr->nv; i++) {
        const double v = pr->in[pr->v_at + i];
        if (isfinite(v) && fabs(v) > e.v_scale)
            e.v_scale = fabs(v);
    }
    return e;
}

typed typed_make(const test_prec *p, const problem *pr)
{
    typed t = {p, prec_typed(p, pr->in, pr->n_in), NULL, prec_typed(p, pr->dout, pr->no)};
    if (pr->mask != NULL)
        t.mask = prec_typed(p, pr->mask, pr->n_mask);
    return t;
}

static void *elem(const test_prec *p, void *base, size_t i)
{
    return (unsigned char *)base + i * p->size;
}

static void *sentinel_buffer(size_t bytes, void **copy)
{
    void *b = talloc(bytes);
    sentinel_fill(b, bytes);
    *copy = talloc(bytes);
    memcpy(*copy, b, bytes);
    return b;
}

outputs outputs_make(const test_prec *p, const problem *pr, int backward)
{
    outputs o;
    memset(&o, 0, sizeof o);
    o.out = sentinel_buffer(pr->no * p->size, &o.out0);
    o.lse = talloc(pr->nl * p->size);
    sentinel_fill(o.lse, pr->nl * p->size);
    if (backward) {
        o.dQ = sentinel_buffer(pr->nq * p->size, &o.dQ0);
        o.dK = sentinel_buffer(pr->nk * p->size, &o.dK0);
        o.dV = sentinel_buffer(pr->nv * p->size, &o.dV0);
    }
    return o;
}

/* the gradient buffers back to their initial sentinel bytes */
void outputs_refill_grads(const test_prec *p, const problem *pr, outputs *o)
{
    memcpy(o->dQ, o->dQ0, pr->nq * p->size);
    memcpy(o->dK, o->dK0, pr->nk * p->size);
    memcpy(o->dV, o->dV0, pr->nv * p->size);
}

sdpa_io io_of(const problem *pr, const typed *t, const outputs *o, int with_lse)
{
    const test_prec *p = t->p;
    sdpa_io io;
    memset(&io, 0, sizeof io);
    io.Q = elem(p, t->in, pr->q_at);
    io.ldq = pr->ldq_arg;
    io.K = elem(p, t->in, pr->k_at);
    io.ldk = pr->ldk_arg;
    io.V = elem(p, t->in, pr->v_at);
    io.ldv = pr->ldv_arg;
    io.mask = t->mask;
    io.mask_ld = pr->mask_ld;
    io.mask_sb = pr->mask_sb;
    io.mask_sh = pr->mask_sh;
    io.key_lengths = pr->lengths;
    io.out = o->out;
    io.ldo = pr->ldo_arg;
    io.lse = with_lse ? o->lse : NULL;
    return io;
}

/* whether the bytes between the rows of a strided array are as before */
int gaps_intact(const test_prec *p, const void *now, const void *before, size_t rows,
                size_t ld, size_t width)
{
    if (ld == width)
        return 1;
    const unsigned char *a = now, *b = before;
    for (size_t r = 0; r + 1 < rows; r++) {
        const size_t from = (r * ld + width) * p->size, bytes = (ld - width) * p->size;
        if (memcmp(a + from, b + from, bytes) != 0)
            return 0;
    }
    return 1;
}

/* ---- tolerances and residuals --------------------------------------------------------- */

/* sdpa_calls.h: the residuals and tolerances, for a case */
double forward_tol(const test_prec *p, const spec *c)
{
    return sdpa_forward_tol(p, c->Tk, c->hs);
}

double grad_tol(const test_prec *p, const spec *c)
{
    return sdpa_grad_tol(p, c->Tq, c->Tk, c->NH / c->NH_kv, c->hs);
}
