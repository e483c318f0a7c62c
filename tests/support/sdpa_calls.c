/* The sdpa suites' shared calls, plans, residuals and tolerances (sdpa_calls.h). */
#include "support/sdpa_calls.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define SDPA_HAVE_VALGRIND_H 1
#endif
#endif

#include "support/check.h"
#include "support/talloc.h"

#define FORWARD_TOL_K0 130.0
#define GRAD_TOL_K0 260.0

int sdpa_short_run(void)
{
    const char *env = getenv("ATTN_SDPA_SHORT");
    if (env != NULL && strcmp(env, "1") == 0)
        return 1;
#ifdef SDPA_HAVE_VALGRIND_H
    if (RUNNING_ON_VALGRIND)
        return 1;
#endif
    /* valgrind also preloads its own libraries into the program it runs */
    const char *preload = getenv("LD_PRELOAD");
    return preload != NULL && strstr(preload, "vgpreload") != NULL;
}

/* ---- plans destroyed by the teardown ---------------------------------------- */

#define MAX_PLANS 64
static attn_plan *plans[MAX_PLANS];
static size_t n_plans;

attn_plan *sdpa_keep_plan(attn_plan *plan)
{
    if (plan != NULL && n_plans < MAX_PLANS)
        plans[n_plans++] = plan;
    else if (plan != NULL) {
        print_error("too many plans in one test\n");
        fail();
    }
    return plan;
}

void sdpa_drop_plan(attn_plan *plan)
{
    for (size_t i = 0; i < n_plans; i++)
        if (plans[i] == plan) {
            plans[i] = plans[--n_plans];
            break;
        }
    attn_plan_destroy(plan);
}

int sdpa_teardown(void **state)
{
    while (n_plans > 0)
        attn_plan_destroy(plans[--n_plans]);
    return talloc_teardown(state);
}

/* ---- typed calls ----------------------------------------------------------------- */

/* The call's arguments of one precision from io (one body for both types). */
#define DEFINE_ARGS(name, type)                                                    \
    static type name(const sdpa_io *io)                                            \
    {                                                                              \
        type a;                                                                    \
        memset(&a, 0, sizeof a);                                                   \
        a.Q = io->Q;                                                               \
        a.ldq = io->ldq;                                                           \
        a.K = io->K;                                                               \
        a.ldk = io->ldk;                                                           \
        a.V = io->V;                                                               \
        a.ldv = io->ldv;                                                           \
        a.mask = io->mask;                                                         \
        a.mask_ld = io->mask_ld;                                                   \
        a.mask_sb = io->mask_sb;                                                   \
        a.mask_sh = io->mask_sh;                                                   \
        a.key_lengths = io->key_lengths;                                           \
        a.out = io->out;                                                           \
        a.ldo = io->ldo;                                                           \
        a.lse = io->lse;                                                           \
        a.sbq = io->sbq;                                                           \
        a.shq = io->shq;                                                           \
        a.sbk = io->sbk;                                                           \
        a.shk = io->shk;                                                           \
        a.sbv = io->sbv;                                                           \
        a.shv = io->shv;                                                           \
        a.sbo = io->sbo;                                                           \
        a.sho = io->sho;                                                           \
        return a;                                                                  \
    }
DEFINE_ARGS(args_f32, attn_sdpa_args_f32)
DEFINE_ARGS(args_f64, attn_sdpa_args_f64)
#undef DEFINE_ARGS

attn_status sdpa_forward(const test_prec *via, attn_plan *plan, const sdpa_io *io)
{
    if (via->dtype == ATTN_F32) {
        attn_sdpa_args_f32 a;
        memset(&a, 0, sizeof a);
        if (io != NULL)
            a = args_f32(io);
        return attn_sdpa_forward_f32(plan, io != NULL ? &a : NULL);
    }
    attn_sdpa_args_f64 a;
    memset(&a, 0, sizeof a);
    if (io != NULL)
        a = args_f64(io);
    return attn_sdpa_forward_f64(plan, io != NULL ? &a : NULL);
}

attn_status sdpa_backward(const test_prec *via, attn_plan *plan, const sdpa_io *io,
                          const void *dout, void *dQ, void *dK, void *dV)
{
    if (via->dtype == ATTN_F32) {
        attn_sdpa_args_f32 a;
        memset(&a, 0, sizeof a);
        if (io != NULL)
            a = args_f32(io);
        return attn_sdpa_backward_f32(plan, io != NULL ? &a : NULL, dout, dQ, dK, dV);
    }
    attn_sdpa_args_f64 a;
    memset(&a, 0, sizeof a);
    if (io != NULL)
        a = args_f64(io);
    return attn_sdpa_backward_f64(plan, io != NULL ? &a : NULL, dout, dQ, dK, dV);
}

