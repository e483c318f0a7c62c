/* One sdpa case on every engine, and the checks of its outputs
 * (sdpa_engine_runs.h). */
#include "support/sdpa_engine_runs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "support/talloc.h"
#include "support/test_common.h"

int sdpa_reduced_run(void)
{
    static int reduced = -1;
    if (reduced < 0)
        reduced = sdpa_short_run();
    return reduced;
}

/* whether code runs many times slower than a Release build: a slow build,
 * or valgrind (detected through its header, or the libraries it preloads) */
int slow_run(void)
{
#ifdef SDPA_SLOW_BUILD
    return 1;
#else
    return sdpa_reduced_run();
#endif
}

void report(const char *what, const check_worst *w)
{
    print_message("  %s %s: largest residual %.2e (tolerance %.1e)\n", attn_simd_name(), what,
                  w->residual, w->tol);
}

void check_forward(const test_prec *p, const problem *pr, const expected *e,
                   const outputs *o, int with_lse, worsts *w, const char *what)
{
    const spec *c = &pr->c;
    const size_t rows = c->B * c->Tq;
    const double tol = forward_tol(p, c);
    double *out = dense_of(p, o->out, rows, pr->ldo, pr->wo);
    expect_within(&w->out, residual_scaled(out, e->out, e->n_out, e->v_scale), tol, "%s: out",
                  what);
    expect_true(gaps_intact(p, o->out, o->out0, rows, pr->ldo, pr->wo),
                "%s: the gaps between out's rows (ldo %zu) were written", what, pr->ldo);
    double *lse = with_lse ? prec_doubles(p, o->lse, pr->nl) : NULL;
    if (lse != NULL)
        expect_within(&w->lse, sdpa_residual_lse(lse, e->lse, pr->nl), tol, "%s: lse", what);
    /* rows without a visible, unmasked key: out exactly 0, lse -inf */
    size_t bad = 0;
    for (size_t b = 0; b < c->B; b++)
        for (size_t h = 0; h < c->NH; h++)
            for (size_t t = 0; t < c->Tq; t++) {
                const size_t l = (b * c->NH + h) * c->Tq + t;
                if (e->lse[l] != -HUGE_VAL)
                    continue;
                const double *row = out + ((b * c->Tq + t) * c->NH + h) * pr->hs_v;
                int zero = lse == NULL || lse[l] == -HUGE_VAL;
                for (size_t i = 0; i < pr->hs_v; i++)
                    zero &= row[i] == 0.0;
                if (!zero && bad++ == 0)
                    expect_true(0, "%s: row b %zu h %zu t %zu sees no key: out[0] %g, lse %g "
                                "(want 0 and -inf)",
                                what, b, h, t, row[0], lse != NULL ? lse[l] : 0.0);
            }
    expect_true(bad <= 1, "%s: %zu rows without keys are not 0 / -inf", what, bad);
}

