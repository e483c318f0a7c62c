#include "machine/blas_info.h"

#include <cblas.h>
#include <limits.h>
#include <time.h>

/* OpenBLAS extensions, declared by OpenBLAS's cblas.h (here for another
 * CBLAS: BLIS, the reference); weak so that one without them still links,
 * and the calls below say "unknown" or -1 there. */
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

const char *bench_blas_config(void)
{
    return openblas_get_config ? openblas_get_config() : "unknown (not OpenBLAS)";
}

const char *bench_blas_core(void)
{
    return openblas_get_corename ? openblas_get_corename() : "unknown";
}

int bench_blas_threads(void)
{
    return openblas_get_num_threads ? openblas_get_num_threads() : -1;
}

int bench_blas_set_threads(size_t threads)
{
    if (!openblas_set_num_threads || threads > INT_MAX)
        return -1;
    openblas_set_num_threads((int)threads);
    return 0;
}

void bench_settle_blas_threads(void)
{
    const struct timespec settle = {0, 200 * 1000 * 1000}; /* 0.2 s, twice the timeout */
    nanosleep(&settle, NULL);
}
