#include "measure/options.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common_options.h"
#include "cli/option_values.h"

#ifndef ATTN_BENCH_PEERS_PYTHON
#error "define ATTN_BENCH_PEERS_PYTHON: the python of ./attn.sh peers' venv (.venv-peers)"
#endif

typedef enum option_id {
    OPTION_T,
    OPTION_C,
    OPTION_HS,
    OPTION_NH,
    OPTION_B,
    OPTION_DTYPE,
    OPTION_CAUSAL,
    OPTION_OP,
    OPTION_API,
    OPTION_PATH,
    OPTION_ENGINE,
    OPTION_WO,
    OPTION_DROPOUT,
    OPTION_THREADS,
    OPTION_WEIGHTS,
    OPTION_PROFILE,
    OPTION_SEQUENTIAL,
    OPTION_CHECK_ROWS,
    OPTION_CHECK_GRAD_MAX_T,
    OPTION_PEERS,
    OPTION_NAIVE_MAX_T,
    OPTION_NAIVE_REPEATS,
    OPTION_PYTHON,
    OPTION_TORCH_PYTHON,
    OPTION_ATTN_PYTHON,
    OPTION_NUMPY_SCRIPT,
    OPTION_TORCH_SCRIPT,
    OPTION_PEER_DIR,
    OPTION_RESUME,
    OPTION_REPORT,
    OPTION_COMMON, /* cli/common_options.h: their block */
    OPTION_COUNT = OPTION_COMMON + BENCH_COMMON_COUNT
} option_id;

