#include "report/report_command.h"

#include <stdlib.h>

#include "cli/cli.h"
#include "output/report_tool.h"

enum { EXIT_REPORT_FAILED = 1, EXIT_BAD_ARGUMENTS = 2 };

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
          "Plots need matplotlib for python3 (Debian: python3-matplotlib); without it\n"
          "report.md says so. The report is bench/report/report.py (python3 on PATH),\n"
          "which runs alone too (bench/report/README.md).\n"
          "CSVs of an older attn-bench (some columns missing, e.g. numpy32_*) are\n"
          "read too; their missing numbers show as '-'.\n"
          "\n"
          "Exit status: 0 written; 1 a CSV could not be read or an output could not\n"
          "be written; 2 bad arguments.\n",
          out);
}

int bench_report_command(int argc, char **argv, int first)
{
    const char *given[REPORT_COUNT] = {0};
    const size_t arguments = argc > first ? (size_t)(argc - first) : 0;
    const char **positionals = malloc((arguments ? arguments : 1) * sizeof *positionals);
    size_t positional_count = 0;
    char error[512];
    if (!positionals)
        return EXIT_REPORT_FAILED;
    const int collected = bench_cli_collect(&report_table, argc, argv, first, given, positionals,
                                            arguments ? arguments : 1, &positional_count, error,
                                            sizeof error);
    free(positionals);
    if (collected != 0) {
        fprintf(stderr, "attn-bench report: %s\nTry 'attn-bench report --help'.\n", error);
        return EXIT_BAD_ARGUMENTS;
    }
    if (given[REPORT_HELP]) {
        bench_report_print_help(stdout);
        return 0;
    }
    return bench_report_tool_run((const char *const *)(argv + first), arguments);
}
