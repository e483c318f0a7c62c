#include "experiments/experiment.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "experiments/exp_common.h"
#include "util/files.h"

extern const bench_experiment bench_experiment_scaling;
extern const bench_experiment bench_experiment_rank;
extern const bench_experiment bench_experiment_init;
extern const bench_experiment bench_experiment_asymmetry;

static const bench_experiment *const experiments[] = {
    &bench_experiment_scaling, &bench_experiment_rank, &bench_experiment_init,
    &bench_experiment_asymmetry};

enum { EXIT_EXPERIMENT_FAILED = 1, EXIT_BAD_ARGUMENTS = 2 };

typedef enum exp_option {
    EXP_HS,
    EXP_T,
    EXP_C,
    EXP_TRIALS,
    EXP_SEED,
    EXP_OUT,
    EXP_CHECK,
    EXP_QUICK,
    EXP_HELP,
    EXP_OPTION_COUNT
} exp_option;

/* The option table of one experiment: its defaults filled in. */
static void build_table(const bench_experiment *e, bench_cli_option specs[EXP_OPTION_COUNT])
{
    const bench_exp_defaults *d = &e->defaults;
    const bench_cli_option table[EXP_OPTION_COUNT] = {
        [EXP_HS] = {"hs", "LIST", d->hs, d->hs_quick, "head sizes"},
        [EXP_T] = {"T", "LIST", d->T, d->T_quick,
                   "sequence lengths (rank sweeps them; the others use\nthe first)"},
        [EXP_C] = {"C", "N", d->C, d->C_quick, "model width of the projections"},
        [EXP_TRIALS] = {"trials", "N", d->trials, d->trials_quick,
                        "independent draws averaged per point (rank: 1 draw)"},
        [EXP_SEED] = {"seed", "N", "1", NULL, "seed of the draws"},
        [EXP_OUT] = {"out", "DIR", ".", NULL, "folder of the CSV and the PNG"},
        [EXP_CHECK] = {"check", NULL, NULL, NULL,
                       "assert the documented properties; exit 1 when one fails"},
        [EXP_QUICK] = {"quick", NULL, NULL, NULL, "small sizes (tests): the --quick values"},
        [EXP_HELP] = BENCH_CLI_HELP_OPTION,
    };
    memcpy(specs, table, sizeof table);
}

static const bench_experiment *find_experiment(const char *name)
{
    for (size_t i = 0; i < sizeof experiments / sizeof experiments[0]; ++i)
        if (strcmp(experiments[i]->name, name) == 0)
            return experiments[i];
    return NULL;
}

int bench_is_experiment(const char *name)
{
    return find_experiment(name) != NULL;
}

void bench_experiment_print_help(const char *name, FILE *out)
{
    const bench_experiment *e = find_experiment(name);
    if (!e)
        return;
    bench_cli_option specs[EXP_OPTION_COUNT];
    build_table(e, specs);
    const bench_cli_table table = {specs, EXP_OPTION_COUNT};
    fprintf(out, "attn-bench %s: %s\n\nUsage: attn-bench %s [OPTIONS]\n\nOptions:\n", e->name,
            e->summary, e->name);
    bench_cli_print_options(out, &table);
    fprintf(out, "\n%s\nOutputs: a table on stdout, %s.csv and (with matplotlib) %s.png in --out.\n"
                 "Exit status: 0; 1 a --check property failed or an output could not be\n"
                 "written; 2 bad arguments.\n",
            e->description, e->name, e->name);
}

