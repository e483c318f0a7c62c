/*
 * Reading a CSV file written by attn-bench (or an experiment) back: the
 * header row and the complete data rows, as text. Fields may be quoted
 * ("a,b", "" for a quote). A last line without its newline is an
 * interrupted write: it is left out, and valid_length tells where the
 * complete rows end (--resume truncates the file there).
 */
#ifndef ATTN_BENCH_CSV_READ_H
#define ATTN_BENCH_CSV_READ_H

#include <stddef.h>

typedef struct bench_csv_table {
    char *text;           /* the file's text; the fields point into it */
    char **fields;        /* (rows + 1) x columns, the header row first */
    size_t columns, rows; /* data rows */
    size_t valid_length;  /* bytes up to the end of the last complete line */
} bench_csv_table;

/* Returns 0, or -1 with the reason in error (cannot read, no header, a row
 * with another number of fields than the header). */
int bench_csv_read(const char *path, bench_csv_table *table, char *error, size_t error_size);

void bench_csv_free(bench_csv_table *table);

/* The field of data row `row` in column `column` (row 0 is the first data
 * row); "" for column < 0. */
const char *bench_csv_cell(const bench_csv_table *table, size_t row, int column);

#endif /* ATTN_BENCH_CSV_READ_H */
