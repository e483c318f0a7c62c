#include "cli/common_options.h"

#include <string.h>

int bench_common_options_read(const bench_option_values *values, size_t base,
                              bench_common_options *common)
{
    bench_repeat_policy *r = &common->repeat;
    size_t seed = 0;
    if (bench_option_count(values, base + BENCH_COMMON_WARMUP, 0, &r->warmup) != 0 ||
        bench_option_count(values, base + BENCH_COMMON_REPEATS, 1, &r->min_repeats) != 0 ||
        bench_option_count(values, base + BENCH_COMMON_MAX_REPEATS, 1, &r->max_repeats) != 0 ||
        bench_option_count(values, base + BENCH_COMMON_SEED, 0, &seed) != 0 ||
        bench_option_ceiling(values, base + BENCH_COMMON_CEILING, common->ceiling_n) != 0 ||
        bench_option_progress(values, base + BENCH_COMMON_PROGRESS, &common->progress) != 0)
        return -1;
    if (bench_cli_parse_seconds(bench_option_text(values, base + BENCH_COMMON_MIN_TIME),
                                &r->min_time_s) != 0)
        return bench_option_fail(values, base + BENCH_COMMON_MIN_TIME,
                                 "a number of seconds >= 0");
    if (r->max_repeats < r->min_repeats)
        r->max_repeats = r->min_repeats;
    common->seed = (uint64_t)seed;
    common->csv_path = bench_option_text(values, base + BENCH_COMMON_CSV);
    common->json_path = bench_option_text(values, base + BENCH_COMMON_JSON);
    if (strcmp(common->json_path, "none") == 0)
        common->json_path = NULL;
    common->list = values->given[base + BENCH_COMMON_LIST] != NULL;
    return 0;
}
