#include "run/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/attn_call.h"
#include "machine/blas_info.h"
#include "output/csv_out.h"
#include "measure/flops.h"
#include "run/help.h"
#include "measure/options.h"
#include "peers/peer_naive.h"
#include "peers/peer_process.h"
#include "util/progress.h"
#include "run/resume.h"
#include "output/report_tool.h"
#include "pipeline/run_machine.h"
#include "pipeline/run_record.h"
#include "run/sweep.h"
#include "measure/sweep_list.h"
#include "output/table.h"

enum { EXIT_BENCH_FAILED = 1, EXIT_BAD_ARGUMENTS = 2 };

/* The peers of a run: the python processes of the current thread count and
 * the last shape's numbers (the configurations of one shape share them). */
typedef struct peer_set {
    const bench_options *options;
    bench_peer_process processes[BENCH_PEER_KINDS]; /* the python peers' slots only */
    size_t threads;                                 /* of the running processes; 0: none */
    int have_shape;
    bench_shape shape;
    bench_peer_timing timings[BENCH_PEER_KINDS];
    bench_run_record *record;
} peer_set;

static const unsigned peer_bits[BENCH_PEER_KINDS] = {BENCH_PEER_NAIVE, BENCH_PEER_NUMPY,
                                                     BENCH_PEER_NUMPY32, BENCH_PEER_TORCH,
                                                     BENCH_PEER_PYTHON};

static void announce_process(const bench_peer_process *process, int started)
{
    if (!started) {
        printf("# %s peer skipped: %s\n", process->name, process->note);
        if (strcmp(process->name, "torch") == 0)
            printf("#   (optional: ./attn.sh peers sets up PyTorch 2.x from PyPI where "
                   "attn-bench looks first)\n");
        else if (strcmp(process->name, "python") == 0)
            printf("#   (./attn.sh python installs attn's Python package into .venv-python, "
                   "where attn-bench looks first)\n");
        return;
    }
    printf("# %s peer: %s; %s (threads %zu)\n", process->name, process->info, process->python,
           process->threads);
    printf("#   BLAS: %s\n#   computes: %s\n", process->blas, process->impl);
}

static void stop_processes(peer_set *peers)
{
    for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS; ++k)
        bench_peer_summary_stop(&peers->record->peers[k], &peers->processes[k]);
    peers->threads = 0;
}

/* (Re)starts the python peers for a thread count. */
static void start_processes(peer_set *peers, size_t threads)
{
    /* numpy32 is numpy_peer.py --float32: the lesson's code kept in float32 */
    static const char *const scripts[BENCH_PEER_KINDS] = {
        NULL, "numpy_peer.py", "numpy_peer.py", "torch_peer.py", "attn_python_peer.py"};
    const bench_options *o = peers->options;
    stop_processes(peers);
    peers->threads = threads;
    for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS; ++k) {
        if (!(o->peers & peer_bits[k]))
            continue;
        const int torch = k == BENCH_PEER_KIND_TORCH, python = k == BENCH_PEER_KIND_PYTHON;
        const bench_peer_process_setup setup = {
            .name = bench_peer_kind_names[k],
            .script_name = scripts[k],
            .script_options = k == BENCH_PEER_KIND_NUMPY32 ? "--float32" : NULL,
            .script_override = torch ? o->torch_script : python ? NULL : o->numpy_script,
            .pythons = torch ? o->torch_python : python ? o->attn_python : o->python,
            .threads = threads,
            .policy = &o->repeat,
            .seed = o->seed,
        };
        bench_peer_summary *summary = &peers->record->peers[k];
        const int ran_before = summary->status && strcmp(summary->status, "ran") == 0;
        const int started = bench_peer_process_start(&peers->processes[k], &setup) == 0;
        if (started || ran_before || !summary->status) /* a repeated failure is said once */
            announce_process(&peers->processes[k], started);
        bench_peer_summary_take(summary, &peers->processes[k], started);
    }
}

/* The peers' numbers for the point's shape: measured now (right after attn,
 * on the same problem) unless the previous configuration had the same shape. */
