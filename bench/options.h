/*
 * attn-bench's command line. Every option, its default and its --quick
 * value live in one table in options.c, which both the parser and --help
 * read, so the help cannot drift from what the parser does.
 */
#ifndef ATTN_BENCH_OPTIONS_H
#define ATTN_BENCH_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "dtype.h"
#include "size_list.h"
#include "timing.h"

enum { BENCH_PEER_NUMPY = 1u << 0 };

typedef struct bench_options {
    bench_size_list T, C, hs, B;
    bench_dtype dtypes[BENCH_DTYPE_COUNT];
    size_t dtype_count;
    int causal[2];
    size_t causal_count;
    int with_weights;           /* --weights: the measured call also writes (B,T,T) */
    bench_repeat_policy repeat; /* for attn and the peers alike */
    size_t check_rows;          /* query rows checked per checked batch; 0 = all */
    uint64_t seed;
    unsigned peers;             /* BENCH_PEER_* bits */
    const char *numpy_script;   /* NULL: look in the default places */
    const char *python;
    const char *csv_path;
    int quick;
} bench_options;

typedef enum bench_options_outcome {
    BENCH_OPTIONS_RUN,  /* options filled: run the sweep */
    BENCH_OPTIONS_HELP, /* --help was asked for */
    BENCH_OPTIONS_BAD   /* error holds the reason */
} bench_options_outcome;

bench_options_outcome bench_options_parse(int argc, char **argv, bench_options *options,
                                          char *error, size_t error_size);

void bench_options_free(bench_options *options);

/* The option list of --help: names, arguments, defaults, --quick values. */
void bench_options_print_list(FILE *out);

/* The whole --help text (help.c). */
void bench_print_help(FILE *out);

#endif /* ATTN_BENCH_OPTIONS_H */
