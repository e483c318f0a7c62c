/*
 * The Python report tool (bench/report/; bench/report/README.md) as a child
 * process of python3 on PATH: `attn-bench report` and `attn-bench run
 * --report DIR` run its report.py, the experiments' plots (output/plot.c)
 * its plots.py. Its folder is found beside the executable as installed
 * (share/attn/report), else in the source tree. The child gets attn-bench's
 * FLOP-count text (measure/flops.h) in ATTN_BENCH_FLOPS_FORMULA: report.md
 * quotes it.
 */
#ifndef ATTN_BENCH_REPORT_TOOL_H
#define ATTN_BENCH_REPORT_TOOL_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct bench_report_tool {
    pid_t pid;
    FILE *input;              /* the child's standard input, when asked for */
    struct sigaction pipe_was; /* SIGPIPE's action while input is open */
} bench_report_tool;

/* Starts python3 <tool folder>/script args[0..count-1]. with_input: a pipe
 * to its standard input (tool->input; SIGPIPE ignored until the wait, so a
 * child that died early shows as a write error); quiet: its standard output
 * and error go to /dev/null. Returns 0, or -1 with the reason in error. */
int bench_report_tool_start(bench_report_tool *tool, const char *script,
                            const char *const *args, size_t count, int with_input, int quiet,
                            char *error, size_t error_size);

/* Closes the input and waits for the child: its exit status, or -1 (killed
 * by a signal). */
int bench_report_tool_wait(bench_report_tool *tool);

/* Runs report.py with args to its end: its exit status (0 written, 1
 * unreadable input or unwritable output, 2 bad arguments), or 1 when it
 * cannot be started (the reason on stderr). */
int bench_report_tool_run(const char *const *args, size_t count);

#endif /* ATTN_BENCH_REPORT_TOOL_H */
