#include "output/csv_row.h"

#include <stdarg.h>

#include "util/text.h"

void bench_csv_row_start(bench_csv_row *row, FILE *out)
{
    row->out = out;
    row->fields = 0;
}

/* The comma before every field but the first. */
static void next_field(bench_csv_row *row)
{
    if (row->fields++)
        fputc(',', row->out);
}

void bench_csv_number(bench_csv_row *row, int present, const char *format, ...)
{
    next_field(row);
    if (!present)
        return;
    va_list args;
    va_start(args, format);
    vfprintf(row->out, format, args);
    va_end(args);
}

void bench_csv_text(bench_csv_row *row, const char *text)
{
    next_field(row);
    bench_csv_write_field(row->out, text ? text : "");
}

void bench_csv_empty(bench_csv_row *row, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        next_field(row);
}

void bench_csv_joined(bench_csv_row *row, const char *fields, size_t count)
{
    next_field(row);
    fputs(fields, row->out);
    row->fields += count - 1;
}

void bench_csv_fraction(bench_csv_row *row, double value, double of)
{
    const int present = value > 0.0 && of > 0.0;
    bench_csv_number(row, present, "%.4g", present ? value / of : 0.0);
}

int bench_csv_row_end(bench_csv_row *row, size_t columns)
{
    fputc('\n', row->out);
    const int written = fflush(row->out) == 0 && !ferror(row->out);
    return written && row->fields == columns ? 0 : -1;
}

size_t bench_csv_count_columns(const char *header)
{
    size_t columns = 1;
    for (const char *c = header; *c; ++c)
        columns += *c == ',';
    return columns;
}
