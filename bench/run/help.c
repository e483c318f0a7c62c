#include "run/help.h"

#include "output/csv_out.h"
#include "measure/options.h"
#include "measure/phase_profile.h"
#include "machine/fma_peak.h"
#include "measure/reference.h"
#include "output/table.h"

#define BENCH_STRINGIFY_(x) #x
#define BENCH_STRINGIFY(x) BENCH_STRINGIFY_(x)

static const char commands_text[] =
    "Commands:\n"
    "  run        the benchmark sweep (the default command; see attn-bench run --help)\n"
    "  sdpa       attention on given Q, K, V (attn_sdpa_*): prefill, decode, grouped\n"
    "             heads, lengths, masks; against PyTorch, the bandwidth and the ceiling\n"
    "             (attn-bench sdpa --help)\n"
    "  report     Markdown summary and PNG plots of run CSVs (attn-bench report --help)\n"
    "  ring       ring attention over MPI ranks: time per step, bytes sent, the share\n"
    "             of communication hidden (attn-bench ring --help)\n"
    "  scaling    experiment: why scores are divided by sqrt(hs)\n"
    "  rank       experiment: singular values of Q K^T, numerical rank <= hs\n"
    "  init       experiment: orthogonal against Gaussian projections\n"
    "  asymmetry  experiment: ||S - S^T|| / ||S|| for separate and shared Wq, Wk\n"
    "  help [COMMAND]  this text, or a command's help (same as COMMAND --help)\n";

void bench_help_overview(FILE *out)
{
    fputs("attn-bench: the benchmark and the experiments of the attn library.\n"
          "\n"
          "Usage: attn-bench [COMMAND] [OPTIONS]\n"
          "\n",
          out);
    fputs(commands_text, out);
    fputs("\nWithout a command (or with options first) attn-bench runs the sweep.\n", out);
}

static const char run_intro[] =
    "attn-bench run: times attn's attention calls over a sweep of configurations,\n"
    "checks each against a naive reference first, and times peers (a naive C\n"
    "implementation, the course's NumPy self_attention as it is and kept in\n"
    "float32, PyTorch) on the same shapes and thread counts in the same run,\n"
    "next to the machine's FMA peak and its BLAS's GEMM ceiling.\n"
    "\n"
    "Usage: attn-bench [run] [OPTIONS]\n"
    "\n"
    "Options (--name VALUE or --name=VALUE):\n";

static const char run_sweep_text[] =
    "\n"
    "LISTS. --T, --C, --hs, --NH, --B, --threads are comma-separated numbers and\n"
    "ranges: 64,256,1024; 64:1024:x2 (times 2 while <= 1024); 100:400:+100.\n"
    "The other lists are comma-separated names. Every combination is one\n"
    "configuration, nested threads > dtype > op > causal > B > C > heads > wo >\n"
    "T > api > path > engine (engine varies fastest). Left out, with a count in\n"
    "the header:\n"
    "C not a multiple of NH; one-shots that do not exist (a single head's\n"
    "backward or Wo: attn_self_attention is forward-only without Wo; weights\n"
    "with attn_mha_*); engine auto and one-shots at a --threads count other\n"
    "than the one auto resolves to (see THREADS). --path chooses the path of plan forwards without weights\n"
    "only; every other configuration runs once, as path auto. --engine chooses\n"
    "the threads of plans only; one-shots run once, as engine auto (they run at\n"
    "the default, ATTN_THREADS_AUTO).\n"
    "\n"
    "SWEEP FILES (--sweep FILE): one option per line, 'name = value' with the\n"
    "command line's syntax ('T = 64:2048:x2', 'dtype = f32, f64'; flags take\n"
    "yes/no); '#' starts a comment; the command line overrides the file.\n"
    "bench/sweeps/ has examples.\n"
    "\n"
    "INPUTS. X ~ N(0,1); Wq, Wk, Wv ~ N(0,1)/sqrt(C); Wo ~ N(0,1)/sqrt(D);\n"
    "dout ~ N(0,1); deterministic from --seed and (B, T, C, NH, hs); f32 gets\n"
    "the same numbers rounded. D = NH*hs.\n"
    "\n"
    "CHECKS. Forwards: the first and last batch, --check-rows query rows each,\n"
    "against plain loops in double: max|attn - ref| / max|ref| over out (and the\n"
    "weights) must be <= %s (f32) or %s (f64). Backwards with T <=\n"
    "--check-grad-max-T: every gradient against a naive double backward, <= %s\n"
    "(f32) or %s (f64); longer ones are not checked (check = skipped). A\n"
    "failed check is reported and the configuration is not timed.\n";

