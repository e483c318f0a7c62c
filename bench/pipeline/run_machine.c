#include "pipeline/run_machine.h"

#include <stdint.h>

#include "machine/blas_info.h"
#include "util/dtype.h"

/* 8 x the last-level cache, within 256 MiB .. 1 GiB. */
static size_t auto_bandwidth_bytes(size_t last_level_cache)
{
    const size_t minimum = (size_t)256 << 20, maximum = (size_t)1024 << 20;
    const size_t wanted = last_level_cache > maximum / 8 ? maximum : 8 * last_level_cache;
    return wanted < minimum ? minimum : wanted;
}

static int multi_threaded(const bench_run_machine_request *q)
{
    for (size_t i = 0; i < q->thread_count; ++i)
        if (q->threads[i] > 1)
            return 1;
    return 0;
}

static int measure_bandwidth(bench_run_record *r, const bench_run_machine_request *q,
                             bench_bandwidth_buffer *buffer)
{
    const size_t bytes = q->bandwidth_mib == SIZE_MAX ? auto_bandwidth_bytes(r->last_level_cache)
                                                      : q->bandwidth_mib << 20;
    if (bench_bandwidth_buffer_create(buffer, bytes) != 0) {
        fprintf(stderr, "%s: out of memory for the %zu MiB bandwidth buffer\n", q->who,
                bytes >> 20);
        return -1;
    }
    r->bandwidth_bytes = buffer->count * sizeof(uint64_t);
    if (bench_bandwidth_measure(buffer, q->threads, q->thread_count, &r->bandwidth) != 0)
        fprintf(stderr, "%s: a thread of the bandwidth measurement did not start\n", q->who);
    if (!q->keep_buffer)
        bench_bandwidth_buffer_destroy(buffer);
    return 0;
}

int bench_run_machine_measure(bench_run_record *r, const bench_run_machine_request *q,
                              bench_bandwidth_buffer *buffer)
{
    bench_machine_describe(&r->machine);
    int gemms[BENCH_DTYPE_ALL_COUNT]; /* sgemm for f32, bf16 and f16 rows; dgemm for f64 */
    size_t gemm_count = 0;
    for (size_t d = 0; d < q->dtype_count; ++d) {
        const int gemm = (int)bench_dtype_float_part((bench_dtype)q->dtypes[d]);
        int seen = 0;
        for (size_t k = 0; k < gemm_count; ++k)
            seen |= gemms[k] == gemm;
        if (!seen)
            gemms[gemm_count++] = gemm;
    }
    if (bench_ceiling_measure(&r->ceiling, gemms, gemm_count, q->threads, q->thread_count,
                              q->ceiling_n) != 0)
        fprintf(stderr, "%s: out of memory for the ceiling's GEMM\n", q->who);
    if (multi_threaded(q)) /* the ceiling's BLAS threads would take the peak's CPUs */
        bench_settle_blas_threads();
    if (bench_fma_peak_measure(&r->fma_peak, q->threads, q->thread_count) != 0)
        fprintf(stderr, "%s: a thread of the FMA peak did not start\n", q->who);
    r->last_level_cache = bench_last_level_cache_bytes();
    r->has_bandwidth = q->with_bandwidth;
    return q->with_bandwidth && q->bandwidth_mib ? measure_bandwidth(r, q, buffer) : 0;
}

static void print_bandwidth(FILE *out, const bench_run_record *r)
{
    char cache[64] = "unknown";
    if (r->last_level_cache)
        snprintf(cache, sizeof cache, "%.0f MiB", (double)r->last_level_cache / 1048576.0);
    fprintf(out,
            "# bandwidth: streaming read (sum of 64-bit words, one slice per thread) of a "
            "%.0f MiB buffer; last-level cache %s (sysfs)%s\n",
            (double)r->bandwidth_bytes / 1048576.0, cache,
            r->last_level_cache && r->bandwidth_bytes < 8 * r->last_level_cache
                ? ": the buffer is below 8 x that cache, part of it may come from the cache"
                : "");
    for (size_t i = 0; i < r->bandwidth.count; ++i) {
        const bench_bandwidth_entry *e = &r->bandwidth.entries[i];
        fprintf(out, "# bandwidth: %zu thread%s: %.2f GB/s (median of %d passes; best %.2f)\n",
                e->threads, e->threads == 1 ? "" : "s", e->gbps, BENCH_BANDWIDTH_REPEATS,
                e->best_gbps);
    }
}

void bench_run_machine_print(FILE *out, const bench_run_record *r)
{
    bench_machine_print(out, &r->machine);
    bench_ceiling_print(out, &r->ceiling, &r->machine);
    bench_fma_peak_print(out, &r->fma_peak);
    if (r->bandwidth_bytes)
        print_bandwidth(out, r);
    else if (r->has_bandwidth)
        fprintf(out, "# bandwidth: not measured (--bandwidth-mib 0)\n");
}
