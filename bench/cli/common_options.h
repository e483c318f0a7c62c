/*
 * The options both sweep commands (run, sdpa) take alike, written once: how
 * each configuration is timed (--warmup, --repeats, --min-time,
 * --max-repeats), the inputs' seed, the GEMM ceiling's sizes, the CSV and
 * JSON outputs, the progress display, and --sweep, --list, --quick, --help.
 * A command's table ends with them (BENCH_COMMON_OPTIONS from its index
 * `base` on, with the command's own output files as defaults) and reads them
 * with bench_common_options_read into its bench_common_options.
 */
#ifndef ATTN_BENCH_COMMON_OPTIONS_H
#define ATTN_BENCH_COMMON_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/option_values.h"
#include "util/dtype.h"
#include "util/progress.h"
#include "util/timing.h"

typedef enum bench_common_option {
    BENCH_COMMON_WARMUP,
    BENCH_COMMON_REPEATS,
    BENCH_COMMON_MIN_TIME,
    BENCH_COMMON_MAX_REPEATS,
    BENCH_COMMON_SEED,
    BENCH_COMMON_CEILING,
    BENCH_COMMON_CSV,
    BENCH_COMMON_JSON,
    BENCH_COMMON_PROGRESS,
    BENCH_COMMON_SWEEP,
    BENCH_COMMON_LIST,
    BENCH_COMMON_QUICK,
    BENCH_COMMON_HELP,
    BENCH_COMMON_COUNT
} bench_common_option;

/* The designated initializers of the common options at [base, base +
 * BENCH_COMMON_COUNT) of a bench_cli_option table; csv_file and json_file
 * are the command's default outputs. */
#define BENCH_COMMON_OPTIONS(base, csv_file, json_file)                                      \
    [(base) + BENCH_COMMON_WARMUP] = {"warmup", "N", "2", "1", "untimed calls before timing"}, \
    [(base) + BENCH_COMMON_REPEATS] = {"repeats", "N", "9", "3",                             \
                                       "at least N timed calls of a configuration (N >= 1)"}, \
    [(base) + BENCH_COMMON_MIN_TIME] = {"min-time", "SECONDS", "0.2", "0.002",               \
                                        "keep timing until the timed calls add up to this"}, \
    [(base) + BENCH_COMMON_MAX_REPEATS] = {"max-repeats", "N", "10000", "200",               \
                                           "at most N timed calls of a configuration\n"      \
                                           "(never below --repeats)"},                       \
    [(base) + BENCH_COMMON_SEED] = {"seed", "N", "1", NULL, "seed of the inputs"},           \
    [(base) + BENCH_COMMON_CEILING] = {"ceiling", "N32,N64", "2048,1536", "128,96",          \
                                       "sizes of the square sgemm and dgemm of the GEMM\n"   \
                                       "ceiling; 0 = none"},                                 \
    [(base) + BENCH_COMMON_CSV] = {"csv", "PATH", csv_file, NULL,                            \
                                   "CSV output, one row per configuration, written as\n"     \
                                   "each one is done"},                                      \
    [(base) + BENCH_COMMON_JSON] = {"json", "PATH", json_file, NULL,                         \
                                    "JSON output: the header's record (the machine, its\n"   \
                                    "ceiling, the peers) and every CSV row; none = no JSON"}, \
    [(base) + BENCH_COMMON_PROGRESS] = {"progress", "MODE", "auto", NULL,                    \
                                        "progress on stderr: bar, lines, none, or auto (a\n" \
                                        "bar on a terminal, else lines)"},                   \
    [(base) + BENCH_COMMON_SWEEP] = {"sweep", "FILE", NULL, NULL,                            \
                                     "read options from FILE (see SWEEP FILES); the\n"       \
                                     "command line overrides it"},                           \
    [(base) + BENCH_COMMON_LIST] = {"list", NULL, NULL, NULL,                                \
                                    "print the configurations (the CSV's key columns, one\n" \
                                    "per line) and the left-out count; run nothing"},        \
    [(base) + BENCH_COMMON_QUICK] = {"quick", NULL, NULL, NULL,                              \
                                     "tiny configurations for tests: the --quick values\n"   \
                                     "replace the defaults (explicit options still win)"},   \
    [(base) + BENCH_COMMON_HELP] = BENCH_CLI_HELP_OPTION

typedef struct bench_common_options {
    bench_repeat_policy repeat;          /* attn's calls and the peers' */
    uint64_t seed;                       /* of the inputs */
    size_t ceiling_n[BENCH_DTYPE_COUNT]; /* sgemm, dgemm sizes of the ceiling; 0: none */
    const char *csv_path;
    const char *json_path; /* NULL: no JSON */
    bench_progress_mode progress;
    int list; /* --list: print the configurations, run nothing */
} bench_common_options;

/* Reads the common options of a table that holds them from index base on.
 * Returns 0, or -1 with the message in values->error. */
int bench_common_options_read(const bench_option_values *values, size_t base,
                              bench_common_options *common);

#endif /* ATTN_BENCH_COMMON_OPTIONS_H */
