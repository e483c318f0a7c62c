/*
 * What the JSON files of the run command (run_record.h) and of the sdpa
 * command (sdpa_output.h) are both made of: the CSV read back, every row an
 * object keyed by the column names (numbers as numbers, empty fields as
 * null, text as strings), string members, the machine, the ceiling, the
 * peers, the wall time and the other processes' load.
 */
#ifndef ATTN_BENCH_JSON_OUT_H
#define ATTN_BENCH_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "cli/common_options.h"
#include "machine/ceiling.h"
#include "output/csv_read.h"
#include "machine/machine.h"
#include "peers/peer_process.h"

/* Writes the JSON object, from "{" to "}\n", given the CSV's rows. */
typedef void (*bench_json_body_fn)(FILE *out, const bench_csv_table *rows, const void *context);

/* Reads csv_path back and writes path with body. Returns 0, or -1 with the
 * reason in error (the CSV cannot be read, path cannot be written). */
int bench_json_write_file(const char *path, const char *csv_path, bench_json_body_fn body,
                          const void *context, char *error, size_t error_size);

/* The object's first members: "tool", "mode" (unless NULL), "schema", and
 * the command line and the CSV's path. */
/* '  "settings": {' and the settings both commands have (the common
 * options': seed, timing, ceiling sizes, --quick, --profile), each followed
 * by ", ": the caller adds its own and closes the object. */
void bench_json_write_common_settings(FILE *out, const bench_common_options *common);

void bench_json_write_head(FILE *out, const char *mode, const char *command_line,
                           const char *csv_path);

/* INDENT"NAME": "VALUE"END (NULL as ""). */
void bench_json_write_member(FILE *out, const char *indent, const char *name,
                             const char *value, const char *end);

/* The members "machine", "ceiling", "peers" (count of them), and
 * "wall_seconds" with "other_load_cpus" (null when < 0), each line ending
 * in ",\n". */
void bench_json_write_machine(FILE *out, const bench_machine *machine);
void bench_json_write_ceiling(FILE *out, const bench_ceiling *ceiling);
void bench_json_write_peers(FILE *out, const bench_peer_summary *peers, size_t count);
void bench_json_write_times(FILE *out, double wall_seconds, double other_load_cpus);

/* Writes more members into the object of CSV row `row` (after its columns). */
typedef void (*bench_json_row_fn)(FILE *out, const bench_csv_table *rows, size_t row,
                                  const void *context);

/* The members "columns" and "rows", the last ones of the object (no comma
 * after them); extra (NULL: none) adds to each row. */
void bench_json_write_rows(FILE *out, const bench_csv_table *rows, bench_json_row_fn extra,
                           const void *context);

#endif /* ATTN_BENCH_JSON_OUT_H */
