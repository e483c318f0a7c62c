#include "output/sdpa_output.h"

#include <math.h>
#include <string.h>

#include "measure/attn_call.h"
#include "output/columns.h"
#include "output/csv_row.h"
#include "output/json_out.h"
#include "util/text.h"

/* ---- table ----------------------------------------------------------------------- */

static const char *const table_columns[][2] = {
    {"dtype op c win mask", "element type, forward or backward (forward + backward),"},
    {"", "causal, window (0: none), mask (none, padding, full)"},
    {"eng thr cache", "engine (--engine), threads of the row (everyone's), warm"},
    {"", "or cold caches"},
    {"B NH kv Tq Tk hs hsv", "the shape (kv: NH_kv; hsv: hs_v)"},
    {"lengths", "the --lengths item (full: every sequence Tk keys)"},
    {"layout steps", "bshd or bhsd; a decode loop's steps (-: one call)"},
    {"check", "relative error of the reference check (FAIL: above the"},
    {"", "tolerance, ERROR: the call failed); @p0: a row with dropout,"},
    {"", "checked at p = 0 (no peer draws attn's masks)"},
    {"attn_ms", "median time of one call, milliseconds"},
    {"athr", "the threads attn ran on (engine auto: what it resolved to)"},
    {"GF/s", "FLOP count / median time (FLOP COUNTS)"},
    {"peak%", "GF/s as a share of the FMA peak of the dtype and threads"},
    {"", "(bf16: what attn's bf16 products run on, FMA PEAK; f16: f32's;"},
    {"", "not on decode rows)"},
    {"blas%", "GF/s as a share of the BLAS GEMM ceiling (information)"},
    {"GB/s", "decode rows (Tq <= 16): K+V bytes / median time (BYTES)"},
    {"bw%", "decode rows: GB/s as a share of the measured read bandwidth"},
    {"PEER_ms thr xPEER", "each peer asked for (torch, ort, openvino, ggml): its"},
    {"", "median, the threads it ran on, and its time / attn's time"},
    {"", "(above 1: attn is faster); \"-\": not measured"},
    {"py_ms +us", "the python peer's median (attn's drop-in), and what it"},
    {"", "takes more than attn's C call, microseconds"},
    {"drop a/p0 t/p0", "with a --dropout above 0: the row's dropout p, and attn's"},
    {"", "and torch's median over their medians at p = 0 in the same"},
    {"", "run (the twin row, measured interleaved): dropout's cost"},
};

void bench_sdpa_table_print_columns(FILE *out)
{
    bench_columns_print(out, 22, table_columns, sizeof table_columns / sizeof table_columns[0]);
}

/* The width of a peer's median column: "NAME_ms" and at least 9. */
static int peer_width(size_t k)
{
    const int width = (int)strlen(bench_sdpa_peer_names[k]) + 3;
    return width > 9 ? width : 9;
}

void bench_sdpa_table_print_header(FILE *out, const int *peers, int dropout)
{
    fprintf(out,
            "%-5s %-8s %1s %5s %-7s %-4s %3s %-5s %3s %4s %3s %6s %6s %4s %4s %-19s %-4s %5s | "
            "%8s %9s %4s %8s %5s %5s %7s %5s",
            "dtype", "op", "c", "win", "mask", "eng", "thr", "cache", "B", "NH", "kv", "Tq",
            "Tk", "hs", "hsv", "lengths", "lay", "steps", "check", "attn_ms", "athr", "GF/s",
            "peak%", "blas%", "GB/s", "bw%");
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k) {
        if (!peers[k] || k == BENCH_SDPA_PEER_PYTHON)
            continue;
        char median[32], ratio[32];
        snprintf(median, sizeof median, "%s_ms", bench_sdpa_peer_names[k]);
        snprintf(ratio, sizeof ratio, "x%s", bench_sdpa_peer_names[k]);
        fprintf(out, " | %*s %3s %*s", peer_width(k), median, "thr", peer_width(k) - 2, ratio);
    }
    if (peers[BENCH_SDPA_PEER_PYTHON])
        fprintf(out, " | %9s %7s", "py_ms", "+us");
    if (dropout)
        fprintf(out, " | %5s %5s %5s", "drop", "a/p0", "t/p0");
    fputc('\n', out);
    fflush(out);
}

static double rate(double amount, double seconds)
{
    return seconds > 0.0 ? amount / seconds * 1e-9 : 0.0;
}

