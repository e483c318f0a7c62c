#include "output/json_out.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

int bench_json_write_file(const char *path, const char *csv_path, bench_json_body_fn body,
                          const void *context, char *error, size_t error_size)
{
    bench_csv_table table;
    if (bench_csv_read(csv_path, &table, error, error_size) != 0)
        return -1;
    FILE *out = fopen(path, "w");
    if (!out) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        bench_csv_free(&table);
        return -1;
    }
    body(out, &table, context);
    bench_csv_free(&table);
    const int failed = ferror(out);
    if (fclose(out) != 0 || failed) {
        snprintf(error, error_size, "%s: write error", path);
        return -1;
    }
    return 0;
}

void bench_json_write_common_settings(FILE *out, const bench_common_options *common)
{
    const bench_repeat_policy *r = &common->repeat;
    fprintf(out,
            "  \"settings\": {\"seed\": %llu, \"warmup\": %zu, \"repeats\": %zu, "
            "\"min_time_s\": %.6g, \"max_repeats\": %zu, \"ceiling_n\": [%zu, %zu], "
            "\"quick\": %s, \"profile\": %s, ",
            (unsigned long long)common->seed, r->warmup, r->min_repeats, r->min_time_s,
            r->max_repeats, common->ceiling_n[BENCH_F32], common->ceiling_n[BENCH_F64],
            common->quick ? "true" : "false", common->profile ? "true" : "false");
}

void bench_json_write_head(FILE *out, const char *mode, const char *command_line,
                           const char *csv_path)
{
    fputs("{\n  \"tool\": \"attn-bench\",\n", out);
    if (mode)
        fprintf(out, "  \"mode\": \"%s\",\n", mode);
    fputs("  \"schema\": 1,\n", out);
    bench_json_write_member(out, "  ", "command", command_line, ",\n");
    bench_json_write_member(out, "  ", "csv", csv_path, ",\n");
}

void bench_json_write_member(FILE *out, const char *indent, const char *name,
                             const char *value, const char *end)
{
    fputs(indent, out);
    bench_json_write_string(out, name);
    fputs(": ", out);
    bench_json_write_string(out, value ? value : "");
    fputs(end, out);
}

void bench_json_write_machine(FILE *out, const bench_machine *machine)
{
    fputs("  \"machine\": ", out);
    bench_machine_write_json(out, machine);
    fputs(",\n", out);
}

void bench_json_write_ceiling(FILE *out, const bench_ceiling *ceiling)
{
    fputs("  \"ceiling\": [", out);
    for (size_t i = 0; i < ceiling->count; ++i) {
        const bench_ceiling_entry *e = &ceiling->entries[i];
        fprintf(out,
                "%s\n    {\"dtype\": \"%s\", \"gemm\": \"%s\", \"threads\": %zu, \"n\": %zu, "
                "\"gflops\": %.4g, \"best_gflops\": %.4g}",
                i ? "," : "", bench_dtype_name(e->dtype),
                e->dtype == BENCH_F32 ? "sgemm" : "dgemm", e->threads, e->n, e->gflops,
                e->best_gflops);
    }
    fputs(ceiling->count ? "\n  ],\n" : "],\n", out);
}

void bench_json_write_peers(FILE *out, const bench_peer_summary *peers, size_t count)
{
    fputs("  \"peers\": [", out);
    for (size_t i = 0; i < count; ++i) {
        const bench_peer_summary *p = &peers[i];
        fputs(i ? ",\n    {\n" : "\n    {\n", out);
        bench_json_write_member(out, "      ", "name", p->name, ",\n");
        bench_json_write_member(out, "      ", "status", p->status, ",\n");
        bench_json_write_member(out, "      ", "python", p->python, ",\n");
        bench_json_write_member(out, "      ", "script", p->script, ",\n");
        bench_json_write_member(out, "      ", "info", p->info, ",\n");
        bench_json_write_member(out, "      ", "blas", p->blas, ",\n");
        bench_json_write_member(out, "      ", "impl", p->impl, ",\n");
        fprintf(out, "      \"measured\": %zu,\n", p->measured);
        bench_json_write_member(out, "      ", "note", p->note, "\n    }");
    }
    fputs("\n  ],\n", out);
}

void bench_json_write_times(FILE *out, double wall_seconds, double other_load_cpus)
{
    fprintf(out, "  \"wall_seconds\": %.3f,\n", wall_seconds);
    if (other_load_cpus >= 0.0)
        fprintf(out, "  \"other_load_cpus\": %.3f,\n", other_load_cpus);
    else
        fputs("  \"other_load_cpus\": null,\n", out);
}

/* A CSV field as a JSON value: null when empty, a number when it is one,
 * else a string. */
static void write_cell(FILE *out, const char *cell)
{
    char *end = NULL;
    const double value = cell[0] ? strtod(cell, &end) : 0.0;
    if (!cell[0])
        fputs("null", out);
    else if (end && *end == '\0' && isfinite(value))
        fputs(cell, out);
    else
        bench_json_write_string(out, cell);
}

void bench_json_write_rows(FILE *out, const bench_csv_table *rows, bench_json_row_fn extra,
                           const void *context)
{
    fputs("  \"columns\": [", out);
    for (size_t c = 0; c < rows->columns; ++c) {
        fputs(c ? ", " : "", out);
        bench_json_write_string(out, rows->fields[c]);
    }
    fputs("],\n  \"rows\": [", out);
    for (size_t r = 0; r < rows->rows; ++r) {
        fputs(r ? ",\n    {" : "\n    {", out);
        for (size_t c = 0; c < rows->columns; ++c) {
            fputs(c ? ", " : "", out);
            bench_json_write_string(out, rows->fields[c]);
            fputs(": ", out);
            write_cell(out, bench_csv_cell(rows, r, (int)c));
        }
        if (extra)
            extra(out, rows, r, context);
        fputc('}', out);
    }
    fputs(rows->rows ? "\n  ]\n" : "]\n", out);
}