static const bench_cli_option option_specs[OPTION_COUNT] = {
    [OPTION_T] = {"T", "LIST", "64:2048:x2", "16,48", "sequence lengths"},
    [OPTION_C] = {"C", "LIST", "768", "32", "model widths"},
    [OPTION_HS] = {"hs", "LIST", "64", "8",
                   "head sizes of a single head (NH = 1; hs may exceed C)"},
    [OPTION_NH] = {"NH", "LIST", NULL, NULL,
                   "head counts instead of --hs: NH heads of hs = C/NH\n"
                   "(Wq, Wk, Wv are (C,C); C not a multiple of NH is\n"
                   "left out); one-shots are then attn_mha_forward/_backward"},
    [OPTION_B] = {"B", "LIST", "1", "2", "batch sizes"},
    [OPTION_DTYPE] = {"dtype", "LIST", "f32,f64", NULL, "element types: f32, f64"},
    [OPTION_CAUSAL] = {"causal", "LIST", "0,1", NULL,
                       "0 = every position sees every position, 1 = causal mask"},
    [OPTION_OP] = {"op", "LIST", "forward,backward", NULL,
                   "forward; backward = forward + backward timed together"},
    [OPTION_API] = {"api", "LIST", "plan", NULL,
                    "plan (created once, outside the timing) or oneshot\n"
                    "(attn_self_attention, or attn_mha_* with --NH)"},
    [OPTION_PATH] = {"path", "LIST", "materialized,tiled", "auto",
                     "forward path of plan forwards without weights: auto,\n"
                     "materialized (ATTN_MATERIALIZED), tiled (ATTN_TILED);\n"
                     "other configurations have one path and run once, as auto"},
    [OPTION_ENGINE] = {"engine", "LIST", "auto,blas,own", "auto",
                       "threads of a plan: auto (the plan's default,\n"
                       "ATTN_THREADS_AUTO: no attn_plan_set_threads call; CSV\n"
                       "engine_threads says what it resolved to), blas\n"
                       "(attn_plan_set_threads 0: BLAS calls on --threads BLAS\n"
                       "threads) or own (attn_plan_set_threads --threads: the\n"
                       "plan's own threads, no BLAS call); one-shots run once,\n"
                       "as auto (they run at the default)"},
    [OPTION_WO] = {"wo", "LIST", "0", NULL, "1 = output projection Wo (D,C) after the heads"},
    [OPTION_DROPOUT] = {"dropout", "LIST", "0", NULL,
                        "attention dropout p in [0, 1) of --op backward plan rows:\n"
                        "attn_plan_set_dropout with a fixed seed, an offset per\n"
                        "call; the torch peer's dropout_p (see DROPOUT)"},
    [OPTION_THREADS] = {"threads", "LIST", "cpus", NULL,
                        "threads of everyone in a row (cpus: the CPUs it may\n"
                        "run on, sched_getaffinity, as engine auto counts them):\n"
                        "attn-bench sets the BLAS's count (OpenBLAS, BLIS)\n"
                        "before each configuration (attn itself never does),\n"
                        "own engines run on it, the peers, the GEMM ceiling and\n"
                        "the FMA peak are run with it; engine auto (and\n"
                        "one-shots) only where auto resolves to it"},
    [OPTION_WEIGHTS] = {"weights", NULL, NULL, NULL,
                        "forwards also write the (B,NH,T,T) weights (default:\n"
                        "weights = NULL); they are then checked too"},
    [OPTION_PROFILE] = {"profile", NULL, NULL, NULL,
                        "after timing a plan, profile as many calls again and\n"
                        "print (and put in the JSON) its time per phase (see\n"
                        "PROFILE)"},
    [OPTION_SEQUENTIAL] = {"sequential", NULL, NULL, NULL,
                           "time every configuration alone, one after the other\n"
                           "(default: those of one shape on attn's own threads are\n"
                           "timed side by side, see TIMING)"},
    [OPTION_CHECK_ROWS] = {"check-rows", "N", "64", "0",
                           "forward check: query rows per checked batch; 0 = all"},
    [OPTION_CHECK_GRAD_MAX_T] = {"check-grad-max-T", "N", "256", NULL,
                                 "backward check (every gradient against a naive\n"
                                 "double backward) only up to this T"},
    [OPTION_PEERS] = {"peers", "LIST", "all", NULL,
                      "peers timed on the same shapes: naive, numpy (the\n"
                      "lesson's code), numpy32 (it kept in float32), torch,\n"
                      "ort (ONNX Runtime), openvino, ggml (f32 forwards), all\n"
                      "(these seven), none; python (attn's own plan through its\n"
                      "Python package: the binding's cost) only when named"},
    [OPTION_NAIVE_MAX_T] = {"naive-max-T", "N", "256", NULL,
                            "the naive C peer runs only up to this T"},
    [OPTION_NAIVE_REPEATS] = {"naive-repeats", "N", "3", NULL,
                              "timed calls of the naive peer, after one warmup call"},
    [OPTION_PYTHON] = {"python", "LIST", ATTN_BENCH_PEERS_PYTHON ",python3", NULL,
                       "interpreters tried for the NumPy peers (numpy, numpy32):\n"
                       "the first that imports numpy runs them (the first one\n"
                       "is the venv of ./attn.sh peers)"},
    [OPTION_TORCH_PYTHON] = {"torch-python", "LIST",
                             ATTN_BENCH_PEERS_PYTHON ",python3,/usr/bin/python3", NULL,
                             "interpreters tried for the PyTorch peer: the first\n"
                             "that imports torch runs it (the first one is the\n"
                             "venv of ./attn.sh peers: PyTorch 2.x from PyPI)"},
    [OPTION_ATTN_PYTHON] = {"attn-python", "LIST",
                            ATTN_BENCH_ATTN_PYTHON "," ATTN_BENCH_PEERS_PYTHON ",python3", NULL,
                            "interpreters tried for the python peer: the first\n"
                            "that imports attn runs it (the first one is the venv\n"
                            "of ./attn.sh python)"},
    [OPTION_NUMPY_SCRIPT] = {"numpy-script", "PATH", NULL, NULL,
                             "the NumPy peers' script (default: see PEER SCRIPTS)"},
    [OPTION_TORCH_SCRIPT] = {"torch-script", "PATH", NULL, NULL,
                             "the PyTorch peer script (default: see PEER SCRIPTS)"},
    [OPTION_PEER_DIR] = {"peer-dir", "DIR", NULL, NULL,
                         "look for the peers' scripts in DIR first (stand-ins;\n"
                         "--numpy-script and --torch-script come before it)"},
    [OPTION_RESUME] = {"resume", NULL, NULL, NULL,
                       "keep the rows of an existing --csv and run only the\n"
                       "configurations it does not have"},
    [OPTION_REPORT] = {"report", "DIR", NULL, NULL,
                       "after the sweep, write 'attn-bench report' into DIR"},
    BENCH_COMMON_OPTIONS(OPTION_COMMON, "attn-bench.csv", "attn-bench.json"),
};

static const bench_cli_table option_table = {option_specs, OPTION_COUNT};