static const char run_timing_text[] =
    "\n"
    "TIMING. --warmup untimed calls, then timed calls (CLOCK_MONOTONIC, one\n"
    "sample per call) until at least --repeats samples adding up to at least\n"
    "--min-time seconds, or --max-repeats samples; the median is reported.\n"
    "The configurations of one shape that run on attn's own threads\n"
    "(engines auto and own, one-shots; not blas, whose BLAS threads would still\n"
    "poll during the next call) are timed side by side in 8 rounds, as the\n"
    "sdpa command's --rounds: in each, a block of calls of each (the first\n"
    "round after --warmup untimed calls, the later after one), until the block\n"
    "has 1/8 of --repeats, --min-time and --max-repeats, so that a shared\n"
    "machine's drift in speed slows them alike and their ratios hold (their\n"
    "rows come after the shape's blas rows); --sequential times each alone,\n"
    "in the sweep's order. The python peers are timed in the same rounds: in\n"
    "each, after attn's blocks, a block of each peer on the shape (see PEERS).\n"
    "api=plan creates the plan once, outside the timing; op=backward times the\n"
    "forward and the backward together (a plan without ATTN_INFERENCE, or\n"
    "attn_mha_backward).\n";

static const char run_flops_text[] =
    "\n"
    "FLOP COUNTS (FLOP count of one call; a multiply-add counts 2; the softmax\n"
    "is not counted; D = NH*hs):\n"
    "  forward   3*2*B*T*C*D (projections) + 2*2*B*T*T*D (scores, weights x V)\n"
    "            + 2*B*T*D*C with Wo; causal counts half of the T*T terms\n"
    "            (attn skips the key blocks above the diagonal)\n"
    "  backward  forward + the backward's GEMMs, exactly twice the forward's:\n"
    "            3 x the forward count (see bench/measure/flops.h for the derivation)\n"
    "\n"
    "CEILING. At the start, at each thread count of the sweep: one square sgemm\n"
    "(f32) and dgemm (f64) of --ceiling sizes on attn's BLAS (OpenBLAS: the\n"
    "kernels of the core the header names), 2*n^3 FLOPs over the median of 5\n"
    "calls: what this BLAS reaches, not the CPU's theoretical peak (blas%\n"
    "and the CSV's PEER_ceiling_fraction are against it).\n";

