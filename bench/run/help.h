/*
 * The --help texts of attn-bench's commands (experiments describe themselves
 * in experiment.c).
 */
#ifndef ATTN_BENCH_HELP_H
#define ATTN_BENCH_HELP_H

#include <stdio.h>

/* attn-bench help: the commands */
void bench_help_overview(FILE *out);

/* attn-bench run --help (also attn-bench --help) */
void bench_help_run(FILE *out);

#endif /* ATTN_BENCH_HELP_H */
