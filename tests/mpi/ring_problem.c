/*
 * One ring problem against attn_sdpa on the gathered sequence
 * (ring_support.h, rt_run_problem). Every rank draws the same global
 * inputs (B, T = P*T_local tokens), rounded to the element type, computes
 * the reference with an sdpa plan of the global shape on dense arrays
 * (training: forward, then backward), places its own tokens (attn_mpi.h's
 * layout) in the problem's layout (rt_layout: NaN in the inputs' gaps, a
 * sentinel in the outputs' gaps, which must stay), runs the ring plan and
 * compares.
 *
 * Each layout is a view per array (Q, K, V, out): an offset in its buffer
 * and the strides of attn.h, element i of row t of head h of sequence b at
 * at + b*sb + h*sh + t*ld + i. Q, K, V share one buffer (consecutive, or
 * fused in one row), and so do dQ, dK, dV (with the same views); out has
 * its own, and dout another with out's view.
 */
#include "ring_support.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SENTINEL 7777.0

enum { VQ, VK, VV, VO, VIEWS };

typedef struct rt_view {
    size_t at, sb, sh, ld; /* offset in the buffer and strides, in elements */
    size_t heads, width;
} rt_view;

typedef struct rt_sizes {
    size_t B, NH, NH_kv, Tl, T, hs, hs_v;
    rt_view view[VIEWS];
    size_t n_qkv, n_out; /* elements of the Q, K, V buffer (dQ, dK, dV's), of out's (dout's) */
} rt_sizes;

/* The views of the problem's layout, and their buffers' sizes. */
static void lay_out(rt_sizes *z, const rt_problem *pr)
{
    const size_t heads[VIEWS] = {z->NH, z->NH_kv, z->NH_kv, z->NH};
    const size_t width[VIEWS] = {z->hs, z->hs, z->hs_v, z->hs_v};
    const size_t fused_width = z->NH * z->hs + z->NH_kv * (z->hs + z->hs_v);
    size_t at = 0;
    for (int i = 0; i < VIEWS; i++) {
        rt_view *v = &z->view[i];
        v->heads = heads[i];
        v->width = width[i];
        if (pr->layout == RT_HEADS || (pr->layout == RT_FUSED && i == VO)) {
            v->ld = v->width;
            v->sh = (z->Tl + pr->pad) * v->width;
            v->sb = v->heads * v->sh;
        } else {
            v->ld = (pr->layout == RT_FUSED ? fused_width : v->heads * v->width) + pr->pad;
            v->sh = v->width;
            v->sb = z->Tl * v->ld;
        }
        if (i == VO) { /* its own buffer */
            v->at = 0;
            z->n_out = z->B * v->sb;
        } else if (pr->layout == RT_FUSED) { /* columns of one row */
            v->at = at;
            at += v->heads * v->width;
            z->n_qkv = z->B * v->sb;
        } else { /* one after the other */
            v->at = at;
            at += z->B * v->sb;
            z->n_qkv = at;
        }
    }
}

static size_t element(const rt_view *v, size_t b, size_t h, size_t t)
{
    return v->at + b * v->sb + h * v->sh + t * v->ld;
}

/* The rank's tokens of the global dense (B,T,heads,width) array `global`
 * into view v of buf (other elements as they are). */
static void scatter(const rt_ctx *ctx, const rt_problem *pr, const rt_sizes *z, const rt_view *v,
                    const double *global, double *buf)
{
    for (size_t b = 0; b < z->B; b++)
        for (size_t t = 0; t < z->Tl; t++) {
            const size_t g = rt_global_token(t, z->Tl, ctx->rank, ctx->size, pr->zigzag);
            for (size_t h = 0; h < v->heads; h++)
                for (size_t i = 0; i < v->width; i++)
                    buf[element(v, b, h, t) + i] =
                        global[((b * z->T + g) * v->heads + h) * v->width + i];
        }
}

