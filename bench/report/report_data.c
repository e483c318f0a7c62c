#include "report/report_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/csv_out.h"
#include "util/text.h"

const char *bench_report_field(const bench_report_row *row, const char *column)
{
    return bench_csv_cell(row->table, row->index, bench_csv_column(row->table, column));
}

static double number_field(const bench_report_row *row, const char *column)
{
    const char *text = bench_report_field(row, column);
    char *end = NULL;
    double value = text[0] ? strtod(text, &end) : (double)NAN;
    return end && *end == '\0' ? value : (double)NAN;
}

static void fill_row(bench_report_row *row)
{
    row->T = number_field(row, "T");
    row->attn[BENCH_METRIC_TIME_MS] = number_field(row, "attn_median_ms");
    row->attn[BENCH_METRIC_GFLOPS] = number_field(row, "attn_gflops");
    row->attn[BENCH_METRIC_CEILING_FRACTION] = number_field(row, "attn_ceiling_fraction");
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k) {
        char column[64];
        static const char *const suffixes[3] = {"median_ms", "gflops", "ceiling_fraction"};
        for (size_t m = 0; m < 3; ++m) {
            snprintf(column, sizeof column, "%s_%s", bench_peer_kind_names[k], suffixes[m]);
            row->peer[k][m] = number_field(row, column);
        }
        snprintf(column, sizeof column, "speedup_vs_%s", bench_peer_kind_names[k]);
        row->speedup[k] = number_field(row, column);
    }
    snprintf(row->panel, sizeof row->panel,
             "%s %s causal=%s  B=%s C=%s NH=%s hs=%s wo=%s  threads=%s%s",
             bench_report_field(row, "dtype"), bench_report_field(row, "op"),
             bench_report_field(row, "causal"), bench_report_field(row, "B"),
             bench_report_field(row, "C"), bench_report_field(row, "NH"),
             bench_report_field(row, "hs"), bench_report_field(row, "wo"),
             bench_report_field(row, "threads"),
             strcmp(bench_report_field(row, "weights"), "1") == 0 ? " weights" : "");
    const char *engine = bench_report_field(row, "engine");
    snprintf(row->series, sizeof row->series, "attn %s/%s/%s", bench_report_field(row, "api"),
             bench_report_field(row, "path"), engine[0] ? engine : "blas");
}

/* A run's CSV: this attn-bench's header, or an older attn-bench's, which
 * lacks some columns (the numpy32 peer's, say: they read as empty) but has
 * every key column and none this one does not know. */
static int check_header(const bench_csv_table *table, const char *path, char *error,
                        size_t error_size)
{
    bench_csv_header_diff diff;
    bench_csv_compare_header(table->fields, table->columns, &diff);
    int keys = 1;
    const char *name = bench_csv_header();
    for (int c = 0; c < BENCH_CSV_KEY_COLUMNS && keys; ++c) {
        char column[64];
        const size_t length = strcspn(name, ",");
        snprintf(column, sizeof column, "%.*s", (int)length, name);
        keys = bench_csv_column(table, column) >= 0;
        name += length + (name[length] == ',');
    }
    if (diff.same || (keys && diff.unknown == 0))
        return 0;
    snprintf(error, error_size, "%s is not a CSV of this attn-bench run (its header differs)",
             path);
    return -1;
}

int bench_report_data_load(bench_report_data *data, const char *const *paths, size_t count,
                           char *error, size_t error_size)
{
    memset(data, 0, sizeof *data);
    if (count > BENCH_REPORT_MAX_CSV) {
        snprintf(error, error_size, "at most %d CSV files", BENCH_REPORT_MAX_CSV);
        return -1;
    }
    size_t total = 0;
    for (size_t i = 0; i < count; ++i, data->table_count++) {
        if (bench_csv_read(paths[i], &data->tables[i], error, error_size) != 0 ||
            check_header(&data->tables[i], paths[i], error, error_size) != 0) {
            data->table_count += data->tables[i].text != NULL;
            bench_report_data_free(data);
            return -1;
        }
        total += data->tables[i].rows;
    }
    data->rows = calloc(total ? total : 1, sizeof *data->rows);
    if (!data->rows) {
        snprintf(error, error_size, "out of memory");
        bench_report_data_free(data);
        return -1;
    }
    for (size_t i = 0; i < data->table_count; ++i)
        for (size_t r = 0; r < data->tables[i].rows; ++r) {
            bench_report_row *row = &data->rows[data->count++];
            row->table = &data->tables[i];
            row->index = r;
            fill_row(row);
        }
    return 0;
}

void bench_report_data_free(bench_report_data *data)
{
    for (size_t i = 0; i < data->table_count; ++i)
        bench_csv_free(&data->tables[i]);
    free(data->rows);
    memset(data, 0, sizeof *data);
}

/* ---- panels -------------------------------------------------------------------- */

