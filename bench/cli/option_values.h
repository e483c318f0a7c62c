/*
 * What the run command and the sdpa command do alike with their option
 * tables (cli.h): the start of parsing (the command line, a sweep file's
 * values under it, --help, --quick, the command line joined for the record)
 * and reading what an option resolves to as a count, a size list, a list of
 * names, the ceiling's sizes or the progress mode, with the same message for
 * a bad value: "--NAME: 'TEXT' is not WHAT".
 */
#ifndef ATTN_BENCH_OPTION_VALUES_H
#define ATTN_BENCH_OPTION_VALUES_H

#include <stddef.h>

#include "cli/cli.h"
#include "util/dtype.h"
#include "util/progress.h"
#include "cli/size_list.h"

typedef enum bench_options_outcome {
    BENCH_OPTIONS_RUN,  /* options filled: run the sweep */
    BENCH_OPTIONS_HELP, /* --help was asked for */
    BENCH_OPTIONS_BAD   /* error holds the reason */
} bench_options_outcome;

/* The options of one parse: the table, the texts given (table->count slots,
 * NULL: not given), --quick, and where a message goes. */
typedef struct bench_option_values {
    const bench_cli_table *table;
    const char **given;
    int quick;
    char *error;
    size_t error_size;
} bench_option_values;

/* Collects argv[first..argc-1] into values->given; unless --help was given,
 * then the values of --sweep FILE for the options the command line did not
 * give (when the command line gives one of exclusive[0..exclusive_count-1],
 * the file's values of all of them are dropped), and values->quick from
 * --quick. The options called help, sweep and quick are the table's own.
 * *sweep_path is --sweep's FILE or NULL; *sweep_text holds the file's
 * values, for the caller to free (also after BENCH_OPTIONS_BAD). */
bench_options_outcome bench_option_values_collect(bench_option_values *values, int argc,
                                                  char **argv, int first,
                                                  const size_t *exclusive,
                                                  size_t exclusive_count,
                                                  const char **sweep_path, char **sweep_text);

/* "PROGRAM ARG ARG ..." of argv[first..], for the record (malloc'ed; NULL
 * when memory runs out). */
char *bench_option_command_line(const char *program, int argc, char **argv, int first);

/* The text option id resolves to (cli.h's precedence). */
const char *bench_option_text(const bench_option_values *values, size_t id);

/* Writes "--NAME: 'TEXT' is not WHAT" into the error; returns -1. */
int bench_option_fail(const bench_option_values *values, size_t id, const char *what);

/* These return 0, or -1 with the message in the error. */
int bench_option_size_list(const bench_option_values *values, size_t id, bench_size_list *list);

/* A thread-count list (a size list whose items may be the word "cpus":
 * bench_cpus_usable()), into list; 0, or -1 with the reason. */
int bench_option_thread_list(const bench_option_values *values, size_t id,
                             bench_size_list *list);

/* The CPUs this process may run on (sched_getaffinity, as attn's engine
 * auto counts them), else the CPUs online; at least 1. */
size_t bench_cpus_usable(void);
int bench_option_count(const bench_option_values *values, size_t id, size_t minimum,
                       size_t *value);
int bench_option_choices(const bench_option_values *values, size_t id,
                         const char *const *names, size_t name_count, int *chosen,
                         size_t *chosen_count);

/* "N32,N64" (the square sgemm's and dgemm's sizes of the ceiling) or "0". */
int bench_option_ceiling(const bench_option_values *values, size_t id,
                         size_t n[BENCH_DTYPE_COUNT]);

/* Attention dropout probabilities: a comma-separated list of numbers in
 * [0, 1) (repeats dropped), at most capacity of them. */
#define BENCH_MAX_DROPOUTS 8
int bench_option_dropouts(const bench_option_values *values, size_t id, double *list,
                          size_t capacity, size_t *count);

/* One of the progress modes. */
int bench_option_progress(const bench_option_values *values, size_t id,
                          bench_progress_mode *mode);

#endif /* ATTN_BENCH_OPTION_VALUES_H */
