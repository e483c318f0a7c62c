/*
 * Progress of a sweep on standard error: a bar with the elapsed time and an
 * estimate of the time left when standard error is a terminal, one plain line
 * per configuration otherwise (logs, CI), or nothing.
 *
 * The estimate weighs each configuration by a predicted cost (the caller's
 * bench_progress_cost: the timing policy's floor per timed implementation,
 * or the FLOPs of its calls when those take longer), scaled by how long the
 * configurations done so far took against their predicted cost.
 */
#ifndef ATTN_BENCH_PROGRESS_H
#define ATTN_BENCH_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

/* auto: a bar on a terminal, else lines. Their names, in this order, are
 * bench_progress_mode_names (the --progress values). */
typedef enum bench_progress_mode {
    BENCH_PROGRESS_AUTO, BENCH_PROGRESS_BAR, BENCH_PROGRESS_LINES, BENCH_PROGRESS_NONE,
    BENCH_PROGRESS_MODE_COUNT
} bench_progress_mode;

extern const char *const bench_progress_mode_names[BENCH_PROGRESS_MODE_COUNT];

typedef struct bench_progress {
    bench_progress_mode mode; /* BAR, LINES or NONE once started */
    FILE *out;
    size_t total, done;
    double total_cost, done_cost;
    double start_s;
    int bar_visible;
} bench_progress;

void bench_progress_start(bench_progress *progress, bench_progress_mode mode, FILE *out,
                          size_t total, double total_cost);

/* Clears the bar (before other output goes to the same terminal). */
void bench_progress_hide(bench_progress *progress);

/* One configuration of the given predicted cost is done; label names it. */
void bench_progress_step(bench_progress *progress, double cost, const char *label);

/* Clears the bar for good. */
void bench_progress_finish(bench_progress *progress);

#endif /* ATTN_BENCH_PROGRESS_H */
