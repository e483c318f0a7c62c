#include "sdpa/sdpa_run.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/attn_call.h"
#include "machine/blas_info.h"
#include "sdpa/sdpa_output.h"
#include "sdpa/sdpa_peer.h"
#include "measure/sweep_list.h"

#define BENCH_STRINGIFY_(x) #x
#define BENCH_STRINGIFY(x) BENCH_STRINGIFY_(x)

enum { EXIT_BENCH_FAILED = 1, EXIT_BAD_ARGUMENTS = 2 };

/* ---- help ------------------------------------------------------------------------- */

static const char help_intro[] =
    "attn-bench sdpa: times attention on given Q, K, V (attn_sdpa_plan_create,\n"
    "attn_sdpa_forward_*, attn_sdpa_backward_*: prefill and decode steps, grouped\n"
    "heads, key lengths, masks, sliding windows) over a sweep of configurations,\n"
    "checks each against a naive reference first, and sets it against PyTorch's\n"
    "scaled_dot_product_attention on the same shapes and threads, the GEMM\n"
    "ceiling and the memory read bandwidth measured in the same run.\n"
    "\n"
    "Usage: attn-bench sdpa [OPTIONS]\n"
    "\n"
    "Options (--name VALUE or --name=VALUE):\n";

static const char help_body[] =
    "\n"
    "LISTS. Number lists are comma-separated numbers and ranges as in the run\n"
    "command (1,2048; 512:8192:x2; 100:400:+100); the others comma-separated\n"
    "names. Every combination is one configuration, nested threads > dtype > op\n"
    "> causal > window > mask > B > NH > NH-kv > hs > hs-v > Tq > Tk > lengths >\n"
    "cache > engine (engine fastest). Left out, with a count in the header: NH\n"
    "not a multiple of NH-kv; a --lengths item with neither 1 nor B lengths; a\n"
    "length above Tk.\n"
    "\n"
    "ARRAYS (attn.h's sdpa section, dense rows): Q (B,Tq,NH,hs), K (B,Tk,NH_kv,hs),\n"
    "V (B,Tk,NH_kv,hs_v), out and dout (B,Tq,NH,hs_v), lse (B,NH,Tq); query head h\n"
    "reads key/value head h / (NH/NH_kv). Q, K, V, dout ~ U(-sqrt 3, sqrt 3), unit\n"
    "variance, deterministic from --seed and the shape; the scale is the default\n"
    "1/sqrt(hs).\n"
    "\n"
    "MASKS. L_b is sequence b's length (--lengths; full: Tk). Query t sits at\n"
    "p = A_b - Tq + t (bottom-right alignment: the last query at the last key),\n"
    "and key j is visible when j < L_b, with --causal 1 j <= p, with --window w > 0\n"
    "j > p - w. --mask none passes the lengths as key_lengths (A_b = L_b; the KV\n"
    "slots j >= L_b then hold NaN, which attn must never read). --mask padding\n"
    "passes them as an additive (B,1,1,Tk) mask, 0 or -inf beyond L_b, with\n"
    "strides mask_sb = Tk, mask_sh = mask_ld = 0 (broadcast over heads and\n"
    "queries), and key_lengths NULL: attn then sees Tk keys, so A_b = Tk (as\n"
    "PyTorch with a padding mask; the same keys as key_lengths when Tq = 1).\n"
    "--mask full: an additive (B,NH,Tq,Tk) mask, a bias ~ U(-sqrt 3, sqrt 3) and\n"
    "-inf beyond L_b, dense strides, key_lengths NULL (A_b = Tk).\n"
    "\n"
    "CHECKS, before timing, on the call's own inputs, against plain loops in double\n"
    "over each query's visible keys: out (and, for backward rows, lse, dQ, dK, dV;\n"
    "dK, dV summed over a group's heads and 0 for keys no query sees). Small\n"
    "configurations (the reference's multiply-adds at most %.3g) and --check-rows\n"
    "0 compare everything; larger ones the first and last sequence, the query\n"
    "heads of the first and last key/value head, --check-rows query rows spread\n"
    "over [0,Tq) and --check-rows key rows spread over [0,Tk) plus L_b-1 and L_b\n"
    "(dK, dV: from attn's own lse and out, what the backward differentiates from).\n"
    "max|attn - ref| / max|ref| of the worst array must be <= %s (f32) or %s (f64)\n"
    "for forwards, %s or %s for backward rows. A failed check is reported and the\n"
    "configuration is not timed.\n";

