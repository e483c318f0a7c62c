#include "cli/size_list.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_parse_size(const char *text, size_t *value)
{
    if (text[0] < '0' || text[0] > '9')
        return -1; /* no sign, no blanks, not empty */
    errno = 0;
    char *end = NULL;
    unsigned long long parsed = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || parsed > SIZE_MAX)
        return -1;
    *value = (size_t)parsed;
    return 0;
}

static int size_list_append(bench_size_list *list, size_t value)
{
    for (size_t i = 0; i < list->count; ++i)
        if (list->values[i] == value)
            return 0;
    if (list->count == BENCH_SIZE_LIST_MAX)
        return -1;
    list->values[list->count++] = value;
    return 0;
}

/* One range item "start:end:STEP", STEP being "x<factor>" or "+<increment>". */
static int size_list_append_range(bench_size_list *list, char *item, char *error,
                                  size_t error_size)
{
    char *first_colon = strchr(item, ':');
    char *second_colon = first_colon ? strchr(first_colon + 1, ':') : NULL;
    if (!second_colon || strchr(second_colon + 1, ':')) {
        snprintf(error, error_size, "range '%s' is not START:END:xFACTOR or START:END:+STEP",
                 item);
        return -1;
    }
    *first_colon = '\0';
    *second_colon = '\0';
    const char *step_text = second_colon + 1;
    size_t start = 0, end = 0, step = 0;
    int geometric = step_text[0] == 'x';
    if (bench_parse_size(item, &start) != 0 || bench_parse_size(first_colon + 1, &end) != 0 ||
        (step_text[0] != 'x' && step_text[0] != '+') ||
        bench_parse_size(step_text + 1, &step) != 0) {
        snprintf(error, error_size, "range '%s:%s:%s' is not START:END:xFACTOR or START:END:+STEP",
                 item, first_colon + 1, step_text);
        return -1;
    }
    if (start == 0 || start > end || step < (geometric ? 2u : 1u)) {
        snprintf(error, error_size,
                 "range '%s:%s:%s' needs 0 < START <= END and a factor >= 2 or a step >= 1",
                 item, first_colon + 1, step_text);
        return -1;
    }
    for (size_t value = start;;) {
        if (size_list_append(list, value) != 0) {
            snprintf(error, error_size, "more than %d values", BENCH_SIZE_LIST_MAX);
            return -1;
        }
        /* value <= end here; stop when the next value would pass END (this
         * form cannot overflow) */
        if (geometric ? value > end / step : step > end - value)
            break;
        value = geometric ? value * step : value + step;
    }
    return 0;
}

int bench_size_list_parse(const char *text, bench_size_list *list, char *error,
                          size_t error_size)
{
    list->values = malloc(BENCH_SIZE_LIST_MAX * sizeof *list->values);
    list->count = 0;
    char *copy = malloc(strlen(text) + 1);
    if (!list->values || !copy) {
        free(copy);
        bench_size_list_free(list);
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    strcpy(copy, text);

    int result = 0;
    for (char *item = copy; item && result == 0;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        size_t value = 0;
        if (strchr(item, ':')) {
            result = size_list_append_range(list, item, error, error_size);
        } else if (bench_parse_size(item, &value) != 0 || value == 0) {
            snprintf(error, error_size, "'%s' is not a positive whole number", item);
            result = -1;
        } else if (size_list_append(list, value) != 0) {
            snprintf(error, error_size, "more than %d values", BENCH_SIZE_LIST_MAX);
            result = -1;
        }
        item = comma ? comma + 1 : NULL;
    }
    free(copy);
    if (result != 0)
        bench_size_list_free(list);
    return result;
}

size_t bench_size_list_max(const bench_size_list *list)
{
    size_t largest = 0;
    for (size_t i = 0; i < list->count; ++i)
        largest = list->values[i] > largest ? list->values[i] : largest;
    return largest;
}

void bench_size_list_free(bench_size_list *list)
{
    free(list->values);
    list->values = NULL;
    list->count = 0;
}
