#include "run/sdpa_run.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/attn_call.h"
#include "machine/blas_info.h"
#include "pipeline/sweep_frame.h"
#include "output/sdpa_output.h"
#include "run/sdpa_peer_set.h"
#include "measure/sweep_list.h"

enum { EXIT_BENCH_FAILED = 1, EXIT_BAD_ARGUMENTS = 2 };

/* ---- the run (a kind of pipeline/sweep_frame.h) ------------------------------- */

typedef struct sdpa_run {
    const bench_sdpa_options *options;
    const bench_sdpa_sweep *sweep;
    bench_sdpa_peer_set peers;
    bench_sdpa_problem problems[BENCH_SDPA_LAYOUT_COUNT]; /* one per layout, kept while they fit */
    bench_sdpa_point points[BENCH_SDPA_GROUP_MAX];        /* the group's */
    bench_sweep_frame *frame;                             /* from begin on */
} sdpa_run;

static int any_dropout(const bench_sdpa_options *o)
{
    for (size_t i = 0; i < o->common.dropout_count; ++i)
        if (o->common.dropouts[i] > 0.0)
            return 1;
    return 0;
}

static int any_cold(const bench_sdpa_options *o)
{
    for (size_t i = 0; i < o->cache_count; ++i)
        if (o->caches[i] == BENCH_SDPA_CACHE_COLD)
            return 1;
    return 0;
}

static void label_of(void *context, size_t i, char *label, size_t size)
{
    const sdpa_run *run = context;
    const bench_sdpa_config *c = &run->sweep->configs[i];
    const bench_sdpa_shape *s = &c->shape;
    snprintf(label, size,
             "%s %s causal=%d window=%zu mask=%s B=%zu NH=%zu NH_kv=%zu Tq=%zu Tk=%zu hs=%zu "
             "hs_v=%zu lengths=%s %s %s %s steps=%zu %s thr=%zu dropout=%g",
             bench_dtype_name(s->dtype), bench_op_names[s->op], s->causal, s->window,
             bench_sdpa_mask_names[s->mask], s->B, s->NH, s->NH_kv, s->Tq, s->Tk, s->hs,
             s->hs_v, s->lengths->text, bench_sdpa_cache_names[s->cache],
             bench_sdpa_layout_names[s->layout], bench_sdpa_scenario_names[s->scenario],
             s->steps, bench_engine_names[c->engine], s->threads, s->dropout);
}

/* The problem of a configuration: the run's one for its layout, made anew
 * when its arrays do not fit; NULL (error says why) when it cannot be made. */
static bench_sdpa_problem *problem_for(sdpa_run *run, const bench_sdpa_config *c, char *error,
                                       size_t size)
{
    bench_sdpa_problem *problem = &run->problems[c->shape.layout];
    if (!bench_sdpa_problem_fits(problem, &c->shape)) {
        bench_sdpa_problem_destroy(problem);
        const uint64_t seed = run->options->common.seed;
        if (bench_sdpa_problem_create(problem, &c->shape, seed, error, size) != 0)
            return NULL;
    }
    problem->shape = c->shape; /* the arrays fit; causal, window, ... are the config's */
    return problem;
}

/* A row on stdout: the table's, and with --profile its phases. */
static void print_row(void *context, const void *row)
{
    sdpa_run *run = context;
    const bench_sdpa_options *o = run->options;
    const bench_sdpa_point *point = row;
    bench_sdpa_table_print_row(stdout, point, o->peers, any_dropout(o));
    if (!o->common.profile || point->outcome.status != BENCH_POINT_TIMED)
        return;
    char key[256];
    bench_sdpa_csv_format_key(&point->config, key, sizeof key);
    bench_run_record_add_profile(&run->frame->record, key, point->config.shape.dropout,
                                 &point->outcome.profile, point->outcome.ceiling_gflops);
}

static int write_row(FILE *csv, const void *point)
{
    return bench_sdpa_csv_write_row(csv, point);
}

/* Points each row with dropout at its twin without (measure/sdpa_measure.h). */
static void pair_undropped(bench_sdpa_point *points, size_t count)
{
    for (size_t k = 0; k < count; ++k) {
        const bench_sdpa_config *c = &points[k].config;
        points[k].undropped = NULL;
        for (size_t j = 0; c->shape.dropout > 0.0 && j < count; ++j) {
            const bench_sdpa_config *twin = &points[j].config;
            if (twin->shape.dropout == 0.0 && twin->engine == c->engine &&
                twin->shape.layout == c->shape.layout &&
                bench_sdpa_shape_same_group(&c->shape, &twin->shape))
                points[k].undropped = &points[j];
        }
    }
}