/* The python peer's median and its time beyond attn's, in microseconds. */
static void print_python(FILE *out, const bench_sdpa_point *p)
{
    const bench_peer_timing *t = &p->peers[BENCH_SDPA_PEER_PYTHON];
    if (!t->measured) {
        fprintf(out, " | %9s %7s", "-", "-");
        return;
    }
    fprintf(out, " | %9.4g", t->timing.median_s * 1e3);
    if (p->outcome.status == BENCH_POINT_TIMED)
        fprintf(out, " %7.1f", (t->timing.median_s - p->outcome.attn.median_s) * 1e6);
    else
        fprintf(out, " %7s", "-");
}

/* A peer's median, threads and ratio to attn. */
static void print_peer(FILE *out, const bench_sdpa_point *p, size_t k)
{
    const bench_peer_timing *t = &p->peers[k];
    const int width = peer_width(k);
    if (!t->measured) {
        fprintf(out, " | %*s %3s %*s", width, "-", "-", width - 2, "-");
        return;
    }
    char threads[24] = "?";
    if (t->threads)
        snprintf(threads, sizeof threads, "%zu", t->threads);
    fprintf(out, " | %*.4g %3s", width, t->timing.median_s * 1e3, threads);
    if (p->outcome.status == BENCH_POINT_TIMED && p->outcome.attn.median_s > 0.0)
        fprintf(out, " %*.2fx", width - 3, t->timing.median_s / p->outcome.attn.median_s);
    else
        fprintf(out, " %*s", width - 2, "-");
}

size_t bench_sdpa_attn_threads(const bench_sdpa_point *p)
{
    return bench_attn_threads_used(p->outcome.engine_threads, p->config.shape.threads);
}


/* A row's time with dropout over its twin's at p = 0: attn's (peer < 0) or
 * a peer's; 0 when either is missing. */
static double dropout_cost(const bench_sdpa_point *p, int peer)
{
    const bench_sdpa_point *twin = p->undropped;
    if (!twin)
        return 0.0;
    if (peer < 0)
        return bench_outcome_median(&p->outcome) > 0.0 && bench_outcome_median(&twin->outcome) > 0.0
                   ? p->outcome.attn.median_s / twin->outcome.attn.median_s
                   : 0.0;
    const bench_peer_timing *with = &p->peers[peer], *without = &twin->peers[peer];
    return with->measured && without->measured && without->timing.median_s > 0.0
               ? with->timing.median_s / without->timing.median_s
               : 0.0;
}

static void print_dropout(FILE *out, const bench_sdpa_point *p)
{
    fprintf(out, " | %5.3g", p->config.shape.dropout);
    const double costs[2] = {dropout_cost(p, -1), dropout_cost(p, BENCH_SDPA_PEER_TORCH)};
    for (size_t i = 0; i < 2; ++i)
        if (costs[i] > 0.0)
            fprintf(out, " %5.3f", costs[i]);
        else
            fprintf(out, " %5s", "-");
}

void bench_sdpa_table_print_row(FILE *out, const bench_sdpa_point *p, const int *peers,
                                int dropout)
{
    const bench_sdpa_config *c = &p->config;
    const bench_sdpa_shape *s = &c->shape;
    const int decode = bench_sdpa_is_decode(s);
    char steps[24] = "-";
    if (s->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP)
        snprintf(steps, sizeof steps, "%zu", s->steps);
    fprintf(out,
            "%-5s %-8s %1d %5zu %-7s %-4s %3zu %-5s %3zu %4zu %3zu %6zu %6zu %4zu %4zu %-19s "
            "%-4s %5s | ",
            bench_dtype_name(s->dtype), bench_op_names[s->op], s->causal, s->window,
            bench_sdpa_mask_names[s->mask], bench_engine_names[c->engine], s->threads,
            bench_sdpa_cache_names[s->cache], s->B, s->NH, s->NH_kv, s->Tq, s->Tk, s->hs,
            s->hs_v, s->lengths->text, bench_sdpa_layout_names[s->layout], steps);
    const bench_outcome *a = &p->outcome;
    bench_columns_print_check(out, a->status, 0, a->check.error, s->dropout);
    const int timed = bench_outcome_timed(a);
    const double gflops = rate(p->flops, a->attn.median_s);
    const double gbps = rate(p->kv_bytes, a->attn.median_s);
    const bench_attn_cells cells = {timed, a->attn.median_s, bench_sdpa_attn_threads(p),
                                    gflops, decode ? 0.0 : gflops, a->peak_gflops,
                                    a->ceiling_gflops};
    bench_columns_print_attn(out, &cells);
    if (timed && decode)
        fprintf(out, " %7.2f", gbps);
    else
        fprintf(out, " %7s", "-");
    if (timed)
        bench_columns_print_share(out, decode ? gbps : 0.0, p->bandwidth_gbps);
    else
        fprintf(out, " %5s", "-");
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k)
        if (peers[k] && k != BENCH_SDPA_PEER_PYTHON)
            print_peer(out, p, k);
    if (peers[BENCH_SDPA_PEER_PYTHON])
        print_python(out, p);
    if (dropout)
        print_dropout(out, p);
    fputc('\n', out);
    fflush(out);
}