static const char help_body2[] =
    "\n"
    "TIMING. The plan is created once, outside the timing (attn_sdpa_plan_create:\n"
    "ATTN_CAUSAL; forwards ATTN_INFERENCE; the window; engine blas/own:\n"
    "attn_plan_set_threads(plan, 0 or --threads)). --warmup untimed calls, then\n"
    "timed calls (CLOCK_MONOTONIC, one sample per call) until at least --repeats\n"
    "samples adding up to at least --min-time seconds, or --max-repeats; the\n"
    "median is reported. A forward call is attn_sdpa_forward_* with lse NULL; a\n"
    "backward row's call is attn_sdpa_forward_* (with lse) + attn_sdpa_backward_*.\n"
    "--cache cold reads the bandwidth buffer (on --threads threads) before every\n"
    "call, untimed, evicting K and V from the caches (the peer does the same).\n"
    "\n"
    "FLOP COUNTS (a multiply-add counts 2; the softmax is not counted), per\n"
    "visible (query, key) pair of every query head (the upper causal triangle,\n"
    "the slots beyond a length, keys outside a window are not counted):\n"
    "  forward   2*hs (scores Q K^T) + 2*hs_v (weights x V)\n"
    "  backward  rows time the forward and the backward together: the forward +\n"
    "            2*hs (scores recomputed) + 2*hs_v (dP = dout V^T) + 2*hs_v (dV)\n"
    "            + 2*hs (dQ) + 2*hs (dK) = 8*hs + 6*hs_v per pair; the backward\n"
    "            alone is 2.5 x the forward when hs_v = hs, a backward row 3.5 x.\n"
    "\n"
    "BYTES. kv_bytes = NH_kv * (hs + hs_v) * sizeof(element) * sum over sequences\n"
    "of the keys some query of the sequence sees (L_b without a window): what a\n"
    "call must read of K and V at least. GB/s = kv_bytes / median time: for decode\n"
    "rows (Tq <= %d) the number to hold against the read bandwidth.\n"
    "\n"
    "BANDWIDTH. At the start, at each --threads count: a streaming read of a\n"
    "--bandwidth-mib buffer (auto: 8 x the last-level cache that sysfs reports, at\n"
    "least 256 MiB, at most 1024 MiB), the sum of its 64-bit words in a loop\n"
    "compiled for AVX-512, AVX2 and the baseline (the CPU's best is taken), one\n"
    "contiguous slice per thread; bytes / time of one pass, the median of %d after\n"
    "one untimed pass. bw%% = GB/s / this bandwidth. A warm decode call whose K and\n"
    "V fit in the last-level cache can exceed 100%%.\n"
    "\n"
    "CEILING. At the start, at each --threads count, the run command's GEMM ceiling:\n"
    "a square cblas_sgemm (f32) / cblas_dgemm (f64) of --ceiling sizes on attn's\n"
    "BLAS, 2n^3 FLOPs over the median of 5 calls; ceil%% = GF/s / ceiling, for rows\n"
    "that are not decode rows.\n";

