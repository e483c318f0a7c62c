/*
 * The options both sweep commands (run, sdpa) take alike, read once: how
 * each configuration is timed (--warmup, --repeats, --min-time,
 * --max-repeats), the inputs' seed, the GEMM ceiling's sizes, the CSV and
 * JSON outputs, the progress display, --list; the row axes every
 * configuration has (--threads, --causal, --dropout), --profile, and where
 * the peers are found (--torch-python, --attn-python, --torch-script,
 * --peer-dir). Their entries are in cli/option_table.c.
 */
#ifndef ATTN_BENCH_COMMON_OPTIONS_H
#define ATTN_BENCH_COMMON_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/option_values.h"
#include "cli/size_list.h"
#include "util/dtype.h"
#include "util/progress.h"
#include "util/timing.h"

typedef struct bench_common_options {
    bench_repeat_policy repeat;          /* attn's calls and the peers' */
    uint64_t seed;                       /* of the inputs */
    size_t ceiling_n[BENCH_DTYPE_COUNT]; /* sgemm, dgemm sizes of the ceiling; 0: none */
    const char *csv_path;  /* the file the rows go to (and the JSON and --report read) */
    const char *csv_name;  /* as --csv gave it: csv_path, or "none" */
    char *csv_scratch;     /* --csv none: csv_path, a temporary file removed by _free */
    const char *json_path; /* NULL: no JSON */
    bench_progress_mode progress;
    int list; /* --list: print the configurations, run nothing */

    bench_size_list threads; /* --threads: of everyone in a row */
    int causal[2];
    size_t causal_count;
    double dropouts[BENCH_MAX_DROPOUTS]; /* --dropout: attention dropout p of op backward */
    size_t dropout_count;
    int profile; /* --profile: per-phase profile of each plan row after its timing */

    const char *torch_python; /* interpreters of the torch, ort, openvino, ggml peers */
    const char *attn_python;  /* of the python peer (attn's package) */
    const char *torch_script; /* NULL: the default places */
    const char *peer_dir;     /* --peer-dir: the peers' scripts looked for there first; NULL */

    const char *sweep_path; /* --sweep FILE, or NULL */
    char *sweep_text;       /* the sweep file's text, which option values point into */
    int quick;              /* --quick */
    char *command_line;     /* "PROGRAM ARG ...", for the JSON */
} bench_common_options;

/* Collects a command's arguments (bench_option_values_collect: options
 * exclusive[] exclude each other) and, to run, the sweep file, --quick
 * and the command line (PROGRAM and the arguments) into common. The
 * caller frees common (bench_common_options_free) after BENCH_OPTIONS_BAD
 * too. */
bench_options_outcome bench_common_options_collect(bench_option_values *values, int argc,
                                                   char **argv, int first,
                                                   const size_t *exclusive,
                                                   size_t exclusive_count, const char *program,
                                                   bench_common_options *common);

/* Reads the common options of a command's view of the option table. Returns
 * 0, or -1 with the message in values->error. */
int bench_common_options_read(const bench_option_values *values, bench_common_options *common);

void bench_common_options_free(bench_common_options *common);

#endif /* ATTN_BENCH_COMMON_OPTIONS_H */
