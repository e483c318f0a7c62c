#include "measure/naive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_TEMPLATE "measure/naive_kernel.inc.c"
#include "util/precisions.inc.c"

int bench_naive_workspace_create(bench_naive_workspace *w, const bench_shape *s)
{
    memset(w, 0, sizeof *w);
    w->dtype = s->dtype;
    const size_t element = bench_dtype_size(s->dtype);
    const size_t rows_bytes = s->B * s->T * s->NH * s->hs * element; /* bounded by the problem */
    const size_t tile_bytes = s->T * s->T * element;
    const int backward = s->op == BENCH_OP_BACKWARD;
    void **rows_arrays[] = {&w->Q, &w->K, &w->V, &w->Y, &w->dY, &w->dQ, &w->dK, &w->dV};
    for (size_t i = 0; i < sizeof rows_arrays / sizeof rows_arrays[0]; ++i)
        if (i < 4 || backward)
            *rows_arrays[i] = malloc(rows_bytes);
    w->P = malloc(tile_bytes);
    w->dS = backward ? malloc(tile_bytes) : NULL;
    int ok = w->Q && w->K && w->V && w->Y && w->P &&
             (!backward || (w->dY && w->dQ && w->dK && w->dV && w->dS));
    if (!ok)
        bench_naive_workspace_destroy(w);
    return ok ? 0 : -1;
}

void bench_naive_workspace_destroy(bench_naive_workspace *w)
{
    void *arrays[] = {w->Q, w->K, w->V, w->Y, w->dY, w->dQ, w->dK, w->dV, w->P, w->dS};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i)
        free(arrays[i]);
    memset(w, 0, sizeof *w);
}

void bench_naive_run(const bench_problem *problem, bench_naive_workspace *workspace)
{
    if (problem->shape.dtype == BENCH_F32)
        naive_run_f32(problem, workspace);
    else
        naive_run_f64(problem, workspace);
}
