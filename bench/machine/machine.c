#include "machine/machine.h"

#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <attn/attn.h>

#include "machine/blas_info.h"
#include "util/text.h"
#include "util/timing.h"

#ifndef ATTN_BENCH_C_FLAGS
#define ATTN_BENCH_C_FLAGS "unknown"
#endif
#ifndef ATTN_BENCH_BUILD_TYPE
#define ATTN_BENCH_BUILD_TYPE "unknown"
#endif

#if defined(__clang__)
#define COMPILER_NAME "clang " __clang_version__
#elif defined(__GNUC__)
#define COMPILER_NAME "gcc " __VERSION__
#else
#define COMPILER_NAME "unknown"
#endif

/* The value of the first "key : value" line of /proc/cpuinfo, or "". */
static void cpuinfo_value(const char *key, char *value, size_t size)
{
    value[0] = '\0';
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (!cpuinfo)
        return;
    char line[8192];
    while (fgets(line, sizeof line, cpuinfo)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, key, strlen(key)) != 0 || !colon)
            continue;
        char *start = colon + 1 + (colon[1] == ' ');
        start[strcspn(start, "\n")] = '\0';
        bench_copy_text(value, size, start);
        break;
    }
    fclose(cpuinfo);
}

static void simd_flags(char *flags, size_t size)
{
    static const char *const wanted[] = {"sse4_2",   "avx",       "avx2",      "fma",
                                         "avx512f",  "avx512bw",  "avx512vl",  "avx512_bf16",
                                         "amx_tile", "avx512_fp16"};
    char all[8192];
    cpuinfo_value("flags", all, sizeof all);
    flags[0] = '\0';
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; ++i) {
        char padded[64], haystack[8200];
        snprintf(padded, sizeof padded, " %s ", wanted[i]);
        snprintf(haystack, sizeof haystack, " %s ", all);
        if (strstr(haystack, padded)) {
            if (flags[0])
                bench_append_text(flags, size, " ");
            bench_append_text(flags, size, wanted[i]);
        }
    }
}

void bench_machine_describe(bench_machine *m)
{
    memset(m, 0, sizeof *m);
    cpuinfo_value("model name", m->cpu_model, sizeof m->cpu_model);
    if (!m->cpu_model[0])
        bench_copy_text(m->cpu_model, sizeof m->cpu_model, "unknown");
    simd_flags(m->cpu_simd_flags, sizeof m->cpu_simd_flags);
    m->cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
    struct utsname name;
    if (uname(&name) == 0)
        snprintf(m->system, sizeof m->system, "%.60s %.120s %.60s", name.sysname, name.release,
                 name.machine);
    time_t now = time(NULL);
    struct tm utc;
    if (gmtime_r(&now, &utc))
        strftime(m->started, sizeof m->started, "%Y-%m-%dT%H:%M:%SZ", &utc);
    m->attn_version = attn_version_string();
    m->simd_kernel = attn_simd_name();
    m->blas_config = bench_blas_config();
    m->blas_core = bench_blas_core();
    m->blas_threads = bench_blas_threads();
    m->compiler = COMPILER_NAME;
    m->compile_flags = ATTN_BENCH_C_FLAGS;
    m->build_type = ATTN_BENCH_BUILD_TYPE;
    m->load_average[0] = m->load_average[1] = m->load_average[2] = -1.0;
    FILE *loadavg = fopen("/proc/loadavg", "r");
    if (loadavg) {
        if (fscanf(loadavg, "%lf %lf %lf", &m->load_average[0], &m->load_average[1],
                   &m->load_average[2]) != 3)
            m->load_average[0] = m->load_average[1] = m->load_average[2] = -1.0;
        fclose(loadavg);
    }
}

