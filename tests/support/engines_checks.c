/* What test_engines runs and checks (engines_checks.h). */
#include "support/engines_checks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define ENGINES_HAVE_VALGRIND_H 1
#endif
#endif

#include "support/test_common.h"

/* a build whose code runs many times slower than Release: unoptimized, or
 * instrumented by a sanitizer (gcc defines __SANITIZE_*, clang has
 * __has_feature) */
#if !defined(__OPTIMIZE__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ENGINES_SLOW_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ENGINES_SLOW_BUILD 1
#endif
#endif

const engine engines[5] = {
    {"default (ATTN_THREADS_AUTO)", 0, ATTN_THREADS_AUTO},
    {"BLAS threads (0)", 1, 0},
    {"1 own thread", 1, 1},
    {"2 own threads", 1, 2},
    {"3 own threads", 1, 3},
};

const char *const shapes_names[3] = {"full", "medium", "small"};

shapes shapes_to_run(void)
{
    const char *env = getenv("ATTN_ENGINES_SHAPES");
    for (int i = SHAPES_FULL; env != NULL && i <= SHAPES_SMALL; i++)
        if (strcmp(env, shapes_names[i]) == 0)
            return (shapes)i;
#ifdef ENGINES_HAVE_VALGRIND_H
    if (RUNNING_ON_VALGRIND)
        return SHAPES_SMALL;
#endif
    /* valgrind also preloads its own libraries into the program it runs */
    const char *preload = getenv("LD_PRELOAD");
    if (preload != NULL && strstr(preload, "vgpreload") != NULL)
        return SHAPES_SMALL;
#ifdef ENGINES_SLOW_BUILD
    return SHAPES_MEDIUM;
#else
    return SHAPES_FULL;
#endif
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* the suite's tolerance `base`, justified for sums of length <= k0, for
 * sums of length k (see the top) */
static double scaled_tol(double base, size_t k, size_t k0)
{
    return k > k0 ? base * sqrt((double)k / (double)k0) : base;
}

double forward_tol(const test_prec *p, const mha_shape *s)
{
    return scaled_tol(p->tol, max_size(max_size(s->C, s->T), mha_D(s)), 130);
}

double grad_tol(const test_prec *p, const mha_shape *s)
{
    return scaled_tol(mha_grad_tol(p), max_size(s->B * s->T, s->C), 260);
}

static int has_row(const rows_ref *r, size_t t)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i] == t)
            return 1;
    return 0;
}

static void add_row(rows_ref *r, size_t t, size_t T)
{
    if (t < T && r->n < MAX_ROWS && !has_row(r, t))
        r->rows[r->n++] = t;
}

/* the rows of the edges of every block (query blocks, key blocks, row
 * blocks, micro-tile rows) and every 11th row */
static void choose_rows(rows_ref *r, size_t T)
{
    static const size_t edges[] = {0,   1,   2,   5,   6,   7,   15,   16,   17,   127,
                                   128, 129, 143, 144, 145, 255, 256,  257,  383,  384,
                                   511, 512, 513, 639, 767, 768, 1023, 1024, 1025, 1151};
    r->n = 0;
    for (size_t i = 0; i < N_OF(edges); i++)
        add_row(r, edges[i], T);
    add_row(r, T - 2, T);
    add_row(r, T - 1, T);
    for (size_t t = 3; t < T; t += 11)
        add_row(r, t, T);
}

