/*
 * The description of the machine a run measured on, for the header lines of
 * the table and the JSON: CPU model and SIMD flags, attn's version and
 * softmax kernel, the BLAS (configuration, core, default threads), the
 * compiler and flags attn-bench was built with, the system, and the load.
 */
#ifndef ATTN_BENCH_MACHINE_H
#define ATTN_BENCH_MACHINE_H

#include <stdio.h>

typedef struct bench_machine {
    char cpu_model[256];
    char cpu_simd_flags[256]; /* of sse4_2 avx avx2 fma avx512f avx512bw ..., those present */
    long cpus_online;
    char system[256];  /* uname: sysname release machine */
    char started[32];  /* UTC, ISO 8601 */
    const char *attn_version;
    const char *simd_kernel;
    const char *blas_config;
    const char *blas_core;
    int blas_threads; /* OpenBLAS's thread count at start (-1: unknown) */
    const char *compiler;
    const char *compile_flags;
    const char *build_type;
    double load_average[3]; /* 1, 5, 15 minutes; negative: unknown */
} bench_machine;

void bench_machine_describe(bench_machine *machine);

/* "# ..." lines */
void bench_machine_print(FILE *out, const bench_machine *machine);

/* The machine as a JSON object (no trailing newline). */
void bench_machine_write_json(FILE *out, const bench_machine *machine);

/* CPU time spent by the whole machine and by this process (its reaped
 * children included), to tell how much other work ran alongside. */
typedef struct bench_cpu_snapshot {
    double machine_busy_s; /* non-idle time of all CPUs, from /proc/stat; < 0: unknown */
    double own_s;          /* user + system time of this process and its children */
    double wall_s;
} bench_cpu_snapshot;

void bench_cpu_snapshot_take(bench_cpu_snapshot *snapshot);

/* The CPUs other processes kept busy on average between two snapshots; < 0
 * when unknown. */
double bench_other_load(const bench_cpu_snapshot *start, const bench_cpu_snapshot *end);

/* The footer's "# other processes kept ... busy" line (none when the load
 * is unknown). */
void bench_other_load_print(FILE *out, double other_load_cpus, const bench_machine *machine);

#endif /* ATTN_BENCH_MACHINE_H */
