#include "options.h"
#include "reference.h"
#include "report.h"

#define BENCH_STRINGIFY_(x) #x
#define BENCH_STRINGIFY(x) BENCH_STRINGIFY_(x)

static const char help_intro[] =
    "attn-bench: times attn_self_attention_f32/_f64 over a sweep of shapes,\n"
    "checks every configuration against a naive reference first, and times the\n"
    "course's NumPy self_attention on the same shapes in the same run.\n"
    "\n"
    "Usage: attn-bench [OPTIONS]\n"
    "\n"
    "Options (--name VALUE or --name=VALUE):\n";

static const char help_body[] =
    "\n"
    "Lists (--T, --C, --hs, --B) are comma-separated numbers and ranges:\n"
    "  64,256,1024     these values\n"
    "  64:1024:x2      64, 128, 256, 512, 1024 (times 2 while <= 1024)\n"
    "  100:400:+100    100, 200, 300, 400 (plus 100 while <= 400)\n"
    "Every combination dtype x causal x B x C x hs x T is one configuration\n"
    "(T varies fastest).\n"
    "\n"
    "For each configuration:\n"
    "  inputs  X ~ N(0,1), Wq, Wk, Wv ~ N(0,1)/sqrt(C) (scores stay of order 1\n"
    "          for every C), deterministic from --seed and (B, T, C, hs); f32\n"
    "          gets the same numbers rounded.\n"
    "  check   one call is compared with a naive double-precision reference on\n"
    "          the first and the last batch, --check-rows query rows each, every\n"
    "          row computed in full: error = max|attn - ref| / max|ref| over the\n"
    "          checked rows, for out and (with --weights) weights; it must be\n"
    "          <= %s (f32) or <= %s (f64), else the configuration is\n"
    "          reported as FAIL and not timed.\n"
    "  timing  --warmup untimed calls, then timed calls (CLOCK_MONOTONIC, one\n"
    "          sample per call) until at least --repeats samples adding up to\n"
    "          at least --min-time seconds, or --max-repeats samples.\n"
    "\n"
    "FLOP count of one call (a multiply-add counts 2; the softmax is not counted):\n"
    "    3 * 2*B*T*C*hs   projections Q, K, V = X Wq, X Wk, X Wv\n"
    "  +     2*B*T*T*hs   scores Q K^T\n"
    "  +     2*B*T*T*hs   weights V\n"
    "Causal configurations count the T*T terms in full, because attn (like NumPy)\n"
    "computes the full products and masks.\n"
    "\n"
    "NumPy peer (--peers numpy): one python process, started once, runs\n"
    "bench/peers/numpy_peer.py, which times the lesson's self_attention(X, Wq, Wk,\n"
    "Wv, causal), unchanged, on each configuration right after attn was timed on\n"
    "it (side by side: this machine's speed drifts), with the same repeat policy\n"
    "and input distribution (its own generator). It passes float32\n"
    "arrays for f32, float64 for f64; with NumPy >= 2 the lesson's / np.sqrt(hs)\n"
    "promotes f32 scores to float64, so its softmax and weights @ V run in\n"
    "double (CSV column numpy_out_dtype). It always computes the weights. It\n"
    "uses NumPy's own BLAS and threads (printed in the header). Without python\n"
    "or numpy it is skipped with a note: its columns then show \"-\".\n"
    "\n"
    "Lines starting with # name attn's version and softmax kernel, both BLAS\n"
    "builds with their thread counts, the sweep's settings and the load average;\n"
    "the last ones say how many CPUs other processes kept busy during the run.\n"
    "Other work on the machine spoils timings, multi-threaded BLAS above all (a\n"
    "BLAS with more threads than free cores can slow down tenfold or more).\n"
    "\n"
    "Table columns (stdout):\n"
    "  dtype causal B T C hs  the configuration\n"
    "  check      relative error of the reference check (FAIL: above tolerance,\n"
    "             ERROR: the call failed or memory ran out)\n"
    "  reps       timed calls\n"
    "  median_ms  median time of one call, milliseconds\n"
    "  min_ms     fastest call, milliseconds\n"
    "  GFLOP/s    FLOP count / median time\n"
    "  np_reps    timed calls of the NumPy peer (\"-\": not measured)\n"
    "  np_med_ms  NumPy median time of one call, milliseconds\n"
    "  vs_numpy   np_med_ms / median_ms: above 1 means attn is faster\n"
    "\n"
    "CSV columns (--csv; a header row, then one row per configuration, written\n"
    "as soon as it is done; empty fields where there is no number):\n";

static const char help_outro[] =
    "\n"
    "Threads: attn-bench never changes a BLAS thread count; OPENBLAS_NUM_THREADS\n"
    "sets it for attn's OpenBLAS and for NumPy's bundled OpenBLAS alike\n"
    "(OPENBLAS_NUM_THREADS=1 gives steadier numbers on a busy machine).\n"
    "\n"
    "Exit status: 0 every configuration passed its check and was timed;\n"
    "1 a check failed, a call returned an error, memory ran out or the CSV could\n"
    "not be written; 2 bad arguments.\n";

void bench_print_help(FILE *out)
{
    fputs(help_intro, out);
    bench_options_print_list(out);
    fprintf(out, help_body, BENCH_STRINGIFY(BENCH_TOLERANCE_F32),
            BENCH_STRINGIFY(BENCH_TOLERANCE_F64));
    bench_csv_print_columns(out);
    fputs(help_outro, out);
}