static const char help_body3[] =
    "\n"
    "PEER (--peers torch): bench/peers/torch_sdpa_peer.py in one process per thread\n"
    "count (torch.set_num_threads(--threads); OMP/MKL/OPENBLAS_NUM_THREADS), from\n"
    "the first of --torch-python that imports torch >= 2.0 (the venv of\n"
    "./attn.sh peers first); timed right after attn on the same configuration,\n"
    "once for the configurations that differ only in the engine. It calls\n"
    "torch.nn.functional.scaled_dot_product_attention on contiguous (B,NH,Tq,hs),\n"
    "(B,NH_kv,Tk,hs), (B,NH_kv,Tk,hs_v) tensors of the dtype, enable_gqa=True when\n"
    "NH_kv < NH, is_causal only when Tq = Tk with full lengths and no window, else\n"
    "an attn_mask equivalent to the rule above (boolean for --mask none, additive\n"
    "for padding and full); forwards under torch.inference_mode(), backward rows\n"
    "time the forward and torch.autograd.grad(out, (Q, K, V), dout) together. It\n"
    "checks its own output on a few rows against float64 loops over the visible\n"
    "keys (torch_check_error) and says what mask it passed (torch_mask). Its header\n"
    "lines give its versions and build (torch.__config__: BLAS_INFO, MKL, oneDNN,\n"
    "CPU capability, parallel backend, threads). A peer that cannot run is skipped\n"
    "with a note.\n"
    "\n"
    "THREADS. attn-bench sets the BLAS's thread count (openblas_set_num_threads,\n"
    "or BLIS's; the reference CBLAS has none) to --threads before each\n"
    "configuration and before the ceiling. Engine auto is the plan's default\n"
    "(attn's own engine on the process's shared threads when a SIMD kernel set\n"
    "runs, else BLAS threads; ATTN_NUM_THREADS overrides it); the CSV's\n"
    "engine_threads says what it was. With a thread count above 1 the bench sleeps\n"
    "0.2 s before each configuration, so that idle BLAS or OpenMP threads of what\n"
    "ran before (OpenBLAS, the peer) have stopped polling.\n"
    "\n"
    "OUTPUT. Lines starting with # describe the machine (CPU model, SIMD, BLAS,\n"
    "compiler), the ceiling, the bandwidth, the sweep, the counts and the peer;\n"
    "then one table row per configuration (stdout) and the load other processes\n"
    "put on the machine. Table columns:\n";

static const char help_csv[] =
    "\n"
    "CSV columns (--csv; a header row, then one row per configuration, written and\n"
    "flushed as soon as it is done; empty fields where there is no number):\n";

static const char help_outro[] =
    "\n"
    "JSON (--json): {tool, mode: \"sdpa\", schema, command, csv, settings,\n"
    "flop_count, machine, ceiling, bandwidth {method, buffer_bytes,\n"
    "last_level_cache_bytes, repeats, entries [{threads, gbps, best_gbps}]},\n"
    "peers, wall_seconds, other_load_cpus, columns, rows}, rows being the CSV's\n"
    "rows as objects (numbers as numbers, empty fields as null).\n"
    "\n"
    "SWEEP FILES (--sweep FILE): one option per line, 'name = value', as for the\n"
    "run command; bench/targets/sdpa-*.sweep are the issue's target cases\n"
    "(bench/targets/sdpa_targets.sh runs them).\n"
    "\n"
    "Exit status: 0 every configuration passed its check and was timed; 1 a check\n"
    "failed, a call returned an error, memory ran out or an output could not be\n"
    "written; 2 bad arguments.\n";

void bench_sdpa_print_help(FILE *out)
{
    fputs(help_intro, out);
    bench_sdpa_options_print_list(out);
    fprintf(out, help_body, BENCH_SDPA_FULL_CHECK_MACS, BENCH_STRINGIFY(BENCH_TOLERANCE_F32),
            BENCH_STRINGIFY(BENCH_TOLERANCE_F64), BENCH_STRINGIFY(BENCH_GRAD_TOLERANCE_F32),
            BENCH_STRINGIFY(BENCH_GRAD_TOLERANCE_F64));
    fprintf(out, help_body2, BENCH_SDPA_DECODE_MAX_TQ, BENCH_BANDWIDTH_REPEATS);
    fputs(help_body3, out);
    bench_sdpa_table_print_columns(out);
    fputs(help_csv, out);
    bench_sdpa_csv_print_columns(out);
    fputs(help_outro, out);
}