static void *typed(const rt_prec *p, const double *x, size_t n)
{
    void *t = rt_alloc(n * p->size);
    p->from_double(t, x, n);
    return t;
}

static double *doubles(const rt_prec *p, const void *t, size_t n)
{
    double *x = rt_alloc(n * sizeof(double));
    p->to_double(x, t, n);
    return x;
}

static double *filled(size_t n, double value)
{
    double *x = rt_alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = value;
    return x;
}

static void *sentinels(const rt_prec *p, size_t n)
{
    double *x = filled(n, SENTINEL);
    void *t = typed(p, x, n);
    free(x);
    return t;
}

/* A typed input buffer of n elements: the views' arrays (global dense
 * rows) in place, NaN everywhere else. */
static void *input(const rt_ctx *ctx, const rt_prec *p, const rt_problem *pr, const rt_sizes *z,
                   size_t n, const rt_view *views, const double *const *globals, size_t count)
{
    double *x = filled(n, (double)NAN);
    for (size_t k = 0; k < count; k++)
        scatter(ctx, pr, z, &views[k], globals[k], x);
    void *t = typed(p, x, n);
    free(x);
    return t;
}

static void *at_view(const rt_prec *p, void *buf, const rt_view *v)
{
    return (char *)buf + v->at * p->size;
}

/* The views of an output buffer (typed, n elements) against the
 * reference's global dense rows, and the rest of the buffer (the gaps)
 * untouched. */
static void check_output(rt_ctx *ctx, const rt_prec *p, const rt_problem *pr, const rt_sizes *z,
                         const void *buf, size_t n, const rt_view *views,
                         const double *const *refs, const char *const *whats, size_t count,
                         const char *name)
{
    double *all = doubles(p, buf, n);
    unsigned char *covered = calloc(n, 1);
    char label[256];
    for (size_t k = 0; k < count; k++) {
        const rt_view *v = &views[k];
        const size_t m = z->B * z->Tl * v->heads * v->width;
        double *got = rt_alloc(m * sizeof(double)), *want = rt_alloc(m * sizeof(double));
        size_t j = 0;
        for (size_t b = 0; b < z->B; b++)
            for (size_t t = 0; t < z->Tl; t++) {
                const size_t g = rt_global_token(t, z->Tl, ctx->rank, ctx->size, pr->zigzag);
                for (size_t h = 0; h < v->heads; h++)
                    for (size_t i = 0; i < v->width; i++, j++) {
                        const size_t e = element(v, b, h, t) + i;
                        got[j] = all[e];
                        covered[e] = 1;
                        want[j] = refs[k][((b * z->T + g) * v->heads + h) * v->width + i];
                    }
            }
        snprintf(label, sizeof label, "%s %s %s", p->name, name, whats[k]);
        rt_expect_residual(ctx, p->f64, rt_residual(got, want, m), p->tol, label);
        free(got);
        free(want);
    }
    size_t gaps_changed = 0;
    for (size_t e = 0; e < n; e++)
        gaps_changed += !covered[e] && all[e] != SENTINEL;
    snprintf(label, sizeof label, "%s %s %s%s", p->name, name, whats[0], count > 1 ? "..." : "");
    ctx->checks++;
    if (gaps_changed != 0)
        rt_fail(ctx, "%s: %zu elements of the layout's gaps written", label, gaps_changed);
    free(all);
    free(covered);
}

static void check_lse(rt_ctx *ctx, const rt_prec *p, const rt_problem *pr, const rt_sizes *z,
                      const void *got_typed, const double *ref, const char *name)
{
    const size_t n = z->B * z->NH * z->Tl;
    double *got = doubles(p, got_typed, n), *want = rt_alloc(n * sizeof(double));
    for (size_t bh = 0; bh < z->B * z->NH; bh++)
        for (size_t t = 0; t < z->Tl; t++)
            want[bh * z->Tl + t] =
                ref[bh * z->T + rt_global_token(t, z->Tl, ctx->rank, ctx->size, pr->zigzag)];
    char label[256];
    snprintf(label, sizeof label, "%s %s lse", p->name, name);
    rt_expect_residual(ctx, p->f64, rt_residual(got, want, n), p->tol, label);
    free(got);
    free(want);
}