void check_backward(const test_prec *p, const problem *pr, const expected *e,
                    const outputs *o, worsts *w, const char *what)
{
    const spec *c = &pr->c;
    const double tol = grad_tol(p, c);
    double *dQ = dense_of(p, o->dQ, c->B * c->Tq, pr->ldq, pr->wq);
    double *dK = dense_of(p, o->dK, c->B * c->Tk, pr->ldk, pr->wk);
    double *dV = dense_of(p, o->dV, c->B * c->Tk, pr->ldv, pr->wv);
    const double largest = fmax(max_abs(e->dQ, e->n_dq),
                                fmax(max_abs(e->dK, e->n_dk), max_abs(e->dV, e->n_dv)));
    expect_within(&w->grads, sdpa_grad_residual(dQ, e->dQ, e->n_dq, largest), tol,
                  "%s: dQ", what);
    expect_within(&w->grads, sdpa_grad_residual(dK, e->dK, e->n_dk, largest), tol,
                  "%s: dK", what);
    expect_within(&w->grads, sdpa_grad_residual(dV, e->dV, e->n_dv, largest), tol,
                  "%s: dV", what);
    expect_true(gaps_intact(p, o->dQ, o->dQ0, c->B * c->Tq, pr->ldq, pr->wq) &&
                    gaps_intact(p, o->dK, o->dK0, c->B * c->Tk, pr->ldk, pr->wk) &&
                    gaps_intact(p, o->dV, o->dV0, c->B * c->Tk, pr->ldv, pr->wv),
                "%s: the gaps between the rows of dQ, dK or dV were written", what);
    /* rows of dK, dV of keys j >= L_b: exactly 0 */
    size_t nonzero = 0;
    for (size_t b = 0; b < c->B; b++)
        for (size_t j = length_of(pr, b); j < c->Tk; j++) {
            for (size_t i = 0; i < pr->wk; i++)
                nonzero += dK[(b * c->Tk + j) * pr->wk + i] != 0.0;
            for (size_t i = 0; i < pr->wv; i++)
                nonzero += dV[(b * c->Tk + j) * pr->wv + i] != 0.0;
        }
    expect_true(nonzero == 0, "%s: %zu entries of dK, dV rows of keys >= L_b are not 0", what,
                nonzero);
    /* dQ rows of queries without a visible, unmasked key: exactly 0 */
    nonzero = 0;
    for (size_t b = 0; b < c->B; b++)
        for (size_t h = 0; h < c->NH; h++)
            for (size_t t = 0; t < c->Tq; t++)
                if (e->lse[(b * c->NH + h) * c->Tq + t] == -HUGE_VAL)
                    for (size_t i = 0; i < c->hs; i++)
                        nonzero += dQ[((b * c->Tq + t) * c->NH + h) * c->hs + i] != 0.0;
    expect_true(nonzero == 0, "%s: %zu entries of dQ rows without keys are not 0", what,
                nonzero);
}

/* ---- plans on engines ------------------------------------------------------------------ */

const engine engines[3] = {
    {"BLAS threads (0)", 0},
    {"1 own thread", 1},
    {"2 own threads", 2},
};

const char *describe(char *buf, size_t size, const test_prec *p, const spec *c,
                     const char *engine_name, const char *path)
{
    snprintf(buf, size,
             "%s %s \"%s\" (B %zu NH %zu NH_kv %zu Tq %zu Tk %zu hs %zu hs_v %zu scale %g "
             "causal %d window %zu pad %zu fused %d mask %d lengths %d), %s, %s",
             attn_simd_name(), p->name, c->name, c->B, c->NH, c->NH_kv, c->Tq, c->Tk, c->hs,
             c->hs_v, c->scale, c->causal != 0, c->window, c->pad, c->fused, (int)c->mask,
             c->lengths != NULL, path, engine_name);
    return buf;
}

/* a plan for pr with flags (plus the case's causal), on `threads`; NULL
 * (the failure recorded) if it cannot be had */
attn_plan *problem_plan(const test_prec *p, const problem *pr, unsigned flags,
                        unsigned threads, const char *what)
{
    const attn_sdpa_shape s = shape_of(pr);
    attn_plan *plan = NULL;
    attn_status st =
        attn_sdpa_plan_create(&plan, p->dtype, &s, pr->c.scale, flags | pr->c.causal, pr->c.window);
    if (st != ATTN_OK) {
        expect_true(0, "%s: attn_sdpa_plan_create: %s", what, attn_status_string(st));
        return NULL;
    }
    sdpa_keep_plan(plan);
    if (threads != ATTN_THREADS_AUTO) {
        st = attn_plan_set_threads(plan, threads);
        expect_true(st == ATTN_OK, "%s: attn_plan_set_threads(%u): %s", what, threads,
                    attn_status_string(st));
        unsigned got = 12345;
        st = attn_plan_get_threads(plan, &got);
        expect_true(st == ATTN_OK && got == threads, "%s: attn_plan_get_threads: %s, %u", what,
                    attn_status_string(st), got);
    }
    return plan;
}

/* the bytes of two runs' outputs equal */
int outputs_identical(const test_prec *p, const problem *pr, const outputs *a,
                      const outputs *b, int backward)
{
    int same = memcmp(a->out, b->out, pr->no * p->size) == 0 &&
               memcmp(a->lse, b->lse, pr->nl * p->size) == 0;
    if (backward)
        same = same && memcmp(a->dQ, b->dQ, pr->nq * p->size) == 0 &&
               memcmp(a->dK, b->dK, pr->nk * p->size) == 0 &&
               memcmp(a->dV, b->dV, pr->nv * p->size) == 0;
    return same;
}

