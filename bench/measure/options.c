#include "measure/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common_options.h"
#include "cli/option_table.h"
#include "cli/option_values.h"

void bench_options_print_list(FILE *out)
{
    bench_option_table_print(out, BENCH_COMMAND_RUN);
}

const char *bench_peer_name(unsigned peer_bit)
{
    switch (peer_bit) {
    case BENCH_PEER_NAIVE:
        return "naive";
    case BENCH_PEER_NUMPY:
        return "numpy";
    case BENCH_PEER_NUMPY32:
        return "numpy32";
    case BENCH_PEER_PYTHON:
        return "python";
    case BENCH_PEER_ORT:
        return "ort";
    case BENCH_PEER_OPENVINO:
        return "openvino";
    case BENCH_PEER_GGML:
        return "ggml";
    default:
        return "torch";
    }
}

static const char *const binary_names[2] = {"0", "1"};
static const char *const dtype_names[BENCH_DTYPE_COUNT] = {"f32", "f64"};
static const char *const peer_names[10] = {"naive", "numpy",    "numpy32", "torch", "python",
                                           "ort",   "openvino", "ggml",    "all",   "none"};

static int resolve_axes(const bench_option_values *values, bench_options *o)
{
    if (values->given[BENCH_OPT_HS] && values->given[BENCH_OPT_NH]) {
        snprintf(values->error, values->error_size, "give --hs or --NH, not both");
        return -1;
    }
    o->heads_from_count = values->given[BENCH_OPT_NH] != NULL;
    if (bench_option_size_list(values, BENCH_OPT_T, &o->T) != 0 ||
        bench_option_size_list(values, BENCH_OPT_C, &o->C) != 0 ||
        bench_option_size_list(values, o->heads_from_count ? BENCH_OPT_NH : BENCH_OPT_HS,
                               o->heads_from_count ? &o->NH : &o->hs) != 0 ||
        bench_option_size_list(values, BENCH_OPT_B, &o->B) != 0)
        return -1;
    return bench_option_choices(values, BENCH_OPT_DTYPE, dtype_names, BENCH_DTYPE_COUNT,
                                o->dtypes, &o->dtype_count) ||
                   bench_option_choices(values, BENCH_OPT_OP, bench_op_names, BENCH_OP_COUNT,
                                        o->ops, &o->op_count) ||
                   bench_option_choices(values, BENCH_OPT_API, bench_api_names,
                                        BENCH_API_COUNT, o->apis, &o->api_count) ||
                   bench_option_choices(values, BENCH_OPT_PATH, bench_path_names,
                                        BENCH_PATH_COUNT, o->paths, &o->path_count) ||
                   bench_option_choices(values, BENCH_OPT_ENGINE, bench_engine_names,
                                        BENCH_ENGINE_COUNT, o->engines, &o->engine_count) ||
                   bench_option_choices(values, BENCH_OPT_WO, binary_names, 2, o->wo,
                                        &o->wo_count)
               ? -1
               : 0;
}

static int resolve_peers(const bench_option_values *values, bench_options *o)
{
    int chosen[10];
    size_t count = 0;
    if (bench_option_choices(values, BENCH_OPT_PEERS, peer_names, 10, chosen, &count) != 0)
        return -1;
    static const unsigned bits[10] = {
        BENCH_PEER_NAIVE, BENCH_PEER_NUMPY, BENCH_PEER_NUMPY32, BENCH_PEER_TORCH,
        BENCH_PEER_PYTHON, BENCH_PEER_ORT, BENCH_PEER_OPENVINO, BENCH_PEER_GGML,
        BENCH_PEER_NAIVE | BENCH_PEER_NUMPY | BENCH_PEER_NUMPY32 | BENCH_PEER_TORCH |
            BENCH_PEER_ORT | BENCH_PEER_OPENVINO | BENCH_PEER_GGML,
        0u};
    o->peers = 0;
    for (size_t i = 0; i < count; ++i)
        o->peers |= bits[chosen[i]];
    return 0;
}

static int resolve_policies(const bench_option_values *values, bench_options *o)
{
    if (bench_common_options_read(values, &o->common) != 0 ||
        bench_option_count(values, BENCH_OPT_NAIVE_REPEATS, 1, &o->naive_repeat.min_repeats) !=
            0)
        return -1;
    o->naive_repeat.warmup = 1;
    o->naive_repeat.max_repeats = o->naive_repeat.min_repeats;
    o->naive_repeat.min_time_s = o->common.repeat.min_time_s;
    return 0;
}

static int resolve_scalars(const bench_option_values *values, bench_options *o)
{
    if (bench_option_count(values, BENCH_OPT_CHECK_ROWS, 0, &o->check_rows) != 0 ||
        bench_option_count(values, BENCH_OPT_CHECK_GRAD_MAX_T, 0, &o->check_grad_max_T) != 0 ||
        bench_option_count(values, BENCH_OPT_NAIVE_MAX_T, 0, &o->naive_max_T) != 0)
        return -1;
    o->with_weights = values->given[BENCH_OPT_WEIGHTS] != NULL;
    o->sequential = values->given[BENCH_OPT_SEQUENTIAL] != NULL;
    o->resume = values->given[BENCH_OPT_RESUME] != NULL;
    if (o->resume && o->common.csv_scratch != NULL) { /* read after the common options */
        snprintf(values->error, values->error_size,
                 "--resume keeps the rows of a --csv file: not with --csv none");
        return -1;
    }
    o->python = bench_option_text(values, BENCH_OPT_PYTHON);
    o->numpy_script = bench_option_text(values, BENCH_OPT_NUMPY_SCRIPT);
    o->report_dir = bench_option_text(values, BENCH_OPT_REPORT);
    return 0;
}

bench_options_outcome bench_options_parse(int argc, char **argv, int first,
                                          bench_options *o, char *error, size_t error_size)
{
    memset(o, 0, sizeof *o);
    const char *given[BENCH_OPT_COUNT] = {0};
    bench_option_values values = {bench_option_table(BENCH_COMMAND_RUN), given, 0, error,
                                  error_size};
    /* --hs and --NH exclude each other */
    static const size_t heads[2] = {BENCH_OPT_HS, BENCH_OPT_NH};
    const bench_options_outcome outcome = bench_common_options_collect(
        &values, argc, argv, first, heads, 2, "attn-bench", &o->common);
    if (outcome == BENCH_OPTIONS_RUN &&
        (resolve_axes(&values, o) != 0 || resolve_peers(&values, o) != 0 ||
         resolve_policies(&values, o) != 0 || resolve_scalars(&values, o) != 0)) {
        bench_options_free(o);
        return BENCH_OPTIONS_BAD;
    }
    if (outcome == BENCH_OPTIONS_BAD)
        bench_options_free(o);
    return outcome;
}

void bench_options_free(bench_options *o)
{
    bench_size_list_free(&o->T);
    bench_size_list_free(&o->C);
    bench_size_list_free(&o->hs);
    bench_size_list_free(&o->NH);
    bench_size_list_free(&o->B);
    bench_common_options_free(&o->common);
}
