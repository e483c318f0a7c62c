#include "output/run_record.h"

#include <stdio.h>

#include "output/csv_out.h"
#include "output/csv_read.h"
#include "output/json_out.h"
#include "util/text.h"

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

/* The profile of row r, when this run profiled it. */
static void write_profile(FILE *out, const bench_csv_table *table, size_t r,
                          const void *context)
{
    const bench_phase_profile_log *profiles = context;
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

static void write_body(FILE *out, const bench_csv_table *table, const void *context)
{
    const bench_run_record *record = context;
    const bench_options *o = record->options;
    bench_json_write_head(out, NULL, o->command_line, o->csv_path);
    write_settings(out, o);
    bench_json_write_machine(out, &record->machine);
    bench_json_write_ceiling(out, &record->ceiling);
    bench_fma_peak_write_json(out, &record->fma_peak);
    bench_json_write_peers(out, record->peers, BENCH_PEER_KINDS);
    bench_json_write_times(out, record->wall_seconds, record->other_load_cpus);
    bench_json_write_rows(out, table, write_profile, &record->profiles);
    fputs("}\n", out);
}

int bench_run_record_write_json(const char *path, const bench_run_record *record,
                                char *error, size_t error_size)
{
    return bench_json_write_file(path, record->options->csv_path, write_body, record, error,
                                 error_size);
}
