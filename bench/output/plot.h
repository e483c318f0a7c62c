/*
 * PNG plots through matplotlib: a figure is a grid of panels, each with line
 * series of (x, y) points; attn-bench writes it as JSON to the standard
 * input of the report tool's plotting script (`python3 bench/report/plots.py
 * --figure -`, output/report_tool.h), the code that draws the report's
 * plots too. Without python3 or matplotlib nothing is drawn and the caller
 * says so.
 */
#ifndef ATTN_BENCH_PLOT_H
#define ATTN_BENCH_PLOT_H

#include <stddef.h>

typedef struct bench_plot_series {
    char title[96];
    double *x, *y; /* count points; NaN y values are left out */
    size_t count;
    int dashed;    /* peers dashed, attn solid */
    int style;     /* line style 1..9 (colour and marker); 0: by position */
} bench_plot_series;

typedef struct bench_plot_panel {
    char title[256];
    bench_plot_series *series;
    size_t series_count;
} bench_plot_panel;

typedef struct bench_plot_figure {
    const char *path;  /* the PNG */
    const char *title; /* over the whole figure */
    const char *x_label, *y_label;
    int log_x;         /* 0: linear; else the log base (2, 10) */
    int log_y;
    double y_min, y_max; /* NaN: automatic */
    const char *key;     /* legend placement: "below" (each panel's), or words of top,
                            bottom, left, right, center ("bottom left"); NULL: top left */
    const bench_plot_panel *panels;
    size_t panel_count;
} bench_plot_figure;

/* Whether python3 can import matplotlib (asked once). */
int bench_plot_available(void);

/* Draws the figure. Returns 0, or -1 with the reason in error. */
int bench_plot_write(const bench_plot_figure *figure, char *error, size_t error_size);

/* Frees every series' x and y of count panels (and the series arrays). */
void bench_plot_panels_free(bench_plot_panel *panels, size_t count);

#endif /* ATTN_BENCH_PLOT_H */