rows_ref reference_rows(const mha_data *d)
{
    const mha_shape *s = &d->s;
    const size_t B = s->B, T = s->T, C = s->C, NH = s->NH, hs = s->hs, D = mha_D(s);
    const double scale = s->scale > 0.0 ? s->scale : 1.0 / sqrt((double)hs);
    rows_ref r;
    choose_rows(&r, T);
    r.width = s->with_Wo ? C : D;
    r.out = talloc_doubles(B * r.n * r.width);
    r.weights = talloc_doubles(B * NH * r.n * T);

    double *K = talloc_doubles(B * T * D), *V = talloc_doubles(B * T * D);
    ref_matmul(B * T, D, C, d->X, C, d->Wk, D, K, D);
    ref_matmul(B * T, D, C, d->X, C, d->Wv, D, V, D);
    double *q = talloc_doubles(D), *y = talloc_doubles(D);
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < r.n; i++) {
            const size_t t = r.rows[i], keys = s->causal ? t + 1 : T;
            ref_matmul(1, D, C, d->X + (b * T + t) * C, C, d->Wq, D, q, D);
            for (size_t h = 0; h < NH; h++) {
                double *w = r.weights + ((b * NH + h) * r.n + i) * T;
                ref_attend(1, keys, hs, hs, scale, 0, q + h * hs, D, K + b * T * D + h * hs, D,
                           V + b * T * D + h * hs, D, y + h * hs, D, w, T);
                for (size_t j = keys; j < T; j++)
                    w[j] = 0.0;
            }
            double *o = r.out + (b * r.n + i) * r.width;
            if (s->with_Wo)
                ref_matmul(1, C, D, y, D, d->Wo, C, o, C);
            else
                memcpy(o, y, D * sizeof *y);
        }

    /* the scale of mha.h's out residual: max|V| * max_c sum_k |Wo[k][c]| */
    r.out_scale = max_abs(V, B * T * D);
    if (s->with_Wo) {
        double widest = 0.0;
        for (size_t c = 0; c < C; c++) {
            double sum = 0.0;
            for (size_t k = 0; k < D; k++)
                sum += fabs(d->Wo[k * C + c]);
            widest = sum > widest ? sum : widest;
        }
        r.out_scale *= widest;
    }
    return r;
}

run_buffers buffers_make(const test_prec *p, const mha_shape *s, int training,
                               int with_weights)
{
    run_buffers b;
    memset(&b, 0, sizeof b);
    b.out = talloc(mha_out_elems(s) * p->size);
    if (with_weights)
        b.weights = talloc(mha_weights_elems(s) * p->size);
    b.row = talloc_doubles(max_size(max_size(s->C, mha_D(s)), s->T));
    if (training) {
        b.grads = mha_grads_alloc(p, s);
        for (int i = 0; i < MHA_GRADS; i++)
            if (b.grads.g[i] != NULL)
                b.doubles.g[i] = talloc_doubles(mha_grad_elems(s, i));
    }
    return b;
}

/* All bytes 0xFF, a NaN in both precisions: an element the library does
 * not write (or adds to instead of overwriting) fails its residual. A plain
 * memset, as the buffers are large and refilled for every run. */
void buffers_refill(const test_prec *p, const mha_shape *s, run_buffers *b,
                    int with_weights)
{
    memset(b->out, 0xFF, mha_out_elems(s) * p->size);
    if (with_weights)
        memset(b->weights, 0xFF, mha_weights_elems(s) * p->size);
    for (int i = 0; i < MHA_GRADS; i++)
        if (b->grads.g[i] != NULL)
            memset(b->grads.g[i], 0xFF, mha_grad_elems(s, i) * p->size);
}

/* a description of the run, for the messages */
const char *describe(char *buf, size_t size, const test_prec *p, const mha_shape *s,
                     const engine *e, const char *path)
{
    snprintf(buf, size,
             "%s %s, %s, engine %s: B %zu T %zu C %zu NH %zu hs %zu scale %g causal %d Wo %d",
             attn_simd_name(), p->name, path, e->name, s->B, s->T, s->C, s->NH, s->hs, s->scale,
             s->causal, s->with_Wo);
    return buf;
}

