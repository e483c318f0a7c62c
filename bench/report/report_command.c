#include "report/report_command.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/files.h"
#include "measure/flops.h"
#include "report/json_read.h"
#include "report/report_data.h"
#include "report/report_targets.h"
#include "util/text.h"

enum { EXIT_REPORT_FAILED = 1, EXIT_BAD_ARGUMENTS = 2 };
enum { PANELS_PER_FIGURE = 12 };

typedef enum report_option {
    REPORT_CSV, REPORT_JSON, REPORT_OUT, REPORT_TARGETS, REPORT_HELP, REPORT_COUNT
} report_option;

static const bench_cli_option report_specs[REPORT_COUNT] = {
    [REPORT_CSV] = {"csv", "LIST", "attn-bench.csv", NULL,
                    "run CSVs, comma-separated (also as arguments after the\n"
                    "options); their rows are reported together"},
    [REPORT_JSON] = {"json", "PATH", NULL, NULL,
                     "the run's JSON, for the machine's description (default:\n"
                     "the first CSV's name with .json, when it exists)"},
    [REPORT_OUT] = {"out", "DIR", ".", NULL,
                    "folder of report.md and the PNG plots (created if needed)"},
    [REPORT_TARGETS] = {"targets", "DIR", NULL, NULL,
                        "the output folder of bench/targets/run_targets.sh: write\n"
                        "targets.md, issue 5's table of target ratios against\n"
                        "the stored baseline, instead of report.md (python3)"},
    [REPORT_HELP] = BENCH_CLI_HELP_OPTION,
};

static const bench_cli_table report_table = {report_specs, REPORT_COUNT};

void bench_report_print_help(FILE *out)
{
    fputs("attn-bench report: a Markdown summary and PNG plots of attn-bench runs.\n"
          "\n"
          "Usage: attn-bench report [OPTIONS] [CSV ...]\n"
          "\n"
          "Options:\n",
          out);
    bench_cli_print_options(out, &report_table);
    fputs("\n"
          "Writes into the --out folder:\n"
          "  targets.md   with --targets DIR: every performance target of issue 5\n"
          "               (case, target, measured ratio, baseline, status, how), the\n"
          "               median over the rounds in DIR, as run_targets.sh --check-only\n"
          "               prints it (bench/targets/README.md)\n"
          "  report.md    machine, where the ceiling comes from (OpenBLAS's own\n"
          "               square sgemm/dgemm, its core, the CPU: not the theoretical\n"
          "               peak) and the FLOP counts, the ceiling, the peers (versions,\n"
          "               build and BLAS, what each computes), the plots, and a table\n"
          "               of every configuration (times, GFLOP/s, % of the ceiling, the\n"
          "               peers' times and attn's speedup over each; a dagger marks an\n"
          "               f32 ratio against NumPy's float64 output), and how to reproduce\n"
          "  time.png     median time of one call (ms, log scale) against T\n"
          "  gflops.png   GFLOP/s against T\n"
          "  ceiling.png  fraction of the GEMM ceiling against T\n"
          "One panel per shape apart from T (dtype, op, causal, B, C, NH, hs, wo,\n"
          "threads); in each, a solid line per attn variant (api/path/engine), a dashed\n"
          "line per peer. More than 12 panels continue in time-2.png and so on.\n"
          "Plots need gnuplot (Debian: gnuplot-nox); without it report.md says so.\n"
          "CSVs of an older attn-bench (some columns missing, e.g. numpy32_*) are\n"
          "read too; their missing numbers show as '-'.\n"
          "\n"
          "Exit status: 0 written; 1 a CSV could not be read or an output could not\n"
          "be written; 2 bad arguments.\n",
          out);
}

/* ---- Markdown ------------------------------------------------------------------ */

/* A Markdown table's header row and alignment row; align has one 'l' or 'r'
 * per column of the NULL-terminated columns. */
static void write_table_head(FILE *md, const char *const *columns, const char *align)
{
    for (size_t i = 0; columns[i]; ++i)
        fprintf(md, "| %s ", columns[i]);
    fputs("|\n", md);
    for (size_t i = 0; columns[i]; ++i)
        fputs(align[i] == 'r' ? "|---:" : "|---", md);
    fputs("|\n", md);
}

/* Where the ceiling comes from and what the FLOP counts are: every report
 * says so in its header. m may be NULL (no run JSON). */
