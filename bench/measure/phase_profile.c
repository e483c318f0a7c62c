#include "measure/phase_profile.h"

#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "util/timing.h"

attn_status bench_phase_profile_measure(attn_plan *plan, bench_profiled_call_fn call,
                                        void *context, size_t calls, size_t threads,
                                        bench_phase_profile *profile)
{
    memset(profile, 0, sizeof *profile);
    if (!plan || calls == 0)
        return ATTN_OK;
    unsigned engine_threads = 0;
    attn_status status = attn_plan_get_threads(plan, &engine_threads);
    if (status == ATTN_OK)
        status = attn_plan_set_profiling(plan, 1);
    if (status != ATTN_OK)
        return status;
    size_t made = 0;
    double wall = 0.0;
    while (made < calls && status == ATTN_OK) {
        size_t n = 0;
        double seconds = 0.0;
        status = call(context, &n, &seconds);
        made += n ? n : 1;
        wall += seconds;
    }
    if (status == ATTN_OK)
        status = attn_plan_profile(plan, profile->seconds, profile->flops);
    attn_plan_set_profiling(plan, 0);
    if (status != ATTN_OK)
        return status;
    for (int p = 0; p < ATTN_PHASE_COUNT; ++p) {
        profile->seconds[p] /= (double)made;
        profile->flops[p] /= (double)made;
    }
    profile->measured = 1;
    profile->engine_threads = engine_threads;
    profile->threads = threads;
    profile->calls = made;
    profile->wall_s = wall / (double)made;
    return ATTN_OK;
}

/* ---- the numbers of a phase --------------------------------------------------- */

/* What the print and the JSON show (see phase_profile.h). */
typedef struct phase_numbers {
    double thread_ms, share, gflops, ceiling_share; /* gflops, ceiling_share < 0: none */
} phase_numbers;

typedef struct profile_totals {
    double weight;            /* how many threads a counted second stands for */
    double lanes;             /* the threads of the call */
    double thread_ms;         /* wall x lanes */
    double per_thread_ceiling; /* GF/s; 0: no ceiling */
} profile_totals;

static profile_totals totals_of(const bench_phase_profile *p, double ceiling_gflops)
{
    const double threads = p->threads ? (double)p->threads : 1.0;
    profile_totals t;
    t.weight = p->engine_threads ? 1.0 : threads;
    t.lanes = p->engine_threads ? (double)p->engine_threads : threads;
    t.thread_ms = p->wall_s * t.lanes * 1e3;
    t.per_thread_ceiling = ceiling_gflops > 0.0 ? ceiling_gflops / threads : 0.0;
    return t;
}

static phase_numbers numbers_of(const bench_phase_profile *p, const profile_totals *t,
                                int phase)
{
    const double seconds = p->seconds[phase] * t->weight;
    phase_numbers n = {seconds * 1e3, t->thread_ms > 0.0 ? seconds * 1e3 / t->thread_ms : 0.0,
                       -1.0, -1.0};
    if (p->flops[phase] > 0.0 && seconds > 0.0) {
        n.gflops = p->flops[phase] / seconds * 1e-9;
        if (t->per_thread_ceiling > 0.0)
            n.ceiling_share = n.gflops / t->per_thread_ceiling;
    }
    return n;
}

/* The thread time of one call that no phase holds (>= 0). */
static double outside_ms(const bench_phase_profile *p, const profile_totals *t)
{
    double inside = 0.0;
    for (int phase = 0; phase < ATTN_PHASE_COUNT; ++phase)
        inside += p->seconds[phase] * t->weight * 1e3;
    return t->thread_ms > inside ? t->thread_ms - inside : 0.0;
}

static int phase_ran(const bench_phase_profile *p, int phase)
{
    return p->seconds[phase] > 0.0 || p->flops[phase] > 0.0;
}

static void engine_text(const bench_phase_profile *p, char *text, size_t size)
{
    if (p->engine_threads)
        snprintf(text, size, "attn's own engine on %u thread%s", p->engine_threads,
                 p->engine_threads == 1 ? "" : "s");
    else
        snprintf(text, size,
                 "BLAS threads (the calling thread's times x %zu, its products' BLAS threads)",
                 p->threads);
}

void bench_phase_profile_print(FILE *out, const bench_phase_profile *p, double ceiling_gflops)
{
    if (!p->measured) {
        fputs("    profile: none (one-shots create their own plan; failed rows are not "
              "profiled)\n",
              out);
        return;
    }
    const profile_totals t = totals_of(p, ceiling_gflops);
    char engine[160];
    engine_text(p, engine, sizeof engine);
    fprintf(out, "    profile: %s; %zu calls, %.4g ms per call, %.4g thread-ms", engine, p->calls,
            p->wall_s * 1e3, t.thread_ms);
    if (t.per_thread_ceiling > 0.0)
        fprintf(out, "; per-thread ceiling %.1f GFLOP/s", t.per_thread_ceiling);
    fputc('\n', out);
    fprintf(out, "    %-22s %10s %6s %11s %7s\n", "phase", "thread-ms", "share", "GF/s/thread",
            "ceil%");
    for (int phase = 0; phase < ATTN_PHASE_COUNT; ++phase) {
        if (!phase_ran(p, phase))
            continue;
        const phase_numbers n = numbers_of(p, &t, phase);
        fprintf(out, "    %-22s %10.4g %5.1f%%", attn_phase_name((attn_phase)phase), n.thread_ms,
                100.0 * n.share);
        if (n.gflops >= 0.0)
            fprintf(out, " %11.1f", n.gflops);
        else
            fprintf(out, " %11s", "-");
        if (n.ceiling_share >= 0.0)
            fprintf(out, " %6.0f%%\n", 100.0 * n.ceiling_share);
        else
            fprintf(out, " %7s\n", "-");
    }
    const double outside = outside_ms(p, &t);
    fprintf(out, "    %-22s %10.4g %5.1f%% %11s %7s\n", "outside", outside,
            t.thread_ms > 0.0 ? 100.0 * outside / t.thread_ms : 0.0, "-", "-");
    fflush(out);
}

