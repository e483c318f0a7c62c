/*
 * attn_openmp — attn's default engine on a host program's OpenMP threads
 * (libattn; include <attn/attn_openmp.h>, which includes attn.h).
 *
 * A program whose own work runs on an OpenMP runtime (PyTorch's CPU
 * operators on libgomp, a C program built with -fopenmp) keeps that
 * runtime's threads polling for a few milliseconds after each parallel
 * region. A call of attn on its shared threads (ATTN_THREADS_AUTO, attn.h)
 * made in that time shares the cores with them: measured in a transformers
 * model on 2 CPUs, an attention prefill right after a PyTorch matrix product
 * took 1.16x its time alone. After attn_use_openmp_threads, the shared
 * engine runs each of its phases as one parallel region of the host's
 * runtime instead, so the host's polling threads do attn's work:
 *
 *   attn_use_openmp_threads(GOMP_parallel, omp_get_thread_num);
 *
 * parallel: the GNU OpenMP ABI's region entry point, which GCC's libgomp,
 * LLVM's libomp and Intel's libiomp5 export:
 *     parallel(body, data, threads, 0) runs body(data) on a team of at most
 *     `threads` threads, the caller among them, and returns when all are done;
 * thread_num: omp_get_thread_num of the same runtime (0 .. team size - 1,
 *     the caller 0).
 * Both NULL: back to attn's own shared threads. One NULL: NULL_POINTER.
 *
 * What changes: only where the shared engine's items run. The engine, its
 * items and thread count (attn_plan_get_threads) stay, so results are the
 * same bit for bit; a smaller team (a call made inside a parallel region of
 * the host, whose nested regions get one thread) runs the same items on
 * fewer threads. Plans on BLAS threads (attn_plan_set_threads 0) or on
 * threads of their own (n >= 1) are not affected, and nothing of the host
 * runtime is set (no thread count, no wait policy). The shared threads
 * attn may have started are stopped. Process-wide, like those threads: it
 * waits for a call that holds them to finish, and may be called from any
 * thread. The functions must stay valid while attn can call them (the
 * runtime stays loaded): unset it before unloading the runtime.
 * Errors: NULL_POINTER.
 */
#ifndef ATTN_ATTN_OPENMP_H
#define ATTN_ATTN_OPENMP_H

#include <attn/attn.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*attn_openmp_parallel_fn)(void (*body)(void *), void *data, unsigned threads,
                                        unsigned flags);
typedef int (*attn_openmp_thread_num_fn)(void);

ATTN_API attn_status attn_use_openmp_threads(attn_openmp_parallel_fn parallel,
                                             attn_openmp_thread_num_fn thread_num);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_ATTN_OPENMP_H */
