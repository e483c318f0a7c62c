#include "run/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/attn_call.h"
#include "machine/blas_info.h"
#include "output/csv_out.h"
#include "output/json_out.h"
#include "measure/flops.h"
#include "run/help.h"
#include "measure/options.h"
#include "run/resume.h"
#include "run/run_peers.h"
#include "output/report_tool.h"
#include "pipeline/sweep_frame.h"
#include "run/sweep.h"
#include "measure/sweep_list.h"
#include "output/table.h"

enum { EXIT_BENCH_FAILED = 1, EXIT_BAD_ARGUMENTS = 2 };

/* The run command as a kind of pipeline/sweep_frame.h. */
typedef struct run_kind {
    const bench_options *options;
    const bench_sweep *sweep;
    bench_resume resume;
    bench_run_peers peers;
    bench_sweep_frame *frame; /* while the sweep runs */
    int promoted; /* a peer computed in float64 on an f32 row (the table's x*) */
    /* the last rows at p = 0 (a shape's configurations), twins of rows with dropout */
    struct undropped_row {
        bench_config config;
        double attn_s, torch_s; /* medians; 0: none */
    } undropped[32];
    size_t undropped_count;
} run_kind;

static const bench_config *config_of(const run_kind *run, size_t i)
{
    return &run->sweep->configs[i];
}

/* A prediction of a configuration's seconds for the progress estimate: the
 * timing floor or the calls' FLOPs at a nominal rate, per implementation;
 * the peers' with the first configuration of a shape (they run once a shape). */
static double predicted_cost(void *context, size_t i)
{
    const run_kind *run = context;
    const bench_options *o = run->options;
    const bench_config *config = config_of(run, i);
    const double flops = bench_shape_flops(&config->shape);
    const double floor = o->common.repeat.min_time_s;
    double attn = flops * (double)(o->common.repeat.min_repeats + o->common.repeat.warmup) / 20e9;
    double cost = attn > floor ? attn : floor;
    if (i > 0 && bench_shape_equal(&config->shape, &config_of(run, i - 1)->shape))
        return cost + 0.01;
    for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS; ++k)
        if (o->peers & bench_run_peer_bits[k])
            cost += floor > attn * 4.0 ? floor : attn * 4.0;
    if ((o->peers & BENCH_PEER_NAIVE) && config->shape.T <= o->naive_max_T)
        cost += flops * (double)(o->naive_repeat.min_repeats + 1) / 1e9;
    return cost + 0.01;
}

static void progress_label(void *context, size_t i, char *label, size_t size)
{
    const bench_config *c = config_of(context, i);
    const bench_shape *s = &c->shape;
    snprintf(label, size, "%s %s causal=%d %s/%s/%s B=%zu T=%zu C=%zu NH=%zu hs=%zu thr=%zu",
             bench_dtype_name(s->dtype), bench_op_names[s->op], s->causal,
             bench_api_names[c->api], bench_path_names[c->path], bench_engine_names[c->engine],
             s->B, s->T, s->C, s->NH, s->hs, s->threads);
}

static int same_but_dropout(const bench_config *a, const bench_config *b)
{
    return bench_shape_same_but_dropout(&a->shape, &b->shape) && a->api == b->api &&
           a->path == b->path && a->engine == b->engine && a->with_weights == b->with_weights;
}

/* A row at p = 0 is kept as a twin; a row with dropout gets its medians over
 * its twin's (the same configuration but for p, measured before it). */
