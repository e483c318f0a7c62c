/*
 * The experiments (attn-bench scaling | rank | init | asymmetry): the
 * course's claims about scaled dot-product attention, measured. Each prints
 * a table, writes <out>/<name>.csv and, when matplotlib is importable, <out>/<name>.png;
 * with --check it also asserts its documented properties and exits 1 when
 * one fails. Inputs are deterministic (--seed).
 */
#ifndef ATTN_BENCH_EXPERIMENT_H
#define ATTN_BENCH_EXPERIMENT_H

#include <stdio.h>

/* Whether name is an experiment's command name. */
int bench_is_experiment(const char *name);

/* Runs experiment `name` with argv[first..] as its options. Returns the exit
 * status: 0, 1 (a --check property failed, or an output could not be
 * written), 2 (bad arguments). */
int bench_experiment_command(const char *name, int argc, char **argv, int first);

/* The experiment's --help. */
void bench_experiment_print_help(const char *name, FILE *out);

#endif /* ATTN_BENCH_EXPERIMENT_H */
