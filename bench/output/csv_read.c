#include "output/csv_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path, size_t *length, char *error, size_t error_size)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t capacity = 1 << 16, used = 0;
    char *text = malloc(capacity);
    while (text) {
        used += fread(text + used, 1, capacity - used - 1, file);
        if (used < capacity - 1 || feof(file))
            break;
        char *grown = realloc(text, capacity * 2);
        if (!grown) {
            free(text);
            text = NULL;
            break;
        }
        text = grown;
        capacity *= 2;
    }
    int failed = !text || ferror(file);
    fclose(file);
    if (failed) {
        free(text);
        snprintf(error, error_size, "%s: cannot be read", path);
        return NULL;
    }
    text[used] = '\0';
    *length = used;
    return text;
}

/* Splits one line (at *cursor, ending at a newline outside quotes) into
 * fields in place; returns the field count, the fields in fields[] (when not
 * NULL, at most max), and moves *cursor past the line. -1 when the line has
 * no newline (an interrupted write). */
static long split_line(char **cursor, char **fields, size_t max)
{
    char *read = *cursor, *write = *cursor, *field = *cursor;
    long count = 0;
    int quoted = 0;
    for (;; ++read) {
        char c = *read;
        if (c == '\0')
            return -1;
        if (quoted) {
            if (c == '"' && read[1] == '"')
                *write++ = *read++;
            else if (c == '"')
                quoted = 0;
            else
                *write++ = c;
            continue;
        }
        if (c == '"') {
            quoted = 1;
            continue;
        }
        if (c == ',' || c == '\n') {
            int end_of_line = c == '\n';
            if (write > field && write[-1] == '\r')
                write--;
            *write = '\0';
            if (fields && (size_t)count < max)
                fields[count] = field;
            count++;
            field = write = read + 1;
            if (end_of_line) {
                *cursor = read + 1;
                return count;
            }
            continue;
        }
        *write++ = c;
    }
}

static size_t count_lines(const char *text)
{
    size_t lines = 0;
    for (; *text; ++text)
        lines += *text == '\n';
    return lines;
}

int bench_csv_read(const char *path, bench_csv_table *table, char *error, size_t error_size)
{
    memset(table, 0, sizeof *table);
    size_t length = 0;
    table->text = read_file(path, &length, error, error_size);
    if (!table->text)
        return -1;
    char *cursor = table->text;
    char *probe_copy = malloc(length + 1); /* splitting writes: count on a copy */
    long columns = -1;
    if (probe_copy) {
        memcpy(probe_copy, table->text, length + 1);
        char *probe = probe_copy;
        columns = split_line(&probe, NULL, 0);
        free(probe_copy);
    }
    if (columns <= 0) {
        snprintf(error, error_size, "%s: no header row", path);
        bench_csv_free(table);
        return -1;
    }
    table->columns = (size_t)columns;
    table->fields = malloc((count_lines(table->text) + 1) * table->columns * sizeof(char *));
    if (!table->fields) {
        snprintf(error, error_size, "%s: out of memory", path);
        bench_csv_free(table);
        return -1;
    }
    size_t line = 0;
    for (;;) {
        long count = split_line(&cursor, table->fields + line * table->columns, table->columns);
        if (count < 0)
            break; /* end of text, or an unfinished last line */
        if ((size_t)count != table->columns) {
            snprintf(error, error_size, "%s: line %zu has %ld fields, the header %zu", path,
                     line + 1, count, table->columns);
            bench_csv_free(table);
            return -1;
        }
        table->valid_length = (size_t)(cursor - table->text);
        line++;
    }
    table->rows = line - 1;
    return 0;
}

void bench_csv_free(bench_csv_table *table)
{
    free(table->text);
    free(table->fields);
    memset(table, 0, sizeof *table);
}

const char *bench_csv_cell(const bench_csv_table *table, size_t row, int column)
{
    if (column < 0 || (size_t)column >= table->columns || row >= table->rows)
        return "";
    return table->fields[(row + 1) * table->columns + (size_t)column];
}
