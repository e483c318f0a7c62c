/*
 * Small text helpers: bounded copies and appends, shell quoting, CSV and
 * JSON field escaping.
 */
#ifndef ATTN_BENCH_TEXT_H
#define ATTN_BENCH_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Copies text into destination, cut to fit. */
void bench_copy_text(char *destination, size_t size, const char *text);

/* Appends text; -1 (buffer unchanged) when it does not fit. */
int bench_append_text(char *buffer, size_t size, const char *text);

/* Appends text in single quotes for sh; -1 when it does not fit. */
int bench_append_shell_quoted(char *buffer, size_t size, const char *text);

/* Writes text as a JSON string, quotes included. */
void bench_json_write_string(FILE *out, const char *text);

/* Writes text as one CSV field: as it is when it has no comma, quote or
 * line break, else quoted with doubled quotes. */
void bench_csv_write_field(FILE *out, const char *text);

#endif /* ATTN_BENCH_TEXT_H */
