#include "output/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PANEL_WIDTH = 560, PANEL_HEIGHT = 400 };

int bench_plot_available(void)
{
    return system("gnuplot --version >/dev/null 2>&1") == 0;
}

/* text in gnuplot's double quotes: backslashes and quotes escaped */
static void write_quoted(FILE *gp, const char *text)
{
    fputc('"', gp);
    for (const char *c = text; *c; ++c) {
        if (*c == '"' || *c == '\\')
            fputc('\\', gp);
        fputc(*c, gp);
    }
    fputc('"', gp);
}

static void write_data(FILE *gp, const bench_plot_panel *panel, size_t p)
{
    for (size_t s = 0; s < panel->series_count; ++s) {
        const bench_plot_series *series = &panel->series[s];
        fprintf(gp, "$p%zus%zu << EOD\n", p, s);
        for (size_t i = 0; i < series->count; ++i)
            if (!isnan(series->y[i]))
                fprintf(gp, "%.9g %.9g\n", series->x[i], series->y[i]);
        fputs("EOD\n", gp);
    }
}

/* Whether a series has any point to draw (an empty data block is an error
 * for gnuplot). */
static int has_points(const bench_plot_series *series)
{
    for (size_t i = 0; i < series->count; ++i)
        if (!isnan(series->y[i]))
            return 1;
    return 0;
}

static void write_panel(FILE *gp, const bench_plot_panel *panel, size_t p)
{
    fputs("set title ", gp);
    write_quoted(gp, panel->title);
    fputs("\nplot ", gp);
    size_t drawn = 0;
    for (size_t s = 0; s < panel->series_count; ++s) {
        const bench_plot_series *series = &panel->series[s];
        if (!has_points(series))
            continue;
        const size_t style = series->style > 0 ? (size_t)series->style : s % 9 + 1;
        fprintf(gp, "%s$p%zus%zu using 1:2 with linespoints linestyle %zu dashtype %d title ",
                drawn ? ", \\\n     " : "", p, s, style, series->dashed ? 2 : 1);
        write_quoted(gp, series->title);
        drawn++;
    }
    if (!drawn)
        fputs("NaN notitle", gp);
    fputc('\n', gp);
}

static void write_script(FILE *gp, const bench_plot_figure *f)
{
    const size_t columns = f->panel_count > 1 ? 2 : 1;
    const size_t rows = (f->panel_count + columns - 1) / columns;
    for (size_t p = 0; p < f->panel_count; ++p)
        write_data(gp, &f->panels[p], p);
    fprintf(gp, "set terminal pngcairo size %zu,%zu font \"DejaVu Sans,9\"\nset output ",
            columns * PANEL_WIDTH, rows * PANEL_HEIGHT + 30);
    write_quoted(gp, f->path);
    fprintf(gp, "\nset grid\nset key %s opaque font \",8\" samplen 2\n",
            f->key ? f->key : "top left");
    static const char *const colors[9] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                          "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
                                          "#bcbd22"};
    for (size_t i = 0; i < 9; ++i)
        fprintf(gp, "set linestyle %zu linecolor rgb \"%s\" linewidth 1.5 pointtype %zu "
                    "pointsize 0.7\n",
                i + 1, colors[i], i % 7 + 1);
    if (f->log_x)
        fprintf(gp, "set logscale x %d\n", f->log_x);
    if (f->log_y)
        fprintf(gp, "set logscale y %d\n%s", f->log_y,
                f->log_y == 10 ? "set format y \"10^{%L}\"\n" : "");
    if (!isnan(f->y_min) || !isnan(f->y_max)) {
        char low[32] = "*", high[32] = "*";
        if (!isnan(f->y_min))
            snprintf(low, sizeof low, "%g", f->y_min);
        if (!isnan(f->y_max))
            snprintf(high, sizeof high, "%g", f->y_max);
        fprintf(gp, "set yrange [%s:%s]\n", low, high);
    }
    fputs("set xlabel ", gp);
    write_quoted(gp, f->x_label);
    fputs("\nset ylabel ", gp);
    write_quoted(gp, f->y_label);
    fprintf(gp, "\nset multiplot layout %zu,%zu title ", rows, columns);
    write_quoted(gp, f->title);
    fputc('\n', gp);
    for (size_t p = 0; p < f->panel_count; ++p)
        write_panel(gp, &f->panels[p], p);
    fputs("unset multiplot\nset output\n", gp);
}

int bench_plot_write(const bench_plot_figure *figure, char *error, size_t error_size)
{
    fflush(NULL);
    FILE *gp = popen("gnuplot", "w");
    if (!gp) {
        snprintf(error, error_size, "cannot start gnuplot");
        return -1;
    }
    write_script(gp, figure);
    int status = pclose(gp);
    if (status != 0) {
        snprintf(error, error_size, "gnuplot failed on %s (status %d)", figure->path, status);
        return -1;
    }
    return 0;
}

void bench_plot_panels_free(bench_plot_panel *panels, size_t count)
{
    for (size_t p = 0; p < count; ++p) {
        for (size_t s = 0; s < panels[p].series_count; ++s) {
            free(panels[p].series[s].x);
            free(panels[p].series[s].y);
        }
        free(panels[p].series);
        panels[p].series = NULL;
        panels[p].series_count = 0;
    }
}