/* ---- CSV ------------------------------------------------------------------------- */

/* The columns of an engine peer (ort, openvino, ggml), P its name. */
#define ENGINE_PEER_COLUMNS(P, NAME)                                                           \
    {P "_repeats", "the " NAME " peer's timed calls (empty: not measured)"},                   \
        {P "_median_ms", "its median"}, {P "_min_ms", "its fastest call"},                     \
        {P "_gflops", "flops / its median / 1e9"}, {P "_kv_gbps", "kv_bytes / its median / 1e9"}, \
        {P "_bandwidth_fraction", P "_kv_gbps / bandwidth_gbps"},                              \
        {P "_peak_fraction", P "_gflops / fma_peak_gflops"},                                   \
        {"speedup_vs_" P, P " median / attn median: above 1, attn is faster"},                 \
        {P "_threads", "the threads it ran on, as it reports them"},                           \
        {P "_kernel", "the operator or kernel that ran (the fastest it has for the case)"},     \
        {P "_version", "its engine and version"},                                              \
        {P "_out_dtype", "the element type of its output"},                                    \
        {P "_check_error", "its own check of its output against float64 loops (PEERS)"},       \
        {P "_mask", "the mask it got: none, causal, or the mask's type and shape"},             \
    {                                                                                          \
        P "_note", "why it has no numbers, when known"                                         \
    }

