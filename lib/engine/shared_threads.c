/*
 * The default engine and the process's shared threads (shared_threads.h).
 *
 * Why attn's own engine by default wherever a SIMD kernel set runs: on the
 * CPUs measured (bench/results/<cpu>/engine-choice.md: an Intel Xeon of the
 * Sapphire Rapids class, with the AMD and AVX2-only cases emulated; an AMD
 * EPYC (Zen 5), bench/results/amd-epyc-zen5/: on OpenBLAS's Haswell kernels,
 * its own choice there, and on its SkylakeX ones through
 * OPENBLAS_CORETYPE, where its sgemm runs 1.9x faster), plans on attn's own
 * threads were faster than the same plans on as many BLAS threads at every
 * shape of the default sweep and the targets, with OpenBLAS on its AVX-512
 * (SkylakeX/Cooperlake) kernels and on its AVX2 (Haswell) ones: the own
 * engine splits attention into items that keep every thread busy, where a
 * BLAS call per (batch, head) threads products too small to share. With the
 * portable scalar set, attn's kernel is several times slower than any
 * tuned BLAS, so BLAS threads are the default there. The NEON set (AArch64)
 * follows the SIMD rule by analogy: no ARM machine has been measured.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */

#include "engine/shared_threads.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <attn/attn.h>

/* The CPUs this process may run on. */
static unsigned affinity_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (unsigned)online : 1u;
}

/* A decimal count in [0, ATTN_MAX_THREADS], or -1. */
static long parse_count(const char *text)
{
    if (text == NULL || *text == '\0')
        return -1;
    char *end;
    const long value = strtol(text, &end, 10);
    return *end == '\0' && value >= 0 && value <= (long)ATTN_MAX_THREADS ? value : -1;
}

unsigned attn_auto_threads_rule(attn_isa isa, unsigned cpus, const char *forced)
{
    const long count = parse_count(forced);
    if (count >= 0)
        return (unsigned)count;
    if (isa == ATTN_ISA_SCALAR)
        return 0;
    if (cpus < 1)
        cpus = 1;
    return cpus > ATTN_MAX_THREADS ? ATTN_MAX_THREADS : cpus;
}

static unsigned auto_threads;
static pthread_once_t auto_once = PTHREAD_ONCE_INIT;

/* The shared pool; `holder` is held by the call that uses it, and by
 * attn_shared_threads_host while it changes the host. */
static attn_pool *shared_pool;
static pthread_mutex_t holder = PTHREAD_MUTEX_INITIALIZER;
static attn_pool_parallel_fn host_parallel;
static attn_pool_thread_num_fn host_thread_num;

static void forget_in_child(void)
{
    shared_pool = NULL; /* its workers were not copied by fork() */
    pthread_mutex_init(&holder, NULL);
}

static void decide_auto_threads(void)
{
    auto_threads = attn_auto_threads_rule(attn_isa_active(), affinity_cpus(),
                                          getenv("ATTN_NUM_THREADS"));
    pthread_atfork(NULL, NULL, forget_in_child);
}

unsigned attn_auto_threads(void)
{
    pthread_once(&auto_once, decide_auto_threads);
    return auto_threads;
}

attn_pool *attn_shared_pool_acquire(void)
{
    const unsigned threads = attn_auto_threads();
    if (threads < 2 || pthread_mutex_trylock(&holder) != 0)
        return NULL;
    if (shared_pool == NULL &&
        (host_parallel != NULL
             ? attn_pool_create_hosted(&shared_pool, threads, host_parallel, host_thread_num)
             : attn_pool_create(&shared_pool, threads)) != ATTN_OK) {
        shared_pool = NULL;
        pthread_mutex_unlock(&holder);
        return NULL;
    }
    return shared_pool;
}

void attn_shared_threads_host(attn_pool_parallel_fn parallel, attn_pool_thread_num_fn thread_num)
{
    pthread_mutex_lock(&holder);
    attn_pool_destroy(shared_pool); /* the next call makes the new one */
    shared_pool = NULL;
    host_parallel = parallel;
    host_thread_num = thread_num;
    pthread_mutex_unlock(&holder);
}

void attn_shared_pool_release(attn_pool *pool)
{
    if (pool != NULL)
        pthread_mutex_unlock(&holder);
}

/* When the library is unloaded (or the process exits): the workers are
 * stopped and joined, unless a call still holds them. */
__attribute__((destructor)) static void stop_shared_pool(void)
{
    if (shared_pool == NULL || pthread_mutex_trylock(&holder) != 0)
        return;
    attn_pool_destroy(shared_pool);
    shared_pool = NULL;
    pthread_mutex_unlock(&holder);
}
