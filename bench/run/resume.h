/*
 * --resume: the configurations an existing CSV already has. Its header must
 * be this version's header exactly (else resuming would mix schemas); an
 * unfinished last line (an interrupted write) is cut off. Every complete row
 * counts as done, whatever its status: rerunning a failed check would fail
 * again (delete the row to rerun it).
 */
#ifndef ATTN_BENCH_RESUME_H
#define ATTN_BENCH_RESUME_H

#include <stddef.h>

#include "measure/config.h"

typedef struct bench_resume {
    char **keys; /* the key columns of each finished row (csv_out.h) */
    size_t count;
    int file_exists; /* 0: the CSV is new (write its header) */
} bench_resume;

/* Reads csv_path (a missing file is an empty resume) and truncates it after
 * its last complete row. Returns 0, or -1 with the reason in error. */
int bench_resume_load(const char *csv_path, bench_resume *resume, char *error,
                      size_t error_size);

/* Whether the configuration has a row already. */
int bench_resume_has(const bench_resume *resume, const bench_config *config);

void bench_resume_free(bench_resume *resume);

#endif /* ATTN_BENCH_RESUME_H */
