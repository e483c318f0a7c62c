#include "measure/omissions.h"

#include <string.h>

void bench_omissions_add(bench_omissions *omissions, const char *reason)
{
    for (size_t i = 0; i < omissions->count; ++i)
        if (strcmp(omissions->reasons[i].reason, reason) == 0) {
            omissions->reasons[i].count++;
            return;
        }
    if (omissions->count < BENCH_OMISSIONS_MAX_REASONS)
        omissions->reasons[omissions->count++] = (bench_omission){reason, 1};
}

void bench_omissions_print(FILE *out, const bench_omissions *omissions)
{
    for (size_t i = 0; i < omissions->count; ++i)
        fprintf(out, "# left out: %zu combinations: %s\n", omissions->reasons[i].count,
                omissions->reasons[i].reason);
}
