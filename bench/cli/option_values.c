#include "cli/option_values.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int bench_option_size_list(const bench_option_values *values, size_t id, bench_size_list *list)
{
    char reason[160];
    if (bench_size_list_parse(bench_option_text(values, id), list, reason, sizeof reason) == 0)
        return 0;
    snprintf(values->error, values->error_size, "--%s: %s", values->table->options[id].name,
             reason);
    return -1;
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
