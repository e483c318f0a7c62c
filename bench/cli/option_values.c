#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "cli/option_values.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/sweep_file.h"

/* The text given for the table's option called name, or NULL. */
static const char *given_by_name(const bench_option_values *values, const char *name)
{
    const int id = bench_cli_find(values->table, name, strlen(name));
    return id < 0 ? NULL : values->given[id];
}

bench_options_outcome bench_option_values_collect(bench_option_values *values, int argc,
                                                  char **argv, int first,
                                                  const size_t *exclusive,
                                                  size_t exclusive_count,
                                                  const char **sweep_path, char **sweep_text)
{
    const bench_cli_table *table = values->table;
    *sweep_path = NULL;
    if (bench_cli_collect(table, argc, argv, first, values->given, NULL, 0, NULL, values->error,
                          values->error_size) != 0)
        return BENCH_OPTIONS_BAD;
    if (given_by_name(values, "help"))
        return BENCH_OPTIONS_HELP;
    *sweep_path = given_by_name(values, "sweep");
    if (*sweep_path) {
        const char **from_file = calloc(table->count, sizeof *from_file);
        if (!from_file) {
            snprintf(values->error, values->error_size, "out of memory");
            return BENCH_OPTIONS_BAD;
        }
        if (bench_sweep_file_read(*sweep_path, table, from_file, sweep_text, values->error,
                                  values->error_size) != 0) {
            free(from_file);
            return BENCH_OPTIONS_BAD;
        }
        /* options that exclude each other: the command line's choice wins */
        int chosen = 0;
        for (size_t i = 0; i < exclusive_count; ++i)
            chosen |= values->given[exclusive[i]] != NULL;
        for (size_t i = 0; chosen && i < exclusive_count; ++i)
            from_file[exclusive[i]] = NULL;
        for (size_t i = 0; i < table->count; ++i)
            if (!values->given[i])
                values->given[i] = from_file[i];
        free(from_file);
    }
    values->quick = given_by_name(values, "quick") != NULL;
    return BENCH_OPTIONS_RUN;
}

char *bench_option_command_line(const char *program, int argc, char **argv, int first)
{
    size_t length = strlen(program) + 1;
    for (int i = first; i < argc; ++i)
        length += strlen(argv[i]) + 1;
    char *line = malloc(length);
    if (!line)
        return NULL;
    strcpy(line, program);
    for (int i = first; i < argc; ++i) {
        strcat(line, " ");
        strcat(line, argv[i]);
    }
    return line;
}

const char *bench_option_text(const bench_option_values *values, size_t id)
{
    return bench_cli_resolved(values->table, values->given, id, values->quick);
}

int bench_option_fail(const bench_option_values *values, size_t id, const char *what)
{
    snprintf(values->error, values->error_size, "--%s: '%s' is not %s",
             values->table->options[id].name, bench_option_text(values, id), what);
    return -1;
}

/* text parsed as option id's size list; 0, or -1 with the reason */
static int size_list_of(const bench_option_values *values, size_t id, const char *text,
                        bench_size_list *list)
{
    char reason[160];
    if (bench_size_list_parse(text, list, reason, sizeof reason) == 0)
        return 0;
    snprintf(values->error, values->error_size, "--%s: %s", values->table->options[id].name,
             reason);
    return -1;
}

int bench_option_size_list(const bench_option_values *values, size_t id, bench_size_list *list)
{
    return size_list_of(values, id, bench_option_text(values, id), list);
}

size_t bench_cpus_usable(void)
{
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (size_t)CPU_COUNT(&set);
#endif
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? (size_t)cpus : 1;
}

