#include "machine/bandwidth.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/timing.h"

/* The sum loop in several instruction sets, picked at load time from the
 * CPU, so the read is not limited by the baseline's 128-bit loads. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define BENCH_SUM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef BENCH_SUM_CLONES
#define BENCH_SUM_CLONES
#endif

BENCH_SUM_CLONES
static uint64_t sum_words(const uint64_t *words, size_t count)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < count; ++i)
        sum += words[i];
    return sum;
}

typedef struct read_slice {
    const uint64_t *words;
    size_t count;
    uint64_t sum;
} read_slice;

static void *read_thread(void *context)
{
    read_slice *slice = context;
    slice->sum = sum_words(slice->words, slice->count);
    return NULL;
}

static volatile uint64_t sink; /* keeps the sums alive */

/* One pass on `threads` threads (the calling thread one of them); -1 when a
 * thread cannot be started (the pass then runs on fewer). */
static int read_pass(const bench_bandwidth_buffer *buffer, size_t threads)
{
    enum { MAX_THREADS = 256 };
    if (threads == 0)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    read_slice slices[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    const size_t per = buffer->count / threads;
    int result = 0;
    for (size_t i = 0; i < threads; ++i) {
        slices[i].words = buffer->words + i * per;
        slices[i].count = i + 1 == threads ? buffer->count - i * per : per;
        slices[i].sum = 0;
    }
    for (size_t i = 1; i < threads; ++i) {
        started[i] = pthread_create(&ids[i], NULL, read_thread, &slices[i]) == 0;
        if (!started[i]) {
            result = -1;
            read_thread(&slices[i]);
        }
    }
    read_thread(&slices[0]);
    uint64_t sum = slices[0].sum;
    for (size_t i = 1; i < threads; ++i) {
        if (started[i])
            pthread_join(ids[i], NULL);
        sum += slices[i].sum;
    }
    sink = sum;
    return result;
}

size_t bench_last_level_cache_bytes(void)
{
    size_t best = 0;
    int best_level = 0;
    for (int index = 0; index < 16; ++index) {
        char path[128], text[64];
        int level = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
        FILE *file = fopen(path, "r");
        if (!file)
            continue;
        int ok = fscanf(file, "%d", &level) == 1;
        fclose(file);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        file = fopen(path, "r");
        if (!file)
            continue;
        ok = ok && fscanf(file, "%63s", text) == 1;
        fclose(file);
        if (!ok)
            continue;
        char *end = NULL;
        unsigned long long size = strtoull(text, &end, 10);
        if (end && (*end == 'K' || *end == 'k'))
            size <<= 10;
        else if (end && (*end == 'M' || *end == 'm'))
            size <<= 20;
        if (level > best_level || (level == best_level && size > best)) {
            best_level = level;
            best = (size_t)size;
        }
    }
    return best;
}

int bench_bandwidth_buffer_create(bench_bandwidth_buffer *buffer, size_t bytes)
{
    buffer->count = bytes / sizeof(uint64_t);
    buffer->words = malloc(buffer->count ? buffer->count * sizeof(uint64_t) : 1);
    if (!buffer->words) {
        buffer->count = 0;
        return -1;
    }
    for (size_t i = 0; i < buffer->count; ++i)
        buffer->words[i] = i;
    return 0;
}

void bench_bandwidth_buffer_destroy(bench_bandwidth_buffer *buffer)
{
    free(buffer->words);
    buffer->words = NULL;
    buffer->count = 0;
}

void bench_bandwidth_read(const bench_bandwidth_buffer *buffer, size_t threads)
{
    if (buffer->words && buffer->count)
        read_pass(buffer, threads);
}

int bench_bandwidth_measure(const bench_bandwidth_buffer *buffer, const size_t *threads,
                            size_t thread_count, bench_bandwidth *bandwidth)
{
    bandwidth->count = 0;
    int result = 0;
    for (size_t t = 0; t < thread_count && bandwidth->count < BENCH_BANDWIDTH_MAX; ++t) {
        double samples[BENCH_BANDWIDTH_REPEATS];
        result |= read_pass(buffer, threads[t]); /* untimed */
        for (size_t r = 0; r < BENCH_BANDWIDTH_REPEATS; ++r) {
            const double start = bench_monotonic_seconds();
            result |= read_pass(buffer, threads[t]);
            samples[r] = bench_monotonic_seconds() - start;
        }
        double best = samples[0];
        for (size_t r = 1; r < BENCH_BANDWIDTH_REPEATS; ++r)
            best = samples[r] < best ? samples[r] : best;
        const double median = bench_median(samples, BENCH_BANDWIDTH_REPEATS);
        const double bytes = (double)buffer->count * (double)sizeof(uint64_t);
        bench_bandwidth_entry *e = &bandwidth->entries[bandwidth->count++];
        e->threads = threads[t];
        e->bytes = bytes;
        e->median_s = median;
        e->gbps = median > 0.0 ? bytes / median * 1e-9 : 0.0;
        e->best_gbps = best > 0.0 ? bytes / best * 1e-9 : 0.0;
    }
    return result;
}

double bench_bandwidth_gbps(const bench_bandwidth *bandwidth, size_t threads)
{
    for (size_t i = 0; i < bandwidth->count; ++i)
        if (bandwidth->entries[i].threads == threads)
            return bandwidth->entries[i].gbps;
    return 0.0;
}