static void dropout_costs(bench_point *point, run_kind *run)
{
    const bench_peer_timing *torch = &point->peers[BENCH_PEER_KIND_TORCH];
    const double attn_s = bench_outcome_median(&point->outcome);
    const double torch_s = torch->measured ? torch->timing.median_s : 0.0;
    const size_t capacity = sizeof run->undropped / sizeof run->undropped[0];
    if (point->config.shape.dropout == 0.0) {
        run->undropped[run->undropped_count++ % capacity] =
            (struct undropped_row){point->config, attn_s, torch_s};
        return;
    }
    const size_t kept = run->undropped_count < capacity ? run->undropped_count : capacity;
    for (size_t i = 0; i < kept; ++i) {
        const struct undropped_row *twin = &run->undropped[i];
        if (!same_but_dropout(&point->config, &twin->config))
            continue;
        if (attn_s > 0.0 && twin->attn_s > 0.0)
            point->attn_dropout_cost = attn_s / twin->attn_s;
        if (torch_s > 0.0 && twin->torch_s > 0.0)
            point->torch_dropout_cost = torch_s / twin->torch_s;
    }
}

/* Whether BLAS threads (attn-bench's or a python peer's) may still poll for
 * work when a configuration on attn's own threads starts: only after
 * multi-threaded BLAS calls, so only in a sweep with a thread count above 1. */
static int blas_threads_may_poll(const bench_options *o)
{
    return bench_size_list_max(&o->common.threads) > 1;
}

/* Whether the configuration runs on attn's own threads (not on BLAS's). */
static int runs_on_own_threads(const bench_config *config)
{
    return config->engine == BENCH_ENGINE_OWN ||
           (config->engine == BENCH_ENGINE_AUTO && bench_attn_auto_threads() > 0);
}

/* Before timing configurations on attn's own threads: BLAS threads still
 * polling for work would take their CPUs. */
static void settle_before(const bench_options *o, const bench_config *config)
{
    bench_blas_set_threads(config->shape.threads);
    if (runs_on_own_threads(config) && blas_threads_may_poll(o))
        bench_settle_blas_threads();
}

/* The peers' numbers (entry: the point's shape's) and the ceilings; the
 * point's problem is then destroyed. */
static void finish_point(run_kind *run, size_t entry, bench_point *point, bench_problem *problem)
{
    const bench_config *config = &point->config;
    const bench_run_record *record = &run->frame->record;
    bench_run_peers_end(&run->peers, entry, problem, point);
    bench_problem_destroy(problem);
    point->outcome.ceiling_gflops =
        bench_ceiling_gflops(&record->ceiling, config->shape.dtype, config->shape.threads);
    point->outcome.peak_gflops = bench_fma_peak_gflops(
        &record->fma_peak, config->shape.dtype == BENCH_F32 ? BENCH_FMA_F32 : BENCH_FMA_F64,
        config->shape.threads);
}

/* A row on stdout: the table's, and with --profile its phases. */
static void print_row(void *context, const void *row)
{
    run_kind *run = context;
    const bench_point *point = row;
    bench_table_print_row(stdout, point);
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k)
        run->promoted |= bench_peer_promoted(point, (bench_peer_kind)k);
    if (!run->options->common.profile || point->outcome.status != BENCH_POINT_TIMED)
        return;
    char key[256];
    bench_csv_format_key(&point->config, key, sizeof key);
    bench_run_record_add_profile(&run->frame->record, key, point->config.shape.dropout,
                                 &point->outcome.profile, point->outcome.ceiling_gflops);
}

static int write_row(FILE *csv, const void *point)
{
    return bench_csv_write_row(csv, point);
}

/* The configurations configs[index[0..n-1]] measured side by side: each
 * checked, then round after round a block of each (one round when alone)
 * followed by the round's block of the peers of each shape not yet timed
 * (run_peers.h), then the naive peer on each one's problem. */
