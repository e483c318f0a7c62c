#include "output/csv_out.h"

#include <string.h>

#include "output/columns.h"
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

#define CSV_COLUMN_COUNT (sizeof csv_columns / sizeof csv_columns[0])
#define PEER_COLUMN_COUNT (sizeof peer_columns / sizeof peer_columns[0])

const char *bench_csv_header(void)
{
    static char header[2048];
    if (header[0])
        return header;
    bench_columns_join_names(header, sizeof header, csv_columns, CSV_COLUMN_COUNT);
    for (size_t p = 0; p < BENCH_PEER_KINDS; ++p)
        for (size_t i = 0; i < PEER_COLUMN_COUNT; ++i) {
            char name[64];
            if (strcmp(peer_columns[i][0], "speedup") == 0)
                snprintf(name, sizeof name, ",speedup_vs_%s", bench_peer_kind_names[p]);
            else
                snprintf(name, sizeof name, ",%s_%s", bench_peer_kind_names[p],
                         peer_columns[i][0]);
            bench_append_text(header, sizeof header, name);
        }
    return header;
}

void bench_csv_print_columns(FILE *out)
{
    bench_columns_print(out, 22, csv_columns, CSV_COLUMN_COUNT);
    fprintf(out, "  then, for each PEER of");
    for (size_t p = 0; p < BENCH_PEER_KINDS; ++p)
        fprintf(out, "%s %s", p ? "," : "", bench_peer_kind_names[p]);
    fputs(":\n", out);
    for (size_t i = 0; i < PEER_COLUMN_COUNT; ++i) {
        char name[64];
        snprintf(name, sizeof name, strcmp(peer_columns[i][0], "speedup") == 0
                                        ? "speedup_vs_PEER"
                                        : "PEER_%s",
                 peer_columns[i][0]);
        bench_columns_print_row(out, 22, name, peer_columns[i][1]);
    }
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
    if (point->status != BENCH_POINT_TIMED || !timing->measured || point->attn.median_s <= 0.0)
        return 0.0;
    return timing->timing.median_s / point->attn.median_s;
}

static double fraction(double gflops, double ceiling)
{
    return ceiling > 0.0 ? gflops / ceiling : 0.0;
}

static void write_peer(FILE *csv, const bench_point *p, bench_peer_kind kind)
{
    const bench_peer_timing *peer = &p->peers[kind];
    if (peer->measured) {
        double gflops = bench_gflops(p->flops, peer->timing.median_s);
        fprintf(csv, ",%zu,%.6g,%.6g,%.4g,", peer->timing.repeats, peer->timing.median_s * 1e3,
                peer->timing.min_s * 1e3, gflops);
        if (p->ceiling_gflops > 0.0)
            fprintf(csv, "%.4g", fraction(gflops, p->ceiling_gflops));
    } else {
        fputs(",,,,,", csv);
    }
    fputc(',', csv);
    double speedup = bench_speedup_vs_peer(p, kind);
    if (speedup > 0.0)
        fprintf(csv, "%.4g", speedup);
    fprintf(csv, ",%s,", peer->out_dtype);
    bench_csv_write_field(csv, peer->note);
}

int bench_csv_write_row(FILE *csv, const bench_point *p)
{
    char key[256];
    bench_csv_format_key(&p->config, key, sizeof key);
    const int timed = p->status == BENCH_POINT_TIMED;
    const int checked = p->check.status != BENCH_CHECK_SKIPPED &&
                        (timed || p->status == BENCH_POINT_CHECK_FAILED);
    fprintf(csv, "%s,%s,", key, bench_config_ran_path(&p->config));
    if (timed || p->status == BENCH_POINT_CHECK_FAILED)
        fprintf(csv, "%u", p->engine_threads);
    fprintf(csv, ",%.0f,%s,%s,", p->flops, bench_point_status_names[p->status],
            timed || checked ? bench_check_status_names[p->check.status] : "");
    if (checked)
        fprintf(csv, "%zu,%.3e,%.0e,", p->check.rows_checked, p->check.error,
                p->check.tolerance);
    else
        fputs(",,,", csv);
    double gflops = timed ? bench_gflops(p->flops, p->attn.median_s) : 0.0;
    if (timed)
        fprintf(csv, "%zu,%.6g,%.6g,%.4g,", p->attn.repeats, p->attn.median_s * 1e3,
                p->attn.min_s * 1e3, gflops);
    else
        fputs(",,,,", csv);
    if (p->ceiling_gflops > 0.0)
        fprintf(csv, "%.4g,", p->ceiling_gflops);
    else
        fputc(',', csv);
    if (timed && p->ceiling_gflops > 0.0)
        fprintf(csv, "%.4g", fraction(gflops, p->ceiling_gflops));
    for (size_t kind = 0; kind < BENCH_PEER_KINDS; ++kind)
        write_peer(csv, p, (bench_peer_kind)kind);
    fputc('\n', csv);
    return fflush(csv) == 0 && !ferror(csv) ? 0 : -1;
}
