/*
 * Output folders: experiments and reports write into a folder they create
 * when it is missing (like mkdir -p).
 */
#ifndef ATTN_BENCH_FILES_H
#define ATTN_BENCH_FILES_H

#include <stddef.h>

/* Creates path and its missing parents. Returns 0, or -1 with the reason. */
int bench_make_directories(const char *path, char *error, size_t error_size);

#endif /* ATTN_BENCH_FILES_H */