static size_t group_end(void *context, size_t first)
{
    const bench_sdpa_sweep *sweep = ((const sdpa_run *)context)->sweep;
    size_t last = first + 1;
    while (last < sweep->count && last - first < BENCH_SDPA_GROUP_MAX &&
           bench_sdpa_shape_same_group(&sweep->configs[first].shape,
                                       &sweep->configs[last].shape))
        ++last;
    return last;
}

/* A group of configurations (one shape in its layouts, on its engines),
 * measured together: each checked, then round after round a block of each
 * configuration's attn call followed by its peers' block. */
static void run_group(void *context, bench_sweep_frame *frame, size_t first, size_t last)
{
    sdpa_run *run = context;
    const bench_sdpa_options *o = run->options;
    const bench_sdpa_config *configs = &run->sweep->configs[first];
    const size_t count = last - first;
    bench_sdpa_point *points = run->points;
    bench_blas_set_threads(configs[0].shape.threads);
    if (bench_size_list_max(&o->common.threads) > 1)
        bench_settle_blas_threads();
    bench_sdpa_session sessions[BENCH_SDPA_GROUP_MAX];
    bench_sdpa_between between[BENCH_SDPA_GROUP_MAX];
    size_t entries[BENCH_SDPA_GROUP_MAX];
    bench_sdpa_peers_new_group(&run->peers);
    for (size_t k = 0; k < count; ++k) {
        entries[k] = bench_sdpa_peers_begin(&run->peers, &configs[k].shape, &between[k]);
        char error[BENCH_ERROR_SIZE] = "";
        bench_sdpa_problem *problem = problem_for(run, &configs[k], error, sizeof error);
        bench_sdpa_session_begin(&sessions[k], &configs[k], o, problem, error,
                                 frame->buffer.words ? &frame->buffer : NULL, &points[k]);
    }
    for (size_t round = 0; round < o->rounds; ++round)
        for (size_t k = 0; k < count; ++k) {
            bench_sdpa_session_block(&sessions[k], round);
            if (between[k].block)
                between[k].block(between[k].context, round, o->rounds);
        }
    for (size_t k = 0; k < count; ++k) {
        bench_sdpa_session_end(&sessions[k]);
        bench_sdpa_peers_end(&run->peers, entries[k], &points[k]);
    }
    pair_undropped(points, count);
    for (size_t k = 0; k < count; ++k) {
        bench_sdpa_point *p = &points[k];
        p->outcome.ceiling_gflops = bench_ceiling_gflops(
            &frame->record.ceiling, bench_dtype_float_part(p->config.shape.dtype),
            p->config.shape.threads);
        p->outcome.peak_gflops = bench_sdpa_peak_gflops(&frame->record.fma_peak,
                                                        &p->config.shape);
        p->bandwidth_gbps = bench_bandwidth_gbps(&frame->record.bandwidth,
                                                 p->config.shape.threads);
        const bench_sweep_row row = {print_row, write_row, p, !bench_outcome_timed(&p->outcome),
                                     sessions[k].session.error};
        bench_sweep_frame_report(frame, first + k, &row);
    }
}

static double predicted_cost(void *context, size_t i)
{
    const sdpa_run *run = context;
    const bench_sdpa_options *o = run->options;
    const double floor = o->common.repeat.min_time_s;
    const double calls = (double)(o->common.repeat.min_repeats + o->common.repeat.warmup);
    const double attn = bench_sdpa_flops(&run->sweep->configs[i].shape) * calls / 20e9;
    const double one = attn > floor ? attn : floor;
    double sides = 1.0;
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k)
        sides += o->peers[k] ? 1.0 : 0.0;
    return one * sides + 0.01;
}

static FILE *open_csv(void *context)
{
    return bench_sdpa_csv_open(((const sdpa_run *)context)->options->common.csv_path);
}

static void describe(void *context, bench_sweep_plan *plan, bench_run_record *record,
                     bench_run_machine_request *machine)
{
    const sdpa_run *run = context;
    const bench_sdpa_options *o = run->options;
    *plan = (bench_sweep_plan){run->sweep->count, o->common.progress, o->common.json_path};
    record->mode = "sdpa";
    record->csv_path = o->common.csv_path;
    record->csv_name = o->common.csv_name;
    record->command_line = o->common.command_line;
    record->write_settings = bench_sdpa_write_json_settings;
    record->settings_context = o;
    record->profile_key_columns = BENCH_SDPA_CSV_KEY_COLUMNS;
    bench_run_record_start(record, bench_sdpa_peer_names, BENCH_SDPA_PEER_COUNT);
    machine->dtypes = o->dtypes;
    machine->dtype_count = o->dtype_count;
    machine->threads = o->common.threads.values;
    machine->thread_count = o->common.threads.count;
    machine->ceiling_n = o->common.ceiling_n;
    machine->with_bandwidth = 1;
    machine->bandwidth_mib = o->bandwidth_mib;
    machine->keep_buffer = any_cold(o);
}