static const char *const csv_columns[][2] = {
    {"dtype", "f32, f64, bf16 or f16 (HALF PRECISION)"},
    {"op", "forward, or backward (forward + backward timed together)"},
    {"causal", "0 or 1"},
    {"window", "sliding window, 0: none"},
    {"mask", "none, padding or full"},
    {"engine", "auto, blas or own (--engine)"},
    {"threads", "threads (--threads)"},
    {"cache", "warm or cold"},
    {"B", "sequences"},
    {"NH", "query heads"},
    {"NH_kv", "key/value heads"},
    {"Tq", "queries per sequence"},
    {"Tk", "key/value slots per sequence (a loop's filled ones)"},
    {"hs", "head size of Q, K"},
    {"hs_v", "head size of V, out"},
    {"lengths", "the --lengths item: full or L0/L1/..."},
    {"layout", "bshd (B,T,NH,hs) or bhsd (B,NH,T,hs) (LAYOUTS)"},
    {"scenario", "call or decode-loop (DECODE LOOP)"},
    {"steps", "a loop's steps; 0: a call (these 19 are the key)"},
    {"engine_threads", "the engine attn ran on: 0 BLAS threads, n own threads"},
    {"visible_pairs", "visible (query, key) pairs of all heads (a loop: a step's)"},
    {"flops", "FLOP count of one call (a loop: of its mean step)"},
    {"kv_bytes", "K+V bytes one call must read (a loop: its mean step's)"},
    {"status", "timed, check_failed, call_failed or setup_failed"},
    {"check", "passed or failed"},
    {"check_sampled", "0: every row and key compared; 1: a sample (CHECKS)"},
    {"check_rows", "query rows compared (of every compared head)"},
    {"check_keys", "key rows of dK, dV compared (backward)"},
    {"check_error", "the largest relative error over the arrays"},
    {"check_worst", "the array it was in: out, lse, dQ, dK or dV"},
    {"check_tolerance", "the tolerance it was compared with (bf16, f16: CHECKS)"},
    {"attn_repeats", "timed calls (a loop: steps of every timed pass)"},
    {"attn_median_ms", "median time of one call (a loop: of one step)"},
    {"attn_min_ms", "fastest call"},
    {"attn_gflops", "flops / median / 1e9"},
    {"attn_kv_gbps", "kv_bytes / median / 1e9"},
    {"bandwidth_gbps", "the read bandwidth measured at this thread count"},
    {"attn_bandwidth_fraction", "attn_kv_gbps / bandwidth_gbps"},
    {"ceiling_gflops", "the GEMM ceiling of this dtype (bf16, f16: sgemm's) and threads"},
    {"attn_ceiling_fraction", "attn_gflops / ceiling_gflops"},
    {"torch_repeats", "the peer's timed calls (empty: not measured)"},
    {"torch_median_ms", "its median"},
    {"torch_min_ms", "its fastest call"},
    {"torch_gflops", "flops / its median / 1e9"},
    {"torch_kv_gbps", "kv_bytes / its median / 1e9"},
    {"torch_bandwidth_fraction", "torch_kv_gbps / bandwidth_gbps"},
    {"torch_ceiling_fraction", "torch_gflops / ceiling_gflops"},
    {"speedup_vs_torch", "torch median / attn median: above 1, attn is faster"},
    {"torch_out_dtype", "the element type of torch's output"},
    {"torch_check_error", "the peer's own check of its output (PEER)"},
    {"torch_mask", "what torch got: is_causal, none, bool(...) or float32(...)"},
    {"torch_note", "why the peer has no numbers, when known"},
    {"python_repeats", "the python peer's timed calls (empty: not measured)"},
    {"python_median_ms", "its median: attn's drop-in, C call and binding"},
    {"python_min_ms", "its fastest call"},
    {"python_overhead_us", "python median - attn median, us: at most the binding"},
    {"python_check_error", "the python peer's own check of its output (PEERS)"},
    {"python_note", "why the python peer has no numbers, when known"},
    {"fma_peak_gflops", "the FMA peak of this dtype and threads (bf16: FMA PEAK)"},
    {"attn_peak_fraction", "attn_gflops / fma_peak_gflops"},
    {"attn_threads", "the threads attn ran on: engine_threads, or threads (BLAS)"},
    {"torch_threads", "the threads torch ran on (torch.get_num_threads)"},
    {"torch_kernel", "the function torch's peer called"},
    {"torch_version", "torch=VERSION"},
    {"torch_peak_fraction", "torch_gflops / fma_peak_gflops"},
    ENGINE_PEER_COLUMNS("ort", "ONNX Runtime"),
    ENGINE_PEER_COLUMNS("openvino", "OpenVINO"),
    ENGINE_PEER_COLUMNS("ggml", "ggml"),
    {"dropout", "attention dropout p of the row (--dropout; 0: none)"},
    {"dropout_check", "with dropout: \"at p=0\", where the check ran (DROPOUT)"},
    {"attn_dropout_cost", "attn median / attn median of the twin row at p = 0"},
    {"torch_dropout_cost", "torch median / torch median of the twin row at p = 0"},
};

#define CSV_COLUMN_COUNT (sizeof csv_columns / sizeof csv_columns[0])

const char *bench_sdpa_csv_header(void)
{
    static char header[8192];
    if (header[0])
        return header;
    bench_columns_join_names(header, sizeof header, csv_columns, CSV_COLUMN_COUNT);
    return header;
}

void bench_sdpa_csv_print_columns(FILE *out)
{
    bench_columns_print(out, 25, csv_columns, CSV_COLUMN_COUNT);
}

void bench_sdpa_csv_format_key(const bench_sdpa_config *c, char *key, size_t size)
{
    const bench_sdpa_shape *s = &c->shape;
    snprintf(key, size, "%s,%s,%d,%zu,%s,%s,%zu,%s,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%s,%s,%s,%zu",
             bench_dtype_name(s->dtype), bench_op_names[s->op], s->causal, s->window,
             bench_sdpa_mask_names[s->mask], bench_engine_names[c->engine], s->threads,
             bench_sdpa_cache_names[s->cache], s->B, s->NH, s->NH_kv, s->Tq, s->Tk, s->hs,
             s->hs_v, s->lengths->text, bench_sdpa_layout_names[s->layout],
             bench_sdpa_scenario_names[s->scenario], s->steps);
}

FILE *bench_sdpa_csv_open(const char *path)
{
    FILE *csv = fopen(path, "w");
    if (!csv)
        return NULL;
    fprintf(csv, "%s\n", bench_sdpa_csv_header());
    fflush(csv);
    return csv;
}

