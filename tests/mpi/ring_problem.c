/*
 * One ring problem against attn_sdpa on the gathered sequence
 * (ring_support.h, rt_run_problem). Every rank draws the same global
 * inputs (B, T = P*T_local tokens), rounded to the element type, computes
 * the reference with an sdpa plan of the global shape (training: forward,
 * then backward), takes its own tokens' rows (attn_mpi.h's layout, with
 * `pad` extra elements per row: NaN in the inputs' gaps, a sentinel in the
 * outputs' gaps, which must stay), runs the ring plan and compares.
 */
#include "ring_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define SENTINEL 7777.0

typedef struct rt_sizes {
    size_t B, NH, NH_kv, Tl, T, hs, hs_v;
    size_t qw, kw, vw, ow;     /* row widths of Q, K, V, out */
    size_t ldq, ldk, ldv, ldo; /* local row strides */
} rt_sizes;

/* The local strided copy (rows B*Tl of `ld`) of the global dense rows
 * (B*T of `width`), gaps set to `gap`. */
static double *local_rows(const rt_ctx *ctx, const rt_problem *pr, const rt_sizes *z,
                          const double *global, size_t width, size_t ld, double gap)
{
    double *x = rt_alloc(z->B * z->Tl * ld * sizeof(double));
    for (size_t b = 0; b < z->B; b++)
        for (size_t t = 0; t < z->Tl; t++) {
            const size_t g = rt_global_token(t, z->Tl, ctx->rank, ctx->size, pr->zigzag);
            for (size_t i = 0; i < ld; i++)
                x[(b * z->Tl + t) * ld + i] = i < width ? global[(b * z->T + g) * width + i] : gap;
        }
    return x;
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

static void *sentinels(const rt_prec *p, size_t n)
{
    double *x = rt_alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = SENTINEL;
    void *t = typed(p, x, n);
    free(x);
    return t;
}

/* The rank's rows of a (B*Tl, ld) output against the reference's global
 * (B*T, width) rows, and its gaps. */
static void check_rows(rt_ctx *ctx, const rt_prec *p, const rt_problem *pr, const rt_sizes *z,
                       const void *got_typed, size_t ld, const double *ref, size_t width,
                       const char *name, const char *what)
{
    double *got_all = doubles(p, got_typed, z->B * z->Tl * ld);
    double *got = rt_alloc(z->B * z->Tl * width * sizeof(double));
    double *want = rt_alloc(z->B * z->Tl * width * sizeof(double));
    size_t gaps_changed = 0;
    for (size_t b = 0; b < z->B; b++)
        for (size_t t = 0; t < z->Tl; t++) {
            const size_t g = rt_global_token(t, z->Tl, ctx->rank, ctx->size, pr->zigzag);
            for (size_t i = 0; i < ld; i++) {
                const double v = got_all[(b * z->Tl + t) * ld + i];
                if (i >= width) {
                    gaps_changed += v != SENTINEL;
                    continue;
                }
                got[(b * z->Tl + t) * width + i] = v;
                want[(b * z->Tl + t) * width + i] = ref[(b * z->T + g) * width + i];
            }
        }
    char label[256];
    snprintf(label, sizeof label, "%s %s %s", p->name, name, what);
    rt_expect_residual(ctx, p->f64, rt_residual(got, want, z->B * z->Tl * width), p->tol, label);
    ctx->checks++;
    if (gaps_changed != 0)
        rt_fail(ctx, "%s: %zu elements of the row gaps written", label, gaps_changed);
    free(got_all);
    free(got);
    free(want);
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

void rt_run_problem(rt_ctx *ctx, const rt_prec *p, const rt_problem *pr, int backward,
                    const char *name)
{
    rt_sizes z = {pr->B, pr->NH, pr->NH_kv, pr->T_local, (size_t)ctx->size * pr->T_local,
                  pr->hs, pr->hs_v != 0 ? pr->hs_v : pr->hs, 0, 0, 0, 0, 0, 0, 0, 0};
    z.qw = z.NH * z.hs;
    z.kw = z.NH_kv * z.hs;
    z.vw = z.NH_kv * z.hs_v;
    z.ow = z.NH * z.hs_v;
    z.ldq = z.qw + pr->pad;
    z.ldk = z.kw + pr->pad;
    z.ldv = z.vw + pr->pad;
    z.ldo = z.ow + pr->pad;
    const unsigned flags = pr->causal ? ATTN_CAUSAL : 0u;
    const size_t rows = z.B * z.T, local_rows_n = z.B * z.Tl;

    /* ---- reference on the gathered sequence */
    double *Qg = global_input(p, pr->seed, rows * z.qw);
    double *Kg = global_input(p, pr->seed + 1, rows * z.kw);
    double *Vg = global_input(p, pr->seed + 2, rows * z.vw);
    double *dOg = global_input(p, pr->seed + 3, rows * z.ow);
    void *tQ = typed(p, Qg, rows * z.qw), *tK = typed(p, Kg, rows * z.kw);
    void *tV = typed(p, Vg, rows * z.vw), *tdO = typed(p, dOg, rows * z.ow);
    void *rOut = sentinels(p, rows * z.ow), *rLse = sentinels(p, z.B * z.NH * z.T);
    void *rdQ = sentinels(p, rows * z.qw), *rdK = sentinels(p, rows * z.kw);
    void *rdV = sentinels(p, rows * z.vw);
    const attn_sdpa_shape global = {z.B, z.NH, z.NH_kv, z.T, z.T, z.hs, z.hs_v};
    attn_plan *reference = NULL;
    char label[256];
    snprintf(label, sizeof label, "%s %s: reference", p->name, name);
    rt_expect_status(ctx, attn_sdpa_plan_create(&reference, p->dtype, &global, pr->scale, flags, 0),
                     ATTN_OK, label);
    const rt_arrays ra = {tQ, tK, tV, 0, 0, 0, NULL, 0, 0, 0, NULL, rOut, 0, rLse};
    rt_expect_status(ctx, p->sdpa_forward(reference, &ra), ATTN_OK, label);
    if (backward)
        rt_expect_status(ctx, p->sdpa_backward(reference, &ra, tdO, rdQ, rdK, rdV), ATTN_OK,
                         label);
    attn_plan_destroy(reference);
    double *outR = doubles(p, rOut, rows * z.ow), *lseR = doubles(p, rLse, z.B * z.NH * z.T);
    double *dQR = doubles(p, rdQ, rows * z.qw), *dKR = doubles(p, rdK, rows * z.kw);
    double *dVR = doubles(p, rdV, rows * z.vw);

    /* ---- the rank's slice, strided */
    double *Ql = local_rows(ctx, pr, &z, Qg, z.qw, z.ldq, NAN);
    double *Kl = local_rows(ctx, pr, &z, Kg, z.kw, z.ldk, NAN);
    double *Vl = local_rows(ctx, pr, &z, Vg, z.vw, z.ldv, NAN);
    double *dOl = local_rows(ctx, pr, &z, dOg, z.ow, z.ldo, NAN);
    void *lQ = typed(p, Ql, local_rows_n * z.ldq), *lK = typed(p, Kl, local_rows_n * z.ldk);
    void *lV = typed(p, Vl, local_rows_n * z.ldv), *ldO = typed(p, dOl, local_rows_n * z.ldo);
    void *out = sentinels(p, local_rows_n * z.ldo), *lse = sentinels(p, z.B * z.NH * z.Tl);
    void *dQ = sentinels(p, local_rows_n * z.ldq), *dK = sentinels(p, local_rows_n * z.ldk);
    void *dV = sentinels(p, local_rows_n * z.ldv);
    const int dense = pr->pad == 0; /* ld 0 (the default) then */
    const rt_arrays la = {lQ, lK, lV, dense ? 0 : z.ldq, dense ? 0 : z.ldk, dense ? 0 : z.ldv,
                          NULL, 0, 0, 0, NULL, out, dense ? 0 : z.ldo,
                          pr->no_lse ? NULL : lse};
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
        check_rows(ctx, p, pr, &z, out, z.ldo, outR, z.ow, name, "out");
        if (!pr->no_lse)
            check_lse(ctx, p, pr, &z, lse, lseR, name);
        if (backward && !pr->no_lse) {
            snprintf(label, sizeof label, "%s %s: ring backward", p->name, name);
            rt_expect_status(ctx, p->ring_backward(ring, &la, ldO, dQ, dK, dV), ATTN_OK, label);
            check_rows(ctx, p, pr, &z, dQ, z.ldq, dQR, z.qw, name, "dQ");
            check_rows(ctx, p, pr, &z, dK, z.ldk, dKR, z.kw, name, "dK");
            check_rows(ctx, p, pr, &z, dV, z.ldv, dVR, z.vw, name, "dV");
        }
    }
    attn_plan_destroy(ring);

    void *all[] = {Qg, Kg, Vg, dOg, tQ, tK, tV, tdO, rOut, rLse, rdQ, rdK, rdV, outR, lseR,
                   dQR, dKR, dVR, Ql, Kl, Vl, dOl, lQ, lK, lV, ldO, out, lse, dQ, dK, dV};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}
