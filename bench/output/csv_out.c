#include "output/csv_out.h"

#include <string.h>

#include "measure/attn_call.h"
#include "output/columns.h"
#include "output/csv_row.h"
#include "util/text.h"

/* Every column, in order; the peers' columns repeat per peer (PEER_* rows
 * below are written as naive_*, numpy_*, torch_*). */
static const char *const csv_columns[][2] = {
    {"dtype", "f32 or f64"},
    {"op", "forward, or backward (forward + backward timed together)"},
    {"causal", "0 or 1"},
    {"api", "plan or oneshot"},
    {"path", "auto, materialized or tiled: the path asked for (--path)"},
    {"engine", "auto, blas or own: the plan's threads (--engine)"},
    {"threads", "BLAS threads of attn and of the peers"},
    {"B", "batch size"},
    {"T", "sequence length"},
    {"C", "model width"},
    {"NH", "heads"},
    {"hs", "head size"},
    {"wo", "1 with an output projection Wo"},
    {"weights", "1 when the forward also wrote the weights"},
    {"ran_path", "materialized or tiled: the path attn took"},
    {"engine_threads", "the engine attn ran on: 0 BLAS threads, n own threads"},
    {"flops", "FLOP count of one call (see FLOP COUNTS)"},
    {"status", "timed, check_failed, call_failed or setup_failed"},
    {"check", "passed, failed or skipped"},
    {"check_rows", "query rows compared with the reference"},
    {"check_error", "relative error of the check (see CHECKS)"},
    {"check_tolerance", "the tolerance it was compared with"},
    {"attn_repeats", "timed calls"},
    {"attn_median_ms", "median time of one call"},
    {"attn_min_ms", "fastest call"},
    {"attn_gflops", "flops / median time / 1e9"},
    {"ceiling_gflops", "the GEMM ceiling of this dtype and thread count"},
    {"attn_ceiling_fraction", "attn_gflops / ceiling_gflops"},
};

static const char *const peer_columns[][2] = {
    {"repeats", "timed calls of the peer (empty: not measured)"},
    {"median_ms", "its median time of one call"},
    {"min_ms", "its fastest call"},
    {"gflops", "flops / its median / 1e9"},
    {"ceiling_fraction", "its gflops / ceiling_gflops"},
    {"speedup", "peer median / attn median: above 1 means attn is faster"},
    {"out_dtype", "the element type of its output: float64 on an f32 row is\n"
                  "the lesson's / np.sqrt(hs), which NumPy >= 2 promotes\n"
                  "(numpy); numpy32 keeps float32"},
    {"note", "why it has no numbers, when known"},
};

/* After every peer's columns (added after them, so that the columns before
 * keep their places): attn's threads and the FMA peak, then per peer. */
static const char *const peak_columns[][2] = {
    {"attn_threads", "the threads attn ran on: engine_threads, or threads\n"
                     "(BLAS threads)"},
    {"fma_peak_gflops", "the FMA peak of this dtype and thread count (FMA PEAK)"},
    {"attn_peak_fraction", "attn_gflops / fma_peak_gflops"},
};

static const char *const peer_peak_columns[][2] = {
    {"threads", "the threads it ran on, as it reports them (naive: 1)"},
    {"peak_fraction", "its gflops / fma_peak_gflops"},
};

/* Peers whose columns come where they always were: naive .. python. The
 * engines added later (ort, openvino, ggml) get theirs after the dropout columns,
 * and then every peer its check's columns, so that earlier columns keep
 * their places. */
#define CSV_FIRST_PEERS 5
_Static_assert(CSV_FIRST_PEERS <= BENCH_PEER_KINDS, "the first peers are peers");

/* After the later peers' columns, per peer of every kind. */
static const char *const peer_check_columns[][2] = {
    {"check_error", "its output's relative error against a float64\n"
                    "reference before it was timed (the engines check their\n"
                    "own; empty: the peer does not check)"},
    {"kernel", "the operator or kernel it timed (an engine's fastest\n"
               "checked candidate)"},
};

/* attention dropout and what it costs (issue 26). */
static const char *const dropout_columns[][2] = {
    {"dropout", "attention dropout p of the row (--dropout; 0: none)"},
    {"attn_dropout_cost", "attn median / attn median of the twin row at p = 0"},
    {"torch_dropout_cost", "torch median / torch median of the twin row at p = 0"},
};

