/*
 * The plan's thread pool (pool.h). One phase at a time: the caller publishes
 * the task and the phase word (generation and item count) under the lock,
 * wakes the workers, and claims items itself like any worker; an item is
 * claimed from the counter `next`, tagged with the generation in its upper
 * half, so that a worker that comes late (still asleep while the phase ran)
 * finds another generation there and runs nothing of a phase that is not
 * its own. The caller returns once `done` counts every item: it never waits
 * for a worker to wake up (through the kernel that can take a millisecond on
 * a VM whose other CPU sleeps), only for items that are running, and no
 * worker touches a phase's context after its last item is counted.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "engine/pool.h"

#include <pthread.h>
#include <sched.h>
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
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
}

typedef struct worker_start {
    struct attn_pool *pool;
    unsigned index;
} worker_start;

struct attn_pool {
    unsigned threads;
    attn_pool_parallel_fn parallel;     /* a hosted pool: its phases, else NULL */
    attn_pool_thread_num_fn thread_num; /* a hosted pool: the thread's index */
    pthread_t *workers;    /* threads - 1 */
    worker_start *starts;  /* threads - 1: what each worker is started with (a
                            * worker never allocates or frees, so it never
                            * sets up a heap arena of its own) */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a new phase, or stop */
    attn_pool_task task;
    void *context;
    atomic_uint_least64_t phase; /* generation << 32 | items of the current phase */
    atomic_uint_least64_t next;  /* generation << 32 | the next item to claim */
    atomic_size_t done;          /* items of the current phase finished */
    atomic_int stop;
};

#define PHASE_GENERATION(word) ((uint32_t)((word) >> 32))
#define PHASE_COUNT(word) ((uint32_t)(word))

/* Runs the items of the phase `phase` (a phase word) that the counter still
 * hands out for it; stops at the first item of another generation or past
 * the count. */
static void claim_items(attn_pool *pool, uint64_t phase, unsigned worker)
{
    uint64_t ticket = atomic_load_explicit(&pool->next, memory_order_acquire);
    for (;;) {
        /* a compare-exchange, not an add: a late worker must not use up a
         * ticket of the next phase, which would then never run */
        if (PHASE_GENERATION(ticket) != PHASE_GENERATION(phase) ||
            PHASE_COUNT(ticket) >= PHASE_COUNT(phase))
            return;
        if (!atomic_compare_exchange_weak_explicit(&pool->next, &ticket, ticket + 1,
                                                   memory_order_acq_rel, memory_order_acquire))
            continue; /* ticket now holds the counter's value */
        pool->task(pool->context, PHASE_COUNT(ticket), worker);
        atomic_fetch_add_explicit(&pool->done, 1, memory_order_release);
        ticket = atomic_load_explicit(&pool->next, memory_order_acquire);
    }
}

typedef struct phase_watch {
    attn_pool *pool;
    uint32_t seen;
} phase_watch;

static int phase_changed(const void *context)
{
    const phase_watch *w = context;
    return PHASE_GENERATION(atomic_load_explicit(&w->pool->phase, memory_order_acquire)) !=
               w->seen ||
           atomic_load(&w->pool->stop);
}

typedef struct items_watch {
    attn_pool *pool;
    size_t items;
} items_watch;

static int all_done(const void *context)
{
    const items_watch *w = context;
    return atomic_load_explicit(&w->pool->done, memory_order_acquire) == w->items;
}

/* Waits for a generation other than `seen` (or stop); returns the phase word. */
static uint64_t wait_for_phase(attn_pool *pool, uint32_t seen)
{
    const phase_watch watch = {pool, seen};
    if (!spin_until(phase_changed, &watch)) {
        pthread_mutex_lock(&pool->lock);
        while (PHASE_GENERATION(atomic_load(&pool->phase)) == seen && !atomic_load(&pool->stop))
            pthread_cond_wait(&pool->wake, &pool->lock);
        pthread_mutex_unlock(&pool->lock);
    }
    return atomic_load_explicit(&pool->phase, memory_order_acquire);
}

static void *worker_main(void *argument)
{
    const worker_start *start = argument;
    attn_pool *pool = start->pool;
    const unsigned index = start->index;
    uint32_t seen = 0;
    for (;;) {
        const uint64_t phase = wait_for_phase(pool, seen);
        if (atomic_load(&pool->stop))
            return NULL;
        seen = PHASE_GENERATION(phase);
        claim_items(pool, phase, index);
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
    if (pool->parallel != NULL) {
        free(pool);
        return;
    }
    stop_workers(pool, pool->threads - 1);
    free_pool(pool);
}

attn_status attn_pool_create_hosted(attn_pool **out, unsigned threads,
                                    attn_pool_parallel_fn parallel,
                                    attn_pool_thread_num_fn thread_num)
{
    attn_pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return ATTN_ERR_OUT_OF_MEMORY;
    pool->threads = threads;
    pool->parallel = parallel;
    pool->thread_num = thread_num;
    *out = pool;
    return ATTN_OK;
}

typedef struct hosted_phase {
    const attn_pool *pool;
    size_t items;
    attn_pool_task task;
    void *context;
    atomic_size_t next;
} hosted_phase;

/* The body every thread of the host's team runs: items claimed one by one.
 * An index the scratch does not cover (a runtime that numbers its threads
 * otherwise) claims nothing; the caller, thread 0, is always in the team. */
static void hosted_body(void *data)
{
    hosted_phase *phase = data;
    const int worker = phase->pool->thread_num();
    if (worker < 0 || (unsigned)worker >= phase->pool->threads)
        return;
    for (;;) {
        const size_t item = atomic_fetch_add_explicit(&phase->next, 1, memory_order_relaxed);
        if (item >= phase->items)
            return;
        phase->task(phase->context, item, (unsigned)worker);
    }
}

void attn_pool_run(attn_pool *pool, size_t items, attn_pool_task task, void *context)
{
    if (pool == NULL || pool->threads == 1 || items <= 1 || items > UINT32_MAX) {
        for (size_t item = 0; item < items; item++)
            task(context, item, 0);
        return;
    }
    if (pool->parallel != NULL) {
        hosted_phase phase = {pool, items, task, context, 0};
        const unsigned team = items < pool->threads ? (unsigned)items : pool->threads;
        pool->parallel(hosted_body, &phase, team, 0);
        /* the team is done; what a runtime without our indices left runs here */
        for (size_t item = atomic_load(&phase.next); item < items; item++)
            task(context, item, 0);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    const uint32_t generation = PHASE_GENERATION(atomic_load(&pool->phase)) + 1;
    const uint64_t phase = (uint64_t)generation << 32 | (uint64_t)items;
    pool->task = task;
    pool->context = context;
    atomic_store(&pool->done, 0);
    atomic_store_explicit(&pool->next, (uint64_t)generation << 32, memory_order_release);
    atomic_store_explicit(&pool->phase, phase, memory_order_release);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);

    claim_items(pool, phase, 0);

    /* the items still running are on workers that are awake: wait by polling */
    const items_watch watch = {pool, items};
    while (!spin_until(all_done, &watch))
        sched_yield();
}