static void write_provenance(FILE *md, const bench_json *m)
{
    const char *config = m ? bench_json_string(m, "blas_config", "?") : "?";
    if (m)
        fprintf(md, "- ceiling: %s's own square `cblas_sgemm` / `cblas_dgemm` (core `%s`) on "
                    "%s, measured at the start of this run at each thread count: what this "
                    "BLAS reaches on its best-case product, not the CPU's theoretical peak\n",
                strncmp(config, "OpenBLAS", 8) == 0 ? "OpenBLAS" : "attn's BLAS",
                bench_json_string(m, "blas_core", "?"), bench_json_string(m, "cpu_model", "?"));
    else
        fputs("- ceiling: attn's BLAS's own square `cblas_sgemm` / `cblas_dgemm`, measured at "
              "the start of the run (its core and CPU are in the run's JSON, not found here); "
              "not the CPU's theoretical peak\n",
              md);
    fprintf(md, "- FLOP counts (GFLOP/s and %% of the ceiling of every implementation): %s\n",
            bench_flops_formula);
}

static void write_machine(FILE *md, const bench_json *run)
{
    const bench_json *m = bench_json_member(run, "machine");
    if (!m) {
        fputs("No run JSON was found, so the machine is not described here.\n\n", md);
        write_provenance(md, NULL);
        fputc('\n', md);
        return;
    }
    fprintf(md, "Measured %s on **%s** (%g CPUs online; SIMD: %s) with attn %s, softmax "
                "kernel `%s`.\n\n",
            bench_json_string(m, "started", "?"), bench_json_string(m, "cpu_model", "?"),
            bench_json_number(m, "cpus_online", 0.0), bench_json_string(m, "cpu_simd_flags", "?"),
            bench_json_string(m, "attn_version", "?"), bench_json_string(m, "simd_kernel", "?"));
    fprintf(md, "- BLAS: %s (core %s)\n", bench_json_string(m, "blas_config", "?"),
            bench_json_string(m, "blas_core", "?"));
    fprintf(md, "- attn-bench built with %s, %s, `%s`\n", bench_json_string(m, "compiler", "?"),
            bench_json_string(m, "build_type", "?"), bench_json_string(m, "compile_flags", "?"));
    fprintf(md, "- system: %s\n", bench_json_string(m, "system", "?"));
    write_provenance(md, m);
    fprintf(md, "- command: `%s`\n", bench_json_string(run, "command", "?"));
    double wall = bench_json_number(run, "wall_seconds", NAN);
    double other = bench_json_number(run, "other_load_cpus", NAN);
    if (!isnan(wall))
        fprintf(md, "- wall time %.0f s%s", wall, isnan(other) ? "\n" : "");
    if (!isnan(other))
        fprintf(md, "; other processes kept %.2f CPUs busy on average%s\n", other,
                other > 0.2 ? " (timings suffer)" : "");
    fputc('\n', md);
}

static void write_ceiling(FILE *md, const bench_json *run)
{
    const bench_json *ceiling = bench_json_member(run, "ceiling");
    if (!ceiling || ceiling->kind != BENCH_JSON_ARRAY || ceiling->count == 0)
        return;
    static const char *const columns[] = {"GEMM", "n", "threads", "GFLOP/s (median)",
                                          "GFLOP/s (best)", NULL};
    fputs("## Ceiling\n\nOne square GEMM on attn's BLAS at the start of the run (2n³ FLOPs, "
          "median of 5 calls); every GFLOP/s below is also given as a fraction of it.\n\n",
          md);
    write_table_head(md, columns, "lrrrr");
    for (size_t i = 0; i < ceiling->count; ++i) {
        const bench_json *e = &ceiling->items[i];
        fprintf(md, "| %s | %g | %g | %.1f | %.1f |\n", bench_json_string(e, "gemm", "?"),
                bench_json_number(e, "n", 0.0), bench_json_number(e, "threads", 0.0),
                bench_json_number(e, "gflops", 0.0), bench_json_number(e, "best_gflops", 0.0));
    }
    fputc('\n', md);
}

