/*
 * A plan's own threads: the calling thread plus `threads - 1` workers that
 * the pool starts once and keeps until it is destroyed. attn_pool_run hands
 * out the items of one phase of work, in increasing order, to whichever
 * thread is free, and returns when every item is done. Idle workers spin
 * briefly, then sleep on a condition variable: between phases they never
 * compete with other threads for long (a BLAS library's, another plan's).
 * Not templated; a pool is a plan's own (attn_plan_set_threads n >= 1) or the
 * process's shared one (shared_threads.c, ATTN_THREADS_AUTO; it may be hosted
 * by the program's OpenMP threads, below), and is run by
 * one call at a time: a plan's by its one caller, the shared one by the call
 * that holds it.
 */
#ifndef ATTN_POOL_H
#define ATTN_POOL_H

#include <stddef.h>

#include <attn/attn.h>

typedef struct attn_pool attn_pool;

/* task(context, item, worker): worker is 0 (the caller) .. threads - 1, so
 * that each thread can use scratch of its own. */
typedef void (*attn_pool_task)(void *context, size_t item, unsigned worker);

/* NULL_POINTER-free: *pool is set on success; OUT_OF_MEMORY when memory or a
 * thread cannot be had (nothing is left running then). threads >= 1. */
attn_status attn_pool_create(attn_pool **pool, unsigned threads);
void attn_pool_destroy(attn_pool *pool); /* NULL is fine */

/* A pool whose phases run on a host program's OpenMP threads (attn_openmp.h)
 * instead of threads of its own: each phase is one parallel(body, data,
 * threads, 0) call (the GNU OpenMP ABI's GOMP_parallel), whose threads
 * claim the items as a pool's workers do, thread_num() naming each one's
 * scratch. A team smaller than asked for (a nested region) runs the same
 * items on fewer threads. Errors: OUT_OF_MEMORY. */
typedef void (*attn_pool_parallel_fn)(void (*body)(void *), void *data, unsigned threads,
                                      unsigned flags);
typedef int (*attn_pool_thread_num_fn)(void);
attn_status attn_pool_create_hosted(attn_pool **pool, unsigned threads,
                                    attn_pool_parallel_fn parallel,
                                    attn_pool_thread_num_fn thread_num);

/* Runs task for item = 0 .. items - 1 on the pool's threads, the caller
 * among them; pool NULL runs them all on the caller, in order. */
void attn_pool_run(attn_pool *pool, size_t items, attn_pool_task task, void *context);

#endif /* ATTN_POOL_H */
