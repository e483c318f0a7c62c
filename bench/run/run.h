/*
 * attn-bench run (the default command): the sweep, with the ceiling at the
 * start, the peers side by side, the table on stdout, progress on stderr,
 * the CSV row by row, the JSON at the end, and optionally the report.
 */
#ifndef ATTN_BENCH_RUN_H
#define ATTN_BENCH_RUN_H

/* Parses argv[first..] as the run command's options and runs. Returns the
 * exit status: 0 every configuration passed its check and was timed (or was
 * already in the CSV); 1 a check failed, a call failed, memory ran out or an
 * output could not be written; 2 bad arguments. */
int bench_run_command(int argc, char **argv, int first);

#endif /* ATTN_BENCH_RUN_H */