static void write_peers(FILE *md, const bench_json *run)
{
    const bench_json *peers = bench_json_member(run, "peers");
    if (!peers || peers->kind != BENCH_JSON_ARRAY)
        return;
    static const char *const columns[] = {"peer", "status", "versions", "build and BLAS",
                                          "computes", "note", NULL};
    fputs("## Peers\n\n", md);
    write_table_head(md, columns, "llllll");
    for (size_t i = 0; i < peers->count; ++i) {
        const bench_json *p = &peers->items[i];
        const char *name = bench_json_string(p, "name", "?");
        const int naive = strcmp(name, "naive") == 0;
        fprintf(md, "| %s | %s | %s | %s | %s | %s |\n", name,
                bench_json_string(p, "status", "?"),
                naive ? "this build" : bench_json_string(p, "info", ""),
                naive ? "no BLAS" : bench_json_string(p, "blas", ""),
                naive ? "plain C loops in the element type" : bench_json_string(p, "impl", ""),
                bench_json_string(p, "note", ""));
    }
    fputc('\n', md);
}

static void write_number(FILE *md, double value, const char *format)
{
    if (isnan(value))
        fputs(" - |", md);
    else {
        fputc(' ', md);
        fprintf(md, format, value);
        fputs(" |", md);
    }
}

/* Whether the row's peer computed in another type than the row's: NumPy's
 * float64 out of the lesson's code on f32 rows (CSV PEER_out_dtype). */
static int peer_promoted(const bench_report_row *row, size_t k)
{
    char column[64];
    snprintf(column, sizeof column, "%s_out_dtype", bench_peer_kind_names[k]);
    const char *out_dtype = bench_report_field(row, column);
    const char *own = strcmp(bench_report_field(row, "dtype"), "f32") == 0 ? "float32" : "float64";
    return out_dtype[0] && strcmp(out_dtype, own) != 0;
}

static void write_results(FILE *md, const bench_report_data *data)
{
    enum { FIXED = 15 };
    static const char *const fixed[FIXED] = {
        "dtype", "op", "causal", "api/path/engine", "thr", "B", "T", "C", "NH", "hs", "wo",
        "check", "attn ms", "GFLOP/s", "% ceiling"};
    const char *columns[FIXED + 2 * BENCH_PEER_KINDS + 1];
    char peer_titles[2 * BENCH_PEER_KINDS][32];
    memcpy(columns, fixed, sizeof fixed);
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k) {
        snprintf(peer_titles[k], sizeof peer_titles[k], "%s ms", bench_peer_kind_names[k]);
        snprintf(peer_titles[BENCH_PEER_KINDS + k], sizeof peer_titles[k], "× %s",
                 bench_peer_kind_names[k]);
    }
    for (size_t i = 0; i < 2 * BENCH_PEER_KINDS; ++i)
        columns[FIXED + i] = peer_titles[i];
    columns[FIXED + 2 * BENCH_PEER_KINDS] = NULL;
    char align[FIXED + 2 * BENCH_PEER_KINDS + 1];
    snprintf(align, sizeof align, "%s%.*s", "llrlrrrrrrrlrrr", 2 * BENCH_PEER_KINDS,
             "rrrrrrrrrrrrrrrr");
    int promoted = 0;
    fputs("## Results\n\n", md);
    write_table_head(md, columns, align);
    for (size_t r = 0; r < data->count; ++r) {
        const bench_report_row *row = &data->rows[r];
        const char *check = bench_report_field(row, "check_error");
        const char *engine = bench_report_field(row, "engine");
        fprintf(md, "| %s | %s | %s | %s/%s/%s | %s | %s | %.0f | %s | %s | %s | %s | %s |",
                bench_report_field(row, "dtype"), bench_report_field(row, "op"),
                bench_report_field(row, "causal"), bench_report_field(row, "api"),
                bench_report_field(row, "path"), engine[0] ? engine : "blas",
                bench_report_field(row, "threads"),
                bench_report_field(row, "B"), row->T, bench_report_field(row, "C"),
                bench_report_field(row, "NH"), bench_report_field(row, "hs"),
                bench_report_field(row, "wo"),
                check[0] ? check : bench_report_field(row, "check"));
        write_number(md, row->attn[BENCH_METRIC_TIME_MS], "%.4g");
        write_number(md, row->attn[BENCH_METRIC_GFLOPS], "%.1f");
        write_number(md, 100.0 * row->attn[BENCH_METRIC_CEILING_FRACTION], "%.0f%%");
        for (size_t k = 0; k < BENCH_PEER_KINDS; ++k)
            write_number(md, row->peer[k][BENCH_METRIC_TIME_MS], "%.4g");
        for (size_t k = 0; k < BENCH_PEER_KINDS; ++k) {
            const int marked = !isnan(row->speedup[k]) && peer_promoted(row, k);
            write_number(md, row->speedup[k], marked ? "%.2f× †" : "%.2f×");
            promoted |= marked;
        }
        fputc('\n', md);
    }
    fputs("\nattn ms and the peers' ms: median time of one call. × PEER: the peer's time over "
          "attn's (above 1: attn is faster). % ceiling: attn's GFLOP/s over the GEMM ceiling "
          "of its dtype and thread count. check: the relative error of the reference check "
          "(skipped: a backward longer than --check-grad-max-T). A '-' is a number not "
          "measured (a peer not installed, a naive peer beyond --naive-max-T, the NumPy "
          "lesson's missing backward, numpy32 on f64: the lesson's code is float64 there "
          "already).\n\n",
          md);
    if (promoted)
        fputs("† The peer's output was float64 on an f32 row: with NumPy >= 2 the lesson's "
              "`/ np.sqrt(hs)` (a float64 scalar) promotes the float32 scores to float64, so "
              "the softmax and weights · V ran in double precision. × numpy32 is the same code "
              "with `sqrt(hs)` as a float32 scalar, float32 throughout: the float32 ratio.\n\n",
              md);
}