static double *global_input(const rt_prec *p, uint64_t seed, size_t n)
{
    double *x = rt_alloc(n * sizeof(double));
    rt_normals(seed, x, n);
    rt_round(p, x, n);
    return x;
}

/* The ring call's arrays: the views in qkv and out, the strides as the
 * layout gives them (RT_ROWS: ld only, and 0 when dense). */
static rt_arrays ring_arrays(const rt_prec *p, const rt_problem *pr, const rt_sizes *z,
                             void *qkv, void *out, void *lse)
{
    const rt_view *v = z->view;
    rt_arrays a = {.Q = at_view(p, qkv, &v[VQ]), .K = at_view(p, qkv, &v[VK]),
                   .V = at_view(p, qkv, &v[VV]), .out = out, .lse = lse,
                   .ldq = v[VQ].ld, .ldk = v[VK].ld, .ldv = v[VV].ld, .ldo = v[VO].ld,
                   .sbq = v[VQ].sb, .shq = v[VQ].sh, .sbk = v[VK].sb, .shk = v[VK].sh,
                   .sbv = v[VV].sb, .shv = v[VV].sh, .sbo = v[VO].sb, .sho = v[VO].sh};
    if (pr->layout == RT_ROWS) {
        const int dense = pr->pad == 0;
        a.ldq = dense ? 0 : a.ldq;
        a.ldk = dense ? 0 : a.ldk;
        a.ldv = dense ? 0 : a.ldv;
        a.ldo = dense ? 0 : a.ldo;
        a.sbq = a.shq = a.sbk = a.shk = a.sbv = a.shv = a.sbo = a.sho = 0;
    }
    return a;
}

