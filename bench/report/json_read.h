/*
 * A small JSON reader (RFC 8259 values; \u escapes become UTF-8, surrogate
 * pairs included) for reading a run's JSON back in `attn-bench report`.
 */
#ifndef ATTN_BENCH_JSON_READ_H
#define ATTN_BENCH_JSON_READ_H

#include <stddef.h>

typedef enum bench_json_kind {
    BENCH_JSON_NULL,
    BENCH_JSON_BOOL,
    BENCH_JSON_NUMBER,
    BENCH_JSON_STRING,
    BENCH_JSON_ARRAY,
    BENCH_JSON_OBJECT
} bench_json_kind;

typedef struct bench_json {
    bench_json_kind kind;
    double number;             /* NUMBER; BOOL: 0 or 1 */
    char *string;              /* STRING */
    struct bench_json *items;  /* ARRAY and OBJECT: count values */
    char **keys;               /* OBJECT: count keys */
    size_t count;
} bench_json;

/* Parses text into *value. Returns 0, or -1 with the reason in error. */
int bench_json_parse(const char *text, bench_json *value, char *error, size_t error_size);

/* Reads and parses a file. */
int bench_json_read_file(const char *path, bench_json *value, char *error, size_t error_size);

void bench_json_free(bench_json *value);

/* The member called key of an object; NULL when absent or not an object. */
const bench_json *bench_json_member(const bench_json *object, const char *key);

/* The member's string, or fallback when absent or not a string. */
const char *bench_json_string(const bench_json *object, const char *key, const char *fallback);

/* The member's number, or fallback. */
double bench_json_number(const bench_json *object, const char *key, double fallback);

#endif /* ATTN_BENCH_JSON_READ_H */