/* The header lines after the machine's; the peers started; the table's header. */
static void begin(void *context, bench_sweep_frame *frame)
{
    sdpa_run *run = context;
    run->frame = frame;
    const bench_sdpa_options *o = run->options;
    const bench_sdpa_sweep *sweep = run->sweep;
    const bench_repeat_policy *p = &o->common.repeat;
    printf("# sweep: %zu configurations; warmup %zu, then >= %zu calls and >= %g s (at most "
           "%zu); check rows %zu; seed %llu\n",
           sweep->count, p->warmup, p->min_repeats, p->min_time_s, p->max_repeats,
           o->check_rows, (unsigned long long)o->common.seed);
    bench_omissions_print(stdout, &sweep->omitted);
    bench_attn_auto_threads_print(stdout, "no attn_plan_set_threads call");
    if (any_dropout(o))
        printf("# dropout: rows with p > 0 call attn_plan_set_dropout(plan, p, seed %u, offset) "
               "before each timed call, the offset 0, 1, 2, ... (a training loop's); they are "
               "checked at p = 0 (no peer draws attn's masks); torch gets dropout_p = p; ort, "
               "openvino and ggml (inference engines) skip them; drop a/p0 t/p0: the median "
               "over the twin row's at p = 0, measured interleaved with it\n",
               BENCH_DROPOUT_SEED);
    printf("# FLOP counts: %s\n", bench_sdpa_flops_formula);
    printf("# K+V bytes: NH_kv * (hs + hs_v) * sizeof * sum_b (keys some query of sequence b "
           "sees: L_b without a window); GB/s and bw%% on decode rows (Tq <= %d)\n",
           BENCH_SDPA_DECODE_MAX_TQ);
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k)
        if (!o->peers[k])
            printf("# %s peer: not asked for\n", bench_sdpa_peer_names[k]);
    fflush(stdout);
    run->peers.options = o;
    run->peers.summaries = frame->record.peers;
    run->peers.flush_mib = frame->record.bandwidth_bytes ? frame->record.bandwidth_bytes >> 20
                                                         : 256;
    bench_sdpa_peers_start(&run->peers, sweep->configs[0].shape.threads);
    bench_sdpa_table_print_header(stdout, o->peers, any_dropout(o));
}

static void end(void *context, bench_sweep_frame *frame, int *asked)
{
    (void)frame;
    sdpa_run *run = context;
    bench_sdpa_peers_stop(&run->peers);
    for (size_t l = 0; l < BENCH_SDPA_LAYOUT_COUNT; ++l)
        bench_sdpa_problem_destroy(&run->problems[l]);
    memcpy(asked, run->options->peers, BENCH_SDPA_PEER_COUNT * sizeof *asked);
}

/* The sdpa command's functions of the frame (in bench_sweep_kind's order). */
static const bench_sweep_kind sdpa_kind = {
    "attn-bench sdpa", "checks, ceiling, bandwidth and peers",
    open_csv, describe, begin, group_end, run_group, predicted_cost, label_of, end,
    NULL, NULL, /* no footer lines of its own, no outputs after the JSON */
};

static int run_sweep(const bench_sdpa_options *o, const bench_sdpa_sweep *sweep)
{
    sdpa_run *run = calloc(1, sizeof *run);
    if (!run) {
        fprintf(stderr, "attn-bench sdpa: out of memory\n");
        return EXIT_BENCH_FAILED;
    }
    run->options = o;
    run->sweep = sweep;
    const int status = bench_sweep_frame_run(&sdpa_kind, run);
    free(run);
    return status ? EXIT_BENCH_FAILED : EXIT_SUCCESS;
}

/* A configuration's key columns and its dropout (--list). */
static void format_key(const void *configs, size_t index, char *key, size_t size)
{
    const bench_sdpa_config *c = &((const bench_sdpa_config *)configs)[index];
    char text[448];
    bench_sdpa_csv_format_key(c, text, sizeof text);
    snprintf(key, size, "%s,%g", text, c->shape.dropout);
}

static int list_sweep(const bench_sdpa_sweep *sweep)
{
    const char *csv = bench_sdpa_csv_header(), *end = csv;
    for (int commas = 0; *end && (*end != ',' || ++commas < BENCH_SDPA_CSV_KEY_COLUMNS); ++end)
        ;
    char header[1024];
    snprintf(header, sizeof header, "%.*s,dropout", (int)(end - csv), csv);
    bench_sweep_list_print(stdout, header, BENCH_SDPA_CSV_KEY_COLUMNS + 1, sweep->configs,
                           sweep->count, format_key, &sweep->omitted);
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
    if (any_cold(&options) && options.bandwidth_mib == 0) {
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
    const int status = options.common.list ? list_sweep(&sweep) : run_sweep(&options, &sweep);
    bench_sdpa_sweep_free(&sweep);
    bench_sdpa_options_free(&options);
    return status;
}
