/*
 * What a run records besides its rows: the machine, the ceiling, the peers
 * and the settings. The JSON output (--json) is this record plus every row of
 * the CSV (resumed rows included), each as an object keyed by the CSV's
 * column names: numbers as numbers, empty fields as null, text as strings.
 *
 *   {"tool": "attn-bench", "schema": 1, "command": ..., "csv": ...,
 *    "settings": {...}, "machine": {...},
 *    "ceiling": [{"dtype", "threads", "n", "gflops", "best_gflops"}, ...],
 *    "fma_peak": {"isa", "bf16_dot", "amx_bf16", "entries": [{"kind", "threads", "gflops",
 *                 "median_gflops"}, ...]},
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

#include "machine/ceiling.h"
#include "machine/fma_peak.h"
#include "machine/machine.h"
#include "measure/options.h"
#include "measure/peer_timing.h"
#include "peers/peer_process.h"
#include "measure/phase_profile.h"

typedef struct bench_run_record {
    const bench_options *options;
    bench_machine machine;
    bench_ceiling ceiling;
    bench_fma_peak fma_peak; /* the share column's denominator */
    bench_peer_summary peers[BENCH_PEER_KINDS];
    double wall_seconds;
    double other_load_cpus; /* < 0: unknown */
    bench_phase_profile_log profiles; /* --profile: the rows' "profile" objects */
} bench_run_record;

/* Writes the JSON to path. Returns 0, or -1 with the reason in error. */
int bench_run_record_write_json(const char *path, const bench_run_record *record,
                                char *error, size_t error_size);

#endif /* ATTN_BENCH_RUN_RECORD_H */
