/*
 * What a sweep of either command (run and sdpa) records besides its rows:
 * the machine, the GEMM ceiling, the FMA peak, the read bandwidth (the sdpa
 * command's), the peers, the wall time and the other processes' load. The
 * JSON output (--json) is this record plus every row of the CSV (resumed
 * rows included), each as an object keyed by the CSV's column names:
 * numbers as numbers, empty fields as null, text as strings.
 *
 *   {"tool": "attn-bench", "mode": "sdpa" (the sdpa command's only),
 *    "schema": 1, "command": ..., "csv": ..., "settings": {...},
 *    (sdpa: "flop_count": ...), "machine": {...},
 *    "ceiling": [{"dtype", "threads", "n", "gflops", "best_gflops"}, ...],
 *    "fma_peak": {"isa", "bf16_dot", "amx_bf16", "entries": [{"kind", "threads", "gflops",
 *                 "median_gflops"}, ...]},
 *    (sdpa: "bandwidth": {"method", "buffer_bytes", "last_level_cache_bytes", "repeats",
 *                         "entries": [{"threads", "gbps", "best_gbps"}, ...]}),
 *    "peers": [{"name", "status", "python", "script", "info", "blas", "impl",
 *               "measured", "note"}, ...],
 *    "wall_seconds": ..., "other_load_cpus": ...,
 *    "columns": [...], "rows": [{...}, ...]}
 *
 * With --profile, a row profiled in this run also has "profile": {...}
 * (phase_profile.h); the CSV has no such column.
 */
#ifndef ATTN_BENCH_RUN_RECORD_H
#define ATTN_BENCH_RUN_RECORD_H

#include <stddef.h>
#include <stdio.h>

#include "machine/bandwidth.h"
#include "machine/ceiling.h"
#include "machine/fma_peak.h"
#include "machine/machine.h"
#include "measure/phase_profile.h"
#include "peers/peer_process.h"

#define BENCH_RUN_PEER_MAX 8

/* The command's own members of the JSON, from "settings" on, each line
 * ending in ",\n"; context is the record's. */
typedef void (*bench_run_settings_fn)(FILE *out, const void *context);

typedef struct bench_run_record {
    const char *mode; /* the JSON's "mode"; NULL: none (the run command) */
    const char *command_line, *csv_path; /* csv_path: the rows' file, read for the JSON */
    const char *csv_name;                 /* --csv as given (a path, or "none") */
    bench_run_settings_fn write_settings;
    const void *settings_context;

    bench_machine machine;
    bench_ceiling ceiling;
    bench_fma_peak fma_peak;    /* the share columns' denominator */
    bench_fma_peak fma_peak_after; /* measured again when the run stops (machine/fma_peak.h) */
    int has_bandwidth;          /* the JSON has "bandwidth" (measured or not) */
    bench_bandwidth bandwidth;  /* per thread count */
    size_t bandwidth_bytes;     /* the buffer's; 0: not measured */
    size_t last_level_cache;    /* bytes, 0: unknown */

    bench_peer_summary peers[BENCH_RUN_PEER_MAX];
    size_t peer_count;
    bench_cpu_snapshot start;
    double wall_seconds;
    double other_load_cpus;           /* < 0: unknown */
    bench_phase_profile_log profiles; /* --profile: the rows' "profile" objects, keyed */
    size_t profile_key_columns; /* by the CSV's first this many columns and its dropout */
} bench_run_record;

/* A record of the peers names[0..count-1] (count <= BENCH_RUN_PEER_MAX),
 * its wall clock started. */
void bench_run_record_start(bench_run_record *record, const char *const *names, size_t count);

/* The wall time and the other processes' load since the start; every peer
 * without a status gets "not needed" (asked[k]) or "not asked for". */
void bench_run_record_stop(bench_run_record *record, const int *asked);

/* The footer's lines: each peer that ran and failed somewhere, its first
 * error; the other processes' load; "# N configurations measured[, R kept
 * from the CSV], in S s wall time (INCLUDED included);
 * CSV: PATH". */
void bench_run_record_print_footer(FILE *out, const bench_run_record *record, size_t measured,
                                   size_t resumed, const char *included);

/* --profile, after a row's line on stdout: its phases printed under it and
 * kept for the JSON under its key, the CSV's key columns (csv_key) and its
 * dropout p. */
void bench_run_record_add_profile(bench_run_record *record, const char *csv_key, double dropout,
                                  const bench_phase_profile *profile, double ceiling_gflops);

/* Writes the JSON to path. Returns 0, or -1 with the reason in error. */
int bench_run_record_write_json(const char *path, const bench_run_record *record,
                                char *error, size_t error_size);

#endif /* ATTN_BENCH_RUN_RECORD_H */
