/*
 * What attn-bench knows about the BLAS it (and attn) linked: OpenBLAS's
 * extensions, looked up as weak symbols so that another CBLAS still links
 * (its description then says so and threads cannot be set).
 *
 * attn-bench owns its process, so it sets the BLAS thread count before each
 * configuration (--threads); attn itself never changes it.
 */
#ifndef ATTN_BENCH_BLAS_INFO_H
#define ATTN_BENCH_BLAS_INFO_H

#include <stddef.h>

/* openblas_get_config(), or "unknown (not OpenBLAS)" */
const char *bench_blas_config(void);

/* openblas_get_corename(): the kernel set OpenBLAS chose, or "unknown" */
const char *bench_blas_core(void);

/* openblas_get_num_threads(), or -1 */
int bench_blas_threads(void);

/* openblas_set_num_threads(threads); -1 when the BLAS has no such call. */
int bench_blas_set_threads(size_t threads);

/* Sleeps until the BLAS's idle threads have stopped polling for work: the
 * threads of OpenBLAS 0.3.21 keep a CPU busy for up to 2^28 cycles
 * (THREAD_TIMEOUT, about 0.1 s) after a call. A configuration that runs on a
 * plan's own threads waits for that first, so that a BLAS configuration
 * timed just before it (or the ceiling) does not take a CPU from it. */
void bench_settle_blas_threads(void);

#endif /* ATTN_BENCH_BLAS_INFO_H */