#define CSV_COLUMN_COUNT (sizeof csv_columns / sizeof csv_columns[0])
#define DROPOUT_COLUMN_COUNT (sizeof dropout_columns / sizeof dropout_columns[0])
#define PEER_COLUMN_COUNT (sizeof peer_columns / sizeof peer_columns[0])
#define PEAK_COLUMN_COUNT (sizeof peak_columns / sizeof peak_columns[0])
#define PEER_PEAK_COLUMN_COUNT (sizeof peer_peak_columns / sizeof peer_peak_columns[0])
#define PEER_CHECK_COLUMN_COUNT (sizeof peer_check_columns / sizeof peer_check_columns[0])

/* ",PEER_COLUMN" for each column of a peer's list (speedup: speedup_vs_PEER) */
static void append_peer_columns(char *header, size_t size, const char *peer,
                                const char *const (*columns)[2], size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        char name[64];
        if (strcmp(columns[i][0], "speedup") == 0)
            snprintf(name, sizeof name, ",speedup_vs_%s", peer);
        else
            snprintf(name, sizeof name, ",%s_%s", peer, columns[i][0]);
        bench_append_text(header, size, name);
    }
}

/* ",name" for each of the columns (their first field). */
static void append_columns(char *header, size_t size, const char *const (*columns)[2],
                           size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        bench_append_text(header, size, ",");
        bench_append_text(header, size, columns[i][0]);
    }
}

const char *bench_csv_header(void)
{
    static char header[4096];
    if (header[0])
        return header;
    bench_columns_join_names(header, sizeof header, csv_columns, CSV_COLUMN_COUNT);
    for (size_t p = 0; p < CSV_FIRST_PEERS; ++p)
        append_peer_columns(header, sizeof header, bench_peer_kind_names[p], peer_columns,
                            PEER_COLUMN_COUNT);
    append_columns(header, sizeof header, peak_columns, PEAK_COLUMN_COUNT);
    for (size_t p = 0; p < CSV_FIRST_PEERS; ++p)
        append_peer_columns(header, sizeof header, bench_peer_kind_names[p], peer_peak_columns,
                            PEER_PEAK_COLUMN_COUNT);
    append_columns(header, sizeof header, dropout_columns, DROPOUT_COLUMN_COUNT);
    for (size_t p = CSV_FIRST_PEERS; p < BENCH_PEER_KINDS; ++p) {
        append_peer_columns(header, sizeof header, bench_peer_kind_names[p], peer_columns,
                            PEER_COLUMN_COUNT);
        append_peer_columns(header, sizeof header, bench_peer_kind_names[p], peer_peak_columns,
                            PEER_PEAK_COLUMN_COUNT);
    }
    for (size_t p = 0; p < BENCH_PEER_KINDS; ++p)
        append_peer_columns(header, sizeof header, bench_peer_kind_names[p],
                            peer_check_columns, PEER_CHECK_COLUMN_COUNT);
    return header;
}

/* "  then, for each PEER of naive, ...:" (peers [first, end)) and a peer's
 * columns */
static void print_peer_columns(FILE *out, size_t first, size_t end,
                               const char *const (*columns)[2], size_t count)
{
    fprintf(out, "  then, for each PEER of");
    for (size_t p = first; p < end; ++p)
        fprintf(out, "%s %s", p > first ? "," : "", bench_peer_kind_names[p]);
    fputs(":\n", out);
    for (size_t i = 0; i < count; ++i) {
        char name[64];
        snprintf(name, sizeof name,
                 strcmp(columns[i][0], "speedup") == 0 ? "speedup_vs_PEER" : "PEER_%s",
                 columns[i][0]);
        bench_columns_print_row(out, 22, name, columns[i][1]);
    }
}

void bench_csv_print_columns(FILE *out)
{
    bench_columns_print(out, 22, csv_columns, CSV_COLUMN_COUNT);
    print_peer_columns(out, 0, CSV_FIRST_PEERS, peer_columns, PEER_COLUMN_COUNT);
    fputs("  then\n", out);
    bench_columns_print(out, 22, peak_columns, PEAK_COLUMN_COUNT);
    print_peer_columns(out, 0, CSV_FIRST_PEERS, peer_peak_columns, PEER_PEAK_COLUMN_COUNT);
    fputs("  then\n", out);
    bench_columns_print(out, 22, dropout_columns, DROPOUT_COLUMN_COUNT);
    print_peer_columns(out, CSV_FIRST_PEERS, BENCH_PEER_KINDS, peer_columns, PEER_COLUMN_COUNT);
    print_peer_columns(out, CSV_FIRST_PEERS, BENCH_PEER_KINDS, peer_peak_columns,
                       PEER_PEAK_COLUMN_COUNT);
    print_peer_columns(out, 0, BENCH_PEER_KINDS, peer_check_columns, PEER_CHECK_COLUMN_COUNT);
}

