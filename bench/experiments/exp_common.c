#include "experiments/exp_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

void *bench_exp_for_each_point(bench_exp_run *run, size_t variants, size_t entry_size,
                               int (*measure)(bench_exp_run *run, size_t index,
                                              size_t variant, void *entry))
{
    const size_t count = run->options->hs.count * variants;
    unsigned char *entries = malloc(count * entry_size);
    for (size_t i = 0; entries && i < count; ++i)
        if (measure(run, i / variants, i % variants, entries + i * entry_size) != 0) {
            free(entries);
            return NULL;
        }
    return entries;
}

void bench_exp_plot_path(const bench_exp_run *run, char *path, size_t size)
{
    snprintf(path, size, "%s/%s.png", run->options->out_dir, run->name);
}

int bench_exp_plot(const bench_exp_run *run, bench_plot_figure *figure)
{
    char path[4096], error[256];
    bench_exp_plot_path(run, path, sizeof path);
    figure->path = path;
    if (!bench_plot_available()) {
        printf("# %s: no plot: matplotlib not found (Debian package python3-matplotlib)\n",
               run->name);
        return 0;
    }
    if (bench_plot_write(figure, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench %s: %s\n", run->name, error);
        return -1;
    }
    printf("# %s: plot %s\n", run->name, path);
    return 0;
}

void bench_exp_check(bench_exp_run *run, int holds, const char *format, ...)
{
    run->checks++;
    run->failures += !holds;
    if (!run->options->check)
        return;
    va_list arguments;
    va_start(arguments, format);
    printf("check: %s ", holds ? "PASS" : "FAIL");
    vprintf(format, arguments);
    putchar('\n');
    va_end(arguments);
}

void bench_exp_fill_normal(double *a, size_t count, double scale, bench_rng *rng)
{
    for (size_t i = 0; i < count; ++i)
        a[i] = scale * bench_rng_normal(rng);
}

/* x: the grid's, or the --hs values */
static int grid_x(const bench_exp_run *run, const bench_exp_grid *grid, double **x,
                  size_t *points)
{
    const bench_size_list *hs = &run->options->hs;
    *points = grid->x ? grid->points : hs->count;
    *x = malloc(*points * sizeof **x);
    for (size_t i = 0; *x && i < *points; ++i)
        (*x)[i] = grid->x ? grid->x[i] : (double)hs->values[i];
    return *x ? 0 : -1;
}

int bench_exp_plot_grid(const bench_exp_run *run, const bench_exp_grid *grid)
{
    double *x = NULL;
    size_t points = 0;
    bench_plot_panel *panels = calloc(grid->panel_count, sizeof *panels);
    int status = panels && grid_x(run, grid, &x, &points) == 0 ? 0 : -1;
    for (size_t p = 0; status == 0 && p < grid->panel_count; ++p) {
        bench_plot_panel *panel = &panels[p];
        snprintf(panel->title, sizeof panel->title, "%s", grid->panel_titles[p]);
        panel->series = calloc(grid->series_count, sizeof *panel->series);
        if (!panel->series) {
            status = -1;
            break;
        }
        panel->series_count = grid->series_count;
        for (size_t s = 0; status == 0 && s < grid->series_count; ++s) {
            bench_plot_series *line = &panel->series[s];
            snprintf(line->title, sizeof line->title, "%s", grid->series_titles[s]);
            line->dashed = grid->dashed ? grid->dashed[s] : 0;
            line->count = points;
            line->x = malloc(points * sizeof *line->x);
            line->y = malloc(points * sizeof *line->y);
            if (!line->x || !line->y) {
                status = -1;
                break;
            }
            for (size_t i = 0; i < points; ++i) {
                double y = grid->value(grid->data, p, s, i);
                line->x[i] = x[i];
                line->y[i] = grid->log_y && !(y > 0.0) ? (double)NAN : y;
            }
        }
    }
    bench_plot_figure figure = {.title = grid->title, .x_label = grid->x_label,
                                .y_label = grid->y_label, .log_x = grid->log_x,
                                .log_y = grid->log_y,
                                .y_min = grid->log_y ? (double)NAN : grid->y_min,
                                .y_max = (double)NAN, .key = grid->key, .panels = panels,
                                .panel_count = grid->panel_count};
    if (status == 0)
        status = bench_exp_plot(run, &figure);
    if (panels)
        bench_plot_panels_free(panels, grid->panel_count);
    free(panels);
    free(x);
    return status;
}