static void measure_together(run_kind *run, const bench_config *configs, const size_t *index,
                             size_t n, bench_point *points, bench_problem *problems,
                             char (*errors)[BENCH_ERROR_SIZE])
{
    const bench_options *o = run->options;
    bench_point_session sessions[BENCH_INTERLEAVE_MAX];
    size_t entries[BENCH_INTERLEAVE_MAX];
    int fresh[BENCH_INTERLEAVE_MAX];
    const size_t rounds = n > 1 ? BENCH_INTERLEAVE_ROUNDS : 1;
    settle_before(o, &configs[index[0]]);
    for (size_t g = 0; g < n; ++g) {
        entries[g] = bench_run_peers_begin(&run->peers, &configs[index[g]].shape, &fresh[g]);
        bench_point_session_begin(&sessions[g], &configs[index[g]], o, rounds,
                                  &problems[index[g]], &points[index[g]]);
    }
    for (size_t round = 0; round < rounds; ++round) {
        for (size_t g = 0; g < n; ++g)
            bench_point_session_block(&sessions[g], round);
        for (size_t g = 0; g < n; ++g)
            if (fresh[g])
                bench_run_peers_round(&run->peers, entries[g], round, rounds);
    }
    for (size_t g = 0; g < n; ++g) {
        bench_point_session_end(&sessions[g]);
        memcpy(errors[index[g]], sessions[g].session.error, BENCH_ERROR_SIZE);
        finish_point(run, entries[g], &points[index[g]], &problems[index[g]]);
    }
}

/* The configurations [0, count) of one shape, measured into points and
 * errors: those on BLAS threads one by one, then those on attn's own
 * threads side by side, BENCH_INTERLEAVE_MAX at most at a time (one by one
 * with --sequential). skip[k]: kept from the CSV, not measured. */
static void measure_shape(run_kind *run, const bench_config *configs, size_t count,
                          const int *skip, bench_point *points, bench_problem *problems,
                          char (*errors)[BENCH_ERROR_SIZE])
{
    size_t group[BENCH_INTERLEAVE_MAX], grouped = 0;
    for (size_t k = 0; k < count; ++k) {
        if (skip[k])
            continue;
        if (run->options->sequential || !runs_on_own_threads(&configs[k])) {
            measure_together(run, configs, &k, 1, points, problems, errors);
            continue;
        }
        group[grouped++] = k;
        if (grouped == BENCH_INTERLEAVE_MAX) {
            measure_together(run, configs, group, grouped, points, problems, errors);
            grouped = 0;
        }
    }
    if (grouped > 0)
        measure_together(run, configs, group, grouped, points, problems, errors);
}

/* A shape's dropouts form a group (the twins of the rows with dropout). */
static size_t group_end(void *context, size_t first)
{
    const run_kind *run = context;
    size_t last = first + 1;
    while (last < run->sweep->count &&
           bench_shape_same_but_dropout(&config_of(run, last)->shape,
                                        &config_of(run, first)->shape))
        ++last;
    return last;
}

/* The configurations [first, last), of one shape: measured (measure_shape),
 * then reported in the sweep's order. */
static void run_group(void *context, bench_sweep_frame *frame, size_t first, size_t last)
{
    run_kind *run = context;
    const size_t count = last - first;
    const bench_config *configs = config_of(run, first);
    bench_point *points = calloc(count, sizeof *points);
    bench_problem *problems = calloc(count, sizeof *problems);
    char(*errors)[BENCH_ERROR_SIZE] = calloc(count, sizeof *errors);
    int *skip = calloc(count, sizeof *skip);
    if (!points || !problems || !errors || !skip) {
        fprintf(stderr, "attn-bench: out of memory for a shape's %zu configurations\n", count);
        frame->failures += count;
    } else {
        for (size_t k = 0; k < count; ++k)
            skip[k] = bench_resume_has(&run->resume, &configs[k]);
        bench_run_peers_new_group(&run->peers);
        measure_shape(run, configs, count, skip, points, problems, errors);
        for (size_t k = 0; k < count; ++k) {
            if (skip[k]) {
                bench_sweep_frame_skip(frame, first + k);
                continue;
            }
            dropout_costs(&points[k], run);
            const bench_sweep_row row = {print_row, write_row, &points[k],
                                         points[k].outcome.status != BENCH_POINT_TIMED, errors[k]};
            bench_sweep_frame_report(frame, first + k, &row);
        }
    }
    free(points);
    free(problems);
    free(errors);
    free(skip);
}

