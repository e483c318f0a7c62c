/*
 * The command-line machinery every subcommand shares. A subcommand describes
 * its options once, in a table of bench_cli_option; the same table drives
 * the parser, the defaults, the --quick values and the --help listing, so
 * the help cannot drift from what the parser accepts.
 *
 * Syntax: --name VALUE or --name=VALUE; flags take no value; -h is --help.
 * Precedence of a value: the command line, then a sweep file (run only),
 * then the --quick value under --quick, then the default.
 */
#ifndef ATTN_BENCH_CLI_H
#define ATTN_BENCH_CLI_H

#include <stddef.h>
#include <stdio.h>

typedef struct bench_cli_option {
    const char *name;          /* used as --name; NULL: no option (a table's unused slot) */
    const char *argument;      /* what VALUE is; NULL for a flag */
    const char *default_value; /* NULL: none */
    const char *quick_value;   /* under --quick; NULL: the default */
    const char *help;          /* lines separated by \n */
} bench_cli_option;

/* The --help entry every command's table ends with. */
#define BENCH_CLI_HELP_OPTION {"help", NULL, NULL, NULL, "this text (also -h)"}

typedef struct bench_cli_table {
    const bench_cli_option *options;
    size_t count;
} bench_cli_table;

/* The index of the option called name (name_length characters), or -1. */
int bench_cli_find(const bench_cli_table *table, const char *name, size_t name_length);

/* Collects argv[first..argc-1] into given[] (one slot per option, the text
 * of its value, "1" for a flag). Arguments that do not start with "--" go to
 * positionals when positional_max > 0 (their count in *positional_count),
 * else they are an error. Returns 0, or -1 with the reason in error. */
int bench_cli_collect(const bench_cli_table *table, int argc, char **argv, int first,
                      const char **given, const char **positionals, size_t positional_max,
                      size_t *positional_count, char *error, size_t error_size);

/* The text an option resolves to (see the precedence above; NULL: none). */
const char *bench_cli_resolved(const bench_cli_table *table, const char *const *given,
                               size_t id, int quick);

/* The options list of a --help text. */
void bench_cli_print_options(FILE *out, const bench_cli_table *table);

/* A whole decimal number >= minimum; 0 on success. */
int bench_cli_parse_count(const char *text, size_t minimum, size_t *value);

/* A finite number of seconds >= 0; 0 on success. */
int bench_cli_parse_seconds(const char *text, double *seconds);

/* A comma-separated list of names out of names[0..name_count-1]: the indices
 * in order of first appearance, repeats dropped. Returns 0, or -1 on an
 * unknown or empty item. */
int bench_cli_parse_choices(const char *text, const char *const *names, size_t name_count,
                            int *chosen, size_t *chosen_count);

/* Writes "a, b, c" of the names into buffer (for messages). */
void bench_cli_join_names(const char *const *names, size_t name_count, char *buffer,
                          size_t size);

#endif /* ATTN_BENCH_CLI_H */