void bench_machine_print(FILE *out, const bench_machine *m)
{
    fprintf(out, "# attn %s (header %s), softmax kernel %s\n", m->attn_version,
            ATTN_VERSION_STRING, m->simd_kernel);
    fprintf(out, "# CPU: %s, %ld online; SIMD: %s\n", m->cpu_model, m->cpus_online,
            m->cpu_simd_flags);
    fprintf(out, "# BLAS: %s; core %s; threads at start %d\n", m->blas_config, m->blas_core,
            m->blas_threads);
    fprintf(out, "# built with %s, %s, flags: %s\n", m->compiler, m->build_type,
            m->compile_flags);
    fprintf(out, "# system: %s; started %s", m->system, m->started);
    if (m->load_average[0] >= 0.0)
        fprintf(out, "; load average %.2f %.2f %.2f (1, 5, 15 min)", m->load_average[0],
                m->load_average[1], m->load_average[2]);
    fputc('\n', out);
}

void bench_machine_write_json(FILE *out, const bench_machine *m)
{
    const char *const text_members[][2] = {
        {"cpu_model", m->cpu_model},       {"cpu_simd_flags", m->cpu_simd_flags},
        {"system", m->system},             {"started", m->started},
        {"attn_version", m->attn_version}, {"simd_kernel", m->simd_kernel},
        {"blas_config", m->blas_config},   {"blas_core", m->blas_core},
        {"compiler", m->compiler},         {"compile_flags", m->compile_flags},
        {"build_type", m->build_type},
    };
    fputs("{\n", out);
    for (size_t i = 0; i < sizeof text_members / sizeof text_members[0]; ++i) {
        fputs("    ", out);
        bench_json_write_string(out, text_members[i][0]);
        fputs(": ", out);
        bench_json_write_string(out, text_members[i][1]);
        fputs(",\n", out);
    }
    fprintf(out, "    \"cpus_online\": %ld,\n    \"blas_threads_at_start\": %d,\n",
            m->cpus_online, m->blas_threads);
    if (m->load_average[0] >= 0.0)
        fprintf(out, "    \"load_average\": [%.2f, %.2f, %.2f]\n", m->load_average[0],
                m->load_average[1], m->load_average[2]);
    else
        fputs("    \"load_average\": null\n", out);
    fputs("  }", out);
}

/* ---- load --------------------------------------------------------------------- */

/* Non-idle seconds of all CPUs since boot (user, nice, system, irq, softirq,
 * steal), or -1 without /proc/stat. */
static double machine_busy_seconds(void)
{
    FILE *stat = fopen("/proc/stat", "r");
    if (!stat)
        return -1.0;
    unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
    int fields = fscanf(stat, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice,
                        &system, &idle, &iowait, &irq, &softirq, &steal);
    fclose(stat);
    long ticks_per_second = sysconf(_SC_CLK_TCK);
    if (fields != 8 || ticks_per_second <= 0)
        return -1.0;
    return (double)(user + nice + system + irq + softirq + steal) / (double)ticks_per_second;
}

static double rusage_seconds(int who)
{
    struct rusage usage;
    if (getrusage(who, &usage) != 0)
        return 0.0;
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6 +
           (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec * 1e-6;
}

void bench_cpu_snapshot_take(bench_cpu_snapshot *snapshot)
{
    snapshot->machine_busy_s = machine_busy_seconds();
    snapshot->own_s = rusage_seconds(RUSAGE_SELF) + rusage_seconds(RUSAGE_CHILDREN);
    snapshot->wall_s = bench_monotonic_seconds();
}

double bench_other_load(const bench_cpu_snapshot *start, const bench_cpu_snapshot *end)
{
    double wall = end->wall_s - start->wall_s;
    if (start->machine_busy_s < 0.0 || end->machine_busy_s < 0.0 || wall <= 0.0)
        return -1.0;
    double other = (end->machine_busy_s - start->machine_busy_s) - (end->own_s - start->own_s);
    return other > 0.0 ? other / wall : 0.0;
}

void bench_other_load_print(FILE *out, double other_load_cpus, const bench_machine *machine)
{
    if (other_load_cpus >= 0.0)
        fprintf(out, "# other processes kept %.2f of %ld CPUs busy on average during the run%s\n",
                other_load_cpus, machine->cpus_online,
                other_load_cpus > 0.2 ? ": timings (multi-threaded above all) suffer" : "");
}
