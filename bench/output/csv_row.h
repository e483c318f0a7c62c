/*
 * A CSV row written field by field, for every command's rows: the commas
 * are the row's to write, text is quoted as needed, and the fields are
 * counted, so that a row that does not match its header is an error
 * instead of a shifted column.
 */
#ifndef ATTN_BENCH_CSV_ROW_H
#define ATTN_BENCH_CSV_ROW_H

#include <stddef.h>
#include <stdio.h>

typedef struct bench_csv_row {
    FILE *out;
    size_t fields; /* written so far */
} bench_csv_row;

void bench_csv_row_start(bench_csv_row *row, FILE *out);

/* A field printf'd from format and what follows it when present, else an
 * empty field (the arguments unused). */
void bench_csv_number(bench_csv_row *row, int present, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* A field of text (quoted when it holds a comma, a quote or a newline). */
void bench_csv_text(bench_csv_row *row, const char *text);

/* count empty fields. */
void bench_csv_empty(bench_csv_row *row, size_t count);

/* count >= 1 fields already joined by commas (a configuration's key). */
void bench_csv_joined(bench_csv_row *row, const char *fields, size_t count);

/* value / of ("%.4g") when both are above 0, else empty: the share columns. */
void bench_csv_fraction(bench_csv_row *row, double value, double of);

/* The newline, flushed. Returns 0, or -1 on a write error or when the row
 * has other than `columns` fields. */
int bench_csv_row_end(bench_csv_row *row, size_t columns);

/* The columns of a header row (its commas + 1). */
size_t bench_csv_count_columns(const char *header);

#endif /* ATTN_BENCH_CSV_ROW_H */
