#include "pipeline/run_record.h"

#include <string.h>

#include "output/csv_read.h"
#include "output/json_out.h"
#include "util/text.h"

void bench_run_record_start(bench_run_record *record, const char *const *names, size_t count)
{
    record->peer_count = count < BENCH_RUN_PEER_MAX ? count : BENCH_RUN_PEER_MAX;
    for (size_t k = 0; k < record->peer_count; ++k)
        record->peers[k].name = names[k];
    bench_cpu_snapshot_take(&record->start);
}

void bench_run_record_stop(bench_run_record *record, const int *asked)
{
    for (size_t k = 0; k < record->peer_count; ++k)
        if (!record->peers[k].status)
            record->peers[k].status = asked[k] ? "not needed" : "not asked for";
    bench_cpu_snapshot end;
    bench_cpu_snapshot_take(&end);
    record->wall_seconds = end.wall_s - record->start.wall_s;
    record->other_load_cpus = bench_other_load(&record->start, &end);
    /* a failed entry is 0, and the footer leaves it be */
    (void)bench_fma_peak_remeasure(&record->fma_peak, &record->fma_peak_after);
}

void bench_run_record_print_footer(FILE *out, const bench_run_record *record, size_t measured,
                                   size_t resumed, const char *included)
{
    for (size_t k = 0; k < record->peer_count; ++k) {
        const bench_peer_summary *summary = &record->peers[k];
        if (summary->status && strcmp(summary->status, "ran") == 0 && summary->note[0])
            fprintf(out, "# %s peer: first error: %s\n", summary->name, summary->note);
    }
    bench_fma_peak_print_recheck(out, &record->fma_peak, &record->fma_peak_after);
    bench_other_load_print(out, record->other_load_cpus, &record->machine);
    fprintf(out, "# %zu configurations measured", measured);
    if (resumed)
        fprintf(out, ", %zu kept from the CSV", resumed);
    fprintf(out, ", in %.1f s wall time (%s included); CSV: %s\n",
            record->wall_seconds, included, record->csv_name);
}

static void write_bandwidth(FILE *out, const bench_run_record *r)
{
    fprintf(out,
            "  \"bandwidth\": {\"method\": \"streaming read: the sum of the 64-bit words of a "
            "buffer, one slice per thread\", \"buffer_bytes\": %zu, "
            "\"last_level_cache_bytes\": %zu, \"repeats\": %d, \"entries\": [",
            r->bandwidth_bytes, r->last_level_cache, BENCH_BANDWIDTH_REPEATS);
    for (size_t i = 0; i < r->bandwidth.count; ++i) {
        const bench_bandwidth_entry *e = &r->bandwidth.entries[i];
        fprintf(out, "%s\n    {\"threads\": %zu, \"gbps\": %.4g, \"best_gbps\": %.4g}",
                i ? "," : "", e->threads, e->gbps, e->best_gbps);
    }
    fputs(r->bandwidth.count ? "\n  ]},\n" : "]},\n", out);
}

/* A row's profile key: its CSV key and its dropout as the CSV writes it. */
static void profile_key(char *key, size_t size, const char *csv_key, const char *dropout)
{
    snprintf(key, size, "%s,%s", csv_key, dropout);
}

void bench_run_record_add_profile(bench_run_record *record, const char *csv_key, double dropout,
                                  const bench_phase_profile *profile, double ceiling_gflops)
{
    bench_phase_profile_print(stdout, profile, ceiling_gflops);
    char p[32], key[320];
    snprintf(p, sizeof p, "%.6g", dropout);
    profile_key(key, sizeof key, csv_key, p);
    if (profile->measured &&
        bench_phase_profile_log_add(&record->profiles, key, profile, ceiling_gflops) != 0)
        fprintf(stderr, "attn-bench: out of memory: a profile is not in the JSON\n");
}

static int column_named(const bench_csv_table *table, const char *name)
{
    for (size_t c = 0; c < table->columns; ++c)
        if (strcmp(table->fields[c], name) == 0)
            return (int)c;
    return -1;
}

/* The profile of row r, when this run profiled it. */
static void write_profile(FILE *out, const bench_csv_table *table, size_t r,
                          const void *context)
{
    const bench_run_record *record = context;
    const size_t columns = record->profile_key_columns;
    if (!record->profiles.count || !columns || table->columns < columns)
        return;
    char csv_key[256] = "", key[320];
    for (size_t c = 0; c < columns; ++c) {
        bench_append_text(csv_key, sizeof csv_key, c ? "," : "");
        bench_append_text(csv_key, sizeof csv_key, bench_csv_cell(table, r, (int)c));
    }
    profile_key(key, sizeof key, csv_key,
                bench_csv_cell(table, r, column_named(table, "dropout")));
    const bench_phase_profile_entry *entry = bench_phase_profile_log_find(&record->profiles, key);
    if (!entry)
        return;
    fputs(", \"profile\": ", out);
    bench_phase_profile_write_json(out, &entry->profile, entry->ceiling_gflops);
}

static void write_body(FILE *out, const bench_csv_table *table, const void *context)
{
    const bench_run_record *record = context;
    bench_json_write_head(out, record->mode, record->command_line, record->csv_name);
    if (record->write_settings)
        record->write_settings(out, record->settings_context);
    bench_json_write_machine(out, &record->machine);
    bench_json_write_ceiling(out, &record->ceiling);
    bench_fma_peak_write_json(out, &record->fma_peak);
    if (record->has_bandwidth)
        write_bandwidth(out, record);
    bench_json_write_peers(out, record->peers, record->peer_count);
    bench_json_write_times(out, record->wall_seconds, record->other_load_cpus);
    bench_json_write_rows(out, table, write_profile, record);
    fputs("}\n", out);
}

int bench_run_record_write_json(const char *path, const bench_run_record *record,
                                char *error, size_t error_size)
{
    return bench_json_write_file(path, record->csv_path, write_body, record, error,
                                 error_size);
}
