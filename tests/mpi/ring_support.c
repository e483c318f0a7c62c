/* The MPI suites' context, data and residuals (ring_support.h). */
#include "ring_support.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void rt_init(rt_ctx *ctx, int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    ctx->failures = ctx->checks = 0;
    ctx->worst[0] = ctx->worst[1] = 0.0;
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->size);
}

void rt_fail(rt_ctx *ctx, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "[rank %d of %d] FAIL: ", ctx->rank, ctx->size);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    ctx->failures++;
}

void rt_expect_status(rt_ctx *ctx, attn_status got, attn_status want, const char *what)
{
    ctx->checks++;
    if (got != want)
        rt_fail(ctx, "%s: status %d (%s), expected %d (%s)", what, (int)got,
                attn_status_string(got), (int)want, attn_status_string(want));
}

void rt_expect_residual(rt_ctx *ctx, int f64, double residual, double tol, const char *what)
{
    ctx->checks++;
    if (!(residual <= tol))
        rt_fail(ctx, "%s: residual %.3g above %.3g", what, residual, tol);
    else if (residual > ctx->worst[f64 != 0])
        ctx->worst[f64 != 0] = residual;
}

int rt_finish(rt_ctx *ctx, const char *suite)
{
    long failures = 0, checks = 0;
    double worst[2] = {0.0, 0.0};
    MPI_Allreduce(&ctx->failures, &failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&ctx->checks, &checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(ctx->worst, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (ctx->rank == 0)
        printf("%s on %d rank(s): %ld checks, %ld failed; largest residuals f32 %.2e, "
               "f64 %.2e\n",
               suite, ctx->size, checks, failures, worst[0], worst[1]);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
}

/* splitmix64 (as tests/support/rng.c) and Marsaglia's polar method */
static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void rt_normals(uint64_t seed, double *x, size_t n)
{
    uint64_t state = seed;
    for (size_t i = 0; i < n; i += 2) {
        double u, v, s;
        do {
            u = 2.0 * ((double)(next_u64(&state) >> 11) * 0x1.0p-53) - 1.0;
            v = 2.0 * ((double)(next_u64(&state) >> 11) * 0x1.0p-53) - 1.0;
            s = u * u + v * v;
        } while (s >= 1.0 || s == 0.0);
        const double f = sqrt(-2.0 * log(s) / s);
        x[i] = u * f;
        if (i + 1 < n)
            x[i + 1] = v * f;
    }
}

void rt_round(const rt_prec *p, double *x, size_t n)
{
    if (p->f64)
        return;
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(float)x[i];
}

void *rt_alloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

size_t rt_global_token(size_t t, size_t T_local, int rank, int size, int zigzag)
{
    if (!zigzag)
        return (size_t)rank * T_local + t;
    const size_t h = T_local / 2;
    return t < h ? (size_t)rank * h + t : (size_t)(2 * size - 1 - rank) * h + (t - h);
}

double rt_residual(const double *got, const double *ref, size_t n)
{
    double scale = 0.0, diff = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (isinf(ref[i]) || isinf(got[i])) {
            if (got[i] != ref[i])
                return (double)INFINITY;
            continue;
        }
        if (isnan(got[i]) || isnan(ref[i]))
            return (double)INFINITY;
        const double d = fabs(got[i] - ref[i]);
        diff = d > diff ? d : diff;
        scale = fabs(ref[i]) > scale ? fabs(ref[i]) : scale;
    }
    return diff == 0.0 ? 0.0 : diff / (scale > 0.0 ? scale : 1.0);
}