/* ---- the run -------------------------------------------------------------------- */

typedef struct sdpa_run {
    const bench_sdpa_options *options;
    bench_sdpa_record record;
    bench_bandwidth_buffer buffer; /* kept for cold configurations */
    bench_peer_process peer;
    size_t peer_threads; /* of the running peer; 0: none */
    int peer_announced, peer_failed_once;
    int have_peer_shape;
    bench_sdpa_shape peer_shape;
    bench_sdpa_peer_timing peer_timing;
    bench_sdpa_problem problem;
    size_t measured, failures;
    int csv_failed;
} sdpa_run;

static void stop_peer(sdpa_run *run)
{
    bench_peer_summary_stop(&run->record.torch, &run->peer);
    run->peer_threads = 0;
}

static void start_peer(sdpa_run *run, size_t threads)
{
    const bench_sdpa_options *o = run->options;
    stop_peer(run);
    run->peer_threads = threads;
    const bench_sdpa_peer_setup setup = {
        .script_override = o->torch_script,
        .pythons = o->torch_python,
        .threads = threads,
        .policy = &o->repeat,
        .seed = (unsigned long long)o->seed,
        .flush_mib = run->record.bandwidth_bytes ? run->record.bandwidth_bytes >> 20 : 256,
    };
    const int started = bench_sdpa_peer_start(&run->peer, &setup) == 0;
    if (started) {
        printf("# torch peer: %s; %s (threads %zu)\n#   build: %s\n#   computes: %s\n",
               run->peer.info, run->peer.python, threads, run->peer.blas, run->peer.impl);
    } else if (!run->peer_failed_once) {
        printf("# torch peer skipped: %s\n#   (optional: ./attn.sh peers sets up PyTorch 2.x "
               "from PyPI where attn-bench looks first)\n",
               run->peer.note);
        run->peer_failed_once = 1;
    }
    fflush(stdout);
    bench_peer_summary_take(&run->record.torch, &run->peer, started);
}

static void time_peer(sdpa_run *run, bench_sdpa_point *point)
{
    const bench_sdpa_shape *s = &point->config.shape;
    if (!run->options->torch)
        return;
    if (!run->have_peer_shape || !bench_sdpa_shape_equal(&run->peer_shape, s)) {
        if (run->peer_threads != s->threads)
            start_peer(run, s->threads);
        bench_sdpa_peer_time(&run->peer, s, &run->peer_timing);
        run->peer_shape = *s;
        run->have_peer_shape = 1;
    }
    point->torch = run->peer_timing;
}

static void label_of(const bench_sdpa_config *c, char *label, size_t size)
{
    const bench_sdpa_shape *s = &c->shape;
    snprintf(label, size,
             "%s %s causal=%d window=%zu mask=%s B=%zu NH=%zu NH_kv=%zu Tq=%zu Tk=%zu hs=%zu "
             "hs_v=%zu lengths=%s %s %s thr=%zu",
             bench_dtype_name(s->dtype), bench_op_names[s->op], s->causal, s->window,
             bench_sdpa_mask_names[s->mask], s->B, s->NH, s->NH_kv, s->Tq, s->Tk, s->hs,
             s->hs_v, s->lengths->text, bench_sdpa_cache_names[s->cache],
             bench_engine_names[c->engine], s->threads);
}

