/*
 * The combinations a sweep leaves out, counted by reason, for the header's
 * and --list's lines (the run command's and the sdpa command's alike).
 */
#ifndef ATTN_BENCH_OMISSIONS_H
#define ATTN_BENCH_OMISSIONS_H

#include <stddef.h>
#include <stdio.h>

#define BENCH_OMISSIONS_MAX_REASONS 8

typedef struct bench_omission {
    const char *reason; /* static text */
    size_t count;
} bench_omission;

typedef struct bench_omissions {
    bench_omission reasons[BENCH_OMISSIONS_MAX_REASONS]; /* in order of first appearance */
    size_t count;
} bench_omissions;

/* Counts one more combination left out for reason (a reason beyond the
 * first BENCH_OMISSIONS_MAX_REASONS is not counted). */
void bench_omissions_add(bench_omissions *omissions, const char *reason);

/* "# left out: N combinations: REASON", a line per reason. */
void bench_omissions_print(FILE *out, const bench_omissions *omissions);

#endif /* ATTN_BENCH_OMISSIONS_H */