/* ---- plots ------------------------------------------------------------------------ */

typedef struct figure_kind {
    bench_report_metric metric;
    const char *name, *title, *y_label;
    int log_y;
} figure_kind;

static const figure_kind figure_kinds[3] = {
    {BENCH_METRIC_TIME_MS, "time", "median time of one call", "ms", 10},
    {BENCH_METRIC_GFLOPS, "gflops", "GFLOP/s (FLOP count / median time)", "GFLOP/s", 0},
    {BENCH_METRIC_CEILING_FRACTION, "ceiling", "fraction of the GEMM ceiling",
     "GFLOP/s / ceiling", 0},
};

/* Draws one kind of figure; appends its Markdown image lines to md. */
static int draw_kind(const bench_report_data *data, const figure_kind *kind,
                     const char *out_dir, FILE *md, FILE *log)
{
    bench_plot_panel *panels = NULL;
    size_t count = bench_report_panels(data, kind->metric, &panels);
    if (count == 0)
        return -1;
    int result = 0;
    for (size_t first = 0, part = 1; first < count; first += PANELS_PER_FIGURE, ++part) {
        char name[64], path[4096], error[256];
        if (count > PANELS_PER_FIGURE && part > 1)
            snprintf(name, sizeof name, "%s-%zu.png", kind->name, part);
        else
            snprintf(name, sizeof name, "%s.png", kind->name);
        snprintf(path, sizeof path, "%s/%s", out_dir, name);
        const bench_plot_figure figure = {
            .path = path, .title = kind->title, .x_label = "T",
            .y_label = kind->y_label, .log_x = 2, .log_y = kind->log_y,
            .y_min = kind->metric == BENCH_METRIC_TIME_MS ? (double)NAN : 0.0,
            .y_max = (double)NAN, .key = "below", .panels = panels + first,
            .panel_count = count - first < PANELS_PER_FIGURE ? count - first : PANELS_PER_FIGURE};
        if (bench_plot_write(&figure, error, sizeof error) != 0) {
            fprintf(stderr, "attn-bench report: %s\n", error);
            result = -1;
            continue;
        }
        fprintf(md, "![%s](%s)\n\n", kind->title, name);
        fprintf(log, "# report: %s\n", path);
    }
    bench_plot_panels_free(panels, count);
    free(panels);
    return result;
}

static int write_plots(const bench_report_data *data, const char *out_dir, FILE *md,
                       FILE *log)
{
    fputs("## Plots\n\nAgainst T, one panel per shape: solid lines are attn's variants "
          "(api/path), dashed lines the peers.\n\n",
          md);
    if (!bench_plot_available()) {
        fputs("*No plots: gnuplot was not found (Debian: `apt-get install gnuplot-nox`).*\n\n",
              md);
        fprintf(log, "# report: no plots: gnuplot not found (Debian package gnuplot-nox)\n");
        return 0;
    }
    int result = 0;
    for (size_t k = 0; k < 3; ++k)
        result |= draw_kind(data, &figure_kinds[k], out_dir, md, log);
    return result;
}

/* ---- the command ----------------------------------------------------------------- */

static void default_json_path(const char *csv_path, char *json, size_t size)
{
    json[0] = '\0';
    size_t length = strlen(csv_path);
    if (length < 4 || strcmp(csv_path + length - 4, ".csv") != 0 || length + 2 > size)
        return;
    snprintf(json, size, "%.*s.json", (int)(length - 4), csv_path);
    if (access(json, R_OK) != 0)
        json[0] = '\0';
}