int bench_option_thread_list(const bench_option_values *values, size_t id,
                             bench_size_list *list)
{
    char text[1024] = "", cpus[32];
    snprintf(cpus, sizeof cpus, "%zu", bench_cpus_usable());
    const char *given = bench_option_text(values, id);
    for (const char *item = given; item;) { /* each "cpus" item replaced by the count */
        const char *comma = strchr(item, ',');
        const size_t length = comma ? (size_t)(comma - item) : strlen(item);
        const int is_cpus = length == 4 && strncmp(item, "cpus", 4) == 0;
        const size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, "%s%.*s", used ? "," : "",
                 is_cpus ? (int)strlen(cpus) : (int)length, is_cpus ? cpus : item);
        item = comma ? comma + 1 : NULL;
    }
    return size_list_of(values, id, text, list);
}

int bench_option_count(const bench_option_values *values, size_t id, size_t minimum,
                       size_t *value)
{
    if (bench_cli_parse_count(bench_option_text(values, id), minimum, value) == 0)
        return 0;
    char what[64];
    snprintf(what, sizeof what, "a whole number >= %zu", minimum);
    return bench_option_fail(values, id, what);
}

int bench_option_choices(const bench_option_values *values, size_t id,
                         const char *const *names, size_t name_count, int *chosen,
                         size_t *chosen_count)
{
    if (bench_cli_parse_choices(bench_option_text(values, id), names, name_count, chosen,
                                chosen_count) == 0)
        return 0;
    char list[128], what[160];
    bench_cli_join_names(names, name_count, list, sizeof list);
    snprintf(what, sizeof what, "a list of %s", list);
    return bench_option_fail(values, id, what);
}

int bench_option_ceiling(const bench_option_values *values, size_t id,
                         size_t n[BENCH_DTYPE_COUNT])
{
    const char *text = bench_option_text(values, id);
    if (strcmp(text, "0") == 0) {
        n[BENCH_F32] = n[BENCH_F64] = 0;
        return 0;
    }
    bench_size_list sizes;
    char reason[160];
    int ok = bench_size_list_parse(text, &sizes, reason, sizeof reason) == 0;
    if (ok) {
        ok = sizes.count == 2;
        if (ok) {
            n[BENCH_F32] = sizes.values[0];
            n[BENCH_F64] = sizes.values[1];
        }
        bench_size_list_free(&sizes);
    }
    return ok ? 0 : bench_option_fail(values, id, "two different sizes N32,N64, or 0");
}

int bench_option_progress(const bench_option_values *values, size_t id,
                          bench_progress_mode *mode)
{
    int chosen[BENCH_PROGRESS_MODE_COUNT] = {0}; /* room for a list, which is refused */
    size_t count = 0;
    if (bench_option_choices(values, id, bench_progress_mode_names, BENCH_PROGRESS_MODE_COUNT,
                             chosen, &count) != 0)
        return -1;
    if (count != 1)
        return bench_option_fail(values, id, "one of auto, bar, lines, none");
    *mode = (bench_progress_mode)chosen[0];
    return 0;
}

int bench_option_dropouts(const bench_option_values *values, size_t id, double *list,
                          size_t capacity, size_t *count)
{
    const char *text = bench_option_text(values, id);
    *count = 0;
    for (const char *cursor = text; cursor;) {
        const char *comma = strchr(cursor, ',');
        const size_t length = comma ? (size_t)(comma - cursor) : strlen(cursor);
        char item[64];
        double p = -1.0;
        if (length > 0 && length < sizeof item) {
            memcpy(item, cursor, length);
            item[length] = '\0';
            if (bench_cli_parse_seconds(item, &p) != 0) /* a finite number >= 0 */
                p = -1.0;
        }
        if (!(p >= 0.0 && p < 1.0))
            return bench_option_fail(values, id, "a list of dropout probabilities in [0, 1)");
        cursor = comma ? comma + 1 : NULL;
        int seen = 0;
        for (size_t k = 0; k < *count; ++k)
            seen |= list[k] == p;
        if (seen)
            continue;
        if (*count == capacity)
            return bench_option_fail(values, id, "a list of at most 8 probabilities");
        list[(*count)++] = p;
    }
    return 0;
}