attn_status sdpa_one_shot(const test_prec *via, const attn_sdpa_shape *shape, double scale,
                          unsigned flags, size_t window, const sdpa_io *io)
{
    if (via->dtype == ATTN_F32) {
        attn_sdpa_args_f32 a;
        memset(&a, 0, sizeof a);
        if (io != NULL)
            a = args_f32(io);
        return attn_sdpa_f32(shape, scale, flags, window, io != NULL ? &a : NULL);
    }
    attn_sdpa_args_f64 a;
    memset(&a, 0, sizeof a);
    if (io != NULL)
        a = args_f64(io);
    return attn_sdpa_f64(shape, scale, flags, window, io != NULL ? &a : NULL);
}

/* ---- residuals and tolerances ------------------------------------------------------- */

double sdpa_residual_lse(const double *got, const double *ref, size_t n)
{
    double worst_seen = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e;
        if (isnan(got[i]) || isnan(ref[i]))
            e = (isnan(got[i]) && isnan(ref[i])) ? 0.0 : HUGE_VAL;
        else if (isinf(got[i]) || isinf(ref[i]))
            e = got[i] == ref[i] ? 0.0 : HUGE_VAL;
        else
            e = fabs(got[i] - ref[i]) / (1.0 + fabs(ref[i]));
        if (!(e <= worst_seen))
            worst_seen = e;
    }
    return worst_seen;
}

double sdpa_grad_residual(const double *got, const double *ref, size_t n, double largest)
{
    return residual_scaled(got, ref, n, fmax(max_abs(ref, n), 0.01 * largest));
}

static double scaled_tol(double base, double k, double k0)
{
    return k > k0 ? base * sqrt(k / k0) : base;
}

double sdpa_forward_tol(const test_prec *p, size_t Tk, size_t hs)
{
    return scaled_tol(p->tol, (double)(Tk > hs ? Tk : hs), FORWARD_TOL_K0);
}

double sdpa_grad_tol(const test_prec *p, size_t Tq, size_t Tk, size_t group, size_t hs)
{
    const double base = p->dtype == ATTN_F64 ? 1e-12 : 1e-4;
    const double k = fmax((double)Tk, fmax((double)(Tq * group), (double)hs));
    return scaled_tol(base, k, GRAD_TOL_K0);
}

/* ---- arrays laid out by strides ----------------------------------------------------- */

size_t sdpa_view_index(const sdpa_view *v, size_t b, size_t h, size_t t)
{
    return v->at + b * v->sb + h * v->sh + t * v->ld;
}

size_t sdpa_view_end(const sdpa_view *v)
{
    return sdpa_view_index(v, v->B - 1, v->H - 1, v->T - 1) + v->w;
}

double *sdpa_view_gather(const test_prec *p, const void *buf, const sdpa_view *v)
{
    double *d = talloc_doubles(v->B * v->T * v->H * v->w);
    for (size_t b = 0; b < v->B; b++)
        for (size_t t = 0; t < v->T; t++)
            for (size_t h = 0; h < v->H; h++)
                p->to_double(d + ((b * v->T + t) * v->H + h) * v->w,
                             (const unsigned char *)buf + sdpa_view_index(v, b, h, t) * p->size,
                             v->w);
    return d;
}

void sdpa_view_mark(const sdpa_view *v, unsigned char *marks)
{
    for (size_t b = 0; b < v->B; b++)
        for (size_t h = 0; h < v->H; h++)
            for (size_t t = 0; t < v->T; t++)
                memset(marks + sdpa_view_index(v, b, h, t), 1, v->w);
}

/* marks of x's elements, with room for y's (talloc'd) */
static unsigned char *marks_of(const sdpa_view *x, const sdpa_view *y, size_t *n)
{
    const size_t ex = sdpa_view_end(x), ey = y != NULL ? sdpa_view_end(y) : 0;
    *n = ex > ey ? ex : ey;
    unsigned char *marks = talloc(*n);
    memset(marks, 0, *n);
    sdpa_view_mark(x, marks);
    return marks;
}

int sdpa_views_share(const sdpa_view *x, const sdpa_view *y)
{
    size_t n;
    const unsigned char *marks = marks_of(x, y, &n);
    for (size_t b = 0; b < y->B; b++)
        for (size_t h = 0; h < y->H; h++)
            for (size_t t = 0; t < y->T; t++)
                for (size_t i = 0; i < y->w; i++)
                    if (marks[sdpa_view_index(y, b, h, t) + i])
                        return 1;
    return 0;
}

int sdpa_view_repeats(const sdpa_view *v)
{
    size_t n, count = 0;
    const unsigned char *marks = marks_of(v, NULL, &n);
    for (size_t i = 0; i < n; i++)
        count += marks[i];
    return count != v->B * v->H * v->T * v->w;
}

void *sdpa_talloc_at(size_t bytes, size_t period, size_t residue)
{
    unsigned char *raw = talloc(bytes + 2 * period);
    const size_t shift = (period - (uintptr_t)raw % period + residue) % period;
    return raw + shift;
}