static void time_peers(peer_set *peers, const bench_problem *problem, bench_point *point)
{
    const bench_options *o = peers->options;
    const bench_shape *shape = &point->config.shape;
    if (!peers->have_shape || !bench_shape_equal(&peers->shape, shape)) {
        memset(peers->timings, 0, sizeof peers->timings);
        if (peers->threads != shape->threads)
            start_processes(peers, shape->threads);
        if (shape->dropout > 0.0) { /* only the torch peer drops */
            for (size_t k = 0; k < BENCH_PEER_KINDS; ++k)
                snprintf(peers->timings[k].note, sizeof peers->timings[k].note,
                         "no attention dropout here (--dropout above 0)");
            bench_peer_process_time(&peers->processes[BENCH_PEER_KIND_TORCH], shape,
                                    &peers->timings[BENCH_PEER_KIND_TORCH]);
        } else if ((o->peers & BENCH_PEER_NAIVE) && problem->X) {
            bench_naive_peer_time(problem, &o->naive_repeat, o->naive_max_T,
                                  &peers->timings[BENCH_PEER_KIND_NAIVE]);
            peers->record->peers[BENCH_PEER_KIND_NAIVE].measured +=
                (size_t)peers->timings[BENCH_PEER_KIND_NAIVE].measured;
        }
        for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS && !(shape->dropout > 0.0);
             ++k)
            bench_peer_process_time(&peers->processes[k], shape, &peers->timings[k]);
        peers->shape = *shape;
        peers->have_shape = 1;
    }
    memcpy(point->peers, peers->timings, sizeof point->peers);
}

/* ---- the sweep --------------------------------------------------------------- */

/* A prediction of a configuration's seconds for the progress estimate: the
 * timing floor or the calls' FLOPs at a nominal rate, per implementation. */
static double predicted_cost(const bench_options *o, const bench_config *config,
                             int with_peers)
{
    const double flops = bench_shape_flops(&config->shape);
    const double floor = o->repeat.min_time_s;
    double attn = flops * (double)(o->repeat.min_repeats + o->repeat.warmup) / 20e9;
    double cost = attn > floor ? attn : floor;
    if (!with_peers)
        return cost + 0.01;
    for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS; ++k)
        if (o->peers & peer_bits[k])
            cost += floor > attn * 4.0 ? floor : attn * 4.0;
    if ((o->peers & BENCH_PEER_NAIVE) && config->shape.T <= o->naive_max_T)
        cost += flops * (double)(o->naive_repeat.min_repeats + 1) / 1e9;
    return cost + 0.01;
}

static void progress_label(const bench_config *c, char *label, size_t size)
{
    const bench_shape *s = &c->shape;
    snprintf(label, size, "%s %s causal=%d %s/%s/%s B=%zu T=%zu C=%zu NH=%zu hs=%zu thr=%zu",
             bench_dtype_name(s->dtype), bench_op_names[s->op], s->causal,
             bench_api_names[c->api], bench_path_names[c->path], bench_engine_names[c->engine],
             s->B, s->T, s->C, s->NH, s->hs, s->threads);
}

static void report_failure(const bench_point *p, const char *error)
{
    char label[256];
    progress_label(&p->config, label, sizeof label);
    fprintf(stderr, "attn-bench: %s: %s\n", label, error);
}

typedef struct sweep_outcome {
    size_t measured, resumed, failures;
    int csv_failed;
    int promoted; /* a peer computed in float64 on an f32 row (the table's x*) */
    /* the last rows at p = 0 (a shape's configurations), twins of rows with dropout */
    struct undropped_row {
        bench_config config;
        double attn_s, torch_s; /* medians; 0: none */
    } undropped[32];
    size_t undropped_count;
} sweep_outcome;

static int same_but_dropout(const bench_config *a, const bench_config *b)
{
    return bench_shape_same_but_dropout(&a->shape, &b->shape) && a->api == b->api &&
           a->path == b->path && a->engine == b->engine && a->with_weights == b->with_weights;
}

/* A row at p = 0 is kept as a twin; a row with dropout gets its medians over
 * its twin's (the same configuration but for p, measured before it). */
