/*
 * What the experiments share: their options, their output files, their
 * property checks.
 *
 * Options of every experiment (defaults differ per experiment):
 *   --hs LIST --T LIST --C N --trials N --seed N --out DIR --check --quick
 */
#ifndef ATTN_BENCH_EXP_COMMON_H
#define ATTN_BENCH_EXP_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output/plot.h"
#include "util/rng.h"
#include "cli/size_list.h"

/* An experiment's defaults (and --quick values) for the shared options. */
typedef struct bench_exp_defaults {
    const char *hs, *hs_quick;
    const char *T, *T_quick;
    const char *C, *C_quick;
    const char *trials, *trials_quick;
} bench_exp_defaults;

typedef struct bench_exp_options {
    bench_size_list hs, T;
    size_t C, trials;
    uint64_t seed;
    const char *out_dir;
    int check;
} bench_exp_options;

/* The outputs and checks of one run of an experiment. */
typedef struct bench_exp_run {
    const char *name;
    const bench_exp_options *options;
    FILE *csv;
    size_t checks, failures;
} bench_exp_run;

typedef struct bench_experiment {
    const char *name;
    const char *summary;     /* one line */
    const char *description; /* what it measures and what --check asserts */
    bench_exp_defaults defaults;
    const char *table_header; /* the table's first line */
    const char *csv_header;
    /* Measures every point, printing the table rows and writing the CSV rows
     * (run->csv is open, its header written); returns the results (the
     * driver frees them), or NULL when memory or LAPACK failed. NULL: the
     * driver calls measure_point for each --hs value and each variant
     * (bench_exp_for_each_point). */
    void *(*measure)(bench_exp_run *run);
    size_t variants, entry_size;
    int (*measure_point)(bench_exp_run *run, size_t index, size_t variant, void *entry);
    /* The documented properties, through bench_exp_check. */
    void (*check)(bench_exp_run *run, const void *results);
    /* The plot, through bench_exp_plot_grid; 0 or -1. */
    int (*plot)(const bench_exp_run *run, const void *results);
    int hs_at_most_C; /* an --hs value above --C is a bad argument */
} bench_experiment;

/* Calls measure(run, index, variant, entry) for each --hs value (index) and
 * each of `variants` variants, entry pointing at its own entry_size bytes of
 * an array laid out [index][variant]. Returns the array (the caller frees
 * it), or NULL when memory runs out or a measure call fails. */
void *bench_exp_for_each_point(bench_exp_run *run, size_t variants, size_t entry_size,
                               int (*measure)(bench_exp_run *run, size_t index,
                                              size_t variant, void *entry));

/* <out>/<name>.png */
void bench_exp_plot_path(const bench_exp_run *run, char *path, size_t size);

/* Draws the figure when matplotlib is importable (else says so); 0 or -1. */
int bench_exp_plot(const bench_exp_run *run, bench_plot_figure *figure);

/* A figure of panels that share their series titles and x values: the
 * y of point i of series s in panel p is value(data, p, s, i). x NULL: the
 * --hs values (points = their count). */
typedef struct bench_exp_grid {
    const char *title, *x_label, *y_label;
    const double *x;
    size_t points;
    const char *const *panel_titles;
    size_t panel_count;
    const char *const *series_titles;
    const int *dashed; /* per series, or NULL */
    size_t series_count;
    int log_x, log_y;  /* 0, or the base; with log_y, values <= 0 are left out */
    double y_min;      /* linear y only; NaN: automatic */
    const char *key;   /* legend position ("bottom left", "below", ...: plots.py), NULL: top left */
    double (*value)(const void *data, size_t panel, size_t series, size_t point);
    const void *data;
} bench_exp_grid;

/* Draws the grid into <out>/<name>.png (bench_exp_plot). 0 or -1. */
int bench_exp_plot_grid(const bench_exp_run *run, const bench_exp_grid *grid);

/* Records one property check: prints "check: PASS|FAIL <what>" with --check
 * (nothing otherwise) and counts failures. */
void bench_exp_check(bench_exp_run *run, int holds, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Fills a with count N(0,1) * scale values. */
void bench_exp_fill_normal(double *a, size_t count, double scale, bench_rng *rng);

#endif /* ATTN_BENCH_EXP_COMMON_H */
