/*
 * The machine's ceiling, measured at the start of every run: the rate of one
 * large square GEMM, C = A B with n x n matrices (sgemm for f32, dgemm for
 * f64), on attn's own BLAS, at each thread count of the sweep. FLOP count
 * 2*n^3; rate = count / median time of 5 calls after one warmup call.
 * Every result is also reported as a fraction of the ceiling of its dtype and
 * thread count: how much of what this BLAS reaches on its best-case product
 * the implementation gets.
 */
#ifndef ATTN_BENCH_CEILING_H
#define ATTN_BENCH_CEILING_H

#include <stddef.h>
#include <stdio.h>

#include "util/dtype.h"
#include "machine/machine.h"

#define BENCH_CEILING_MAX 64

typedef struct bench_ceiling_entry {
    bench_dtype dtype;
    size_t threads;
    size_t n;
    double gflops;   /* 2 n^3 / median */
    double median_s;
    double best_gflops; /* 2 n^3 / fastest call */
} bench_ceiling_entry;

typedef struct bench_ceiling {
    bench_ceiling_entry entries[BENCH_CEILING_MAX];
    size_t count;
} bench_ceiling;

/* Measures every (dtype, thread count) pair; n[dtype] == 0 skips a dtype.
 * Returns 0, or -1 when memory runs out. */
int bench_ceiling_measure(bench_ceiling *ceiling, const int *dtypes, size_t dtype_count,
                          const size_t *threads, size_t thread_count,
                          const size_t n[BENCH_DTYPE_COUNT]);

/* The ceiling's GFLOP/s for a dtype and a thread count; 0 when not measured. */
double bench_ceiling_gflops(const bench_ceiling *ceiling, bench_dtype dtype, size_t threads);

/* The header's "# ceiling: ..." lines: where it comes from (the machine's
 * BLAS and CPU), then an entry per line; "not measured" without entries. */
void bench_ceiling_print(FILE *out, const bench_ceiling *ceiling, const bench_machine *machine);

#endif /* ATTN_BENCH_CEILING_H */
