/*
 * The run command's options (attn-bench [run] ...), read from its view of
 * the one option table (cli/option_table.h) that the parser, sweep files
 * and --help all read; what both sweep commands take alike is in common
 * (cli/common_options.h).
 */
#ifndef ATTN_BENCH_OPTIONS_H
#define ATTN_BENCH_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "cli/common_options.h"
#include "measure/config.h"
#include "cli/option_values.h"
#include "util/progress.h"
#include "cli/size_list.h"
#include "util/timing.h"

enum {
    BENCH_PEER_NAIVE = 1u << 0,
    BENCH_PEER_NUMPY = 1u << 1,
    BENCH_PEER_TORCH = 1u << 2,
    BENCH_PEER_NUMPY32 = 1u << 3,
    BENCH_PEER_PYTHON = 1u << 4, /* attn's Python package: only when named */
    BENCH_PEER_ORT = 1u << 5,
    BENCH_PEER_OPENVINO = 1u << 6,
    BENCH_PEER_GGML = 1u << 7
};

typedef struct bench_options {
    bench_size_list T, C, hs, NH, B;
    int heads_from_count; /* --NH was given: NH heads of hs = C/NH */
    int dtypes[BENCH_DTYPE_COUNT];
    size_t dtype_count;
    int ops[BENCH_OP_COUNT];
    size_t op_count;
    int apis[BENCH_API_COUNT];
    size_t api_count;
    int paths[BENCH_PATH_COUNT];
    size_t path_count;
    int engines[BENCH_ENGINE_COUNT];
    size_t engine_count;
    int wo[2];
    size_t wo_count;
    int with_weights;
    int sequential; /* --sequential: no configurations timed side by side */
    bench_common_options common; /* timing, threads, causal, dropout, profile, outputs, ... */
    bench_repeat_policy naive_repeat; /* the naive C peer */
    size_t check_rows;       /* forward check: query rows per checked batch; 0 = all */
    size_t check_grad_max_T; /* backward check only up to this T */
    size_t naive_max_T;      /* the naive peer runs only up to this T */
    unsigned peers; /* BENCH_PEER_* bits */
    const char *python;       /* candidates for the NumPy peers, comma-separated */
    const char *numpy_script; /* NULL: the default places */
    const char *report_dir; /* NULL: no report after the run */
    int resume;
} bench_options;

/* Parses argv[first..argc-1] (bench_options_outcome: option_values.h). */
bench_options_outcome bench_options_parse(int argc, char **argv, int first,
                                          bench_options *options, char *error,
                                          size_t error_size);

void bench_options_free(bench_options *options);

/* The option list of the run command's --help. */
void bench_options_print_list(FILE *out);

/* The peers' names for messages: "naive", "numpy", "numpy32", "torch", "python",
 * "ort", "openvino", "ggml". */
const char *bench_peer_name(unsigned peer_bit);

#endif /* ATTN_BENCH_OPTIONS_H */