/* Whether the name (length bytes) is one of the fields. */
static int has_field(char *const *fields, size_t count, const char *name, size_t length)
{
    for (size_t i = 0; i < count; ++i)
        if (strlen(fields[i]) == length && strncmp(fields[i], name, length) == 0)
            return 1;
    return 0;
}

/* Whether name is one of this attn-bench's columns. */
static int is_column(const char *name)
{
    for (const char *column = bench_csv_header(); *column;) {
        const size_t length = strcspn(column, ",");
        if (strlen(name) == length && strncmp(column, name, length) == 0)
            return 1;
        column += length + (column[length] == ',');
    }
    return 0;
}

void bench_csv_compare_header(char *const *fields, size_t count, bench_csv_header_diff *diff)
{
    memset(diff, 0, sizeof *diff);
    size_t position = 0, in_place = 0;
    for (const char *name = bench_csv_header(); *name; ++position) {
        const size_t length = strcspn(name, ",");
        in_place += position < count && strlen(fields[position]) == length &&
                    strncmp(fields[position], name, length) == 0;
        if (!has_field(fields, count, name, length) && diff->missing++ == 0)
            snprintf(diff->first_missing, sizeof diff->first_missing, "%.*s", (int)length, name);
        name += length + (name[length] == ',');
    }
    diff->same = in_place == position && position == count;
    for (size_t i = 0; i < count; ++i)
        if (!is_column(fields[i]) && diff->unknown++ == 0)
            snprintf(diff->first_unknown, sizeof diff->first_unknown, "%.60s", fields[i]);
}

void bench_csv_format_key(const bench_config *config, char *key, size_t size)
{
    const bench_shape *s = &config->shape;
    snprintf(key, size, "%s,%s,%d,%s,%s,%s,%zu,%zu,%zu,%zu,%zu,%zu,%d,%d",
             bench_dtype_name(s->dtype), bench_op_names[s->op], s->causal,
             bench_api_names[config->api], bench_path_names[config->path],
             bench_engine_names[config->engine], s->threads, s->B,
             s->T, s->C, s->NH, s->hs, s->wo, config->with_weights);
}

FILE *bench_csv_open(const char *path, int append)
{
    FILE *csv = fopen(path, append ? "a" : "w");
    if (!csv)
        return NULL;
    if (!append)
        fprintf(csv, "%s\n", bench_csv_header());
    fflush(csv);
    return csv;
}

int bench_peer_promoted(const bench_point *point, bench_peer_kind peer)
{
    const char *out_dtype = point->peers[peer].out_dtype;
    const char *own = point->config.shape.dtype == BENCH_F32 ? "float32" : "float64";
    return point->peers[peer].measured && out_dtype[0] && strcmp(out_dtype, own) != 0;
}

double bench_speedup_vs_peer(const bench_point *point, bench_peer_kind peer)
{
    const bench_peer_timing *timing = &point->peers[peer];
    const double median = bench_outcome_median(&point->outcome);
    return timing->measured && median > 0.0 ? timing->timing.median_s / median : 0.0;
}

size_t bench_point_attn_threads(const bench_point *point)
{
    return bench_attn_threads_used(point->outcome.engine_threads, point->config.shape.threads);
}

/* a / b, 0 without a b */
static double over(double a, double b)
{
    return b > 0.0 ? a / b : 0.0;
}

/* A peer's columns (peer_columns; empty fields when it was not measured). */
static void write_peer(bench_csv_row *row, const bench_point *p, bench_peer_kind kind)
{
    const bench_peer_timing *peer = &p->peers[kind];
    const int measured = peer->measured;
    const double gflops = measured ? bench_gflops(p->flops, peer->timing.median_s) : 0.0;
    bench_csv_number(row, measured, "%zu", peer->timing.repeats);
    bench_csv_number(row, measured, "%.6g", peer->timing.median_s * 1e3);
    bench_csv_number(row, measured, "%.6g", peer->timing.min_s * 1e3);
    bench_csv_number(row, measured, "%.4g", gflops);
    bench_csv_number(row, measured && p->outcome.ceiling_gflops > 0.0, "%.4g",
                     over(gflops, p->outcome.ceiling_gflops));
    const double speedup = bench_speedup_vs_peer(p, kind);
    bench_csv_number(row, speedup > 0.0, "%.4g", speedup);
    bench_csv_text(row, peer->out_dtype);
    bench_csv_text(row, peer->note);
}

