#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/size_list.h"

int bench_cli_find(const bench_cli_table *table, const char *name, size_t name_length)
{
    for (size_t i = 0; i < table->count; ++i)
        if (table->options[i].name && strlen(table->options[i].name) == name_length &&
            strncmp(table->options[i].name, name, name_length) == 0)
            return (int)i;
    return -1;
}

/* One "--name[=value]" argument at argv[*index]; may consume the next one. */
static int collect_option(const bench_cli_table *table, int argc, char **argv, int *index,
                          const char **given, char *error, size_t error_size)
{
    const char *arg = strcmp(argv[*index], "-h") == 0 ? "--help" : argv[*index];
    const char *name = arg + 2;
    const char *equals = strchr(name, '=');
    size_t name_length = equals ? (size_t)(equals - name) : strlen(name);
    int id = bench_cli_find(table, name, name_length);
    if (id < 0) {
        snprintf(error, error_size, "unknown option '--%.*s'", (int)name_length, name);
        return -1;
    }
    const bench_cli_option *spec = &table->options[id];
    if (!spec->argument) {
        if (equals) {
            snprintf(error, error_size, "option --%s takes no value", spec->name);
            return -1;
        }
        given[id] = "1";
        return 0;
    }
    if (equals) {
        given[id] = equals + 1;
    } else if (*index + 1 < argc) {
        given[id] = argv[++*index];
    } else {
        snprintf(error, error_size, "option --%s needs a value (%s)", spec->name,
                 spec->argument);
        return -1;
    }
    if (given[id][0] == '\0') {
        snprintf(error, error_size, "option --%s has an empty value", spec->name);
        return -1;
    }
    return 0;
}

int bench_cli_collect(const bench_cli_table *table, int argc, char **argv, int first,
                      const char **given, const char **positionals, size_t positional_max,
                      size_t *positional_count, char *error, size_t error_size)
{
    if (positional_count)
        *positional_count = 0;
    for (int i = first; i < argc; ++i) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strncmp(arg, "--", 2) == 0) {
            if (collect_option(table, argc, argv, &i, given, error, error_size) != 0)
                return -1;
            continue;
        }
        if (positional_max == 0) {
            snprintf(error, error_size, "unexpected argument '%s' (options start with --)", arg);
            return -1;
        }
        if (*positional_count == positional_max) {
            snprintf(error, error_size, "too many arguments (at most %zu)", positional_max);
            return -1;
        }
        positionals[(*positional_count)++] = arg;
    }
    return 0;
}

const char *bench_cli_resolved(const bench_cli_table *table, const char *const *given,
                               size_t id, int quick)
{
    if (given[id])
        return given[id];
    if (quick && table->options[id].quick_value)
        return table->options[id].quick_value;
    return table->options[id].default_value;
}

void bench_cli_print_options(FILE *out, const bench_cli_table *table)
{
    for (size_t i = 0; i < table->count; ++i) {
        const bench_cli_option *spec = &table->options[i];
        if (!spec->name) /* not an option of this command */
            continue;
        char usage[64];
        snprintf(usage, sizeof usage, "--%s%s%s", spec->name, spec->argument ? " " : "",
                 spec->argument ? spec->argument : "");
        fprintf(out, "  %-24s", usage);
        for (const char *line = spec->help; line;) {
            const char *newline = strchr(line, '\n');
            int length = newline ? (int)(newline - line) : (int)strlen(line);
            fprintf(out, "%.*s\n", length, line);
            line = newline ? newline + 1 : NULL;
            if (line)
                fprintf(out, "  %-24s", "");
        }
        if (spec->default_value || spec->quick_value) {
            fprintf(out, "  %-24s", "");
            if (spec->default_value)
                fprintf(out, "default: %s", spec->default_value);
            if (spec->quick_value)
                fprintf(out, "%s--quick: %s", spec->default_value ? "; " : "",
                        spec->quick_value);
            fputc('\n', out);
        }
    }
}

int bench_cli_parse_count(const char *text, size_t minimum, size_t *value)
{
    size_t parsed = 0;
    if (!text || bench_parse_size(text, &parsed) != 0 || parsed < minimum)
        return -1;
    *value = parsed;
    return 0;
}

int bench_cli_parse_seconds(const char *text, double *seconds)
{
    if (!text)
        return -1;
    errno = 0;
    char *end = NULL;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(value) || value < 0.0)
        return -1;
    *seconds = value;
    return 0;
}

static int find_name(const char *const *names, size_t name_count, const char *item,
                     size_t length)
{
    for (size_t i = 0; i < name_count; ++i)
        if (strlen(names[i]) == length && strncmp(names[i], item, length) == 0)
            return (int)i;
    return -1;
}

int bench_cli_parse_choices(const char *text, const char *const *names, size_t name_count,
                            int *chosen, size_t *chosen_count)
{
    *chosen_count = 0;
    if (!text)
        return -1;
    for (const char *cursor = text;;) {
        const char *comma = strchr(cursor, ',');
        size_t length = comma ? (size_t)(comma - cursor) : strlen(cursor);
        int index = find_name(names, name_count, cursor, length);
        if (index < 0)
            return -1;
        int seen = 0;
        for (size_t i = 0; i < *chosen_count; ++i)
            seen |= chosen[i] == index;
        if (!seen)
            chosen[(*chosen_count)++] = index;
        if (!comma)
            return 0;
        cursor = comma + 1;
    }
}

void bench_cli_join_names(const char *const *names, size_t name_count, char *buffer,
                          size_t size)
{
    size_t used = 0;
    buffer[0] = '\0';
    for (size_t i = 0; i < name_count && used < size; ++i) {
        int written = snprintf(buffer + used, size - used, "%s%s", i ? ", " : "", names[i]);
        if (written < 0)
            return;
        used += (size_t)written;
    }
}