/* The JSON's "settings" (run_record.h). */
static void write_settings(FILE *out, const void *context)
{
    const bench_options *o = context;
    bench_json_write_common_settings(out, &o->common);
    fprintf(out,
            "\"naive_repeats\": %zu, \"naive_max_T\": %zu, \"check_rows\": %zu, "
            "\"check_grad_max_T\": %zu},\n",
            o->naive_repeat.min_repeats, o->naive_max_T, o->check_rows, o->check_grad_max_T);
}

static FILE *open_csv(void *context)
{
    const run_kind *run = context;
    return bench_csv_open(run->options->common.csv_path, run->resume.file_exists);
}

static void describe(void *context, bench_sweep_plan *plan, bench_run_record *record,
                     bench_run_machine_request *machine)
{
    const run_kind *run = context;
    const bench_options *o = run->options;
    *plan = (bench_sweep_plan){run->sweep->count, o->common.progress, o->common.json_path};
    record->command_line = o->common.command_line;
    record->csv_path = o->common.csv_path;
    record->csv_name = o->common.csv_name;
    record->write_settings = write_settings;
    record->settings_context = o;
    record->profile_key_columns = BENCH_CSV_KEY_COLUMNS;
    bench_run_record_start(record, bench_peer_kind_names, BENCH_PEER_KINDS);
    record->peers[BENCH_PEER_KIND_NAIVE].status = o->peers & BENCH_PEER_NAIVE ? "ran" : NULL;
    machine->dtypes = o->dtypes;
    machine->dtype_count = o->dtype_count;
    machine->threads = o->common.threads.values;
    machine->thread_count = o->common.threads.count;
    machine->ceiling_n = o->common.ceiling_n;
}

/* The header lines after the machine's; the peers started (their lines
 * come first) and the table's header, unless the CSV has every row. */
static void begin(void *context, bench_sweep_frame *frame)
{
    run_kind *run = context;
    const bench_options *o = run->options;
    const bench_sweep *sweep = run->sweep;
    const bench_resume *resume = &run->resume;
    const bench_repeat_policy *r = &o->common.repeat;
    printf("# sweep: %zu configurations", sweep->count);
    if (resume->count)
        printf(" (%zu rows already in %s are kept)", resume->count, o->common.csv_path);
    printf("; warmup %zu, then >= %zu calls and >= %g s (at most %zu); weights %s; seed %llu\n",
           r->warmup, r->min_repeats, r->min_time_s, r->max_repeats,
           o->with_weights ? "written" : "NULL", (unsigned long long)o->common.seed);
    bench_omissions_print(stdout, &sweep->omitted);
    bench_attn_auto_threads_print(stdout,
                                  "plans at their default, ATTN_THREADS_AUTO; every one-shot");
    printf("# FLOP counts: %s\n", bench_flops_formula);
    for (size_t i = 0; i < o->common.dropout_count; ++i)
        if (o->common.dropouts[i] > 0.0 && i + 1 == o->common.dropout_count)
            printf("# dropout: rows with p > 0 (plans, op backward) call attn_plan_set_dropout("
                   "plan, p, seed %u, offset) before each timed call, offset 0, 1, 2, ...; "
                   "checked at p = 0; the torch peer gets dropout_p = p, the others skip them; "
                   "'| p=P attn/p0 A torch/p0 T': the medians over the twin row's at p = 0\n",
                   BENCH_DROPOUT_SEED);
    if (o->peers & BENCH_PEER_NAIVE)
        printf("# naive peer: plain C loops in the element type, up to T = %zu, %zu timed "
               "calls after one warmup\n",
               o->naive_max_T, o->naive_repeat.min_repeats);
    else
        printf("# naive peer: not asked for\n");
    for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS; ++k)
        if (!(o->peers & bench_run_peer_bits[k]))
            printf("# %s peer: not asked for\n", bench_peer_kind_names[k]);
    fflush(stdout);
    run->frame = frame;
    run->peers.options = o;
    run->peers.record = &frame->record;
    for (size_t i = 0; i < sweep->count; ++i)
        if (!bench_resume_has(resume, &sweep->configs[i])) {
            bench_run_peers_start(&run->peers, sweep->configs[i].shape.threads);
            bench_table_print_header(stdout);
            break;
        }
}

