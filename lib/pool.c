/*
 * The plan's thread pool (pool.h). One phase at a time: the caller publishes
 * the task under the lock and bumps `generation`; every thread, the caller
 * included, claims items from the atomic counter `next`; each worker then
 * counts itself into `finished`, and the caller returns once all have, so no
 * worker touches a phase's context after attn_pool_run returns.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* How long an idle thread polls before it sleeps: longer than the gaps
 * between the phases of one call (so that a phase starts without a wake-up
 * through the kernel, which costs tens of microseconds on a VM and was
 * measured to take a quarter off two threads' speed-up on a backward of
 * 1.2 ms), short enough that a call's workers are asleep soon after it. */
#define ATTN_POOL_SPIN_NS 200000

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Polls done(context) for up to ATTN_POOL_SPIN_NS; whether it came true. */
static int spin_until(int (*done)(const void *), const void *context)
{
    const uint64_t start = now_ns();
    for (unsigned polls = 1;; polls++) {
        if (done(context))
            return 1;
        if (polls % 64 == 0 && now_ns() - start > ATTN_POOL_SPIN_NS)
            return 0;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

typedef struct worker_start {
    struct attn_pool *pool;
    unsigned index;
} worker_start;

struct attn_pool {
    unsigned threads;
    pthread_t *workers;    /* threads - 1 */
    worker_start *starts;  /* threads - 1: what each worker is started with (a
                            * worker never allocates or frees, so it never
                            * sets up a heap arena of its own) */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a new phase, or stop */
    pthread_cond_t done; /* every worker has finished the phase */
    attn_pool_task task;
    void *context;
    size_t items;
    atomic_size_t next;
    atomic_uint generation;
    atomic_uint finished;
    atomic_int stop;
};

static void claim_items(attn_pool *pool, unsigned worker)
{
    for (size_t item; (item = atomic_fetch_add(&pool->next, 1)) < pool->items;)
        pool->task(pool->context, item, worker);
}

typedef struct phase_watch {
    attn_pool *pool;
    unsigned seen;
} phase_watch;

static int phase_changed(const void *context)
{
    const phase_watch *w = context;
    return atomic_load_explicit(&w->pool->generation, memory_order_acquire) != w->seen ||
           atomic_load(&w->pool->stop);
}

static int all_finished(const void *context)
{
    const attn_pool *pool = context;
    return atomic_load_explicit(&pool->finished, memory_order_acquire) == pool->threads - 1;
}

/* Waits for a generation other than `seen` (or stop); returns it. */
static unsigned wait_for_phase(attn_pool *pool, unsigned seen)
{
    const phase_watch watch = {pool, seen};
    if (spin_until(phase_changed, &watch))
        return atomic_load_explicit(&pool->generation, memory_order_acquire);
    pthread_mutex_lock(&pool->lock);
    unsigned now;
    while ((now = atomic_load(&pool->generation)) == seen && !atomic_load(&pool->stop))
        pthread_cond_wait(&pool->wake, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
    return now;
}

static void *worker_main(void *argument)
{
    const worker_start *start = argument;
    attn_pool *pool = start->pool;
    const unsigned index = start->index;
    unsigned seen = 0;
    for (;;) {
        seen = wait_for_phase(pool, seen);
        if (atomic_load(&pool->stop))
            return NULL;
        claim_items(pool, index);
        pthread_mutex_lock(&pool->lock);
        if (atomic_fetch_add(&pool->finished, 1) + 1 == pool->threads - 1)
            pthread_cond_signal(&pool->done);
        pthread_mutex_unlock(&pool->lock);
    }
}

static void stop_workers(attn_pool *pool, unsigned started)
{
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->stop, 1);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned w = 0; w < started; w++)
        pthread_join(pool->workers[w], NULL);
}

static void free_pool(attn_pool *pool)
{
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    free(pool->starts);
    free(pool->workers);
    free(pool);
}

attn_status attn_pool_create(attn_pool **out, unsigned threads)
{
    attn_pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return ATTN_ERR_OUT_OF_MEMORY;
    pool->threads = threads;
    pool->workers = calloc(threads > 1 ? threads - 1 : 1, sizeof *pool->workers);
    pool->starts = calloc(threads > 1 ? threads - 1 : 1, sizeof *pool->starts);
    if (pool->workers == NULL || pool->starts == NULL) {
        free(pool->starts);
        free(pool->workers);
        free(pool);
        return ATTN_ERR_OUT_OF_MEMORY;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    for (unsigned w = 0; w + 1 < threads; w++) {
        pool->starts[w] = (worker_start){pool, w + 1};
        if (pthread_create(&pool->workers[w], NULL, worker_main, &pool->starts[w]) == 0)
            continue;
        stop_workers(pool, w);
        free_pool(pool);
        return ATTN_ERR_OUT_OF_MEMORY;
    }
    *out = pool;
    return ATTN_OK;
}

void attn_pool_destroy(attn_pool *pool)
{
    if (pool == NULL)
        return;
    stop_workers(pool, pool->threads - 1);
    free_pool(pool);
}

void attn_pool_run(attn_pool *pool, size_t items, attn_pool_task task, void *context)
{
    if (pool == NULL || pool->threads == 1 || items <= 1) {
        for (size_t item = 0; item < items; item++)
            task(context, item, 0);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    pool->task = task;
    pool->context = context;
    pool->items = items;
    atomic_store(&pool->next, 0);
    atomic_store(&pool->finished, 0);
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);

    claim_items(pool, 0);

    const unsigned workers = pool->threads - 1;
    if (spin_until(all_finished, pool))
        return;
    pthread_mutex_lock(&pool->lock);
    while (atomic_load(&pool->finished) != workers)
        pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}