/* A peer's median, min, GFLOP/s, K+V GB/s, the GB/s's share of the
 * bandwidth, the GFLOP/s's share of share_of, and its time over attn's
 * (when attn was timed). */
static void write_peer_rates(bench_csv_row *row, const bench_sdpa_point *p,
                             const bench_peer_timing *t, int timed, double share_of)
{
    const double median = t->timing.median_s;
    const double gflops = rate(p->flops, median), gbps = rate(p->kv_bytes, median);
    bench_csv_number(row, 1, "%.6g", median * 1e3);
    bench_csv_number(row, 1, "%.6g", t->timing.min_s * 1e3);
    bench_csv_number(row, 1, "%.4g", gflops);
    bench_csv_number(row, 1, "%.4g", gbps);
    bench_csv_fraction(row, gbps, p->bandwidth_gbps);
    bench_csv_fraction(row, gflops, share_of);
    const double attn_median = timed ? bench_outcome_median(&p->outcome) : 0.0;
    bench_csv_number(row, attn_median > 0.0, "%.4g",
                     attn_median > 0.0 ? median / attn_median : 0.0);
}

static void write_check_error(bench_csv_row *row, const bench_peer_timing *t)
{
    bench_csv_number(row, t->check_error >= 0.0 || isnan(t->check_error), "%.3e",
                     t->check_error);
}

/* torch's first columns (torch_repeats .. torch_note). */
static void write_torch(bench_csv_row *row, const bench_sdpa_point *p, int timed)
{
    const bench_peer_timing *t = &p->peers[BENCH_SDPA_PEER_TORCH];
    if (t->measured) {
        bench_csv_number(row, 1, "%zu", t->timing.repeats);
        write_peer_rates(row, p, t, timed, p->outcome.ceiling_gflops);
        bench_csv_text(row, t->out_dtype);
        write_check_error(row, t);
        bench_csv_text(row, t->mask);
    } else {
        bench_csv_empty(row, 11);
    }
    bench_csv_text(row, t->note);
}

/* The python peer's columns. */
static void write_python(bench_csv_row *row, const bench_sdpa_point *p, int timed)
{
    const bench_peer_timing *t = &p->peers[BENCH_SDPA_PEER_PYTHON];
    if (t->measured) {
        const double median = t->timing.median_s;
        bench_csv_number(row, 1, "%zu", t->timing.repeats);
        bench_csv_number(row, 1, "%.6g", median * 1e3);
        bench_csv_number(row, 1, "%.6g", t->timing.min_s * 1e3);
        bench_csv_number(row, timed, "%.4g", (median - p->outcome.attn.median_s) * 1e6);
        write_check_error(row, t);
    } else {
        bench_csv_empty(row, 5);
    }
    bench_csv_text(row, t->note);
}

/* An engine peer's columns (ENGINE_PEER_COLUMNS). */
static void write_engine_peer(bench_csv_row *row, const bench_sdpa_point *p, size_t k, int timed)
{
    const bench_peer_timing *t = &p->peers[k];
    if (t->measured) {
        bench_csv_number(row, 1, "%zu", t->timing.repeats);
        write_peer_rates(row, p, t, timed, p->outcome.peak_gflops);
        bench_csv_number(row, t->threads != 0, "%zu", t->threads);
        bench_csv_text(row, t->kernel);
        bench_csv_text(row, t->version);
        bench_csv_text(row, t->out_dtype);
        write_check_error(row, t);
        bench_csv_text(row, t->mask);
    } else {
        bench_csv_empty(row, 14);
    }
    bench_csv_text(row, t->note);
}

/* The FMA peak's, attn's threads and torch's newer columns. */
static void write_peak_and_threads(bench_csv_row *row, const bench_sdpa_point *p, int timed)
{
    const double gflops = timed ? rate(p->flops, p->outcome.attn.median_s) : 0.0;
    bench_csv_number(row, p->outcome.peak_gflops > 0.0, "%.4g", p->outcome.peak_gflops);
    bench_csv_fraction(row, gflops, p->outcome.peak_gflops);
    bench_csv_number(row, timed || p->outcome.status == BENCH_POINT_CHECK_FAILED, "%zu",
                     bench_sdpa_attn_threads(p));
    const bench_peer_timing *t = &p->peers[BENCH_SDPA_PEER_TORCH];
    bench_csv_number(row, t->measured && t->threads, "%zu", t->threads);
    bench_csv_text(row, t->measured ? t->kernel : "");
    bench_csv_text(row, t->measured ? t->version : "");
    bench_csv_fraction(row, t->measured ? rate(p->flops, t->timing.median_s) : 0.0,
                       p->outcome.peak_gflops);
}