static void run_one(sdpa_run *run, const bench_sdpa_config *c, FILE *csv,
                    bench_progress *progress)
{
    const bench_sdpa_options *o = run->options;
    bench_blas_set_threads(c->shape.threads);
    if (bench_size_list_max(&o->threads) > 1)
        bench_settle_blas_threads();
    bench_sdpa_point point;
    char error[512] = "";
    if (!bench_sdpa_problem_fits(&run->problem, &c->shape)) {
        bench_sdpa_problem_destroy(&run->problem);
        if (bench_sdpa_problem_create(&run->problem, &c->shape, o->seed, error, sizeof error) !=
            0) {
            memset(&point, 0, sizeof point);
            point.config = *c;
            point.status = BENCH_POINT_SETUP_FAILED;
            point.torch.check_error = -1.0;
        }
    }
    if (run->problem.Q) {
        run->problem.shape = c->shape; /* the arrays fit; causal, window, ... are the config's */
        bench_sdpa_measure(c, o, &run->problem, run->buffer.words ? &run->buffer : NULL, &point,
                           error, sizeof error);
    }
    time_peer(run, &point);
    point.ceiling_gflops =
        bench_ceiling_gflops(&run->record.ceiling, c->shape.dtype, c->shape.threads);
    point.bandwidth_gbps = bench_bandwidth_gbps(&run->record.bandwidth, c->shape.threads);
    bench_progress_hide(progress);
    bench_sdpa_table_print_row(stdout, &point);
    if (point.status != BENCH_POINT_TIMED) {
        char label[512];
        label_of(c, label, sizeof label);
        fprintf(stderr, "attn-bench sdpa: %s: %s\n", label, error);
        run->failures++;
    }
    if (!run->csv_failed && bench_sdpa_csv_write_row(csv, &point) != 0) {
        perror(o->csv_path);
        run->csv_failed = 1;
    }
    run->measured++;
}

static double predicted_cost(const bench_sdpa_options *o, const bench_sdpa_config *c)
{
    const double floor = o->repeat.min_time_s;
    const double calls = (double)(o->repeat.min_repeats + o->repeat.warmup);
    const double attn = bench_sdpa_flops(&c->shape) * calls / 20e9;
    const double one = attn > floor ? attn : floor;
    return one * (o->torch ? 2.0 : 1.0) + 0.01;
}

static size_t auto_bandwidth_bytes(size_t last_level_cache)
{
    const size_t minimum = (size_t)256 << 20, maximum = (size_t)1024 << 20;
    const size_t wanted = last_level_cache > maximum / 8 ? maximum : 8 * last_level_cache;
    return wanted < minimum ? minimum : wanted;
}

static void print_header(sdpa_run *run, const bench_sdpa_sweep *sweep)
{
    const bench_sdpa_options *o = run->options;
    bench_sdpa_record *r = &run->record;
    bench_machine_print(stdout, &r->machine);
    bench_ceiling_print(stdout, &r->ceiling, &r->machine);
    if (!r->bandwidth_bytes) {
        printf("# bandwidth: not measured (--bandwidth-mib 0)\n");
    } else {
        char cache[64] = "unknown";
        if (r->last_level_cache)
            snprintf(cache, sizeof cache, "%.0f MiB", (double)r->last_level_cache / 1048576.0);
        printf("# bandwidth: streaming read (sum of 64-bit words, one slice per thread) of a "
               "%.0f MiB buffer; last-level cache %s (sysfs)%s\n",
               (double)r->bandwidth_bytes / 1048576.0, cache,
               r->last_level_cache && r->bandwidth_bytes < 8 * r->last_level_cache
                   ? ": the buffer is below 8 x that cache, part of it may come from the cache"
                   : "");
        for (size_t i = 0; i < r->bandwidth.count; ++i) {
            const bench_bandwidth_entry *e = &r->bandwidth.entries[i];
            printf("# bandwidth: %zu thread%s: %.2f GB/s (median of %d passes; best %.2f)\n",
                   e->threads, e->threads == 1 ? "" : "s", e->gbps, BENCH_BANDWIDTH_REPEATS,
                   e->best_gbps);
        }
    }
    const bench_repeat_policy *p = &o->repeat;
    printf("# sweep: %zu configurations; warmup %zu, then >= %zu calls and >= %g s (at most "
           "%zu); check rows %zu; seed %llu\n",
           sweep->count, p->warmup, p->min_repeats, p->min_time_s, p->max_repeats,
           o->check_rows, (unsigned long long)o->seed);
    bench_omissions_print(stdout, &sweep->omitted);
    bench_attn_auto_threads_print(stdout, "no attn_plan_set_threads call");
    printf("# FLOP counts: %s\n", bench_sdpa_flops_formula);
    printf("# K+V bytes: NH_kv * (hs + hs_v) * sizeof * sum_b (keys some query of sequence b "
           "sees: L_b without a window); GB/s and bw%% on decode rows (Tq <= %d)\n",
           BENCH_SDPA_DECODE_MAX_TQ);
    if (!o->torch)
        printf("# torch peer: not asked for\n");
    fflush(stdout);
}

