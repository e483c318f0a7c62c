/* Seed fixture reader (see fixture.h). */
#include "support/fixture.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/talloc.h"

#ifndef ATTN_FIXTURE_DIR
#error "define ATTN_FIXTURE_DIR (the directory of the fixture files)"
#endif

#define FIXTURE_MAX_ARRAYS 32
#define FIXTURE_NAME_MAX 32

typedef struct fixture_array_entry {
    char name[FIXTURE_NAME_MAX];
    size_t rows, cols;
    double *data;
} fixture_array_entry;

struct fixture {
    char path[512];
    size_t count;
    fixture_array_entry arrays[FIXTURE_MAX_ARRAYS];
};

static void fixture_fail(const fixture *f, const char *what)
{
    print_error("fixture %s: %s\n", f->path, what);
    fail();
}

static char *read_file(fixture *f)
{
    FILE *file = fopen(f->path, "rb");
    if (file == NULL)
        fixture_fail(f, strerror(errno));
    char *text = NULL;
    size_t used = 0, capacity = 0;
    for (;;) {
        if (capacity - used < 4096) {
            char *bigger = talloc(capacity * 2 + 4096);
            if (used > 0)
                memcpy(bigger, text, used);
            text = bigger;
            capacity = capacity * 2 + 4096;
        }
        size_t got = fread(text + used, 1, capacity - used - 1, file);
        used += got;
        if (got == 0)
            break;
    }
    int error = ferror(file);
    fclose(file);
    if (error)
        fixture_fail(f, "read error");
    text[used] = '\0';
    return text;
}

fixture *fixture_load(const char *file)
{
    fixture *f = talloc(sizeof *f);
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s/%s", ATTN_FIXTURE_DIR, file);
    char *text = read_file(f);

    for (char *line = text; *line != '\0';) {
        char *end = strchr(line, '\n');
        char *next = end != NULL ? end + 1 : line + strlen(line);
        if (line[0] == '@') {
            if (f->count == FIXTURE_MAX_ARRAYS)
                fixture_fail(f, "too many arrays");
            fixture_array_entry *a = &f->arrays[f->count++];
            char name[FIXTURE_NAME_MAX + 1];
            if (sscanf(line, "@ %32s %zu %zu", name, &a->rows, &a->cols) != 3 ||
                strlen(name) >= FIXTURE_NAME_MAX || a->rows == 0 || a->cols == 0)
                fixture_fail(f, "bad array header");
            strcpy(a->name, name);
            a->data = talloc_doubles(a->rows * a->cols);
            char *p = next;
            for (size_t i = 0; i < a->rows * a->cols; i++) {
                char *after;
                errno = 0;
                a->data[i] = strtod(p, &after);
                if (after == p || (errno == ERANGE && fabs(a->data[i]) > 1.0))
                    fixture_fail(f, "bad or missing number");
                p = after;
            }
            next = p;
            while (*next == ' ' || *next == '\n' || *next == '\r')
                next++;
        } else if (line[0] != '#' && line[0] != '\n' && line[0] != '\0') {
            fixture_fail(f, "unexpected line");
        }
        line = next;
    }
    return f;
}

const double *fixture_array(const fixture *f, const char *name, size_t rows, size_t cols)
{
    for (size_t i = 0; i < f->count; i++) {
        const fixture_array_entry *a = &f->arrays[i];
        if (strcmp(a->name, name) != 0)
            continue;
        if (a->rows != rows || a->cols != cols) {
            print_error("fixture %s: %s is (%zu,%zu), expected (%zu,%zu)\n", f->path, name,
                        a->rows, a->cols, rows, cols);
            fail();
        }
        return a->data;
    }
    print_error("fixture %s: no array %s\n", f->path, name);
    fail();
    return NULL;
}
