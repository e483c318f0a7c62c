/*
 * Every option of the two sweep commands, run (attn-bench [run]: projected
 * heads) and sdpa (attn-bench sdpa: attention on given Q, K, V), in one
 * table (option_table.c). An option both commands take is written once --
 * its name, value, default, --quick value and help -- or, where the
 * commands give it another default or meaning (--NH, --hs, --peers, the
 * output files), once per command beside each other. Each command reads the
 * table through its view (bench_option_table), in which the other command's
 * options do not exist; the parser, sweep files and --help all use it.
 */
#ifndef ATTN_BENCH_OPTION_TABLE_H
#define ATTN_BENCH_OPTION_TABLE_H

#include <stdio.h>

#include "cli/cli.h"

typedef enum bench_command {
    BENCH_COMMAND_RUN,
    BENCH_COMMAND_SDPA,
    BENCH_COMMAND_COUNT
} bench_command;

/* The options in the order of --help. */
typedef enum bench_option_id {
    BENCH_OPT_T, /* the shape */
    BENCH_OPT_C,
    BENCH_OPT_B,
    BENCH_OPT_NH,
    BENCH_OPT_NH_KV,
    BENCH_OPT_TQ,
    BENCH_OPT_TK,
    BENCH_OPT_HS,
    BENCH_OPT_HS_V,
    BENCH_OPT_LENGTHS,
    BENCH_OPT_WINDOW,
    BENCH_OPT_MASK,
    BENCH_OPT_DTYPE, /* what is run */
    BENCH_OPT_CAUSAL,
    BENCH_OPT_OP,
    BENCH_OPT_API,
    BENCH_OPT_PATH,
    BENCH_OPT_ENGINE,
    BENCH_OPT_WO,
    BENCH_OPT_DROPOUT,
    BENCH_OPT_THREADS,
    BENCH_OPT_CACHE,
    BENCH_OPT_LAYOUT,
    BENCH_OPT_SCENARIO,
    BENCH_OPT_STEPS,
    BENCH_OPT_WEIGHTS,
    BENCH_OPT_PROFILE, /* how */
    BENCH_OPT_SEQUENTIAL,
    BENCH_OPT_ROUNDS,
    BENCH_OPT_CHECK_ROWS,
    BENCH_OPT_CHECK_GRAD_MAX_T,
    BENCH_OPT_PEERS, /* the peers */
    BENCH_OPT_NAIVE_MAX_T,
    BENCH_OPT_NAIVE_REPEATS,
    BENCH_OPT_PYTHON,
    BENCH_OPT_TORCH_PYTHON,
    BENCH_OPT_ATTN_PYTHON,
    BENCH_OPT_NUMPY_SCRIPT,
    BENCH_OPT_TORCH_SCRIPT,
    BENCH_OPT_PEER_DIR,
    BENCH_OPT_BANDWIDTH_MIB,
    BENCH_OPT_RESUME,
    BENCH_OPT_REPORT,
    BENCH_OPT_WARMUP, /* timing, inputs, outputs: cli/common_options.h */
    BENCH_OPT_REPEATS,
    BENCH_OPT_MIN_TIME,
    BENCH_OPT_MAX_REPEATS,
    BENCH_OPT_SEED,
    BENCH_OPT_CEILING,
    BENCH_OPT_CSV,
    BENCH_OPT_JSON,
    BENCH_OPT_PROGRESS,
    BENCH_OPT_SWEEP,
    BENCH_OPT_LIST,
    BENCH_OPT_QUICK,
    BENCH_OPT_HELP,
    BENCH_OPT_COUNT
} bench_option_id;

/* The command's view: BENCH_OPT_COUNT entries indexed by bench_option_id,
 * those of the other command without a name (cli.h: not an option). */
const bench_cli_table *bench_option_table(bench_command command);

/* The option list of the command's --help. */
void bench_option_table_print(FILE *out, bench_command command);

#endif /* ATTN_BENCH_OPTION_TABLE_H */