static int measure_machine(sdpa_run *run, const bench_sdpa_options *o, int any_cold)
{
    bench_sdpa_record *r = &run->record;
    bench_machine_describe(&r->machine);
    if (bench_ceiling_measure(&r->ceiling, o->dtypes, o->dtype_count, o->threads.values,
                              o->threads.count, o->ceiling_n) != 0)
        fprintf(stderr, "attn-bench sdpa: out of memory for the ceiling's GEMM\n");
    r->last_level_cache = bench_last_level_cache_bytes();
    if (o->bandwidth_mib == 0)
        return 0;
    const size_t bytes = o->bandwidth_mib == SIZE_MAX ? auto_bandwidth_bytes(r->last_level_cache)
                                                      : o->bandwidth_mib << 20;
    if (bench_bandwidth_buffer_create(&run->buffer, bytes) != 0) {
        fprintf(stderr, "attn-bench sdpa: out of memory for the %zu MiB bandwidth buffer\n",
                bytes >> 20);
        return -1;
    }
    r->bandwidth_bytes = run->buffer.count * sizeof(uint64_t);
    if (bench_bandwidth_measure(&run->buffer, o->threads.values, o->threads.count,
                                &r->bandwidth) != 0)
        fprintf(stderr, "attn-bench sdpa: a thread of the bandwidth measurement did not start\n");
    if (!any_cold)
        bench_bandwidth_buffer_destroy(&run->buffer);
    return 0;
}

