/*
 * What attn-bench sdpa writes: the table on standard output, the CSV (a
 * header row, then a row per configuration, flushed as each is done) and
 * the JSON's own members (the record, pipeline/run_record.h, is shared with
 * the run command).
 */
#ifndef ATTN_BENCH_SDPA_OUTPUT_H
#define ATTN_BENCH_SDPA_OUTPUT_H

#include <stdio.h>

#include "measure/sdpa_measure.h"

#define BENCH_SDPA_CSV_KEY_COLUMNS 19

/* peers: options->peers, the peers whose columns the table has; dropout:
 * whether it has the dropout columns (a --dropout above 0) */
void bench_sdpa_table_print_header(FILE *out, const int *peers, int dropout);
void bench_sdpa_table_print_row(FILE *out, const bench_sdpa_point *point, const int *peers,
                                int dropout);

/* The threads attn ran on: its own engine's, or the row's BLAS threads. */
size_t bench_sdpa_attn_threads(const bench_sdpa_point *point);
void bench_sdpa_table_print_columns(FILE *out);

const char *bench_sdpa_csv_header(void);
void bench_sdpa_csv_format_key(const bench_sdpa_config *config, char *key, size_t size);
FILE *bench_sdpa_csv_open(const char *path);
int bench_sdpa_csv_write_row(FILE *csv, const bench_sdpa_point *point);
void bench_sdpa_csv_print_columns(FILE *out);

/* The JSON's "settings" and "flop_count" (pipeline/run_record.h); options
 * is the command's bench_sdpa_options. */
void bench_sdpa_write_json_settings(FILE *out, const void *options);

#endif /* ATTN_BENCH_SDPA_OUTPUT_H */
