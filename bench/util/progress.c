#include "util/progress.h"

#include <unistd.h>

#include "util/timing.h"

const char *const bench_progress_mode_names[BENCH_PROGRESS_MODE_COUNT] = {"auto", "bar",
                                                                          "lines", "none"};

enum { BAR_WIDTH = 24 };

void bench_progress_start(bench_progress *p, bench_progress_mode mode, FILE *out, size_t total,
                          double total_cost)
{
    if (mode == BENCH_PROGRESS_AUTO)
        mode = isatty(fileno(out)) ? BENCH_PROGRESS_BAR : BENCH_PROGRESS_LINES;
    p->mode = mode;
    p->out = out;
    p->total = total;
    p->done = 0;
    p->total_cost = total_cost;
    p->done_cost = 0.0;
    p->start_s = bench_monotonic_seconds();
    p->bar_visible = 0;
}

/* "m:ss" (or "h:mm:ss") of a number of seconds */
static void format_duration(double seconds, char *text, size_t size)
{
    unsigned long total = seconds > 0.0 ? (unsigned long)(seconds + 0.5) : 0ul;
    if (total >= 3600ul)
        snprintf(text, size, "%lu:%02lu:%02lu", total / 3600ul, total / 60ul % 60ul,
                 total % 60ul);
    else
        snprintf(text, size, "%lu:%02lu", total / 60ul, total % 60ul);
}

static double estimated_seconds_left(const bench_progress *p, double elapsed)
{
    if (p->done_cost <= 0.0)
        return -1.0;
    double left = p->total_cost - p->done_cost;
    return left > 0.0 ? left * elapsed / p->done_cost : 0.0;
}

void bench_progress_hide(bench_progress *p)
{
    if (p->mode == BENCH_PROGRESS_BAR && p->bar_visible) {
        fputs("\r\033[K", p->out);
        fflush(p->out);
        p->bar_visible = 0;
    }
}

static void draw_bar(bench_progress *p, const char *elapsed_text, const char *left_text,
                     const char *label)
{
    size_t filled = p->total ? p->done * BAR_WIDTH / p->total : BAR_WIDTH;
    char bar[BAR_WIDTH + 1];
    for (size_t i = 0; i < BAR_WIDTH; ++i)
        bar[i] = i < filled ? '=' : (i == filled ? '>' : ' ');
    bar[BAR_WIDTH] = '\0';
    unsigned percent = p->total ? (unsigned)(p->done * 100 / p->total) : 100u;
    fprintf(p->out, "\r\033[K[%s] %zu/%zu %3u%%  %s elapsed, ETA %s  %.40s", bar, p->done,
            p->total, percent, elapsed_text, left_text, label);
    fflush(p->out);
    p->bar_visible = 1;
}

void bench_progress_step(bench_progress *p, double cost, const char *label)
{
    p->done++;
    p->done_cost += cost;
    if (p->mode == BENCH_PROGRESS_NONE)
        return;
    double elapsed = bench_monotonic_seconds() - p->start_s;
    double left = estimated_seconds_left(p, elapsed);
    char elapsed_text[32], left_text[32];
    format_duration(elapsed, elapsed_text, sizeof elapsed_text);
    if (left < 0.0)
        snprintf(left_text, sizeof left_text, "?");
    else
        format_duration(left, left_text, sizeof left_text);
    if (p->mode == BENCH_PROGRESS_BAR) {
        draw_bar(p, elapsed_text, left_text, label);
        return;
    }
    fprintf(p->out, "attn-bench: [%zu/%zu] %s done; %s elapsed, about %s left\n", p->done,
            p->total, label, elapsed_text, left_text);
    fflush(p->out);
}

void bench_progress_finish(bench_progress *p)
{
    bench_progress_hide(p);
}
