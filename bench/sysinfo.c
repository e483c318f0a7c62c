#include "sysinfo.h"

#include <cblas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <attn/attn.h>

#include "timing.h"

/* OpenBLAS extensions, declared by OpenBLAS's cblas.h; weak so that another
 * CBLAS without them still links (they are then reported as unknown). */
#pragma weak openblas_get_config
#pragma weak openblas_get_num_threads

void bench_print_system_header(FILE *out)
{
    fprintf(out, "# attn %s (header %s), softmax kernel %s\n", attn_version_string(),
            ATTN_VERSION_STRING, attn_simd_name());
    if (openblas_get_config && openblas_get_num_threads)
        fprintf(out, "# attn's BLAS: %s, threads %d\n", openblas_get_config(),
                openblas_get_num_threads());
    else
        fprintf(out, "# attn's BLAS: not OpenBLAS (configuration and threads unknown)\n");
    fprintf(out, "# online CPUs: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
}

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

void bench_print_load_average(FILE *out)
{
    FILE *loadavg = fopen("/proc/loadavg", "r");
    if (!loadavg)
        return;
    double one = 0.0, five = 0.0, fifteen = 0.0;
    if (fscanf(loadavg, "%lf %lf %lf", &one, &five, &fifteen) == 3)
        fprintf(out, "# load average at start: %.2f %.2f %.2f (1, 5, 15 min)\n", one, five,
                fifteen);
    fclose(loadavg);
}

void bench_print_other_load(FILE *out, const bench_cpu_snapshot *start,
                            const bench_cpu_snapshot *end)
{
    double wall = end->wall_s - start->wall_s;
    if (start->machine_busy_s < 0.0 || end->machine_busy_s < 0.0 || wall <= 0.0)
        return;
    double other = (end->machine_busy_s - start->machine_busy_s) - (end->own_s - start->own_s);
    double other_cpus = other > 0.0 ? other / wall : 0.0;
    fprintf(out, "# other processes kept %.2f of %ld CPUs busy on average during the run%s\n",
            other_cpus, sysconf(_SC_NPROCESSORS_ONLN),
            other_cpus > 0.2 ? ": timings (multi-threaded BLAS above all) are unreliable" : "");
}
