/*
 * What attn-bench knows about the BLAS it (and attn) linked: OpenBLAS's
 * extensions and BLIS's thread control, looked up as weak symbols so that
 * any CBLAS links (the reference CBLAS has neither: its description says
 * so and threads cannot be set).
 *
 * attn-bench owns its process, so it sets the BLAS thread count before each
 * configuration (--threads); attn itself never changes it.
 */
#ifndef ATTN_BENCH_BLAS_INFO_H
#define ATTN_BENCH_BLAS_INFO_H

#include <stddef.h>

/* "OpenBLAS", "BLIS" or "reference CBLAS": the CBLAS attn links (ATTN_BLAS) */
const char *bench_blas_name(void);

/* openblas_get_config(), BLIS's version, or "the reference CBLAS (netlib)":
 * of the CBLAS attn links (ATTN_BLAS) */
const char *bench_blas_config(void);

/* openblas_get_corename(): the kernel set OpenBLAS chose; "unknown" for
 * the others */
const char *bench_blas_core(void);

/* openblas_get_num_threads() or bli_thread_get_num_threads(), or -1 */
int bench_blas_threads(void);

/* openblas_set_num_threads(threads) or bli_thread_set_num_threads(threads);
 * -1 when the BLAS has no such call (or threads is 0 or above INT_MAX). */
int bench_blas_set_threads(size_t threads);

/* Sleeps until the BLAS's idle threads have stopped polling for work: the
 * threads of OpenBLAS 0.3.21 keep a CPU busy for up to 2^28 cycles
 * (THREAD_TIMEOUT, about 0.1 s) after a call. A configuration that runs on a
 * plan's own threads waits for that first, so that a BLAS configuration
 * timed just before it (or the ceiling) does not take a CPU from it. */
void bench_settle_blas_threads(void);

#endif /* ATTN_BENCH_BLAS_INFO_H */
