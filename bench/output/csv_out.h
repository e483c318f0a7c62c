/*
 * The CSV of a run: a header row, then one row per configuration, written
 * and flushed as soon as the configuration is done, so an interrupted sweep
 * keeps every finished row and --resume can go on from there. Empty fields
 * where there is no number. The first BENCH_CSV_KEY_COLUMNS columns identify
 * a configuration (the resume key).
 */
#ifndef ATTN_BENCH_CSV_OUT_H
#define ATTN_BENCH_CSV_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "measure/measure.h"

#define BENCH_CSV_KEY_COLUMNS 14

/* The header row without its newline (static text). */
const char *bench_csv_header(void);

/* The key columns of a configuration as they appear in its row. */
void bench_csv_format_key(const bench_config *config, char *key, size_t size);

/* Opens path for the rows: "w" and the header row, or (append) "a" after
 * the rows already there. Returns NULL (errno set) on failure. */
FILE *bench_csv_open(const char *path, int append);

/* Writes one row and flushes; returns 0, or -1 on a write error. */
int bench_csv_write_row(FILE *csv, const bench_point *point);

/* The CSV columns and their meaning, for --help. */
void bench_csv_print_columns(FILE *out);

/* How a CSV's header row (its fields) compares with bench_csv_header(). */
typedef struct bench_csv_header_diff {
    int same;       /* 1: exactly this attn-bench's header, column for column */
    size_t missing; /* this attn-bench's columns the CSV lacks (an older one's) */
    size_t unknown; /* the CSV's columns this attn-bench does not write */
    char first_missing[64], first_unknown[64];
} bench_csv_header_diff;

void bench_csv_compare_header(char *const *fields, size_t count, bench_csv_header_diff *diff);

/* 1 when the peer's output has another element type than the row's: the
 * lesson's NumPy code on f32 with NumPy >= 2 returns float64 (its
 * / np.sqrt(hs) promotes the scores), so its time is not float32's. */
int bench_peer_promoted(const bench_point *point, bench_peer_kind peer);

/* The threads attn ran on: its own engine's (engine_threads), or the row's
 * BLAS threads. */
size_t bench_point_attn_threads(const bench_point *point);

/* peer median / attn median, or 0 when either is missing */
double bench_speedup_vs_peer(const bench_point *point, bench_peer_kind peer);

#endif /* ATTN_BENCH_CSV_OUT_H */
