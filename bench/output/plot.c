#include "output/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "output/report_tool.h"
#include "util/text.h"

int bench_plot_available(void)
{
    static int available = -1;
    if (available < 0) {
        bench_report_tool tool;
        char error[1536];
        const char *const args[] = {"--check"};
        available = bench_report_tool_start(&tool, "plots.py", args, 1, 0, 1, error,
                                            sizeof error) == 0 &&
                    bench_report_tool_wait(&tool) == 0;
    }
    return available;
}

/* A number, or null for NaN (JSON has none). */
static void write_number(FILE *out, double value)
{
    if (isnan(value) || isinf(value))
        fputs("null", out);
    else
        fprintf(out, "%.9g", value);
}

/* "NAME": "TEXT" (NULL: null), then end */
static void write_text(FILE *out, const char *name, const char *text, const char *end)
{
    fprintf(out, "\"%s\": ", name);
    if (text)
        bench_json_write_string(out, text);
    else
        fputs("null", out);
    fputs(end, out);
}

static void write_points(FILE *out, const char *name, const double *values, size_t count)
{
    fprintf(out, "\"%s\": [", name);
    for (size_t i = 0; i < count; ++i) {
        fputs(i ? ", " : "", out);
        write_number(out, values[i]);
    }
    fputs("]", out);
}

static void write_panel(FILE *out, const bench_plot_panel *panel)
{
    fputs("  {", out);
    write_text(out, "title", panel->title, ", \"series\": [\n");
    for (size_t s = 0; s < panel->series_count; ++s) {
        const bench_plot_series *series = &panel->series[s];
        fputs("    {", out);
        write_text(out, "title", series->title, ", ");
        fprintf(out, "\"dashed\": %s, \"style\": %d, ", series->dashed ? "true" : "false",
                series->style);
        write_points(out, "x", series->x, series->count);
        fputs(", ", out);
        write_points(out, "y", series->y, series->count);
        fputs(s + 1 < panel->series_count ? "},\n" : "}\n", out);
    }
    fputs("  ]}", out);
}

/* The figure as plots.py reads it (its docstring describes the members). */
static void write_figure(FILE *out, const bench_plot_figure *f)
{
    fputs("{", out);
    write_text(out, "path", f->path, ", ");
    write_text(out, "title", f->title, ", ");
    write_text(out, "x_label", f->x_label, ", ");
    write_text(out, "y_label", f->y_label, ",\n");
    fprintf(out, "\"log_x\": %d, \"log_y\": %d, \"y_min\": ", f->log_x, f->log_y);
    write_number(out, f->y_min);
    fputs(", \"y_max\": ", out);
    write_number(out, f->y_max);
    fputs(", ", out);
    write_text(out, "key", f->key, ",\n\"panels\": [\n");
    for (size_t p = 0; p < f->panel_count; ++p) {
        write_panel(out, &f->panels[p]);
        fputs(p + 1 < f->panel_count ? ",\n" : "\n", out);
    }
    fputs("]}\n", out);
}

int bench_plot_write(const bench_plot_figure *figure, char *error, size_t error_size)
{
    bench_report_tool tool;
    const char *const args[] = {"--figure", "-"};
    if (bench_report_tool_start(&tool, "plots.py", args, 2, 1, 0, error, error_size) != 0)
        return -1;
    write_figure(tool.input, figure);
    const int status = bench_report_tool_wait(&tool);
    if (status != 0) {
        snprintf(error, error_size, "plots.py failed on %s (status %d)", figure->path, status);
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
