/*
 * The rows of one or more run CSVs, read back for `attn-bench report`, and
 * grouped for its plots: a panel per shape apart from T (dtype, op, causal,
 * B, C, NH, hs, wo, threads, weights), a series per attn variant (api/path)
 * and per peer, points against T.
 */
#ifndef ATTN_BENCH_REPORT_DATA_H
#define ATTN_BENCH_REPORT_DATA_H

#include <stddef.h>

#include "output/csv_read.h"
#include "measure/peer_timing.h"
#include "output/plot.h"

#define BENCH_REPORT_MAX_CSV 16

typedef enum bench_report_metric {
    BENCH_METRIC_TIME_MS,
    BENCH_METRIC_GFLOPS,
    BENCH_METRIC_CEILING_FRACTION
} bench_report_metric;

typedef struct bench_report_row {
    const bench_csv_table *table;
    size_t index;             /* data row of table */
    double T;
    double attn[3];           /* by bench_report_metric; NaN when missing */
    double peer[BENCH_PEER_KINDS][3];
    double speedup[BENCH_PEER_KINDS];
    char panel[256];          /* the panel's title, also its key */
    char series[64];          /* "attn plan/materialized" */
} bench_report_row;

typedef struct bench_report_data {
    bench_csv_table tables[BENCH_REPORT_MAX_CSV];
    size_t table_count;
    bench_report_row *rows;
    size_t count;
} bench_report_data;

/* Reads the CSVs (each must have a run's header). Returns 0, or -1 with the
 * reason in error. */
int bench_report_data_load(bench_report_data *data, const char *const *paths, size_t count,
                           char *error, size_t error_size);

void bench_report_data_free(bench_report_data *data);

/* A field of a row by column name ("" when absent). */
const char *bench_report_field(const bench_report_row *row, const char *column);

/* The panels of a metric (allocated; free with bench_plot_panels_free and
 * free). Returns the panel count, 0 on failure. */
size_t bench_report_panels(const bench_report_data *data, bench_report_metric metric,
                           bench_plot_panel **panels);

#endif /* ATTN_BENCH_REPORT_DATA_H */
