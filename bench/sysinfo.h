/*
 * The header and footer lines of a run: which attn, which softmax kernel,
 * which BLAS with how many threads, and how busy the machine was. attn-bench
 * only reads these settings; it never changes any BLAS thread count.
 */
#ifndef ATTN_BENCH_SYSINFO_H
#define ATTN_BENCH_SYSINFO_H

#include <stdio.h>

void bench_print_system_header(FILE *out);

/* CPU time spent by the whole machine and by this process (its reaped
 * children included), to tell how much other work ran alongside. */
typedef struct bench_cpu_snapshot {
    double machine_busy_s; /* non-idle time of all CPUs, from /proc/stat; < 0: unknown */
    double own_s;          /* user + system time of this process and its children */
    double wall_s;
} bench_cpu_snapshot;

void bench_cpu_snapshot_take(bench_cpu_snapshot *snapshot);

/* "# load average at start: ..." from /proc/loadavg (nothing where there is
 * none). */
void bench_print_load_average(FILE *out);

/* "# other processes kept N CPUs busy on average during the run ..." between
 * two snapshots: multi-threaded BLAS timings suffer badly from other work on
 * a small machine, so a run says how much there was. */
void bench_print_other_load(FILE *out, const bench_cpu_snapshot *start,
                            const bench_cpu_snapshot *end);

#endif /* ATTN_BENCH_SYSINFO_H */
