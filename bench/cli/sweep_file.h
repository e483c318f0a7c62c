/*
 * Sweep files (--sweep FILE): the run command's options written one per
 * line, so a sweep can be kept, shared and rerun.
 *
 *   # a comment, to the end of the line
 *   T      = 64:2048:x2        # an option's name without "--", "=", its value
 *   dtype  = f32, f64          # blanks inside a value are ignored
 *   op     = forward,backward
 *   weights = yes              # a flag: yes/no, true/false, on/off, 1/0
 *
 * Values have exactly the command line's syntax. A later line overrides an
 * earlier one; options given on the command line override the file. "sweep"
 * and "help" cannot appear in a file.
 */
#ifndef ATTN_BENCH_SWEEP_FILE_H
#define ATTN_BENCH_SWEEP_FILE_H

#include <stddef.h>

#include "cli/cli.h"

/* Reads path into given[] (one slot per option of table; a flag set to a
 * false value leaves its slot NULL). The texts live in *storage, which the
 * caller frees (also on failure). Returns 0, or -1 with "PATH:LINE: reason"
 * in error. */
int bench_sweep_file_read(const char *path, const bench_cli_table *table, const char **given,
                          char **storage, char *error, size_t error_size);

#endif /* ATTN_BENCH_SWEEP_FILE_H */