static int parse_options(const bench_experiment *e, int argc, char **argv, int first,
                         bench_exp_options *o, int *help, char *error, size_t error_size)
{
    bench_cli_option specs[EXP_OPTION_COUNT];
    build_table(e, specs);
    const bench_cli_table table = {specs, EXP_OPTION_COUNT};
    const char *given[EXP_OPTION_COUNT] = {0};
    memset(o, 0, sizeof *o);
    if (bench_cli_collect(&table, argc, argv, first, given, NULL, 0, NULL, error, error_size) !=
        0)
        return -1;
    *help = given[EXP_HELP] != NULL;
    if (*help)
        return 0;
    const int quick = given[EXP_QUICK] != NULL;
    size_t seed = 0;
    char reason[160];
    const exp_option lists[2] = {EXP_HS, EXP_T};
    bench_size_list *list_values[2] = {&o->hs, &o->T};
    for (size_t i = 0; i < 2; ++i)
        if (bench_size_list_parse(bench_cli_resolved(&table, given, lists[i], quick),
                                  list_values[i], reason, sizeof reason) != 0) {
            snprintf(error, error_size, "--%s: %s", specs[lists[i]].name, reason);
            return -1;
        }
    const exp_option counts[3] = {EXP_C, EXP_TRIALS, EXP_SEED};
    size_t *values[3] = {&o->C, &o->trials, &seed};
    for (size_t i = 0; i < 3; ++i) {
        const char *text = bench_cli_resolved(&table, given, counts[i], quick);
        if (bench_cli_parse_count(text, counts[i] == EXP_SEED ? 0 : 1, values[i]) != 0) {
            snprintf(error, error_size, "--%s: '%s' is not a positive whole number",
                     specs[counts[i]].name, text);
            return -1;
        }
    }
    for (size_t i = 0; e->hs_at_most_C && i < o->hs.count; ++i)
        if (o->hs.values[i] > o->C) {
            snprintf(error, error_size, "--hs: %zu > C = %zu (%s needs hs <= C)",
                     o->hs.values[i], o->C, e->name);
            return -1;
        }
    o->seed = (uint64_t)seed;
    o->out_dir = bench_cli_resolved(&table, given, EXP_OUT, quick);
    o->check = given[EXP_CHECK] != NULL;
    return 0;
}

/* Opens <out>/<name>.csv and writes its header row. */
static int open_csv(bench_exp_run *run, const char *header)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.csv", run->options->out_dir, run->name);
    run->csv = fopen(path, "w");
    if (!run->csv) {
        perror(path);
        return -1;
    }
    fprintf(run->csv, "%s\n", header);
    printf("# %s: CSV %s\n", run->name, path);
    return 0;
}

/* The experiment's CSV, measurement, checks and plot. 0 or -1. */
static int run_experiment(const bench_experiment *e, bench_exp_run *run)
{
    if (open_csv(run, e->csv_header) != 0)
        return -1;
    printf("%s\n", e->table_header);
    void *results = e->measure ? e->measure(run)
                               : bench_exp_for_each_point(run, e->variants, e->entry_size,
                                                          e->measure_point);
    if (!results)
        return -1;
    e->check(run, results);
    int status = e->plot(run, results);
    free(results);
    return status;
}

int bench_experiment_command(const char *name, int argc, char **argv, int first)
{
    const bench_experiment *e = find_experiment(name);
    bench_exp_options options;
    char error[512];
    int help = 0;
    if (!e)
        return EXIT_BAD_ARGUMENTS;
    if (parse_options(e, argc, argv, first, &options, &help, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench %s: %s\nTry 'attn-bench %s --help'.\n", name, error, name);
        bench_size_list_free(&options.hs);
        bench_size_list_free(&options.T);
        return EXIT_BAD_ARGUMENTS;
    }
    if (help) {
        bench_experiment_print_help(name, stdout);
        return 0;
    }
    bench_exp_run run = {.name = e->name, .options = &options};
    int status = 0;
    if (bench_make_directories(options.out_dir, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench %s: %s\n", name, error);
        status = EXIT_EXPERIMENT_FAILED;
    } else if (run_experiment(e, &run) != 0) {
        fprintf(stderr, "attn-bench %s: failed (memory, LAPACK or an output file)\n", name);
        status = EXIT_EXPERIMENT_FAILED;
    }
    if (run.csv && fclose(run.csv) != 0)
        status = EXIT_EXPERIMENT_FAILED;
    if (status == 0 && options.check) {
        printf("# %s: %zu of %zu checks passed\n", name, run.checks - run.failures, run.checks);
        if (run.failures)
            status = EXIT_EXPERIMENT_FAILED;
    }
    bench_size_list_free(&options.hs);
    bench_size_list_free(&options.T);
    return status;
}