static const char run_peers_text[] =
    "\n"
    "PEERS (--peers), timed once a shape, with the first of its configurations\n"
    "measured and at the same thread count: the python peers a block in each\n"
    "round of attn's calls (one round when the configuration is timed alone;\n"
    "the line protocol: bench/peers/peer_common.py), the naive peer after\n"
    "them; a peer that cannot run is skipped with a note, never faked:\n"
    "  naive  plain C loops (bench/measure/naive.h) in the element type; up to\n"
    "         --naive-max-T; one warmup call, --naive-repeats timed calls\n"
    "  numpy  bench/peers/numpy_peer.py: the lesson's self_attention, unchanged,\n"
    "         per head (then Wo); forward only (the lesson has no backward);\n"
    "         with NumPy >= 2 its / np.sqrt(hs) promotes f32 scores to float64\n"
    "         (CSV numpy_out_dtype; the table marks those ratios x*)\n"
    "  numpy32 numpy_peer.py --float32: the same code with sqrt(hs) as a\n"
    "         float32 scalar, float32 throughout; f32 forwards only\n"
    "  torch  bench/peers/torch_peer.py: torch.nn.functional.\n"
    "         scaled_dot_product_attention on X@Wq, X@Wk, X@Wv (older PyTorch:\n"
    "         the same composed from matmul and softmax), autograd for backward;\n"
    "         its header lines give the build (BLAS_INFO, MKL, oneDNN, CPU\n"
    "         capability, threads)\n"
    "  python bench/peers/attn_python_peer.py: attn itself through its Python\n"
    "         package (attn.Plan, own threads): compare with the engine=own rows;\n"
    "         python_median_ms - attn_median_ms is the binding's cost per call;\n"
    "         only when named (--peers python; not in all)\n"
    "  ort    bench/peers/ort_peer.py: ONNX Runtime, X in and the weights as\n"
    "         initializers; the fastest of com.microsoft Attention (fused QKV),\n"
    "         MatMul + MultiHeadAttention, + GroupQueryAttention (causal) and +\n"
    "         ONNX Attention (opset 23) that passes its check; f32 forwards\n"
    "  openvino bench/peers/openvino_peer.py: OpenVINO's CPU plugin (f32\n"
    "         precision hint) on MatMul, ScaledDotProductAttention, MatMul Wo;\n"
    "         f32 forwards\n"
    "  ggml   bench/peers/ggml_peer.py: ggml's CPU backend as a llama.cpp layer\n"
    "         (ggml_mul_mat, ggml_flash_attn_ext, ggml_mul_mat Wo); f32 forwards\n"
    "         The three check their output against a float64 reference before\n"
    "         timing (CSV PEER_check_error; the operator timed: PEER_kernel); all\n"
    "         come from ./attn.sh peers, run by --torch-python's interpreters\n";

static const char run_peer_processes_text[] =
    "Each python peer is one process per thread count, started with\n"
    "OPENBLAS_NUM_THREADS/OMP_NUM_THREADS/MKL_NUM_THREADS and --threads set;\n"
    "the thread count its library reports (its blas line's threads=N) is the\n"
    "table's thr after its median and the CSV's PEER_threads. The naive peer is\n"
    "plain loops on one thread (thr 1).\n"
    "INTERPRETERS: the first of --python (NumPy peers), --torch-python or\n"
    "--attn-python that gets the script ready; the first two begin with the\n"
    "venv that ./attn.sh peers sets up (PyTorch 2.x and NumPy 2 from PyPI),\n"
    "--attn-python with .venv-python (./attn.sh python), then python3.\n"
    "PEER SCRIPTS are found next to the executable's installed share/attn, else\n"
    "in the source tree (" ATTN_BENCH_SOURCE_PEER_DIR "),\n"
    "unless --numpy-script (both NumPy peers) / --torch-script name them or\n"
    "--peer-dir DIR holds a script of that name.\n"
    "\n"
    "THREADS. A row's --threads count N is everyone's. attn-bench\n"
    "sets the BLAS's thread count to N (OpenBLAS's or BLIS's call; the\n"
    "reference CBLAS has none) before each configuration and the ceiling (it owns its\n"
    "process; the attn library itself never changes it), engine own runs N\n"
    "threads of attn's, the peers run with N, and the ceiling and the FMA peak\n"
    "are measured on N. The default, cpus, is the CPUs the process may run on\n"
    "(sched_getaffinity, as engine auto counts them). Engine auto is\n"
    "the plan's default: attn's own engine on the process's shared threads (one\n"
    "per CPU it may run on, whatever --threads says) when a SIMD kernel set\n"
    "runs, else BLAS threads; ATTN_NUM_THREADS overrides it (0: BLAS threads,\n"
    "n: n own threads). A header line, the table's athr and the CSV's\n"
    "engine_threads and attn_threads say what it was; an auto configuration\n"
    "(or a one-shot, which runs at the default) at another count than the one\n"
    "auto resolves to is left out, so that no row credits attn with more\n"
    "threads than its peers and its peak.\n"
    "\n"
    "OUTPUT. Lines starting with # describe the machine (CPU, SIMD kernel, BLAS\n"
    "core and threads, compiler and flags), the ceiling, the FMA peak, the\n"
    "sweep, the peers,\n"
    "and at the end how busy other processes kept the CPUs. Progress goes to\n"
    "stderr (--progress). Table columns (stdout):\n";

