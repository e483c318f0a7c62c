#include "cli/option_table.h"

#ifndef ATTN_BENCH_PEERS_PYTHON
#error "define ATTN_BENCH_PEERS_PYTHON: the python of ./attn.sh peers' venv (.venv-peers)"
#endif

/* An option as each command has it; an entry without a name is not one of
 * that command's. */
typedef struct option_row {
    bench_cli_option of[BENCH_COMMAND_COUNT];
} option_row;

/* The run command's option, the sdpa command's; an entry of either or both;
 * EACH(R({...}), S({...})): each its own. */
#define R(...) [BENCH_COMMAND_RUN] = __VA_ARGS__
#define S(...) [BENCH_COMMAND_SDPA] = __VA_ARGS__
#define RUN(...) {{R(__VA_ARGS__)}}
#define SDPA(...) {{S(__VA_ARGS__)}}
#define BOTH(...) {{R(__VA_ARGS__), S(__VA_ARGS__)}}
#define EACH(...) {{__VA_ARGS__}}

static const option_row rows[BENCH_OPT_COUNT] = {
    /* ---- the shape ---- */
    [BENCH_OPT_T] = RUN({"T", "LIST", "64:2048:x2", "16,48", "sequence lengths"}),
    [BENCH_OPT_C] = RUN({"C", "LIST", "768", "32", "model widths"}),
    [BENCH_OPT_B] = EACH(R({"B", "LIST", "1", "2", "batch sizes"}),
                         S({"B", "LIST", "1", "2", "sequences (batch size)"})),
    [BENCH_OPT_NH] = EACH(R({"NH", "LIST", NULL, NULL,
                             "head counts instead of --hs: NH heads of hs = C/NH\n"
                             "(Wq, Wk, Wv are (C,C); C not a multiple of NH is\n"
                             "left out); one-shots are then attn_mha_forward/_backward"}),
                          S({"NH", "LIST", "32", "4", "query heads"})),
    [BENCH_OPT_NH_KV] = SDPA({"NH-kv", "LIST", "8", "2",
                              "key/value heads: NH (multi-head), 1 (multi-query) or a\n"
                              "divisor of NH (grouped); NH not a multiple is left out"}),
    [BENCH_OPT_TQ] = SDPA({"Tq", "LIST", "1,1024", "1,7",
                           "queries per sequence (1: a decode step)"}),
    [BENCH_OPT_TK] = SDPA({"Tk", "LIST", "1024,4096", "33",
                           "key/value slots per sequence (a KV cache's capacity)"}),
    [BENCH_OPT_HS] = EACH(R({"hs", "LIST", "64", "8",
                             "head sizes of a single head (NH = 1; hs may exceed C)"}),
                          S({"hs", "LIST", "128", "8", "head size of Q and K"})),
    [BENCH_OPT_HS_V] = SDPA({"hs-v", "LIST", "hs", NULL,
                             "head size of V and out; the item 'hs' is --hs's"}),
    [BENCH_OPT_LENGTHS] = SDPA({"lengths", "LIST", "full", "full,12/33",
                                "key lengths: comma-separated items, each 'full' (every\n"
                                "sequence Tk keys) or L0/L1/... (one per sequence, or a\n"
                                "single L for all); an item that does not match B, or a\n"
                                "length above Tk, is left out"}),
    [BENCH_OPT_WINDOW] = SDPA({"window", "LIST", "0", "0,5",
                               "sliding window: 0 = none, w = keys j > p - w (see MASKS)"}),
    [BENCH_OPT_MASK] = SDPA({"mask", "LIST", "none", "none,padding,full",
                             "none (lengths as key_lengths), padding (additive\n"
                             "(B,1,1,Tk), -inf beyond each length, mask_ld = mask_sh\n"
                             "= 0) or full (additive (B,NH,Tq,Tk): a bias, -inf beyond\n"
                             "each length); see MASKS"}),
    /* ---- what is run ---- */
    [BENCH_OPT_DTYPE] = EACH(R({"dtype", "LIST", "f32,f64", NULL, "element types: f32, f64"}),
                             S({"dtype", "LIST", "f32", "f32,f64",
                                "element types: f32, f64, bf16, f16 (attn.h's half\n"
                                "precision: 16-bit Q, K, V, out; see HALF PRECISION)"})),
    [BENCH_OPT_CAUSAL] = EACH(R({"causal", "LIST", "0,1", NULL,
                                 "0 = every position sees every position, 1 = causal mask"}),
                              S({"causal", "LIST", "1", "0,1",
                                 "0 or 1 (bottom-right aligned, see MASKS)"})),
    [BENCH_OPT_OP] = EACH(R({"op", "LIST", "forward,backward", NULL,
                             "forward; backward = forward + backward timed together"}),
                          S({"op", "LIST", "forward", "forward,backward",
                             "forward; backward = forward + backward timed together"})),
    [BENCH_OPT_API] = RUN({"api", "LIST", "plan", NULL,
                           "plan (created once, outside the timing) or oneshot\n"
                           "(attn_self_attention, or attn_mha_* with --NH)"}),
    [BENCH_OPT_PATH] = RUN({"path", "LIST", "materialized,tiled", "auto",
                            "forward path of plan forwards without weights: auto,\n"
                            "materialized (ATTN_MATERIALIZED), tiled (ATTN_TILED);\n"
                            "other configurations have one path and run once, as auto"}),
    [BENCH_OPT_ENGINE] = EACH(R({"engine", "LIST", "auto,blas,own", "auto",
                                 "threads of a plan: auto (the plan's default,\n"
                                 "ATTN_THREADS_AUTO: no attn_plan_set_threads call; CSV\n"
                                 "engine_threads says what it resolved to), blas\n"
                                 "(attn_plan_set_threads 0: BLAS calls on --threads BLAS\n"
                                 "threads) or own (attn_plan_set_threads --threads: the\n"
                                 "plan's own threads, no BLAS call); one-shots run once,\n"
                                 "as auto (they run at the default)"}),
                              S({"engine", "LIST", "auto", NULL,
                                 "auto (no attn_plan_set_threads call: the plan's\n"
                                 "ATTN_THREADS_AUTO), blas (attn_plan_set_threads(plan,\n"
                                 "0): --threads BLAS threads) or own\n"
                                 "(attn_plan_set_threads(plan, --threads))"})),
    [BENCH_OPT_WO] = RUN({"wo", "LIST", "0", NULL,
                          "1 = output projection Wo (D,C) after the heads"}),
    [BENCH_OPT_DROPOUT] = BOTH({"dropout", "LIST", "0", NULL,
                                "attention dropout p in [0, 1) of --op backward rows on\n"
                                "plans: attn_plan_set_dropout with a fixed seed, an\n"
                                "offset per call; the torch peer's dropout_p; forwards\n"
                                "(and one-shots) with p above 0 are left out (see\n"
                                "DROPOUT)"}),
    [BENCH_OPT_THREADS] = BOTH({"threads", "LIST", "cpus", NULL,
                                "threads of everyone in a row (cpus: the CPUs it may\n"
                                "run on, sched_getaffinity, as engine auto counts them):\n"
                                "attn-bench sets the BLAS's count (OpenBLAS, BLIS)\n"
                                "before each configuration (attn itself never does),\n"
                                "own engines run on it, the peers, the GEMM ceiling,\n"
                                "the FMA peak and the bandwidth (sdpa) are run with\n"
                                "it; engine auto (and one-shots) only where auto\n"
                                "resolves to it"}),
    [BENCH_OPT_CACHE] = SDPA({"cache", "LIST", "warm", NULL,
                              "warm (calls back to back) or cold (the bandwidth buffer\n"
                              "is read before every call, untimed, so K and V come from\n"
                              "memory as in a decode step of a many-layer model)"}),
    [BENCH_OPT_LAYOUT] = SDPA({"layout", "LIST", "bshd", "bshd,bhsd",
                               "bshd (B,T,NH,hs): attn's rows; bhsd (B,NH,T,hs):\n"
                               "PyTorch's (see LAYOUTS)"}),
    [BENCH_OPT_SCENARIO] = SDPA({"scenario", "LIST", "call", "call,decode-loop",
                                 "call, or decode-loop: --steps steps on a growing cache\n"
                                 "(see DECODE LOOP)"}),
    [BENCH_OPT_STEPS] = SDPA({"steps", "N", "64", "3", "steps of a decode loop"}),
    [BENCH_OPT_WEIGHTS] = RUN({"weights", NULL, NULL, NULL,
                               "forwards also write the (B,NH,T,T) weights (default:\n"
                               "weights = NULL); they are then checked too"}),
    /* ---- how ---- */
    [BENCH_OPT_PROFILE] = BOTH({"profile", NULL, NULL, NULL,
                                "after timing a plan, profile as many calls again and\n"
                                "print (and put in the JSON) its time per phase (see\n"
                                "PROFILE)"}),
    [BENCH_OPT_SEQUENTIAL] = RUN({"sequential", NULL, NULL, NULL,
                                  "time every configuration alone, one after the other\n"
                                  "(default: those of one shape on attn's own threads are\n"
                                  "timed side by side, see TIMING)"}),
    [BENCH_OPT_ROUNDS] = SDPA({"rounds", "N", "1", NULL,
                               "rounds of a configuration: in each, a block of attn's\n"
                               "calls, then each peer's (interleaved; see TIMING)"}),
    [BENCH_OPT_CHECK_ROWS] = EACH(R({"check-rows", "N", "64", "0",
                                     "forward check: query rows per checked batch; 0 = all"}),
                                  S({"check-rows", "N", "32", NULL,
                                     "rows (and keys) the check samples per checked sequence\n"
                                     "and head of a large configuration; 0 = check all (see\n"
                                     "CHECKS)"})),
    [BENCH_OPT_CHECK_GRAD_MAX_T] = RUN({"check-grad-max-T", "N", "256", NULL,
                                        "backward check (every gradient against a naive\n"
                                        "double backward) only up to this T"}),
    /* ---- the peers ---- */
    [BENCH_OPT_PEERS] = EACH(R({"peers", "LIST", "all", NULL,
                                "peers timed on the same shapes: naive, numpy (the\n"
                                "lesson's code), numpy32 (it kept in float32), torch,\n"
                                "ort (ONNX Runtime), openvino, ggml (f32 forwards), all\n"
                                "(these seven), none; python (attn's own plan through its\n"
                                "Python package: the binding's cost) only when named"}),
                             S({"peers", "LIST", "torch,ort,openvino,ggml", NULL,
                                "torch (PyTorch's SDPA), ort (ONNX Runtime), openvino\n"
                                "(OpenVINO's SDPA), ggml (ggml_flash_attn_ext), python\n"
                                "(attn's PyTorch drop-in\n"
                                "attn.torch.scaled_dot_product_attention: the binding's\n"
                                "cost), none; see PEERS"})),
    [BENCH_OPT_NAIVE_MAX_T] = RUN({"naive-max-T", "N", "256", NULL,
                                   "the naive C peer runs only up to this T"}),
    [BENCH_OPT_NAIVE_REPEATS] = RUN({"naive-repeats", "N", "3", NULL,
                                     "timed calls of the naive peer, after one warmup call"}),
    [BENCH_OPT_PYTHON] = RUN({"python", "LIST", ATTN_BENCH_PEERS_PYTHON ",python3", NULL,
                              "interpreters tried for the NumPy peers (numpy, numpy32):\n"
                              "the first that imports numpy runs them (the first one\n"
                              "is the venv of ./attn.sh peers)"}),
    [BENCH_OPT_TORCH_PYTHON] = BOTH({"torch-python", "LIST",
                                     ATTN_BENCH_PEERS_PYTHON ",python3,/usr/bin/python3", NULL,
                                     "interpreters tried for the torch, ort, openvino and\n"
                                     "ggml peers: the first that gets the peer ready runs\n"
                                     "it (the first one is the venv of ./attn.sh peers:\n"
                                     "PyTorch 2.x and the engines from PyPI)"}),
    [BENCH_OPT_ATTN_PYTHON] = EACH(R({"attn-python", "LIST",
                                      ATTN_BENCH_ATTN_PYTHON "," ATTN_BENCH_PEERS_PYTHON
                                      ",python3",
                                      NULL,
                                      "interpreters tried for the python peer: the first\n"
                                      "that imports attn runs it (the first one is the venv\n"
                                      "of ./attn.sh python)"}),
                                   S({"attn-python", "LIST",
                                      ATTN_BENCH_PEERS_PYTHON "," ATTN_BENCH_ATTN_PYTHON
                                      ",python3",
                                      NULL,
                                      "interpreters tried for the python peer: the first that\n"
                                      "imports torch >= 2 and attn (its own or the source\n"
                                      "tree's python/src) runs it"})),
    [BENCH_OPT_NUMPY_SCRIPT] = RUN({"numpy-script", "PATH", NULL, NULL,
                                    "the NumPy peers' script (default: see PEER SCRIPTS)"}),
    [BENCH_OPT_TORCH_SCRIPT] = EACH(R({"torch-script", "PATH", NULL, NULL,
                                       "the PyTorch peer script (default: see PEER SCRIPTS)"}),
                                    S({"torch-script", "PATH", NULL, NULL,
                                       "the torch and python peers' script (default:\n"
                                       "torch_sdpa_peer.py, found as the run command's peers\n"
                                       "are; both peers run it)"})),
    [BENCH_OPT_PEER_DIR] = EACH(R({"peer-dir", "DIR", NULL, NULL,
                                   "look for the peers' scripts in DIR first (stand-ins;\n"
                                   "--numpy-script and --torch-script come before it)"}),
                                S({"peer-dir", "DIR", NULL, NULL,
                                   "a directory looked in first for every peer's script\n"
                                   "(stand-ins of torch_sdpa_peer.py, ort_sdpa_peer.py,\n"
                                   "openvino_sdpa_peer.py, ggml_sdpa_peer.py)"})),
    [BENCH_OPT_BANDWIDTH_MIB] = SDPA({"bandwidth-mib", "N", "auto", "32",
                                      "MiB of the streaming read of the bandwidth measurement\n"
                                      "(and of the cold-cache read); auto = 8 x the last-level\n"
                                      "cache, at least 256 and at most 1024; 0 = not measured"}),
    [BENCH_OPT_RESUME] = RUN({"resume", NULL, NULL, NULL,
                              "keep the rows of an existing --csv and run only the\n"
                              "configurations it does not have"}),
    [BENCH_OPT_REPORT] = RUN({"report", "DIR", NULL, NULL,
                              "after the sweep, write 'attn-bench report' into DIR"}),
    /* ---- timing, inputs, outputs ---- */
    [BENCH_OPT_WARMUP] = BOTH({"warmup", "N", "2", "1", "untimed calls before timing"}),
    [BENCH_OPT_REPEATS] = BOTH({"repeats", "N", "9", "3",
                                "at least N timed calls of a configuration (N >= 1)"}),
    [BENCH_OPT_MIN_TIME] = BOTH({"min-time", "SECONDS", "0.2", "0.002",
                                 "keep timing until the timed calls add up to this\n"
                                 "(with --cache cold, the untimed reads too)"}),
    [BENCH_OPT_MAX_REPEATS] = BOTH({"max-repeats", "N", "10000", "200",
                                    "at most N timed calls of a configuration\n"
                                    "(never below --repeats)"}),
    [BENCH_OPT_SEED] = BOTH({"seed", "N", "1", NULL, "seed of the inputs"}),
    [BENCH_OPT_CEILING] = BOTH({"ceiling", "N32,N64", "2048,1536", "128,96",
                                "sizes of the square sgemm and dgemm of the GEMM\n"
                                "ceiling; 0 = none"}),
    [BENCH_OPT_CSV] = EACH(R({"csv", "PATH", "attn-bench.csv", NULL,
                              "CSV output, one row per configuration, written as\n"
                              "each one is done; none = no CSV file (the JSON\n"
                              "and --report are still made)"}),
                           S({"csv", "PATH", "attn-bench-sdpa.csv", NULL,
                              "CSV output, one row per configuration, written as\n"
                              "each one is done; none = no CSV file (the JSON\n"
                              "and --report are still made)"})),
    [BENCH_OPT_JSON] = EACH(R({"json", "PATH", "attn-bench.json", NULL,
                               "JSON output: the header's record (the machine, its\n"
                               "ceiling, the peers) and every CSV row; none = no JSON"}),
                            S({"json", "PATH", "attn-bench-sdpa.json", NULL,
                               "JSON output: the header's record (the machine, its\n"
                               "ceiling, the peers) and every CSV row; none = no JSON"})),
    [BENCH_OPT_PROGRESS] = BOTH({"progress", "MODE", "auto", NULL,
                                 "progress on stderr: bar, lines, none, or auto (a\n"
                                 "bar on a terminal, else lines)"}),
    [BENCH_OPT_SWEEP] = BOTH({"sweep", "FILE", NULL, NULL,
                              "read options from FILE (see SWEEP FILES); the\n"
                              "command line overrides it"}),
    [BENCH_OPT_LIST] = BOTH({"list", NULL, NULL, NULL,
                             "print the configurations (the CSV's key columns, one\n"
                             "per line) and the left-out count; run nothing"}),
    [BENCH_OPT_QUICK] = BOTH({"quick", NULL, NULL, NULL,
                              "tiny configurations for tests: the --quick values\n"
                              "replace the defaults (explicit options still win)"}),
    [BENCH_OPT_HELP] = BOTH(BENCH_CLI_HELP_OPTION),
};

static bench_cli_option views[BENCH_COMMAND_COUNT][BENCH_OPT_COUNT];
static const bench_cli_table tables[BENCH_COMMAND_COUNT] = {
    {views[BENCH_COMMAND_RUN], BENCH_OPT_COUNT},
    {views[BENCH_COMMAND_SDPA], BENCH_OPT_COUNT},
};

const bench_cli_table *bench_option_table(bench_command command)
{
    bench_cli_option *view = views[command];
    if (!view[BENCH_OPT_HELP].name) /* the first call: the command's column */
        for (size_t id = 0; id < BENCH_OPT_COUNT; ++id)
            view[id] = rows[id].of[command];
    return &tables[command];
}

void bench_option_table_print(FILE *out, bench_command command)
{
    bench_cli_print_options(out, bench_option_table(command));
}
