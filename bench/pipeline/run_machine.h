/*
 * The machine a sweep (run or sdpa) runs on, measured before its first
 * configuration and printed at the head of its table: the CPU and BLAS, the
 * BLAS GEMM ceiling of the rows' float types, the FMA peak, and (when asked
 * for) the memory read bandwidth, per thread count of the sweep.
 */
#ifndef ATTN_BENCH_RUN_MACHINE_H
#define ATTN_BENCH_RUN_MACHINE_H

#include <stddef.h>
#include <stdio.h>

#include "machine/bandwidth.h"
#include "pipeline/run_record.h"

typedef struct bench_run_machine_request {
    const char *who;                    /* the messages' prefix: "attn-bench", ... */
    const int *dtypes;                  /* the rows' (bf16 and f16 rows: sgemm's ceiling) */
    size_t dtype_count;
    const size_t *threads;              /* the sweep's thread counts */
    size_t thread_count;
    const size_t *ceiling_n;            /* per float type (f32, f64); 0: no ceiling */
    int with_bandwidth;                 /* the header and JSON speak of the bandwidth */
    size_t bandwidth_mib;               /* 0: not measured; SIZE_MAX: 8 x the LLC, 256..1024 */
    int keep_buffer;                    /* cold caches read the bandwidth buffer afterwards */
} bench_run_machine_request;

/* Measures into record (the bandwidth when with_bandwidth and bandwidth_mib > 0);
 * the buffer stays in *buffer when keep_buffer, else it is freed. Returns 0,
 * or -1 (a message on stderr) when the bandwidth buffer does not fit in
 * memory; a ceiling or peak that cannot be measured is said on stderr and
 * left out. */
int bench_run_machine_measure(bench_run_record *record, const bench_run_machine_request *request,
                              bench_bandwidth_buffer *buffer);

/* The header's lines "# attn ...", "# CPU: ...", "# ceiling: ...", "# FMA
 * peak: ..." and, with_bandwidth, "# bandwidth: ..." (or that it was not
 * measured). */
void bench_run_machine_print(FILE *out, const bench_run_record *record);

#endif /* ATTN_BENCH_RUN_MACHINE_H */