int bench_sdpa_csv_write_row(FILE *csv, const bench_sdpa_point *p)
{
    char key[512];
    bench_sdpa_csv_format_key(&p->config, key, sizeof key);
    const int timed = p->outcome.status == BENCH_POINT_TIMED;
    const int checked = timed || p->outcome.status == BENCH_POINT_CHECK_FAILED;
    const double gflops = timed ? rate(p->flops, p->outcome.attn.median_s) : 0.0;
    const double gbps = timed ? rate(p->kv_bytes, p->outcome.attn.median_s) : 0.0;
    bench_csv_row row;
    bench_csv_row_start(&row, csv);
    bench_csv_joined(&row, key, BENCH_SDPA_CSV_KEY_COLUMNS);
    bench_csv_number(&row, checked, "%u", p->outcome.engine_threads);
    bench_csv_number(&row, 1, "%.15g", p->pairs);
    bench_csv_number(&row, 1, "%.15g", p->flops);
    bench_csv_number(&row, 1, "%.15g", p->kv_bytes);
    bench_csv_text(&row, bench_point_status_names[p->outcome.status]);
    bench_csv_text(&row, checked ? bench_check_status_names[p->outcome.check.status] : "");
    bench_csv_number(&row, checked, "%d", p->outcome.check.sampled);
    bench_csv_number(&row, checked, "%zu", p->outcome.check.rows);
    bench_csv_number(&row, checked, "%zu", p->outcome.check.keys);
    bench_csv_number(&row, checked, "%.3e", p->outcome.check.error);
    bench_csv_text(&row, checked && p->outcome.check.worst ? p->outcome.check.worst : "");
    /* a half type's tolerance follows the data (measure/sdpa_reference.h) */
    bench_csv_number(&row, checked, bench_dtype_is_half(p->config.shape.dtype) ? "%.3g" : "%.0e",
                     p->outcome.check.tolerance);
    bench_csv_number(&row, timed, "%zu", p->outcome.attn.repeats);
    bench_csv_number(&row, timed, "%.6g", p->outcome.attn.median_s * 1e3);
    bench_csv_number(&row, timed, "%.6g", p->outcome.attn.min_s * 1e3);
    bench_csv_number(&row, timed, "%.4g", gflops);
    bench_csv_number(&row, timed, "%.4g", gbps);
    bench_csv_number(&row, p->bandwidth_gbps > 0.0, "%.4g", p->bandwidth_gbps);
    bench_csv_fraction(&row, gbps, p->bandwidth_gbps);
    bench_csv_number(&row, p->outcome.ceiling_gflops > 0.0, "%.4g", p->outcome.ceiling_gflops);
    bench_csv_fraction(&row, gflops, p->outcome.ceiling_gflops);
    write_torch(&row, p, timed);
    write_python(&row, p, timed);
    write_peak_and_threads(&row, p, timed);
    for (size_t k = BENCH_SDPA_PEER_ORT; k < BENCH_SDPA_PEER_COUNT; ++k)
        write_engine_peer(&row, p, k, timed);
    bench_csv_number(&row, 1, "%.6g", p->config.shape.dropout);
    bench_csv_text(&row, p->config.shape.dropout > 0.0 ? "at p=0" : "");
    const double costs[2] = {dropout_cost(p, -1), dropout_cost(p, BENCH_SDPA_PEER_TORCH)};
    for (size_t i = 0; i < 2; ++i)
        bench_csv_number(&row, costs[i] > 0.0, "%.4f", costs[i]);
    return bench_csv_row_end(&row, CSV_COLUMN_COUNT);
}

/* ---- JSON ------------------------------------------------------------------------ */

void bench_sdpa_write_json_settings(FILE *out, const void *options)
{
    const bench_sdpa_options *o = options;
    bench_json_write_common_settings(out, &o->common);
    fprintf(out, "\"check_rows\": %zu, \"rounds\": %zu},\n", o->check_rows, o->rounds);
    bench_json_write_member(out, "  ", "flop_count", bench_sdpa_flops_formula, ",\n");
}
