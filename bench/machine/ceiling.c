#include "machine/ceiling.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "machine/blas_info.h"
#include "util/rng.h"
#include "util/timing.h"

typedef struct gemm_call {
    bench_dtype dtype;
    int n;
    void *A, *B, *C;
} gemm_call;

static int run_gemm(void *context)
{
    const gemm_call *g = context;
    if (g->dtype == BENCH_F32)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n, g->n, 1.0f, g->A,
                    g->n, g->B, g->n, 0.0f, g->C, g->n);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n, g->n, 1.0, g->A,
                    g->n, g->B, g->n, 0.0, g->C, g->n);
    return 0;
}

static int measure_one(bench_ceiling_entry *entry)
{
    const size_t count = entry->n * entry->n, bytes = count * bench_dtype_size(entry->dtype);
    gemm_call g = {entry->dtype, (int)entry->n, malloc(bytes), malloc(bytes), malloc(bytes)};
    int result = -1;
    if (g.A && g.B && g.C) {
        bench_rng rng;
        bench_rng_seed(&rng, 12345);
        for (size_t i = 0; i < count; ++i) {
            bench_dtype_store(g.dtype, g.A, i, bench_rng_normal(&rng));
            bench_dtype_store(g.dtype, g.B, i, bench_rng_normal(&rng));
        }
        const bench_repeat_policy policy = {.warmup = 1, .min_repeats = 5, .max_repeats = 5};
        bench_timing timing;
        result = bench_time_calls(&policy, run_gemm, &g, &timing);
        const double flops = 2.0 * (double)entry->n * (double)entry->n * (double)entry->n;
        entry->median_s = timing.median_s;
        entry->gflops = result == 0 ? flops / timing.median_s * 1e-9 : 0.0;
        entry->best_gflops = result == 0 ? flops / timing.min_s * 1e-9 : 0.0;
    }
    free(g.A);
    free(g.B);
    free(g.C);
    return result;
}

int bench_ceiling_measure(bench_ceiling *ceiling, const int *dtypes, size_t dtype_count,
                          const size_t *threads, size_t thread_count,
                          const size_t n[BENCH_DTYPE_COUNT])
{
    ceiling->count = 0;
    for (size_t t = 0; t < thread_count; ++t) {
        bench_blas_set_threads(threads[t]);
        for (size_t d = 0; d < dtype_count; ++d) {
            const bench_dtype dtype = (bench_dtype)dtypes[d];
            if (n[dtype] == 0 || n[dtype] > 46340 || ceiling->count == BENCH_CEILING_MAX)
                continue; /* n*n must fit the BLAS int */
            bench_ceiling_entry *entry = &ceiling->entries[ceiling->count];
            *entry = (bench_ceiling_entry){.dtype = dtype, .threads = threads[t], .n = n[dtype]};
            if (measure_one(entry) != 0)
                return -1;
            ceiling->count++;
        }
    }
    return 0;
}

double bench_ceiling_gflops(const bench_ceiling *ceiling, bench_dtype dtype, size_t threads)
{
    for (size_t i = 0; i < ceiling->count; ++i)
        if (ceiling->entries[i].dtype == dtype && ceiling->entries[i].threads == threads)
            return ceiling->entries[i].gflops;
    return 0.0;
}

void bench_ceiling_print(FILE *out, const bench_ceiling *ceiling, const bench_machine *machine)
{
    if (ceiling->count == 0)
        fprintf(out, "# ceiling: not measured (--ceiling 0)\n");
    else
        fprintf(out,
                "# ceiling: square cblas_sgemm/cblas_dgemm of attn's BLAS (%s, core %s) on %s, "
                "measured now: what this BLAS reaches, not the CPU's theoretical peak\n",
                bench_blas_name(), machine->blas_core, machine->cpu_model);
    for (size_t i = 0; i < ceiling->count; ++i) {
        const bench_ceiling_entry *e = &ceiling->entries[i];
        fprintf(out, "# ceiling: %s n=%zu, %zu thread%s: %.1f GFLOP/s (median of 5; best %.1f)\n",
                e->dtype == BENCH_F32 ? "sgemm" : "dgemm", e->n, e->threads,
                e->threads == 1 ? "" : "s", e->gflops, e->best_gflops);
    }
}
