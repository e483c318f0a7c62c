/*
 * Tables of columns, {name, meaning} rows (a meaning's lines separated by
 * \n): the CSV header rows joined from their names, and the column lists of
 * the --help texts (the run command's table and CSV, the sdpa command's).
 */
#ifndef ATTN_BENCH_COLUMNS_H
#define ATTN_BENCH_COLUMNS_H

#include <stddef.h>
#include <stdio.h>

/* "  NAME MEANING" with NAME padded to width, a meaning's further lines
 * under its first. */
void bench_columns_print_row(FILE *out, int width, const char *name, const char *meaning);

/* Every row of columns[0..count-1] so. */
void bench_columns_print(FILE *out, int width, const char *const (*columns)[2], size_t count);

/* A table cell " NN%": value as a percentage of `of` (the share columns:
 * peak%, blas%, bw%), or "     -" when either is missing (<= 0). */
void bench_columns_print_share(FILE *out, double value, double of);

/* Appends the names of columns[0..count-1] to header, comma-separated. */
void bench_columns_join_names(char *header, size_t size, const char *const (*columns)[2],
                              size_t count);

#endif /* ATTN_BENCH_COLUMNS_H */