void bench_options_print_list(FILE *out)
{
    bench_cli_print_options(out, &option_table);
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
    if (values->given[OPTION_HS] && values->given[OPTION_NH]) {
        snprintf(values->error, values->error_size, "give --hs or --NH, not both");
        return -1;
    }
    o->heads_from_count = values->given[OPTION_NH] != NULL;
    if (bench_option_size_list(values, OPTION_T, &o->T) != 0 ||
        bench_option_size_list(values, OPTION_C, &o->C) != 0 ||
        bench_option_size_list(values, o->heads_from_count ? OPTION_NH : OPTION_HS,
                               o->heads_from_count ? &o->NH : &o->hs) != 0 ||
        bench_option_size_list(values, OPTION_B, &o->B) != 0 ||
        bench_option_thread_list(values, OPTION_THREADS, &o->threads) != 0)
        return -1;
    return bench_option_choices(values, OPTION_DTYPE, dtype_names, BENCH_DTYPE_COUNT,
                                o->dtypes, &o->dtype_count) ||
                   bench_option_choices(values, OPTION_CAUSAL, binary_names, 2, o->causal,
                                        &o->causal_count) ||
                   bench_option_choices(values, OPTION_OP, bench_op_names, BENCH_OP_COUNT,
                                        o->ops, &o->op_count) ||
                   bench_option_choices(values, OPTION_API, bench_api_names, BENCH_API_COUNT,
                                        o->apis, &o->api_count) ||
                   bench_option_choices(values, OPTION_PATH, bench_path_names,
                                        BENCH_PATH_COUNT, o->paths, &o->path_count) ||
                   bench_option_choices(values, OPTION_ENGINE, bench_engine_names,
                                        BENCH_ENGINE_COUNT, o->engines, &o->engine_count) ||
                   bench_option_choices(values, OPTION_WO, binary_names, 2, o->wo,
                                        &o->wo_count) ||
                   bench_option_dropouts(values, OPTION_DROPOUT, o->dropouts,
                                         BENCH_MAX_DROPOUTS, &o->dropout_count)
               ? -1
               : 0;
}

static int resolve_peers(const bench_option_values *values, bench_options *o)
{
    int chosen[10];
    size_t count = 0;
    if (bench_option_choices(values, OPTION_PEERS, peer_names, 10, chosen, &count) != 0)
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
    if (bench_common_options_read(values, OPTION_COMMON, &o->common) != 0 ||
        bench_option_count(values, OPTION_NAIVE_REPEATS, 1, &o->naive_repeat.min_repeats) != 0)
        return -1;
    o->naive_repeat.warmup = 1;
    o->naive_repeat.max_repeats = o->naive_repeat.min_repeats;
    o->naive_repeat.min_time_s = o->common.repeat.min_time_s;
    return 0;
}

static int resolve_scalars(const bench_option_values *values, bench_options *o)
{
    if (bench_option_count(values, OPTION_CHECK_ROWS, 0, &o->check_rows) != 0 ||
        bench_option_count(values, OPTION_CHECK_GRAD_MAX_T, 0, &o->check_grad_max_T) != 0 ||
        bench_option_count(values, OPTION_NAIVE_MAX_T, 0, &o->naive_max_T) != 0)
        return -1;
    o->with_weights = values->given[OPTION_WEIGHTS] != NULL;
    o->profile = values->given[OPTION_PROFILE] != NULL;
    o->sequential = values->given[OPTION_SEQUENTIAL] != NULL;
    o->resume = values->given[OPTION_RESUME] != NULL;
    o->python = bench_option_text(values, OPTION_PYTHON);
    o->torch_python = bench_option_text(values, OPTION_TORCH_PYTHON);
    o->attn_python = bench_option_text(values, OPTION_ATTN_PYTHON);
    o->numpy_script = bench_option_text(values, OPTION_NUMPY_SCRIPT);
    o->torch_script = bench_option_text(values, OPTION_TORCH_SCRIPT);
    o->peer_dir = bench_option_text(values, OPTION_PEER_DIR);
    o->report_dir = bench_option_text(values, OPTION_REPORT);
    return 0;
}

bench_options_outcome bench_options_parse(int argc, char **argv, int first,
                                          bench_options *o, char *error, size_t error_size)
{
    memset(o, 0, sizeof *o);
    const char *given[OPTION_COUNT] = {0};
    bench_option_values values = {&option_table, given, 0, error, error_size};
    /* --hs and --NH exclude each other */
    static const size_t heads[2] = {OPTION_HS, OPTION_NH};
    const bench_options_outcome outcome = bench_option_values_collect(
        &values, argc, argv, first, heads, 2, &o->sweep_path, &o->sweep_text);
    if (outcome == BENCH_OPTIONS_BAD)
        bench_options_free(o);
    if (outcome != BENCH_OPTIONS_RUN)
        return outcome;
    o->quick = values.quick;
    o->command_line = bench_option_command_line("attn-bench", argc, argv, first);
    if (!o->command_line || resolve_axes(&values, o) != 0 || resolve_peers(&values, o) != 0 ||
        resolve_policies(&values, o) != 0 || resolve_scalars(&values, o) != 0) {
        if (!o->command_line)
            snprintf(error, error_size, "out of memory");
        bench_options_free(o);
        return BENCH_OPTIONS_BAD;
    }
    return BENCH_OPTIONS_RUN;
}

void bench_options_free(bench_options *o)
{
    bench_size_list_free(&o->T);
    bench_size_list_free(&o->C);
    bench_size_list_free(&o->hs);
    bench_size_list_free(&o->NH);
    bench_size_list_free(&o->B);
    bench_size_list_free(&o->threads);
    free(o->command_line);
    free(o->sweep_text);
    o->command_line = o->sweep_text = NULL;
}