static void write_reproduce(FILE *md, const bench_json *run, const char *const *csv_paths,
                            size_t csv_count, const char *out_dir)
{
    fputs("## Reproduce\n\n```sh\n", md);
    if (run)
        fprintf(md, "%s\n", bench_json_string(run, "command", "attn-bench"));
    fputs("attn-bench report --csv ", md);
    for (size_t i = 0; i < csv_count; ++i)
        fprintf(md, "%s%s", i ? "," : "", csv_paths[i]);
    fprintf(md, " --out %s\n```\n", out_dir);
}

int bench_report_write(const char *const *csv_paths, size_t csv_count, const char *json_path,
                       const char *out_dir, FILE *log)
{
    char error[512], json_default[4096];
    bench_report_data data;
    if (bench_report_data_load(&data, csv_paths, csv_count, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench report: %s\n", error);
        return -1;
    }
    if (!json_path) {
        default_json_path(csv_paths[0], json_default, sizeof json_default);
        json_path = json_default[0] ? json_default : NULL;
    }
    bench_json run = {0};
    int have_run = json_path && bench_json_read_file(json_path, &run, error, sizeof error) == 0;
    if (json_path && !have_run)
        fprintf(stderr, "attn-bench report: %s (the machine is left out)\n", error);
    char path[4096];
    snprintf(path, sizeof path, "%s/report.md", out_dir);
    FILE *md = bench_make_directories(out_dir, error, sizeof error) == 0 ? fopen(path, "w") : NULL;
    if (!md) {
        fprintf(stderr, "attn-bench report: %s\n", error[0] ? error : strerror(errno));
        bench_json_free(&run);
        bench_report_data_free(&data);
        return -1;
    }
    fputs("# attn-bench results\n\n", md);
    write_machine(md, have_run ? &run : NULL);
    write_ceiling(md, &run);
    write_peers(md, &run);
    int result = write_plots(&data, out_dir, md, log);
    write_results(md, &data);
    write_reproduce(md, have_run ? &run : NULL, csv_paths, csv_count, out_dir);
    if (fclose(md) != 0)
        result = -1;
    fprintf(log, "# report: %s (%zu rows)\n", path, data.count);
    bench_json_free(&run);
    bench_report_data_free(&data);
    return result;
}

/* Splits a comma list into paths (pointing into copy). */
static size_t split_paths(char *copy, const char **paths, size_t max)
{
    size_t count = 0;
    for (char *item = strtok(copy, ","); item && count < max; item = strtok(NULL, ","))
        paths[count++] = item;
    return count;
}

int bench_report_command(int argc, char **argv, int first)
{
    const char *given[REPORT_COUNT] = {0};
    const char *positionals[BENCH_REPORT_MAX_CSV];
    size_t positional_count = 0;
    char error[512];
    if (bench_cli_collect(&report_table, argc, argv, first, given, positionals,
                          BENCH_REPORT_MAX_CSV, &positional_count, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench report: %s\nTry 'attn-bench report --help'.\n", error);
        return EXIT_BAD_ARGUMENTS;
    }
    if (given[REPORT_HELP]) {
        bench_report_print_help(stdout);
        return 0;
    }
    if (given[REPORT_TARGETS]) {
        const char *out = bench_cli_resolved(&report_table, given, REPORT_OUT, 0);
        return bench_report_targets(given[REPORT_TARGETS], out) == 0 ? 0 : EXIT_REPORT_FAILED;
    }
    const char *paths[BENCH_REPORT_MAX_CSV];
    char *copy = NULL;
    size_t count = positional_count;
    memcpy(paths, positionals, count * sizeof *paths);
    if (given[REPORT_CSV] || count == 0) {
        const char *list = bench_cli_resolved(&report_table, given, REPORT_CSV, 0);
        copy = malloc(strlen(list) + 1);
        if (!copy)
            return EXIT_REPORT_FAILED;
        strcpy(copy, list);
        count += split_paths(copy, paths + count, BENCH_REPORT_MAX_CSV - count);
    }
    int result = count == 0 ? -1
                            : bench_report_write(paths, count, given[REPORT_JSON],
                                                 bench_cli_resolved(&report_table, given,
                                                                    REPORT_OUT, 0),
                                                 stdout);
    free(copy);
    return result == 0 ? 0 : EXIT_REPORT_FAILED;
}