/* A peer's peer_peak_columns. */
static void write_peer_peak(bench_csv_row *row, const bench_point *p, bench_peer_kind kind)
{
    const bench_peer_timing *peer = &p->peers[kind];
    bench_csv_number(row, peer->measured && peer->threads, "%zu", peer->threads);
    bench_csv_fraction(row, peer->measured ? bench_gflops(p->flops, peer->timing.median_s) : 0.0,
                       p->outcome.peak_gflops);
}

/* The columns after the first peers': peak_columns, then their
 * peer_peak_columns. */
static void write_threads_and_peak(bench_csv_row *row, const bench_point *p, double gflops)
{
    const bench_point_status status = p->outcome.status;
    bench_csv_number(row, status == BENCH_POINT_TIMED || status == BENCH_POINT_CHECK_FAILED, "%zu",
                     bench_point_attn_threads(p));
    bench_csv_number(row, p->outcome.peak_gflops > 0.0, "%.4g", p->outcome.peak_gflops);
    bench_csv_fraction(row, gflops, p->outcome.peak_gflops);
    for (size_t kind = 0; kind < CSV_FIRST_PEERS; ++kind)
        write_peer_peak(row, p, (bench_peer_kind)kind);
}

/* After the dropout columns: the later peers' columns, then every peer's
 * check columns. */
static void write_later_peers(bench_csv_row *row, const bench_point *p)
{
    for (size_t kind = CSV_FIRST_PEERS; kind < BENCH_PEER_KINDS; ++kind) {
        write_peer(row, p, (bench_peer_kind)kind);
        write_peer_peak(row, p, (bench_peer_kind)kind);
    }
    for (size_t kind = 0; kind < BENCH_PEER_KINDS; ++kind) {
        const bench_peer_timing *peer = &p->peers[kind];
        bench_csv_number(row, peer->measured && peer->check_error >= 0.0, "%.3e",
                         peer->check_error);
        bench_csv_text(row, peer->measured ? peer->kernel : "");
    }
}

int bench_csv_write_row(FILE *csv, const bench_point *p)
{
    char key[256];
    bench_csv_format_key(&p->config, key, sizeof key);
    const int timed = p->outcome.status == BENCH_POINT_TIMED;
    const int checked = p->outcome.check.status != BENCH_CHECK_SKIPPED &&
                        (timed || p->outcome.status == BENCH_POINT_CHECK_FAILED);
    const double gflops = timed ? bench_gflops(p->flops, p->outcome.attn.median_s) : 0.0;
    bench_csv_row row;
    bench_csv_row_start(&row, csv);
    bench_csv_joined(&row, key, BENCH_CSV_KEY_COLUMNS);
    bench_csv_text(&row, bench_config_ran_path(&p->config));
    bench_csv_number(&row, timed || p->outcome.status == BENCH_POINT_CHECK_FAILED, "%u",
                     p->outcome.engine_threads);
    bench_csv_number(&row, 1, "%.0f", p->flops);
    bench_csv_text(&row, bench_point_status_names[p->outcome.status]);
    bench_csv_text(&row, timed || checked ? bench_check_status_names[p->outcome.check.status] : "");
    bench_csv_number(&row, checked, "%zu", p->outcome.check.rows);
    bench_csv_number(&row, checked, "%.3e", p->outcome.check.error);
    bench_csv_number(&row, checked, "%.0e", p->outcome.check.tolerance);
    bench_csv_number(&row, timed, "%zu", p->outcome.attn.repeats);
    bench_csv_number(&row, timed, "%.6g", p->outcome.attn.median_s * 1e3);
    bench_csv_number(&row, timed, "%.6g", p->outcome.attn.min_s * 1e3);
    bench_csv_number(&row, timed, "%.4g", gflops);
    bench_csv_number(&row, p->outcome.ceiling_gflops > 0.0, "%.4g", p->outcome.ceiling_gflops);
    bench_csv_number(&row, timed && p->outcome.ceiling_gflops > 0.0, "%.4g",
                     over(gflops, p->outcome.ceiling_gflops));
    for (size_t kind = 0; kind < CSV_FIRST_PEERS; ++kind)
        write_peer(&row, p, (bench_peer_kind)kind);
    write_threads_and_peak(&row, p, gflops);
    bench_csv_number(&row, 1, "%.6g", p->config.shape.dropout);
    bench_csv_number(&row, p->attn_dropout_cost > 0.0, "%.4f", p->attn_dropout_cost);
    bench_csv_number(&row, p->torch_dropout_cost > 0.0, "%.4f", p->torch_dropout_cost);
    write_later_peers(&row, p);
    return bench_csv_row_end(&row, bench_csv_count_columns(bench_csv_header()));
}