static void end(void *context, bench_sweep_frame *frame, int *asked)
{
    (void)frame;
    run_kind *run = context;
    bench_run_peers_stop(&run->peers);
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k)
        asked[k] = (run->options->peers & bench_run_peer_bits[k]) != 0;
}

static void footer(void *context, const bench_sweep_frame *frame)
{
    (void)frame;
    if (((const run_kind *)context)->promoted)
        printf("# x*: the peer's output was float64 on an f32 row: with NumPy >= 2 the "
               "lesson's / np.sqrt(hs) promotes float32 scores to float64, so that NumPy time "
               "is partly double-precision work; numpy32 (the same code kept in float32) gives "
               "the float32 ratio\n");
}

/* --report DIR: attn-bench report --out DIR [--json PATH] -- CSV */
static int outputs(void *context, const bench_sweep_frame *frame)
{
    (void)frame;
    const bench_options *o = ((const run_kind *)context)->options;
    if (!o->report_dir)
        return 0;
    const char *args[6] = {"--out", o->report_dir};
    size_t count = 2;
    if (o->common.json_path) {
        args[count++] = "--json";
        args[count++] = o->common.json_path;
    }
    args[count++] = "--";
    args[count++] = o->common.csv_path;
    return bench_report_tool_run(args, count) != 0;
}

/* The run command's functions of the frame (in bench_sweep_kind's order). */
static const bench_sweep_kind run_command_kind = {
    "attn-bench", "checks, ceiling and peers",
    open_csv, describe, begin, group_end, run_group, predicted_cost, progress_label, end,
    footer, outputs,
};

static int run_configured(const bench_options *o, const bench_sweep *sweep)
{
    run_kind *run = calloc(1, sizeof *run);
    if (!run) {
        fprintf(stderr, "attn-bench: out of memory\n");
        return EXIT_BENCH_FAILED;
    }
    run->options = o;
    run->sweep = sweep;
    char error[512];
    if (o->resume &&
        bench_resume_load(o->common.csv_path, &run->resume, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench: %s\n", error);
        free(run);
        return EXIT_BENCH_FAILED;
    }
    const int status = bench_sweep_frame_run(&run_command_kind, run);
    bench_resume_free(&run->resume);
    free(run);
    return status ? EXIT_BENCH_FAILED : EXIT_SUCCESS;
}

static void format_key(const void *configs, size_t index, char *key, size_t size)
{
    bench_csv_format_key(&((const bench_config *)configs)[index], key, size);
}

/* --list: the configurations as the CSV's key columns. */
static int list_sweep(const bench_sweep *sweep)
{
    bench_sweep_list_print(stdout, bench_csv_header(), BENCH_CSV_KEY_COLUMNS, sweep->configs,
                           sweep->count, format_key, &sweep->omitted);
    return EXIT_SUCCESS;
}

int bench_run_command(int argc, char **argv, int first)
{
    char error[512];
    bench_options options;
    switch (bench_options_parse(argc, argv, first, &options, error, sizeof error)) {
    case BENCH_OPTIONS_HELP:
        bench_help_run(stdout);
        return EXIT_SUCCESS;
    case BENCH_OPTIONS_BAD:
        fprintf(stderr, "attn-bench: %s\nTry 'attn-bench --help'.\n", error);
        return EXIT_BAD_ARGUMENTS;
    case BENCH_OPTIONS_RUN:
        break;
    }
    bench_sweep sweep;
    if (bench_sweep_build(&options, &sweep, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench: %s\n", error);
        bench_options_free(&options);
        return EXIT_BAD_ARGUMENTS;
    }
    int status = options.common.list ? list_sweep(&sweep) : run_configured(&options, &sweep);
    bench_sweep_free(&sweep);
    bench_options_free(&options);
    return status;
}
