/*
 * The engine a plan runs on by default (ATTN_THREADS_AUTO, attn.h) and the
 * process's shared threads it runs on: the library's one piece of
 * process-wide state. Not templated.
 *
 *   attn_auto_threads()       what ATTN_THREADS_AUTO means in this process:
 *                             0 = BLAS threads, n >= 1 = attn's own engine on
 *                             n threads; decided once (ATTN_NUM_THREADS, else
 *                             the kernel set and sched_getaffinity)
 *   attn_shared_pool_acquire  the shared pool of attn_auto_threads() threads,
 *                             started on first use, for one call at a time:
 *                             NULL when another call holds it (or it cannot
 *                             be started), and the caller then runs alone
 *   attn_shared_pool_release  gives it back
 *   attn_shared_threads_host  the shared pool on a host's OpenMP threads
 *                             (attn_openmp.h), or back on attn's own
 *
 * After fork() the child forgets the parent's pool (its threads do not
 * exist there) and starts its own on first use.
 */
#ifndef ATTN_SHARED_THREADS_H
#define ATTN_SHARED_THREADS_H

#include "kernels/kernels.h"
#include "engine/pool.h"

unsigned attn_auto_threads(void);

/* The rule behind attn_auto_threads, for tests: the engine picked for the
 * kernel set `isa` on a process allowed `cpus` CPUs, when `forced` (the
 * value of ATTN_NUM_THREADS, or NULL) does not decide it. */
unsigned attn_auto_threads_rule(attn_isa isa, unsigned cpus, const char *forced);

/* The shared threads from now on: the host's OpenMP runtime (a hosted pool,
 * pool.h), or attn's own (both NULL). Waits for a call holding them. */
void attn_shared_threads_host(attn_pool_parallel_fn parallel, attn_pool_thread_num_fn thread_num);

attn_pool *attn_shared_pool_acquire(void);
void attn_shared_pool_release(attn_pool *pool);

#endif /* ATTN_SHARED_THREADS_H */
