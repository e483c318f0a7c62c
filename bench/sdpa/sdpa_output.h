/*
 * What attn-bench sdpa writes: the table on standard output, the CSV (a
 * header row, then a row per configuration, flushed as each is done) and
 * the JSON (the run's record and every CSV row as an object, read back from
 * the CSV as the run command does).
 */
#ifndef ATTN_BENCH_SDPA_OUTPUT_H
#define ATTN_BENCH_SDPA_OUTPUT_H

#include <stdio.h>

#include "machine/bandwidth.h"
#include "machine/ceiling.h"
#include "machine/fma_peak.h"
#include "machine/machine.h"
#include "output/run_record.h"
#include "sdpa/sdpa_measure.h"

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

typedef struct bench_sdpa_record {
    const bench_sdpa_options *options;
    bench_machine machine;
    bench_ceiling ceiling;
    bench_fma_peak fma_peak;
    bench_bandwidth bandwidth;
    size_t bandwidth_bytes;  /* the buffer; 0: not measured */
    size_t last_level_cache; /* bytes, 0: unknown */
    bench_peer_summary peers[BENCH_SDPA_PEER_COUNT]; /* sdpa_peer.h's kinds */
    double wall_seconds;
    double other_load_cpus; /* < 0: unknown */
} bench_sdpa_record;

/* Writes the JSON to path; 0, or -1 with the reason in error. */
int bench_sdpa_write_json(const char *path, const bench_sdpa_record *record, char *error,
                          size_t error_size);

#endif /* ATTN_BENCH_SDPA_OUTPUT_H */