static int run_sweep(const bench_sdpa_options *o, const bench_sdpa_sweep *sweep)
{
    int any_cold = 0;
    for (size_t i = 0; i < o->cache_count; ++i)
        any_cold |= o->caches[i] == BENCH_SDPA_CACHE_COLD;
    FILE *csv = bench_sdpa_csv_open(o->csv_path);
    if (!csv) {
        perror(o->csv_path);
        return EXIT_BENCH_FAILED;
    }
    sdpa_run *run = calloc(1, sizeof *run);
    if (!run) {
        fclose(csv);
        fprintf(stderr, "attn-bench sdpa: out of memory\n");
        return EXIT_BENCH_FAILED;
    }
    run->options = o;
    run->record.options = o;
    run->record.torch.name = "torch";
    bench_cpu_snapshot start, end;
    bench_cpu_snapshot_take(&start);
    if (measure_machine(run, o, any_cold) != 0) {
        fclose(csv);
        free(run);
        return EXIT_BENCH_FAILED;
    }
    print_header(run, sweep);
    if (o->torch)
        start_peer(run, sweep->configs[0].shape.threads);
    bench_sdpa_table_print_header(stdout);

    double total_cost = 0.0;
    for (size_t i = 0; i < sweep->count; ++i)
        total_cost += predicted_cost(o, &sweep->configs[i]);
    bench_progress progress;
    bench_progress_start(&progress, o->progress, stderr, sweep->count, total_cost);
    for (size_t i = 0; i < sweep->count; ++i) {
        char label[512];
        label_of(&sweep->configs[i], label, sizeof label);
        run_one(run, &sweep->configs[i], csv, &progress);
        bench_progress_step(&progress, predicted_cost(o, &sweep->configs[i]), label);
    }
    bench_progress_finish(&progress);
    stop_peer(run);
    if (!run->record.torch.status)
        run->record.torch.status = o->torch ? "not needed" : "not asked for";
    bench_sdpa_problem_destroy(&run->problem);
    bench_bandwidth_buffer_destroy(&run->buffer);
    if (fclose(csv) != 0 && !run->csv_failed) {
        perror(o->csv_path);
        run->csv_failed = 1;
    }
    bench_cpu_snapshot_take(&end);
    run->record.wall_seconds = end.wall_s - start.wall_s;
    run->record.other_load_cpus = bench_other_load(&start, &end);
    if (run->peer.note[0] && strcmp(run->record.torch.status, "ran") == 0)
        printf("# torch peer: first error: %s\n", run->peer.note);
    bench_other_load_print(stdout, run->record.other_load_cpus, &run->record.machine);
    printf("# %zu configurations measured in %.1f s wall time (checks, ceiling, bandwidth and "
           "peer included); CSV: %s\n",
           run->measured, run->record.wall_seconds, o->csv_path);
    int failed = run->failures > 0 || run->csv_failed;
    if (o->json_path) {
        char error[512];
        if (bench_sdpa_write_json(o->json_path, &run->record, error, sizeof error) != 0) {
            fprintf(stderr, "attn-bench sdpa: JSON: %s\n", error);
            failed = 1;
        } else {
            printf("# JSON: %s\n", o->json_path);
        }
    }
    if (run->failures)
        fprintf(stderr, "attn-bench sdpa: %zu of %zu configurations failed\n", run->failures,
                run->measured);
    free(run);
    return failed ? EXIT_BENCH_FAILED : EXIT_SUCCESS;
}

static void format_key(const void *configs, size_t index, char *key, size_t size)
{
    bench_sdpa_csv_format_key(&((const bench_sdpa_config *)configs)[index], key, size);
}

static int list_sweep(const bench_sdpa_sweep *sweep)
{
    bench_sweep_list_print(stdout, bench_sdpa_csv_header(), BENCH_SDPA_CSV_KEY_COLUMNS,
                           sweep->configs, sweep->count, format_key, &sweep->omitted);
    return EXIT_SUCCESS;
}

int bench_sdpa_command(int argc, char **argv, int first)
{
    char error[512];
    bench_sdpa_options options;
    switch (bench_sdpa_options_parse(argc, argv, first, &options, error, sizeof error)) {
    case BENCH_OPTIONS_HELP:
        bench_sdpa_print_help(stdout);
        return EXIT_SUCCESS;
    case BENCH_OPTIONS_BAD:
        fprintf(stderr, "attn-bench sdpa: %s\nTry 'attn-bench sdpa --help'.\n", error);
        return EXIT_BAD_ARGUMENTS;
    case BENCH_OPTIONS_RUN:
        break;
    }
    int any_cold = 0;
    for (size_t i = 0; i < options.cache_count; ++i)
        any_cold |= options.caches[i] == BENCH_SDPA_CACHE_COLD;
    if (any_cold && options.bandwidth_mib == 0) {
        fprintf(stderr, "attn-bench sdpa: --cache cold reads the bandwidth buffer: it needs "
                        "--bandwidth-mib above 0\n");
        bench_sdpa_options_free(&options);
        return EXIT_BAD_ARGUMENTS;
    }
    bench_sdpa_sweep sweep;
    if (bench_sdpa_sweep_build(&options, &sweep, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench sdpa: %s\n", error);
        bench_sdpa_options_free(&options);
        return EXIT_BAD_ARGUMENTS;
    }
    const int status = options.list ? list_sweep(&sweep) : run_sweep(&options, &sweep);
    bench_sdpa_sweep_free(&sweep);
    bench_sdpa_options_free(&options);
    return status;
}
