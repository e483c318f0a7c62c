/*
 * The machine's memory read bandwidth, the ceiling of a decode step (which
 * reads its whole KV cache once and does a few FLOPs per element): a
 * streaming read of a large buffer -- the sum of its 64-bit words, a loop the
 * compiler vectorizes (AVX-512, AVX2 or the baseline, whichever the CPU
 * has) -- split over N threads (pthreads, one contiguous slice each),
 * bytes / wall time of the slowest thread; one untimed pass, then the
 * median of BENCH_BANDWIDTH_REPEATS passes.
 *
 * The same read, untimed, serves as the cold-cache state: before a call it
 * evicts what earlier calls left in the caches, when the buffer is larger
 * than the last-level cache.
 */
#ifndef ATTN_BENCH_BANDWIDTH_H
#define ATTN_BENCH_BANDWIDTH_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_BANDWIDTH_REPEATS 5
#define BENCH_BANDWIDTH_MAX 64

typedef struct bench_bandwidth_buffer {
    uint64_t *words;
    size_t count; /* words */
} bench_bandwidth_buffer;

typedef struct bench_bandwidth_entry {
    size_t threads;
    double bytes;
    double gbps;      /* bytes / median pass time / 1e9 */
    double best_gbps; /* of the fastest pass */
    double median_s;
} bench_bandwidth_entry;

typedef struct bench_bandwidth {
    bench_bandwidth_entry entries[BENCH_BANDWIDTH_MAX];
    size_t count;
} bench_bandwidth;

/* The size of the largest (last-level) cache of CPU 0 from sysfs, bytes;
 * 0 when unknown. */
size_t bench_last_level_cache_bytes(void);

/* A buffer of `bytes` (rounded down to whole words), every page written.
 * Returns 0, or -1 when memory runs out. */
int bench_bandwidth_buffer_create(bench_bandwidth_buffer *buffer, size_t bytes);
void bench_bandwidth_buffer_destroy(bench_bandwidth_buffer *buffer);

/* One streaming read of the whole buffer on `threads` threads (0: 1). */
void bench_bandwidth_read(const bench_bandwidth_buffer *buffer, size_t threads);

/* Measures the read bandwidth at each thread count. Returns 0, or -1 when a
 * thread cannot be started. */
int bench_bandwidth_measure(const bench_bandwidth_buffer *buffer, const size_t *threads,
                            size_t thread_count, bench_bandwidth *bandwidth);

/* The GB/s measured at a thread count; 0 when not measured. */
double bench_bandwidth_gbps(const bench_bandwidth *bandwidth, size_t threads);

#endif /* ATTN_BENCH_BANDWIDTH_H */
