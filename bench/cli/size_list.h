/*
 * Lists of positive sizes as given on the command line (--T, --C, --hs, --B).
 * A list is comma-separated items; an item is a number or a range:
 *   64,256,1024     the values as written
 *   64:1024:x2      geometric: start, start*2, start*4, ... while <= end
 *   100:400:+100    additive:  start, start+100, ... while <= end
 * Items mix freely ("8,64:256:x2"). Order is kept, repeated values are
 * dropped, and a list has at most BENCH_SIZE_LIST_MAX values.
 */
#ifndef ATTN_BENCH_SIZE_LIST_H
#define ATTN_BENCH_SIZE_LIST_H

#include <stddef.h>

#define BENCH_SIZE_LIST_MAX 4096

typedef struct bench_size_list {
    size_t *values;
    size_t count;
} bench_size_list;

/* Returns 0 and fills *list (free it with bench_size_list_free), or returns
 * -1 with a one-line explanation in error. */
int bench_size_list_parse(const char *text, bench_size_list *list, char *error,
                          size_t error_size);

void bench_size_list_free(bench_size_list *list);

/* The largest value; 0 for an empty list. */
size_t bench_size_list_max(const bench_size_list *list);

/* Parses a whole string as a decimal number without sign; 0 on success. */
int bench_parse_size(const char *text, size_t *value);

#endif /* ATTN_BENCH_SIZE_LIST_H */
