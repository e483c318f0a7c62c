/*
 * attn-bench report: a Markdown summary of one or more run CSVs, with PNG
 * plots against T of the median time, the GFLOP/s and the fraction of the
 * GEMM ceiling, for every attn variant and every peer; or, with --targets,
 * issue 5's table of performance targets. The command checks its options
 * and prints its help here; the report is written by the Python tool beside
 * this file (report.py: bench/report/README.md), which it runs with the
 * options as given (output/report_tool.h).
 *
 * Files written into the output folder:
 *   report.md     the summary: machine, ceiling, peers, plots, the table of
 *                 every configuration, how to reproduce
 *   time.png      median time of one call (ms, log scale) against T
 *   gflops.png    GFLOP/s against T
 *   ceiling.png   fraction of the GEMM ceiling against T
 *   (time-2.png ... when there are more panels than one figure holds)
 *   targets.md    with --targets DIR, instead of the others
 */
#ifndef ATTN_BENCH_REPORT_COMMAND_H
#define ATTN_BENCH_REPORT_COMMAND_H

#include <stdio.h>

/* Checks argv[first..] as the report command's options and runs the report
 * tool with them. Returns the exit status: 0, 1 (unreadable input,
 * unwritable output, a plot that failed, python3 missing), 2 (bad
 * arguments). */
int bench_report_command(int argc, char **argv, int first);

void bench_report_print_help(FILE *out);

#endif /* ATTN_BENCH_REPORT_COMMAND_H */
