/*
 * The FMA peak's micro-kernels, one per instruction set and kind
 * (fma_peak.h); fma_peak.c picks the one the CPU runs.
 */
#ifndef ATTN_BENCH_FMA_KERNELS_H
#define ATTN_BENCH_FMA_KERNELS_H

#include <stddef.h>

#include "machine/fma_peak.h"

/* A kernel: `iterations` steps on each chain; returns the chains' sum (to be
 * kept alive), *lane0 lane 0 of the first chain. */
typedef double bench_fma_kernel_fn(size_t iterations, double *lane0);

/* The kernel of an instruction set and kind; NULL when it is not compiled
 * in on this architecture (whether the CPU runs it is the caller's question). */
bench_fma_kernel_fn *bench_fma_kernel_for(bench_fma_isa isa, bench_fma_kind kind);

/* Keeps a kernel's result alive. */
void bench_fma_keep(double value);

#endif /* ATTN_BENCH_FMA_KERNELS_H */
