/*
 * The results table on standard output: one line per configuration, printed
 * as soon as it is done.
 */
#ifndef ATTN_BENCH_TABLE_H
#define ATTN_BENCH_TABLE_H

#include <stdio.h>

#include "measure/measure.h"

void bench_table_print_header(FILE *out);
void bench_table_print_row(FILE *out, const bench_point *point);

/* The table's columns and their meaning, for --help. */
void bench_table_print_columns(FILE *out);

#endif /* ATTN_BENCH_TABLE_H */
