#include "run/resume.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/csv_out.h"
#include "output/csv_read.h"
#include "util/text.h"

/* The header's text as the reader splits it: fields joined by commas. */
static void join_fields(char *const *fields, size_t count, char *text, size_t size)
{
    text[0] = '\0';
    for (size_t i = 0; i < count; ++i) {
        if (i)
            bench_append_text(text, size, ",");
        bench_append_text(text, size, fields[i]);
    }
}

/* " (NAME)", " (NAME, ...)" or "" for count columns whose first is NAME */
static const char *example(char *text, size_t size, size_t count, const char *first)
{
    text[0] = '\0';
    if (count)
        snprintf(text, size, " (%.60s%s)", first, count > 1 ? ", ..." : "");
    return text;
}

/* How the header differs, in words. */
static void describe_difference(const bench_csv_header_diff *diff, char *text, size_t size)
{
    char missing[96], unknown[96];
    example(missing, sizeof missing, diff->missing, diff->first_missing);
    example(unknown, sizeof unknown, diff->unknown, diff->first_unknown);
    if (diff->missing && diff->unknown)
        snprintf(text, size, "it lacks %zu of this attn-bench's columns%s and has %zu it does "
                 "not write%s", diff->missing, missing, diff->unknown, unknown);
    else if (diff->missing)
        snprintf(text, size, "it lacks %zu of this attn-bench's columns%s", diff->missing,
                 missing);
    else if (diff->unknown)
        snprintf(text, size, "it has %zu columns this attn-bench does not write%s",
                 diff->unknown, unknown);
    else
        snprintf(text, size, "its columns are in another order");
}

static int collect_keys(const bench_csv_table *table, bench_resume *resume)
{
    resume->keys = calloc(table->rows ? table->rows : 1, sizeof *resume->keys);
    if (!resume->keys)
        return -1;
    size_t dropout = 0; /* the dropout column (the header is this attn-bench's) */
    while (dropout < table->columns && strcmp(table->fields[dropout], "dropout") != 0)
        ++dropout;
    for (size_t r = 0; r < table->rows; ++r) {
        char key[256];
        char *const *row = table->fields + (r + 1) * table->columns;
        join_fields(row, BENCH_CSV_KEY_COLUMNS, key, sizeof key);
        if (dropout < table->columns) /* rows at several p are distinct configurations */
            snprintf(key + strlen(key), sizeof key - strlen(key), ",%s", row[dropout]);
        resume->keys[r] = malloc(strlen(key) + 1);
        if (!resume->keys[r])
            return -1;
        strcpy(resume->keys[r], key);
        resume->count++;
    }
    return 0;
}

int bench_resume_load(const char *csv_path, bench_resume *resume, char *error,
                      size_t error_size)
{
    memset(resume, 0, sizeof *resume);
    if (access(csv_path, F_OK) != 0)
        return 0;
    bench_csv_table table;
    if (bench_csv_read(csv_path, &table, error, error_size) != 0)
        return -1;
    resume->file_exists = 1;
    bench_csv_header_diff diff;
    bench_csv_compare_header(table.fields, table.columns, &diff);
    if (!diff.same) {
        char detail[320];
        describe_difference(&diff, detail, sizeof detail);
        snprintf(error, error_size,
                 "%s was not written by this attn-bench (its header differs: %s; an older "
                 "attn-bench's CSV lacks e.g. the numpy32 peer's columns): not resuming; "
                 "move it away or give another --csv",
                 csv_path, detail);
        bench_csv_free(&table);
        return -1;
    }
    int result = collect_keys(&table, resume);
    if (result != 0)
        snprintf(error, error_size, "out of memory");
    else if (truncate(csv_path, (off_t)table.valid_length) != 0) {
        snprintf(error, error_size, "%s: cannot cut its unfinished last line: %s", csv_path,
                 strerror(errno));
        result = -1;
    }
    bench_csv_free(&table);
    if (result != 0)
        bench_resume_free(resume);
    return result;
}

int bench_resume_has(const bench_resume *resume, const bench_config *config)
{
    char key[256];
    bench_csv_format_key(config, key, sizeof key);
    snprintf(key + strlen(key), sizeof key - strlen(key), ",%.6g", config->shape.dropout);
    for (size_t i = 0; i < resume->count; ++i)
        if (strcmp(resume->keys[i], key) == 0)
            return 1;
    return 0;
}

void bench_resume_free(bench_resume *resume)
{
    for (size_t i = 0; i < resume->count; ++i)
        free(resume->keys[i]);
    free(resume->keys);
    memset(resume, 0, sizeof *resume);
}