static void dropout_costs(bench_point *point, sweep_outcome *outcome)
{
    const bench_peer_timing *torch = &point->peers[BENCH_PEER_KIND_TORCH];
    const double attn_s = point->status == BENCH_POINT_TIMED ? point->attn.median_s : 0.0;
    const double torch_s = torch->measured ? torch->timing.median_s : 0.0;
    const size_t capacity = sizeof outcome->undropped / sizeof outcome->undropped[0];
    if (point->config.shape.dropout == 0.0) {
        outcome->undropped[outcome->undropped_count++ % capacity] =
            (struct undropped_row){point->config, attn_s, torch_s};
        return;
    }
    const size_t kept = outcome->undropped_count < capacity ? outcome->undropped_count : capacity;
    for (size_t i = 0; i < kept; ++i) {
        const struct undropped_row *twin = &outcome->undropped[i];
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
    return bench_size_list_max(&o->threads) > 1;
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

/* The peers timed on the measured point's problem, which is then destroyed. */
static void finish_point(bench_point *point, bench_problem *problem, peer_set *peers)
{
    const bench_config *config = &point->config;
    const bench_run_record *record = peers->record;
    time_peers(peers, problem, point);
    bench_problem_destroy(problem);
    point->ceiling_gflops =
        bench_ceiling_gflops(&record->ceiling, config->shape.dtype, config->shape.threads);
    point->peak_gflops = bench_fma_peak_gflops(
        &record->fma_peak, config->shape.dtype == BENCH_F32 ? BENCH_FMA_F32 : BENCH_FMA_F64,
        config->shape.threads);
}

/* The point's row printed and written. */
static void report_point(bench_point *point, const char *error, peer_set *peers,
                         FILE *csv, bench_progress *progress, sweep_outcome *outcome)
{
    dropout_costs(point, outcome);
    const bench_options *o = peers->options;
    bench_progress_hide(progress);
    bench_table_print_row(stdout, point);
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k)
        outcome->promoted |= bench_peer_promoted(point, (bench_peer_kind)k);
    if (o->profile && point->status == BENCH_POINT_TIMED) {
        bench_phase_profile_print(stdout, &point->profile, point->ceiling_gflops);
        char key[256];
        bench_csv_format_key(&point->config, key, sizeof key);
        if (point->profile.measured &&
            bench_phase_profile_log_add(&peers->record->profiles, key, &point->profile,
                                        point->ceiling_gflops) != 0)
            fprintf(stderr, "attn-bench: out of memory: a profile is not in the JSON\n");
    }
    if (point->status != BENCH_POINT_TIMED) {
        report_failure(point, error);
        outcome->failures++;
    }
    if (!outcome->csv_failed && bench_csv_write_row(csv, point) != 0) {
        perror(o->csv_path);
        outcome->csv_failed = 1;
    }
    outcome->measured++;
}

/* The configurations configs[index[0..n-1]] measured side by side: each
 * checked, then round after round a block of each (one round when alone),
 * then the peers on each one's problem. */
static void measure_together(const bench_config *configs, const size_t *index, size_t n,
                             peer_set *peers, bench_point *points, bench_problem *problems,
                             char (*errors)[BENCH_ERROR_SIZE])
{
    const bench_options *o = peers->options;
    bench_point_session sessions[BENCH_INTERLEAVE_MAX];
    const size_t rounds = n > 1 ? BENCH_INTERLEAVE_ROUNDS : 1;
    settle_before(o, &configs[index[0]]);
    for (size_t g = 0; g < n; ++g)
        bench_point_session_begin(&sessions[g], &configs[index[g]], o, &problems[index[g]],
                                  &points[index[g]]);
    for (size_t round = 0; round < rounds; ++round)
        for (size_t g = 0; g < n; ++g)
            bench_point_session_block(&sessions[g], round, rounds);
    for (size_t g = 0; g < n; ++g) {
        bench_point_session_end(&sessions[g]);
        memcpy(errors[index[g]], sessions[g].error, BENCH_ERROR_SIZE);
        finish_point(&points[index[g]], &problems[index[g]], peers);
    }
}

/* The configurations [0, count) of one shape, measured into points and
 * errors: those on BLAS threads one by one, then those on attn's own
 * threads side by side, BENCH_INTERLEAVE_MAX at most at a time (one by one
 * with --sequential). skip[k]: kept from the CSV, not measured. */
static void measure_shape(const bench_config *configs, size_t count, const int *skip,
                          peer_set *peers, bench_point *points,
                          bench_problem *problems, char (*errors)[BENCH_ERROR_SIZE])
{
    const bench_options *o = peers->options;
    size_t group[BENCH_INTERLEAVE_MAX], grouped = 0;
    for (size_t k = 0; k < count; ++k) {
        if (skip[k])
            continue;
        if (o->sequential || !runs_on_own_threads(&configs[k])) {
            measure_together(configs, &k, 1, peers, points, problems, errors);
            continue;
        }
        group[grouped++] = k;
        if (grouped == BENCH_INTERLEAVE_MAX) {
            measure_together(configs, group, grouped, peers, points, problems, errors);
            grouped = 0;
        }
    }
    if (grouped > 0)
        measure_together(configs, group, grouped, peers, points, problems, errors);
}

/* The configurations [first, last) of the sweep, of one shape: measured
 * (measure_shape), then reported in the sweep's order. */
static void run_shape(const bench_sweep *sweep, size_t first, size_t last,
                      const bench_resume *resume, peer_set *peers, FILE *csv,
                      bench_progress *progress,
                      sweep_outcome *outcome)
{
    const bench_options *o = peers->options;
    const size_t count = last - first;
    const bench_config *configs = &sweep->configs[first];
    bench_point *points = calloc(count, sizeof *points);
    bench_problem *problems = calloc(count, sizeof *problems);
    char(*errors)[BENCH_ERROR_SIZE] = calloc(count, sizeof *errors);
    int *skip = calloc(count, sizeof *skip);
    if (!points || !problems || !errors || !skip) {
        fprintf(stderr, "attn-bench: out of memory for a shape's %zu configurations\n", count);
        outcome->failures += count;
    } else {
        for (size_t k = 0; k < count; ++k)
            skip[k] = bench_resume_has(resume, &configs[k]);
        measure_shape(configs, count, skip, peers, points, problems, errors);
        for (size_t k = 0; k < count; ++k) {
            char label[256];
            progress_label(&configs[k], label, sizeof label);
            const double cost = predicted_cost(o, &configs[k], k == 0);
            if (skip[k]) {
                outcome->resumed++;
                bench_progress_step(progress, 0.0, label);
                progress->total_cost -= cost;
                continue;
            }
            report_point(&points[k], errors[k], peers, csv, progress, outcome);
            bench_progress_step(progress, cost, label);
        }
    }
    free(points);
    free(problems);
    free(errors);
    free(skip);
}

static void run_sweep(const bench_sweep *sweep, const bench_resume *resume, peer_set *peers,
                      FILE *csv, sweep_outcome *outcome)
{
    const bench_options *o = peers->options;
    double total_cost = 0.0;
    for (size_t i = 0; i < sweep->count; ++i) {
        const int first_of_shape =
            i == 0 || !bench_shape_equal(&sweep->configs[i].shape, &sweep->configs[i - 1].shape);
        total_cost += predicted_cost(o, &sweep->configs[i], first_of_shape);
    }
    bench_progress progress;
    bench_progress_start(&progress, o->progress, stderr, sweep->count, total_cost);
    for (size_t first = 0, last; first < sweep->count; first = last) {
        for (last = first + 1; last < sweep->count && /* a shape's dropouts: together */
                               bench_shape_same_but_dropout(&sweep->configs[last].shape,
                                                            &sweep->configs[first].shape);
             ++last)
            ;
        run_shape(sweep, first, last, resume, peers, csv, &progress, outcome);
    }
    bench_progress_finish(&progress);
}

/* ---- header and footer ----------------------------------------------------------- */

static void print_settings(const bench_options *o, const bench_sweep *sweep,
                           const bench_resume *resume)
{
    const bench_repeat_policy *r = &o->repeat;
    printf("# sweep: %zu configurations", sweep->count);
    if (resume->count)
        printf(" (%zu rows already in %s are kept)", resume->count, o->csv_path);
    printf("; warmup %zu, then >= %zu calls and >= %g s (at most %zu); weights %s; seed %llu\n",
           r->warmup, r->min_repeats, r->min_time_s, r->max_repeats,
           o->with_weights ? "written" : "NULL", (unsigned long long)o->seed);
    bench_omissions_print(stdout, &sweep->omitted);
    bench_attn_auto_threads_print(stdout,
                                  "plans at their default, ATTN_THREADS_AUTO; every one-shot");
    printf("# FLOP counts: %s\n", bench_flops_formula);
    for (size_t i = 0; i < o->dropout_count; ++i)
        if (o->dropouts[i] > 0.0 && i + 1 == o->dropout_count)
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
        if (!(o->peers & peer_bits[k]))
            printf("# %s peer: not asked for\n", bench_peer_kind_names[k]);
}

static void print_footer(const bench_run_record *record, const sweep_outcome *outcome)
{
    if (outcome->promoted)
        printf("# x*: the peer's output was float64 on an f32 row: with NumPy >= 2 the "
               "lesson's / np.sqrt(hs) promotes float32 scores to float64, so that NumPy time "
               "is partly double-precision work; numpy32 (the same code kept in float32) gives "
               "the float32 ratio\n");
    bench_run_record_print_footer(stdout, record, outcome->measured, outcome->resumed,
                                  "checks, ceiling and peers");
}

/* The JSON's "settings" (run_record.h). */
static void write_settings(FILE *out, const void *context)
{
    const bench_options *o = context;
    const bench_repeat_policy *r = &o->repeat;
    fprintf(out,
            "  \"settings\": {\"seed\": %llu, \"warmup\": %zu, \"repeats\": %zu, "
            "\"min_time_s\": %.6g, \"max_repeats\": %zu, \"naive_repeats\": %zu, "
            "\"naive_max_T\": %zu, \"check_rows\": %zu, \"check_grad_max_T\": %zu, "
            "\"ceiling_n\": [%zu, %zu], \"quick\": %s, \"profile\": %s},\n",
            (unsigned long long)o->seed, r->warmup, r->min_repeats, r->min_time_s,
            r->max_repeats, o->naive_repeat.min_repeats, o->naive_max_T, o->check_rows,
            o->check_grad_max_T, o->ceiling_n[BENCH_F32], o->ceiling_n[BENCH_F64],
            o->quick ? "true" : "false", o->profile ? "true" : "false");
}

static int finish_outputs(const bench_options *o, const bench_run_record *record)
{
    char error[512];
    int failed = 0;
    if (o->json_path) {
        if (bench_run_record_write_json(o->json_path, record, error, sizeof error) != 0) {
            fprintf(stderr, "attn-bench: JSON: %s\n", error);
            failed = 1;
        } else {
            printf("# JSON: %s\n", o->json_path);
        }
    }
    if (o->report_dir) { /* attn-bench report --out DIR [--json PATH] -- CSV */
        const char *args[6] = {"--out", o->report_dir};
        size_t count = 2;
        if (o->json_path) {
            args[count++] = "--json";
            args[count++] = o->json_path;
        }
        args[count++] = "--";
        args[count++] = o->csv_path;
        if (bench_report_tool_run(args, count) != 0)
            failed = 1;
    }
    return failed;
}

/* The first configuration the CSV does not have yet, or NULL. */
static const bench_config *first_to_run(const bench_sweep *sweep, const bench_resume *resume)
{
    for (size_t i = 0; i < sweep->count; ++i)
        if (!bench_resume_has(resume, &sweep->configs[i]))
            return &sweep->configs[i];
    return NULL;
}

static int run_configured(const bench_options *o, const bench_sweep *sweep)
{
    bench_resume resume = {0};
    char error[512];
    if (o->resume && bench_resume_load(o->csv_path, &resume, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench: %s\n", error);
        return EXIT_BENCH_FAILED;
    }
    FILE *csv = bench_csv_open(o->csv_path, resume.file_exists);
    if (!csv) {
        perror(o->csv_path);
        bench_resume_free(&resume);
        return EXIT_BENCH_FAILED;
    }
    bench_run_record record;
    memset(&record, 0, sizeof record);
    record.command_line = o->command_line;
    record.csv_path = o->csv_path;
    record.write_settings = write_settings;
    record.settings_context = o;
    record.profile_key_columns = BENCH_CSV_KEY_COLUMNS;
    bench_run_record_start(&record, bench_peer_kind_names, BENCH_PEER_KINDS);
    record.peers[BENCH_PEER_KIND_NAIVE].status = o->peers & BENCH_PEER_NAIVE ? "ran" : NULL;
    const bench_run_machine_request machine = {
        .who = "attn-bench",
        .dtypes = o->dtypes,
        .dtype_count = o->dtype_count,
        .threads = o->threads.values,
        .thread_count = o->threads.count,
        .ceiling_n = o->ceiling_n,
    };
    bench_run_machine_measure(&record, &machine, NULL);
    bench_run_machine_print(stdout, &record);
    print_settings(o, sweep, &resume);
    fflush(stdout);

    peer_set peers = {.options = o, .record = &record};
    sweep_outcome outcome = {0};
    const bench_config *first = first_to_run(sweep, &resume);
    if (first) {
        start_processes(&peers, first->shape.threads); /* their header lines come first */
        bench_table_print_header(stdout);
    }
    run_sweep(sweep, &resume, &peers, csv, &outcome);
    stop_processes(&peers);
    int asked[BENCH_PEER_KINDS];
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k)
        asked[k] = (o->peers & peer_bits[k]) != 0;
    if (fclose(csv) != 0 && !outcome.csv_failed) {
        perror(o->csv_path);
        outcome.csv_failed = 1;
    }
    bench_run_record_stop(&record, asked);
    print_footer(&record, &outcome);
    int outputs_failed = finish_outputs(o, &record);
    bench_phase_profile_log_free(&record.profiles);
    bench_resume_free(&resume);
    if (outcome.failures)
        fprintf(stderr, "attn-bench: %zu of %zu configurations failed\n", outcome.failures,
                outcome.measured);
    return outcome.failures || outcome.csv_failed || outputs_failed ? EXIT_BENCH_FAILED
                                                                    : EXIT_SUCCESS;
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
    int status = options.list ? list_sweep(&sweep) : run_configured(&options, &sweep);
    bench_sweep_free(&sweep);
    bench_options_free(&options);
    return status;
}
