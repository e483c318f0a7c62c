/*
 * The options of `attn-bench sdpa` and the configurations they make, read
 * from its view of the one option table (cli/option_table.h) that drives
 * the parser, sweep files (--sweep), --quick and the option list of --help
 * for both sweep commands; what both take alike is in common
 * (cli/common_options.h).
 */
#ifndef ATTN_BENCH_SDPA_OPTIONS_H
#define ATTN_BENCH_SDPA_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "cli/common_options.h"
#include "measure/omissions.h"
#include "cli/option_values.h"
#include "util/progress.h"
#include "measure/sdpa_config.h"
#include "measure/peer_timing.h"
#include "cli/size_list.h"
#include "util/timing.h"

#define BENCH_SDPA_MAX_LENGTHS_ITEMS 64
#define BENCH_SDPA_MAX_WINDOWS 64
#define BENCH_SDPA_SWEEP_MAX 100000

typedef struct bench_sdpa_options {
    bench_size_list B, NH, NH_kv, Tq, Tk, hs, hs_v; /* hs_v: 0 means = hs */
    size_t windows[BENCH_SDPA_MAX_WINDOWS];
    size_t window_count;
    bench_sdpa_lengths lengths[BENCH_SDPA_MAX_LENGTHS_ITEMS];
    size_t lengths_count;
    int masks[BENCH_SDPA_MASK_COUNT];
    size_t mask_count;
    int ops[BENCH_OP_COUNT];
    size_t op_count;
    int dtypes[BENCH_DTYPE_ALL_COUNT]; /* f32, f64, bf16, f16 */
    size_t dtype_count;
    int engines[BENCH_ENGINE_COUNT];
    size_t engine_count;
    int caches[BENCH_SDPA_CACHE_COUNT];
    size_t cache_count;
    int layouts[BENCH_SDPA_LAYOUT_COUNT];
    size_t layout_count;
    int scenarios[BENCH_SDPA_SCENARIO_COUNT];
    size_t scenario_count;
    size_t steps;  /* of a decode loop */
    size_t rounds; /* attn's and the peers' blocks of a configuration, interleaved */
    size_t check_rows; /* rows (and keys) sampled per checked (sequence, head); 0: all */
    int peers[BENCH_SDPA_PEER_COUNT]; /* --peers: torch, python, ort, openvino, ggml */
    size_t bandwidth_mib; /* 0: not measured; SIZE_MAX: auto */
    bench_common_options common; /* timing, threads, causal, dropout, profile, outputs, ... */
} bench_sdpa_options;

/* Parses argv[first..argc-1] (bench_options_outcome: option_values.h). */
bench_options_outcome bench_sdpa_options_parse(int argc, char **argv, int first,
                                               bench_sdpa_options *options, char *error,
                                               size_t error_size);

void bench_sdpa_options_free(bench_sdpa_options *options);

/* The option list of --help. */
void bench_sdpa_options_print_list(FILE *out);

typedef struct bench_sdpa_sweep {
    bench_sdpa_config *configs;
    size_t count;
    bench_omissions omitted;
} bench_sdpa_sweep;

/* Every combination, nested threads > dtype > op > causal > window > mask >
 * B > NH > NH_kv > hs > hs_v > Tq > Tk > lengths > cache > scenario >
 * dropout > layout > engine (engine fastest: a shape's dropouts, layouts and
 * engines side by side, to be measured as a group); those that cannot run
 * (among them dropout above 0 on a forward: dropout is for training) are
 * counted in omitted. Returns 0, or -1
 * with the reason in error (nothing to run, too many, out of memory). */
int bench_sdpa_sweep_build(const bench_sdpa_options *options, bench_sdpa_sweep *sweep,
                           char *error, size_t error_size);

void bench_sdpa_sweep_free(bench_sdpa_sweep *sweep);

#endif /* ATTN_BENCH_SDPA_OPTIONS_H */
