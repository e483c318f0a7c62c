#include "cli/common_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/option_table.h"

static const char *const binary_names[2] = {"0", "1"};

static int read_timing(const bench_option_values *values, bench_common_options *common)
{
    bench_repeat_policy *r = &common->repeat;
    size_t seed = 0;
    if (bench_option_count(values, BENCH_OPT_WARMUP, 0, &r->warmup) != 0 ||
        bench_option_count(values, BENCH_OPT_REPEATS, 1, &r->min_repeats) != 0 ||
        bench_option_count(values, BENCH_OPT_MAX_REPEATS, 1, &r->max_repeats) != 0 ||
        bench_option_count(values, BENCH_OPT_SEED, 0, &seed) != 0 ||
        bench_option_ceiling(values, BENCH_OPT_CEILING, common->ceiling_n) != 0 ||
        bench_option_progress(values, BENCH_OPT_PROGRESS, &common->progress) != 0)
        return -1;
    if (bench_cli_parse_seconds(bench_option_text(values, BENCH_OPT_MIN_TIME),
                                &r->min_time_s) != 0)
        return bench_option_fail(values, BENCH_OPT_MIN_TIME, "a number of seconds >= 0");
    if (r->max_repeats < r->min_repeats)
        r->max_repeats = r->min_repeats;
    common->seed = (uint64_t)seed;
    return 0;
}

/* --csv none: the rows still go to a file, since the JSON and --report are
 * made from it, a temporary one (TMPDIR, else /tmp) that
 * bench_common_options_free removes. */
static int make_csv_scratch(const bench_option_values *values, bench_common_options *common)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0')
        dir = "/tmp";
    const size_t size = strlen(dir) + sizeof "/attn-bench-csv-XXXXXX";
    common->csv_scratch = malloc(size);
    if (common->csv_scratch == NULL) {
        snprintf(values->error, values->error_size, "out of memory");
        return -1;
    }
    snprintf(common->csv_scratch, size, "%s/attn-bench-csv-XXXXXX", dir);
    const int fd = mkstemp(common->csv_scratch);
    if (fd < 0) {
        snprintf(values->error, values->error_size,
                 "--csv none: cannot make a temporary file in %s for the rows", dir);
        free(common->csv_scratch);
        common->csv_scratch = NULL;
        return -1;
    }
    close(fd);
    common->csv_path = common->csv_scratch;
    return 0;
}

int bench_common_options_read(const bench_option_values *values, bench_common_options *common)
{
    if (read_timing(values, common) != 0 ||
        bench_option_thread_list(values, BENCH_OPT_THREADS, &common->threads) != 0 ||
        bench_option_choices(values, BENCH_OPT_CAUSAL, binary_names, 2, common->causal,
                             &common->causal_count) != 0 ||
        bench_option_dropouts(values, BENCH_OPT_DROPOUT, common->dropouts, BENCH_MAX_DROPOUTS,
                              &common->dropout_count) != 0)
        return -1;
    common->csv_path = common->csv_name = bench_option_text(values, BENCH_OPT_CSV);
    if (strcmp(common->csv_name, "none") == 0 && make_csv_scratch(values, common) != 0)
        return -1;
    common->json_path = bench_option_text(values, BENCH_OPT_JSON);
    if (strcmp(common->json_path, "none") == 0)
        common->json_path = NULL;
    common->list = values->given[BENCH_OPT_LIST] != NULL;
    common->profile = values->given[BENCH_OPT_PROFILE] != NULL;
    common->torch_python = bench_option_text(values, BENCH_OPT_TORCH_PYTHON);
    common->attn_python = bench_option_text(values, BENCH_OPT_ATTN_PYTHON);
    common->torch_script = bench_option_text(values, BENCH_OPT_TORCH_SCRIPT);
    common->peer_dir = bench_option_text(values, BENCH_OPT_PEER_DIR);
    return 0;
}

bench_options_outcome bench_common_options_collect(bench_option_values *values, int argc,
                                                   char **argv, int first,
                                                   const size_t *exclusive,
                                                   size_t exclusive_count, const char *program,
                                                   bench_common_options *common)
{
    const bench_options_outcome outcome =
        bench_option_values_collect(values, argc, argv, first, exclusive, exclusive_count,
                                    &common->sweep_path, &common->sweep_text);
    if (outcome != BENCH_OPTIONS_RUN)
        return outcome;
    common->quick = values->quick;
    common->command_line = bench_option_command_line(program, argc, argv, first);
    if (!common->command_line) {
        snprintf(values->error, values->error_size, "out of memory");
        return BENCH_OPTIONS_BAD;
    }
    return BENCH_OPTIONS_RUN;
}

void bench_common_options_free(bench_common_options *common)
{
    bench_size_list_free(&common->threads);
    free(common->command_line);
    free(common->sweep_text);
    if (common->csv_scratch != NULL)
        unlink(common->csv_scratch);
    free(common->csv_scratch);
    common->csv_scratch = NULL;
    common->command_line = common->sweep_text = NULL;
}
