#include "output/columns.h"

#include <string.h>

#include "util/text.h"

void bench_columns_print_row(FILE *out, int width, const char *name, const char *meaning)
{
    fprintf(out, "  %-*s ", width, name);
    for (const char *line = meaning; line;) {
        const char *newline = strchr(line, '\n');
        fprintf(out, "%.*s\n", newline ? (int)(newline - line) : (int)strlen(line), line);
        line = newline ? newline + 1 : NULL;
        if (line)
            fprintf(out, "  %-*s ", width, "");
    }
}

void bench_columns_print(FILE *out, int width, const char *const (*columns)[2], size_t count)
{
    for (size_t i = 0; i < count; ++i)
        bench_columns_print_row(out, width, columns[i][0], columns[i][1]);
}

void bench_columns_join_names(char *header, size_t size, const char *const (*columns)[2],
                              size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        bench_append_text(header, size, i ? "," : "");
        bench_append_text(header, size, columns[i][0]);
    }
}

void bench_columns_print_share(FILE *out, double value, double of)
{
    if (value > 0.0 && of > 0.0)
        fprintf(out, " %4.0f%%", 100.0 * value / of);
    else
        fprintf(out, " %5s", "-");
}

void bench_columns_print_check(FILE *out, bench_point_status status, int skipped, double error,
                               double dropout)
{
    if (status == BENCH_POINT_CHECK_FAILED)
        fprintf(out, "%8s", "FAIL");
    else if (status != BENCH_POINT_TIMED)
        fprintf(out, "%8s", "ERROR");
    else if (skipped)
        fprintf(out, "%8s", "skip");
    else if (dropout > 0.0) /* checked before the timing, at p = 0 */
        fprintf(out, "%5.0e@p0", error);
    else
        fprintf(out, "%8.1e", error);
}

void bench_columns_print_attn(FILE *out, const bench_attn_cells *c)
{
    if (!c->timed) {
        fprintf(out, " %9s %4s %8s %5s %5s", "-", "-", "-", "-", "-");
        return;
    }
    fprintf(out, " %9.4g %4zu %8.2f", c->median_s * 1e3, c->threads, c->gflops);
    bench_columns_print_share(out, c->share_gflops, c->peak_gflops);
    bench_columns_print_share(out, c->share_gflops, c->ceiling_gflops);
}
