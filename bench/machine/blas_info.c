#include "machine/blas_info.h"

#include <cblas.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* The CBLAS that attn links is the build's choice (ATTN_BLAS, passed as
 * ATTN_BENCH_BLAS_<kind> by bench/machine/CMakeLists.txt), and only its
 * extensions are asked: attn-bench also loads LAPACKE, whose libblas.so.3
 * may be another BLAS (Debian's alternative, OpenBLAS), so "which of these
 * symbols exists" would not say which BLAS computes. The extensions are
 * weak, so that a BLAS without them still links; the calls below then say
 * "unknown" or -1. */
#ifndef OPENBLAS_VERSION
char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int threads);
#endif
#pragma weak openblas_get_config
#pragma weak openblas_get_corename
#pragma weak openblas_get_num_threads
#pragma weak openblas_set_num_threads

/* BLIS (blis.h; dim_t is 64-bit in Debian's build) */
char *bli_info_get_version_str(void);
int64_t bli_thread_get_num_threads(void);
void bli_thread_set_num_threads(int64_t threads);
#pragma weak bli_info_get_version_str
#pragma weak bli_thread_get_num_threads
#pragma weak bli_thread_set_num_threads

#if defined(ATTN_BENCH_BLAS_BLIS)
#define BLAS_GET_THREADS bli_thread_get_num_threads
#define BLAS_SET_THREADS bli_thread_set_num_threads
#elif defined(ATTN_BENCH_BLAS_OpenBLAS)
#define BLAS_GET_THREADS openblas_get_num_threads
#define BLAS_SET_THREADS openblas_set_num_threads
#endif

const char *bench_blas_name(void)
{
#if defined(ATTN_BENCH_BLAS_BLIS)
    return "BLIS";
#elif defined(ATTN_BENCH_BLAS_OpenBLAS)
    return "OpenBLAS";
#else
    return "reference CBLAS";
#endif
}

const char *bench_blas_config(void)
{
#if defined(ATTN_BENCH_BLAS_BLIS)
    static char config[64];
    snprintf(config, sizeof config, "BLIS %s",
             bli_info_get_version_str ? bli_info_get_version_str() : "(version unknown)");
    return config;
#elif defined(ATTN_BENCH_BLAS_OpenBLAS)
    return openblas_get_config ? openblas_get_config() : "unknown (not OpenBLAS)";
#else
    return "the reference CBLAS (netlib)";
#endif
}

const char *bench_blas_core(void)
{
#if defined(ATTN_BENCH_BLAS_OpenBLAS)
    return openblas_get_corename ? openblas_get_corename() : "unknown";
#else
    return "unknown";
#endif
}

int bench_blas_threads(void)
{
#ifdef BLAS_GET_THREADS
    if (BLAS_GET_THREADS) {
        const int64_t n = BLAS_GET_THREADS();
        return n >= 1 && n <= INT_MAX ? (int)n : -1;
    }
#endif
    return -1;
}

int bench_blas_set_threads(size_t threads)
{
#ifdef BLAS_SET_THREADS
    if (BLAS_SET_THREADS && threads >= 1 && threads <= INT_MAX) {
        BLAS_SET_THREADS((int)threads);
        return 0;
    }
#endif
    (void)threads;
    return -1;
}

void bench_settle_blas_threads(void)
{
    const struct timespec settle = {0, 200 * 1000 * 1000}; /* 0.2 s, twice the timeout */
    nanosleep(&settle, NULL);
}
