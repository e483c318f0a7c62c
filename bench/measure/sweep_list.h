/*
 * --list, of the run command and the sdpa command: the configurations of a
 * sweep as their CSV's key columns, one per line under those columns' part
 * of the header row, then the left-out counts and "# N configurations".
 */
#ifndef ATTN_BENCH_SWEEP_LIST_H
#define ATTN_BENCH_SWEEP_LIST_H

#include <stddef.h>
#include <stdio.h>

#include "measure/omissions.h"

/* Writes the key columns of configuration index of configs into key. */
typedef void (*bench_sweep_key_fn)(const void *configs, size_t index, char *key, size_t size);

void bench_sweep_list_print(FILE *out, const char *csv_header, int key_columns,
                            const void *configs, size_t count, bench_sweep_key_fn key,
                            const bench_omissions *omitted);

#endif /* ATTN_BENCH_SWEEP_LIST_H */