/* Line styles (plot.c's colours): attn's variants take 1, 5, 6, 7, 8 in the
 * order they first appear in the data; the peers keep one each everywhere
 * (naive, numpy, numpy32, torch). */
static const int peer_styles[BENCH_PEER_KINDS] = {2, 3, 9, 4};
static const int attn_styles[5] = {1, 5, 6, 7, 8};

static int attn_style(const bench_report_data *data, const char *title)
{
    size_t distinct = 0;
    for (size_t r = 0; r < data->count; ++r) {
        int seen = 0;
        for (size_t q = 0; q < r && !seen; ++q)
            seen = strcmp(data->rows[q].series, data->rows[r].series) == 0;
        if (seen)
            continue;
        if (strcmp(data->rows[r].series, title) == 0)
            break;
        distinct++;
    }
    return attn_styles[distinct % 5];
}

static bench_plot_series *find_or_add_series(bench_plot_panel *panel, const char *title,
                                             int dashed, size_t capacity)
{
    for (size_t s = 0; s < panel->series_count; ++s)
        if (strcmp(panel->series[s].title, title) == 0)
            return &panel->series[s];
    bench_plot_series *grown =
        realloc(panel->series, (panel->series_count + 1) * sizeof *panel->series);
    if (!grown)
        return NULL;
    panel->series = grown;
    bench_plot_series *series = &panel->series[panel->series_count];
    memset(series, 0, sizeof *series);
    bench_copy_text(series->title, sizeof series->title, title);
    series->dashed = dashed;
    series->x = malloc(capacity * sizeof *series->x);
    series->y = malloc(capacity * sizeof *series->y);
    if (!series->x || !series->y) {
        free(series->x);
        free(series->y);
        return NULL;
    }
    panel->series_count++;
    return series;
}

/* Adds (T, value) unless the series has that T already (the peers' numbers
 * repeat on every attn variant of a shape). */
static void add_point(bench_plot_series *series, double T, double value)
{
    for (size_t i = 0; i < series->count; ++i)
        if (series->x[i] == T)
            return;
    series->x[series->count] = T;
    series->y[series->count++] = value;
}

static int compare_points(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Sorts a series' points by x. */
static void sort_series(bench_plot_series *series)
{
    double *pairs = malloc(2 * (series->count ? series->count : 1) * sizeof *pairs);
    if (!pairs)
        return;
    for (size_t i = 0; i < series->count; ++i) {
        pairs[2 * i] = series->x[i];
        pairs[2 * i + 1] = series->y[i];
    }
    qsort(pairs, series->count, 2 * sizeof *pairs, compare_points);
    for (size_t i = 0; i < series->count; ++i) {
        series->x[i] = pairs[2 * i];
        series->y[i] = pairs[2 * i + 1];
    }
    free(pairs);
}

static int add_row(const bench_report_data *data, bench_plot_panel *panel,
                   const bench_report_row *row, bench_report_metric metric)
{
    bench_plot_series *series = find_or_add_series(panel, row->series, 0, data->count);
    if (!series)
        return -1;
    series->style = attn_style(data, row->series);
    add_point(series, row->T, row->attn[metric]);
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k) {
        if (isnan(row->peer[k][metric]))
            continue;
        series = find_or_add_series(panel, bench_peer_kind_names[k], 1, data->count);
        if (!series)
            return -1;
        series->style = peer_styles[k];
        add_point(series, row->T, row->peer[k][metric]);
    }
    return 0;
}

/* attn's series first, then the peers, each group in order of appearance */
static void order_series(bench_plot_panel *panel)
{
    for (size_t i = 1; i < panel->series_count; ++i)
        for (size_t j = i; j > 0 && !panel->series[j].dashed && panel->series[j - 1].dashed;
             --j) {
            bench_plot_series swap = panel->series[j];
            panel->series[j] = panel->series[j - 1];
            panel->series[j - 1] = swap;
        }
}

size_t bench_report_panels(const bench_report_data *data, bench_report_metric metric,
                           bench_plot_panel **panels_out)
{
    bench_plot_panel *panels = calloc(data->count ? data->count : 1, sizeof *panels);
    size_t count = 0;
    if (!panels)
        return 0;
    for (size_t r = 0; r < data->count; ++r) {
        const bench_report_row *row = &data->rows[r];
        size_t p = 0;
        while (p < count && strcmp(panels[p].title, row->panel) != 0)
            p++;
        if (p == count)
            bench_copy_text(panels[count++].title, sizeof panels[p].title, row->panel);
        if (add_row(data, &panels[p], row, metric) != 0) {
            bench_plot_panels_free(panels, count);
            free(panels);
            return 0;
        }
    }
    for (size_t p = 0; p < count; ++p) {
        order_series(&panels[p]);
        for (size_t s = 0; s < panels[p].series_count; ++s)
            sort_series(&panels[p].series[s]);
    }
    *panels_out = panels;
    return count;
}
