/*
 * Results as an aligned table (stdout) and as CSV (one row per
 * configuration, flushed as soon as the point is done).
 */
#ifndef ATTN_BENCH_REPORT_H
#define ATTN_BENCH_REPORT_H

#include <stdio.h>

#include "measure.h"

void bench_table_print_header(FILE *out);
void bench_table_print_row(FILE *out, const bench_point *point);

/* numpy median / attn median, or 0 when either is missing */
double bench_speedup_vs_numpy(const bench_point *point);

/* Opens path and writes the header row; returns NULL (errno set) on failure. */
FILE *bench_csv_open(const char *path);
/* Writes one row and flushes; returns 0, or -1 on a write error. */
int bench_csv_write_row(FILE *csv, const bench_point *point);

/* The CSV columns and their meaning, for --help. */
void bench_csv_print_columns(FILE *out);

#endif /* ATTN_BENCH_REPORT_H */
