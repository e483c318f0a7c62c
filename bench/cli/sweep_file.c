#include "cli/sweep_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWEEP_FILE_MAX_BYTES (1u << 20)

static char *read_whole_file(const char *path, char *error, size_t error_size)
{
    FILE *file = fopen(path, "r");
    if (!file) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *text = malloc(SWEEP_FILE_MAX_BYTES + 1);
    size_t length = text ? fread(text, 1, SWEEP_FILE_MAX_BYTES + 1, file) : 0;
    int failed = !text || ferror(file);
    fclose(file);
    if (failed || length > SWEEP_FILE_MAX_BYTES) {
        snprintf(error, error_size, "%s: %s", path,
                 failed ? "cannot be read" : "is larger than 1 MiB");
        free(text);
        return NULL;
    }
    text[length] = '\0';
    return text;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Removes every blank of text in place. */
static void remove_blanks(char *text)
{
    char *to = text;
    for (const char *from = text; *from; ++from)
        if (!is_blank(*from))
            *to++ = *from;
    *to = '\0';
}

/* 1 for a true flag value, 0 for a false one, -1 otherwise. */
static int flag_value(const char *text)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off"};
    for (size_t i = 0; i < 4; ++i) {
        if (strcmp(text, yes[i]) == 0)
            return 1;
        if (strcmp(text, no[i]) == 0)
            return 0;
    }
    return -1;
}

/* One line, comments already cut. Returns 0, or -1 with the reason. */
static int take_line(char *line, const bench_cli_table *table, const char **given,
                     char *reason, size_t reason_size)
{
    char *equals = strchr(line, '=');
    if (!equals) {
        remove_blanks(line);
        if (line[0])
            snprintf(reason, reason_size, "'%s' is not 'name = value'", line);
        return line[0] ? -1 : 0;
    }
    *equals = '\0';
    char *name = line, *value = equals + 1;
    remove_blanks(name);
    remove_blanks(value);
    int id = bench_cli_find(table, name, strlen(name));
    if (id < 0 || strcmp(name, "sweep") == 0 || strcmp(name, "help") == 0) {
        snprintf(reason, reason_size, "'%s' is not an option a sweep file can set", name);
        return -1;
    }
    if (!value[0]) {
        snprintf(reason, reason_size, "%s has an empty value", name);
        return -1;
    }
    if (!table->options[id].argument) {
        int flag = flag_value(value);
        if (flag < 0) {
            snprintf(reason, reason_size, "%s is a flag: yes or no, not '%s'", name, value);
            return -1;
        }
        given[id] = flag ? "1" : NULL;
        return 0;
    }
    given[id] = value;
    return 0;
}

int bench_sweep_file_read(const char *path, const bench_cli_table *table, const char **given,
                          char **storage, char *error, size_t error_size)
{
    *storage = read_whole_file(path, error, error_size);
    if (!*storage)
        return -1;
    size_t line_number = 0;
    for (char *line = *storage; line;) {
        char *newline = strchr(line, '\n');
        if (newline)
            *newline = '\0';
        char *comment = strchr(line, '#');
        if (comment)
            *comment = '\0';
        line_number++;
        char reason[256];
        if (take_line(line, table, given, reason, sizeof reason) != 0) {
            snprintf(error, error_size, "%s:%zu: %s", path, line_number, reason);
            return -1;
        }
        line = newline ? newline + 1 : NULL;
    }
    return 0;
}