/* out (and weights when requested) of one run against the rows reference */
void check_rows(const test_prec *p, const mha_shape *s, const rows_ref *r,
                run_buffers *b, int with_weights, check_worst *w_out, check_worst *w_weights,
                const char *what)
{
    const double tol = forward_tol(p, s);
    double out_res = 0.0, weights_res = 0.0;
    size_t out_at = 0, weights_at = 0, weights_head = 0;
    for (size_t bi = 0; bi < s->B; bi++)
        for (size_t i = 0; i < r->n; i++) {
            const size_t t = r->rows[i];
            p->to_double(b->row, prec_at(p, b->out, (bi * s->T + t) * r->width), r->width);
            const double res = residual_scaled(b->row, r->out + (bi * r->n + i) * r->width,
                                               r->width, r->out_scale);
            if (!(res <= out_res)) {
                out_res = res;
                out_at = bi * s->T + t;
            }
            if (!with_weights)
                continue;
            for (size_t h = 0; h < s->NH; h++) {
                p->to_double(b->row, prec_at(p, b->weights, ((bi * s->NH + h) * s->T + t) * s->T),
                             s->T);
                const double wres = residual_rows(
                    b->row, r->weights + ((bi * s->NH + h) * r->n + i) * s->T, 1, s->T);
                if (!(wres <= weights_res)) {
                    weights_res = wres;
                    weights_at = bi * s->T + t;
                    weights_head = h;
                }
            }
        }
    expect_within(w_out, out_res, tol, "%s: out, worst at b %zu t %zu", what, out_at / s->T,
                  out_at % s->T);
    if (with_weights)
        expect_within(w_weights, weights_res, tol, "%s: weights, worst at b %zu h %zu t %zu",
                      what, weights_at / s->T, weights_head, weights_at % s->T);
}

/* A fresh plan for s with `flags` on engine e, or NULL (the failure
 * recorded). The default engine is checked to be the documented one. */
attn_plan *engine_plan(const test_prec *p, const mha_shape *s, unsigned flags,
                       const engine *e, const char *what)
{
    attn_plan *plan = NULL;
    attn_status st = attn_plan_create(&plan, p->dtype, s->B, s->T, s->C, s->NH, s->hs, s->scale,
                                      mha_flags(s, flags));
    if (st != ATTN_OK) {
        expect_true(0, "%s: attn_plan_create: %s", what, attn_status_string(st));
        return NULL;
    }
    if (e->set && (st = attn_plan_set_threads(plan, e->threads)) != ATTN_OK) {
        expect_true(0, "%s: attn_plan_set_threads(%u): %s", what, e->threads,
                    attn_status_string(st));
        attn_plan_destroy(plan);
        return NULL;
    }
    unsigned threads = 0;
    st = attn_plan_get_threads(plan, &threads);
    expect_true(st == ATTN_OK, "%s: attn_plan_get_threads: %s", what, attn_status_string(st));
    if (!e->set && getenv("ATTN_NUM_THREADS") == NULL) {
        /* attn.h: own threads with a SIMD kernel set, BLAS with the scalar */
        const int scalar = strcmp(attn_simd_name(), "scalar") == 0;
        expect_true(scalar ? threads == 0 : threads >= 1,
                    "%s: the default engine is %u threads (0: BLAS), expected %s", what, threads,
                    scalar ? "BLAS threads with the scalar kernels" : "own threads");
    } else if (e->set) {
        expect_true(threads == e->threads, "%s: attn_plan_get_threads says %u", what, threads);
    }
    return plan;
}

/* the gradient residuals of mha.h, array by array */
void check_grads(const test_prec *p, const mha_shape *s, run_buffers *b,
                 const mha_grads *ref, check_worst *w, const char *what)
{
    double largest = 0.0;
    for (int i = 0; i < MHA_GRADS; i++)
        if (ref->g[i] != NULL)
            largest = fmax(largest, max_abs(ref->g[i], mha_grad_elems(s, i)));
    for (int i = 0; i < MHA_GRADS; i++) {
        if (ref->g[i] == NULL)
            continue;
        const size_t n = mha_grad_elems(s, i);
        p->to_double(b->doubles.g[i], b->grads.g[i], n);
        const double m = max_abs(ref->g[i], n);
        const double r = residual_scaled(b->doubles.g[i], ref->g[i], n, fmax(m, 0.01 * largest));
        expect_within(w, r, grad_tol(p, s), "%s: %s", what, mha_grad_names[i]);
    }
}
