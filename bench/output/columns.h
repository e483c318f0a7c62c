/*
 * Tables of columns, {name, meaning} rows (a meaning's lines separated by
 * \n): the CSV header rows joined from their names, and the column lists of
 * the --help texts (the run command's table and CSV, the sdpa command's);
 * the cells both tables print alike.
 */
#ifndef ATTN_BENCH_COLUMNS_H
#define ATTN_BENCH_COLUMNS_H

#include <stddef.h>
#include <stdio.h>

#include "measure/measure.h"

/* "  NAME MEANING" with NAME padded to width, a meaning's further lines
 * under its first. */
void bench_columns_print_row(FILE *out, int width, const char *name, const char *meaning);

/* Every row of columns[0..count-1] so. */
void bench_columns_print(FILE *out, int width, const char *const (*columns)[2], size_t count);

/* A table cell " NN%": value as a percentage of `of` (the share columns:
 * peak%, blas%, bw%), or "     -" when either is missing (<= 0). */
void bench_columns_print_share(FILE *out, double value, double of);

/* The table's check cell, 8 wide: "FAIL" (above the tolerance), "ERROR"
 * (not timed otherwise), "skip" (not checked), on a row with dropout p
 * above 0 "Ee@p0" (checked before the timing, at p = 0), else the relative
 * error. */
void bench_columns_print_check(FILE *out, bench_point_status status, int skipped, double error,
                               double dropout);

/* attn's cells of a row, as both sweep tables show them: attn_ms, athr,
 * GF/s, peak% and blas% (the shares of share_gflops: the row's GF/s, or 0
 * where a share says nothing, as on decode rows), or dashes when the row
 * was not timed. */
typedef struct bench_attn_cells {
    int timed;
    double median_s;
    size_t threads;
    double gflops, share_gflops, peak_gflops, ceiling_gflops;
} bench_attn_cells;
void bench_columns_print_attn(FILE *out, const bench_attn_cells *cells);

/* Appends the names of columns[0..count-1] to header, comma-separated. */
void bench_columns_join_names(char *header, size_t size, const char *const (*columns)[2],
                              size_t count);

#endif /* ATTN_BENCH_COLUMNS_H */