void rt_run_problem(rt_ctx *ctx, const rt_prec *p, const rt_problem *pr, int backward,
                    const char *name)
{
    rt_sizes z = {.B = pr->B, .NH = pr->NH, .NH_kv = pr->NH_kv, .Tl = pr->T_local,
                  .T = (size_t)ctx->size * pr->T_local, .hs = pr->hs,
                  .hs_v = pr->hs_v != 0 ? pr->hs_v : pr->hs};
    lay_out(&z, pr);
    const size_t qw = z.NH * z.hs, kw = z.NH_kv * z.hs, vw = z.NH_kv * z.hs_v, ow = z.NH * z.hs_v;
    const unsigned flags = pr->causal ? ATTN_CAUSAL : 0u;
    const size_t rows = z.B * z.T;

    /* ---- reference on the gathered sequence, dense */
    double *Qg = global_input(p, pr->seed, rows * qw);
    double *Kg = global_input(p, pr->seed + 1, rows * kw);
    double *Vg = global_input(p, pr->seed + 2, rows * vw);
    double *dOg = global_input(p, pr->seed + 3, rows * ow);
    void *tQ = typed(p, Qg, rows * qw), *tK = typed(p, Kg, rows * kw);
    void *tV = typed(p, Vg, rows * vw), *tdO = typed(p, dOg, rows * ow);
    void *rOut = sentinels(p, rows * ow), *rLse = sentinels(p, z.B * z.NH * z.T);
    void *rdQ = sentinels(p, rows * qw), *rdK = sentinels(p, rows * kw);
    void *rdV = sentinels(p, rows * vw);
    const attn_sdpa_shape global = {z.B, z.NH, z.NH_kv, z.T, z.T, z.hs, z.hs_v};
    attn_plan *reference = NULL;
    char label[256];
    snprintf(label, sizeof label, "%s %s: reference", p->name, name);
    rt_expect_status(ctx, attn_sdpa_plan_create(&reference, p->dtype, &global, pr->scale, flags, 0),
                     ATTN_OK, label);
    const rt_arrays ra = {.Q = tQ, .K = tK, .V = tV, .out = rOut, .lse = rLse};
    rt_expect_status(ctx, p->sdpa_forward(reference, &ra), ATTN_OK, label);
    if (backward)
        rt_expect_status(ctx, p->sdpa_backward(reference, &ra, tdO, rdQ, rdK, rdV), ATTN_OK,
                         label);
    attn_plan_destroy(reference);
    double *outR = doubles(p, rOut, rows * ow), *lseR = doubles(p, rLse, z.B * z.NH * z.T);
    double *dQR = doubles(p, rdQ, rows * qw), *dKR = doubles(p, rdK, rows * kw);
    double *dVR = doubles(p, rdV, rows * vw);

    /* ---- the rank's tokens, in the problem's layout */
    const double *const qkv_globals[] = {Qg, Kg, Vg}, *const dout_global[] = {dOg};
    void *qkv = input(ctx, p, pr, &z, z.n_qkv, z.view, qkv_globals, 3);
    void *dout = input(ctx, p, pr, &z, z.n_out, &z.view[VO], dout_global, 1);
    void *out = sentinels(p, z.n_out), *lse = sentinels(p, z.B * z.NH * z.Tl);
    /* one element into its allocation, so that the fused dQ, dK, dV start at
     * no multiple of their row stride (lib/core/strided.h accepts a fused
     * buffer wherever it starts) */
    void *grads_raw = sentinels(p, z.n_qkv + 1);
    void *grads = (char *)grads_raw + p->size;
    const rt_arrays la = ring_arrays(p, pr, &z, qkv, out, pr->no_lse ? NULL : lse);
    const attn_sdpa_shape local = {z.B, z.NH, z.NH_kv, z.Tl, z.Tl, z.hs, pr->hs_v};
    attn_plan *ring = NULL;
    snprintf(label, sizeof label, "%s %s: ring plan", p->name, name);
    rt_expect_status(ctx,
                     attn_ring_plan_create(&ring, MPI_COMM_WORLD, p->dtype, &local, pr->scale,
                                           flags | (pr->zigzag ? ATTN_ZIGZAG : 0u)),
                     ATTN_OK, label);
    if (ring != NULL) {
        snprintf(label, sizeof label, "%s %s: ring forward", p->name, name);
        rt_expect_status(ctx, p->ring_forward(ring, &la), ATTN_OK, label);
        const double *const out_ref[] = {outR};
        const char *const out_what[] = {"out"};
        check_output(ctx, p, pr, &z, out, z.n_out, &z.view[VO], out_ref, out_what, 1, name);
        if (!pr->no_lse)
            check_lse(ctx, p, pr, &z, lse, lseR, name);
        if (backward && !pr->no_lse) {
            snprintf(label, sizeof label, "%s %s: ring backward", p->name, name);
            const rt_view *v = z.view;
            rt_expect_status(ctx,
                             p->ring_backward(ring, &la, at_view(p, dout, &v[VO]),
                                              at_view(p, grads, &v[VQ]),
                                              at_view(p, grads, &v[VK]),
                                              at_view(p, grads, &v[VV])),
                             ATTN_OK, label);
            const double *const grad_refs[] = {dQR, dKR, dVR};
            const char *const grad_whats[] = {"dQ", "dK", "dV"};
            check_output(ctx, p, pr, &z, grads, z.n_qkv, z.view, grad_refs, grad_whats, 3, name);
        }
    }
    attn_plan_destroy(ring);

    void *all[] = {Qg,   Kg,   Vg,  dOg, tQ,   tK,  tV,  tdO, rOut, rLse, rdQ,  rdK,
                   rdV,  outR, lseR, dQR, dKR, dVR, qkv, dout, out, lse, grads_raw};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}