static const char run_dropout_text[] =
    "\n"
    "DROPOUT (--dropout P[,P...], default 0; issue 26). A plan row of --op\n"
    "backward with P above 0 is a training step with attention dropout: before\n"
    "each timed call the plan gets attn_plan_set_dropout(plan, P, %u, offset),\n"
    "the seed fixed, the offset 0 for the first timed call and one more for each\n"
    "next (a training loop's). Its check runs before, at p = 0 (the table's check\n"
    "shows @p0). The torch peer's block passes dropout_p=P to\n"
    "scaled_dot_product_attention (a composed attention: dropout on the\n"
    "weights); the naive, numpy and python peers skip the row with a note.\n"
    "Forwards and one-shots with P above 0 are refused. A shape's dropouts are\n"
    "measured together, as its engines are (on attn's own threads: attn's calls\n"
    "interleaved in rounds, the torch peer at each p between them); a row\n"
    "with dropout ends with '| p=P attn/p0 A torch/p0 T' (the CSV's\n"
    "attn_dropout_cost, torch_dropout_cost): its medians over those of its\n"
    "twin at p = 0 (the same configuration). The run command has no --rounds:\n"
    "repeat the run and take the medians of the ratios\n"
    "(bench/sweeps/dropout/gpt2-block.sweep says how).\n";

static const char run_outputs_text[] =
    "\n"
    "CSV columns (--csv; a header row, then one row per configuration, appended\n"
    "and flushed as soon as it is done; empty fields where there is no number).\n"
    "--resume keeps the rows of an existing CSV with the same header and runs\n"
    "only the configurations it lacks (an unfinished last line is dropped):\n";

static const char run_outro[] =
    "\n"
    "JSON (--json): {tool, schema, command, csv, settings, machine, ceiling,\n"
    "fma_peak {method, isa, bf16_dot, amx_bf16, entries [{kind, threads, gflops,\n"
    "median_gflops}]}, peers, wall_seconds, other_load_cpus, columns, rows},\n"
    "rows being the CSV's\n"
    "rows as objects (numbers as numbers, empty fields as null).\n"
    "\n"
    "Exit status: 0 every configuration passed its check and was timed;\n"
    "1 a check failed, a call returned an error, memory ran out or an output\n"
    "could not be written; 2 bad arguments.\n";

void bench_help_run(FILE *out)
{
    fputs(run_intro, out);
    bench_options_print_list(out);
    fprintf(out, run_sweep_text, BENCH_STRINGIFY(BENCH_TOLERANCE_F32),
            BENCH_STRINGIFY(BENCH_TOLERANCE_F64), BENCH_STRINGIFY(BENCH_GRAD_TOLERANCE_F32),
            BENCH_STRINGIFY(BENCH_GRAD_TOLERANCE_F64));
    fputs(run_timing_text, out);
    fputs(run_flops_text, out);
    bench_fma_peak_print_help(out);
    fputs(run_peers_text, out);
    fputs(run_peer_processes_text, out);
    bench_table_print_columns(out);
    bench_phase_profile_print_help(out);
    fprintf(out, run_dropout_text, BENCH_DROPOUT_SEED);
    fputs(run_outputs_text, out);
    bench_csv_print_columns(out);
    fputs(run_outro, out);
    fputc('\n', out);
    fputs(commands_text, out);
}
