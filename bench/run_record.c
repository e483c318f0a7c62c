#include "run_record.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_out.h"
#include "csv_read.h"
#include "text.h"

static void write_string_member(FILE *out, const char *indent, const char *name,
                                const char *value, const char *end)
{
    fputs(indent, out);
    bench_json_write_string(out, name);
    fputs(": ", out);
    bench_json_write_string(out, value ? value : "");
    fputs(end, out);
}

static void write_settings(FILE *out, const bench_options *o)
{
    const bench_repeat_policy *r = &o->repeat;
    fprintf(out,
            "  \"settings\": {\"seed\": %llu, \"warmup\": %zu, \"repeats\": %zu, "
            "\"min_time_s\": %.6g, \"max_repeats\": %zu, \"naive_repeats\": %zu, "
            "\"naive_max_T\": %zu, \"check_rows\": %zu, \"check_grad_max_T\": %zu, "
            "\"ceiling_n\": [%zu, %zu], \"quick\": %s, \"profile\": %s},\n",
            (unsigned long long)o->seed, r->warmup, r->min_repeats, r->min_time_s,
            r->max_repeats, o->naive_repeat.min_repeats, o->naive_max_T, o->check_rows,
            o->check_grad_max_T, o->ceiling_n[BENCH_F32], o->ceiling_n[BENCH_F64],
            o->quick ? "true" : "false", o->profile ? "true" : "false");
}

static void write_ceiling(FILE *out, const bench_ceiling *c)
{
    fputs("  \"ceiling\": [", out);
    for (size_t i = 0; i < c->count; ++i) {
        const bench_ceiling_entry *e = &c->entries[i];
        fprintf(out,
                "%s\n    {\"dtype\": \"%s\", \"gemm\": \"%s\", \"threads\": %zu, \"n\": %zu, "
                "\"gflops\": %.4g, \"best_gflops\": %.4g}",
                i ? "," : "", bench_dtype_name(e->dtype),
                e->dtype == BENCH_F32 ? "sgemm" : "dgemm", e->threads, e->n, e->gflops,
                e->best_gflops);
    }
    fputs(c->count ? "\n  ],\n" : "],\n", out);
}

static void write_peers(FILE *out, const bench_peer_summary *peers)
{
    fputs("  \"peers\": [", out);
    for (size_t i = 0; i < BENCH_PEER_KINDS; ++i) {
        const bench_peer_summary *p = &peers[i];
        fputs(i ? ",\n    {\n" : "\n    {\n", out);
        write_string_member(out, "      ", "name", p->name, ",\n");
        write_string_member(out, "      ", "status", p->status, ",\n");
        write_string_member(out, "      ", "python", p->python, ",\n");
        write_string_member(out, "      ", "script", p->script, ",\n");
        write_string_member(out, "      ", "info", p->info, ",\n");
        write_string_member(out, "      ", "blas", p->blas, ",\n");
        write_string_member(out, "      ", "impl", p->impl, ",\n");
        fprintf(out, "      \"measured\": %zu,\n", p->measured);
        write_string_member(out, "      ", "note", p->note, "\n    }");
    }
    fputs("\n  ],\n", out);
}

/* A CSV field as a JSON value: null when empty, a number when it is one,
 * else a string. */
static void write_cell(FILE *out, const char *cell)
{
    char *end = NULL;
    double value = cell[0] ? strtod(cell, &end) : 0.0;
    if (!cell[0])
        fputs("null", out);
    else if (end && *end == '\0' && isfinite(value))
        fputs(cell, out);
    else
        bench_json_write_string(out, cell);
}

/* The profile of row r, when this run profiled it. */
static void write_profile(FILE *out, const bench_csv_table *table, size_t r,
                          const bench_phase_profile_log *profiles)
{
    if (!profiles->count || table->columns < BENCH_CSV_KEY_COLUMNS)
        return;
    char key[256] = "";
    for (int c = 0; c < BENCH_CSV_KEY_COLUMNS; ++c) {
        bench_append_text(key, sizeof key, c ? "," : "");
        bench_append_text(key, sizeof key, bench_csv_cell(table, r, c));
    }
    const bench_phase_profile_entry *entry = bench_phase_profile_log_find(profiles, key);
    if (!entry)
        return;
    fputs(", \"profile\": ", out);
    bench_phase_profile_write_json(out, &entry->profile, entry->ceiling_gflops);
}

static void write_rows(FILE *out, const bench_csv_table *table,
                       const bench_phase_profile_log *profiles)
{
    fputs("  \"columns\": [", out);
    for (size_t c = 0; c < table->columns; ++c) {
        fputs(c ? ", " : "", out);
        bench_json_write_string(out, table->fields[c]);
    }
    fputs("],\n  \"rows\": [", out);
    for (size_t r = 0; r < table->rows; ++r) {
        fputs(r ? ",\n    {" : "\n    {", out);
        for (size_t c = 0; c < table->columns; ++c) {
            fputs(c ? ", " : "", out);
            bench_json_write_string(out, table->fields[c]);
            fputs(": ", out);
            write_cell(out, bench_csv_cell(table, r, (int)c));
        }
        write_profile(out, table, r, profiles);
        fputc('}', out);
    }
    fputs(table->rows ? "\n  ]\n" : "]\n", out);
}

int bench_run_record_write_json(const char *path, const bench_run_record *record,
                                char *error, size_t error_size)
{
    const bench_options *o = record->options;
    bench_csv_table table;
    if (bench_csv_read(o->csv_path, &table, error, error_size) != 0)
        return -1;
    FILE *out = fopen(path, "w");
    if (!out) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        bench_csv_free(&table);
        return -1;
    }
    fputs("{\n  \"tool\": \"attn-bench\",\n  \"schema\": 1,\n", out);
    write_string_member(out, "  ", "command", o->command_line, ",\n");
    write_string_member(out, "  ", "csv", o->csv_path, ",\n");
    write_settings(out, o);
    fputs("  \"machine\": ", out);
    bench_machine_write_json(out, &record->machine);
    fputs(",\n", out);
    write_ceiling(out, &record->ceiling);
    write_peers(out, record->peers);
    fprintf(out, "  \"wall_seconds\": %.3f,\n", record->wall_seconds);
    if (record->other_load_cpus >= 0.0)
        fprintf(out, "  \"other_load_cpus\": %.3f,\n", record->other_load_cpus);
    else
        fputs("  \"other_load_cpus\": null,\n", out);
    write_rows(out, &table, &record->profiles);
    fputs("}\n", out);
    bench_csv_free(&table);
    int failed = ferror(out);
    if (fclose(out) != 0 || failed) {
        snprintf(error, error_size, "%s: write error", path);
        return -1;
    }
    return 0;
}