static void write_number(FILE *out, const char *name, double value, int valid)
{
    fprintf(out, "\"%s\": ", name);
    if (valid)
        fprintf(out, "%.6g", value);
    else
        fputs("null", out);
}

void bench_phase_profile_write_json(FILE *out, const bench_phase_profile *p,
                                    double ceiling_gflops)
{
    const profile_totals t = totals_of(p, ceiling_gflops);
    fprintf(out, "{\"engine_threads\": %u, \"threads\": %zu, \"calls\": %zu, ",
            p->engine_threads, p->threads, p->calls);
    write_number(out, "wall_ms", p->wall_s * 1e3, 1);
    fputs(", ", out);
    write_number(out, "thread_ms", t.thread_ms, 1);
    fputs(", ", out);
    write_number(out, "per_thread_ceiling_gflops", t.per_thread_ceiling,
                 t.per_thread_ceiling > 0.0);
    fputs(", ", out);
    write_number(out, "outside_thread_ms", outside_ms(p, &t), 1);
    fputs(", \"phases\": [", out);
    int first = 1;
    for (int phase = 0; phase < ATTN_PHASE_COUNT; ++phase) {
        if (!phase_ran(p, phase))
            continue;
        const phase_numbers n = numbers_of(p, &t, phase);
        fputs(first ? "{\"phase\": " : ", {\"phase\": ", out);
        first = 0;
        bench_json_write_string(out, attn_phase_name((attn_phase)phase));
        fputs(", ", out);
        write_number(out, "thread_ms", n.thread_ms, 1);
        fputs(", ", out);
        write_number(out, "share", n.share, 1);
        fputs(", ", out);
        write_number(out, "gflop", p->flops[phase] * 1e-9, 1);
        fputs(", ", out);
        write_number(out, "gflops_per_thread", n.gflops, n.gflops >= 0.0);
        fputs(", ", out);
        write_number(out, "ceiling_share", n.ceiling_share, n.ceiling_share >= 0.0);
        fputc('}', out);
    }
    fputs("]}", out);
}

void bench_phase_profile_print_help(FILE *out)
{
    fputs("\n"
          "PROFILE (--profile; plans only). After a configuration is timed (profiling\n"
          "off: the table's time), its plan runs as many calls again with\n"
          "attn_plan_set_profiling on (a decode loop: as many passes as its rounds,\n"
          "per step; cold-cache reads between calls, untimed, as when timed), and a\n"
          "block under its row gives, per phase of one call (attn_phase_name):\n"
          "thread-ms (the engine's threads' time in it, summed; on BLAS threads the\n"
          "calling thread's time x --threads, the BLAS threads its products run on),\n"
          "share (of the call's thread time: wall x threads; 'outside' is what no\n"
          "phase holds), GF/s/thread (attn's FLOPs of the phase / its thread time)\n"
          "and ceil% (of the per-thread ceiling: the ceiling / --threads). The JSON's\n"
          "rows get a \"profile\" object with the same numbers; the CSV does not\n"
          "change.\n",
          out);
}

/* ---- the log ------------------------------------------------------------------ */

int bench_phase_profile_log_add(bench_phase_profile_log *log, const char *key,
                                const bench_phase_profile *profile, double ceiling_gflops)
{
    if (log->count == log->capacity) {
        const size_t capacity = log->capacity ? 2 * log->capacity : 16;
        bench_phase_profile_entry *entries =
            realloc(log->entries, capacity * sizeof *log->entries);
        if (!entries)
            return -1;
        log->entries = entries;
        log->capacity = capacity;
    }
    bench_phase_profile_entry *entry = &log->entries[log->count++];
    bench_copy_text(entry->key, sizeof entry->key, key);
    entry->profile = *profile;
    entry->ceiling_gflops = ceiling_gflops;
    return 0;
}

const bench_phase_profile_entry *bench_phase_profile_log_find(const bench_phase_profile_log *log,
                                                              const char *key)
{
    for (size_t i = log ? log->count : 0; i-- > 0;)
        if (strcmp(log->entries[i].key, key) == 0)
            return &log->entries[i];
    return NULL;
}

void bench_phase_profile_log_free(bench_phase_profile_log *log)
{
    free(log->entries);
    memset(log, 0, sizeof *log);
}
