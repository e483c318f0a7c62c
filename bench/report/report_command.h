/*
 * attn-bench report: a Markdown summary of one or more run CSVs, with PNG
 * plots (gnuplot) against T of the median time, the GFLOP/s and the fraction
 * of the GEMM ceiling, for every attn variant and every peer. The machine's
 * description comes from the run's JSON when there is one.
 *
 * Files written into the output folder:
 *   report.md     the summary: machine, ceiling, peers, plots, the table of
 *                 every configuration, how to reproduce
 *   time.png      median time of one call (ms, log scale) against T
 *   gflops.png    GFLOP/s against T
 *   ceiling.png   fraction of the GEMM ceiling against T
 * (time-2.png ... when there are more panels than one figure holds)
 */
#ifndef ATTN_BENCH_REPORT_COMMAND_H
#define ATTN_BENCH_REPORT_COMMAND_H

#include <stddef.h>
#include <stdio.h>

/* Parses argv[first..] as the report command's options and writes the
 * report. Returns the exit status: 0, 1 (unreadable input, unwritable
 * output, gnuplot failed), 2 (bad arguments). */
int bench_report_command(int argc, char **argv, int first);

/* Writes the report of csv_paths (json_path may be NULL: then the first
 * CSV's name with .json, when that file exists) into out_dir; says what it
 * wrote on log. Returns 0, or -1 (the reason is printed on stderr). */
int bench_report_write(const char *const *csv_paths, size_t csv_count, const char *json_path,
                       const char *out_dir, FILE *log);

void bench_report_print_help(FILE *out);

#endif /* ATTN_BENCH_REPORT_COMMAND_H */