/* whether this run uses precision pi (0 f32, 1 f64) for its n-th case */
int precision_runs(size_t pi, size_t n)
{
    return !sdpa_reduced_run() || pi == n % 2;
}

/* whether this run uses engine k */
int engine_runs(size_t k)
{
    return !sdpa_reduced_run() || k != 1;
}

/* One case on every engine in both precisions (see 1. at the top). */
void run_case(const spec *c, test_rng *rng, worsts w[2])
{
    static size_t cases_run;
    const size_t n = cases_run++;
    const problem pr = problem_make(c, rng);
    const expected e = expected_make(&pr, c->backward);
    const test_prec *precs[2] = {&test_prec_f32, &test_prec_f64};
    for (size_t pi = 0; pi < 2; pi++) {
        if (!precision_runs(pi, n))
            continue;
        const test_prec *p = precs[pi];
        const typed t = typed_make(p, &pr);
        outputs kept[N_OF(engines)];
        int ran[N_OF(engines)] = {0};
        for (size_t k = 0; k < N_OF(engines); k++) {
            if (!engine_runs(k))
                continue;
            char what[640];
            describe(what, sizeof what, p, c, engines[k].name,
                     c->backward ? "training plan" : "training plan, forward only");
            attn_plan *plan = problem_plan(p, &pr, 0u, engines[k].threads, what);
            if (plan == NULL)
                continue;
            outputs o = outputs_make(p, &pr, c->backward);
            const sdpa_io io = io_of(&pr, &t, &o, 1);
            const attn_status st = sdpa_forward(p, plan, &io);
            const attn_status sb = st == ATTN_OK && c->backward
                                       ? sdpa_backward(p, plan, &io, t.dout, o.dQ, o.dK, o.dV)
                                       : ATTN_OK;
            sdpa_drop_plan(plan);
            expect_true(st == ATTN_OK, "%s: forward: %s", what, attn_status_string(st));
            if (st != ATTN_OK)
                continue;
            check_forward(p, &pr, &e, &o, 1, &w[pi], what);
            if (c->backward) {
                expect_true(sb == ATTN_OK, "%s: backward: %s", what, attn_status_string(sb));
                if (sb != ATTN_OK)
                    continue;
                check_backward(p, &pr, &e, &o, &w[pi], what);
            }
            kept[k] = o;
            ran[k] = 1;
        }
        char what[640];
        describe(what, sizeof what, p, c, "1 and 2 own threads", "training plan");
        if (ran[1] && ran[2])
            expect_true(outputs_identical(p, &pr, &kept[1], &kept[2], c->backward),
                        "%s: the outputs differ (attn.h: the same bytes for every count)", what);
        /* an inference plan's forward, without lse */
        if (sdpa_reduced_run())
            continue;
        describe(what, sizeof what, p, c, engines[2].name, "ATTN_INFERENCE plan, lse NULL");
        attn_plan *plan = problem_plan(p, &pr, ATTN_INFERENCE, 2, what);
        if (plan != NULL) {
            outputs o = outputs_make(p, &pr, 0);
            const sdpa_io io = io_of(&pr, &t, &o, 0);
            const attn_status st = sdpa_forward(p, plan, &io);
            sdpa_drop_plan(plan);
            expect_true(st == ATTN_OK, "%s: forward: %s", what, attn_status_string(st));
            if (st == ATTN_OK) {
                check_forward(p, &pr, &e, &o, 0, &w[pi], what);
                expect_true(sentinel_intact(o.lse, pr.nl * p->size),
                            "%s: lse NULL, yet the lse buffer changed", what);
            }
        }
    }
}

void run_cases(const spec *cases, size_t n, unsigned long seed, const char *what)
{
    test_enter();
    test_rng rng;
    rng_seed(&rng, seed);
    worsts w[2];
    memset(w, 0, sizeof w);
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i], &rng, w);
    char line[128];
    const char *names[2] = {"f32", "f64"};
    for (int pi = 0; pi < 2; pi++) {
        snprintf(line, sizeof line, "%s %s out", what, names[pi]);
        report(line, &w[pi].out);
        snprintf(line, sizeof line, "%s %s lse", what, names[pi]);
        report(line, &w[pi].lse);
        if (w[pi].grads.tol > 0.0) {
            snprintf(line, sizeof line, "%s %s gradients", what, names[pi]);
            report(line, &w[pi].grads);
        }
    }
    test_leave(what);
}
