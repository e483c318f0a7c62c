/*
 * The machine's arithmetic peak, measured at the start of every run: a
 * register-only micro-kernel that does nothing but fused multiply-adds on
 * BENCH_FMA_CHAINS independent accumulators (enough to cover an FMA unit's
 * latency times its throughput: 4-5 cycles x 2 units on current x86 cores),
 * never touching memory, on each thread of the row (pthreads, one kernel
 * each, released together), compiled for every instruction set attn-bench
 * knows and run on the best one the CPU has at run time:
 *
 *   avx512   _mm512_fmadd_ps / _pd      16 f32 or 8 f64 lanes
 *   avx2     _mm256_fmadd_ps / _pd      (AVX2 + FMA) 8 or 4 lanes
 *   neon     vfmaq_f32 / vfmaq_f64      4 or 2 lanes (AArch64)
 *   scalar   a * b + c                  1 lane (the fallback)
 *
 * and, where the CPU has AVX512_BF16, the bf16 dot-product peak:
 * _mm512_dpbf16_ps (vdpbf16ps: 32 bf16 pairs summed into 16 f32 lanes,
 * 64 FLOPs an instruction); where it has AMX-BF16 (and Linux grants the
 * tile state), the tile peak: four accumulator tiles, each step
 * _tile_dpbf16ps on every one (16 x 16 f32 sums of 32 bf16 products,
 * 16384 FLOPs an instruction), on tiles loaded once; its kernel runs
 * iterations / BENCH_FMA_AMX_DIVISOR steps (one is 1024 vdpbf16ps' work). FLOP count: 2 per lane and FMA (a dot-product
 * instruction: 2 per bf16 pair). Rate = count / wall time of the slowest
 * thread; the best of BENCH_FMA_PASSES passes (a peak: noise only slows it).
 *
 * Where GEMM kernels of the BLAS are not the machine's best (OpenBLAS's
 * Haswell kernels on a Zen 5, its Prescott ones on an Emerald Rapids Xeon)
 * the GEMM ceiling (ceiling.h) is a fraction of this, and shares above 100%
 * of it say little: the table's share column is against this peak.
 */
#ifndef ATTN_BENCH_FMA_PEAK_H
#define ATTN_BENCH_FMA_PEAK_H

#include <stddef.h>
#include <stdio.h>

#define BENCH_FMA_CHAINS 12
#define BENCH_FMA_PASSES 5
#define BENCH_FMA_PEAK_MAX 64

typedef enum bench_fma_isa {
    BENCH_FMA_SCALAR = 0,
    BENCH_FMA_NEON = 1,
    BENCH_FMA_AVX2 = 2,
    BENCH_FMA_AVX512 = 3
} bench_fma_isa;

typedef enum bench_fma_kind {
    BENCH_FMA_F32 = 0,
    BENCH_FMA_F64 = 1,
    BENCH_FMA_BF16_DOT = 2, /* AVX512_BF16 only */
    BENCH_FMA_AMX_BF16 = 3  /* AMX-BF16 tiles only */
} bench_fma_kind;
#define BENCH_FMA_KIND_COUNT 4
#define BENCH_FMA_AMX_DIVISOR 64

extern const char *const bench_fma_isa_names[4];
extern const char *const bench_fma_kind_names[BENCH_FMA_KIND_COUNT];

/* The best instruction set this CPU runs (its FMA kernels); and whether it
 * has the bf16 dot product (AVX512_BF16 with AVX-512 usable). */
bench_fma_isa bench_fma_best_isa(void);
int bench_fma_has_bf16_dot(void);
/* AMX-BF16 and AMX-TILE with AVX-512, the OS managing the tile state and
 * granting it to this process (arch_prctl, asked once). */
int bench_fma_has_amx_bf16(void);

/* f32/f64 lanes of one FMA of an instruction set (bf16 dot: the f32 lanes). */
size_t bench_fma_lanes(bench_fma_isa isa, bench_fma_kind kind);

/* One kernel run on the calling thread: `iterations` rounds of an FMA on
 * each of the BENCH_FMA_CHAINS accumulators, acc = acc * m + a (bf16 dot:
 * acc += dot(pairs)). Returns the FLOPs it did (0: the kind or instruction
 * set is not compiled in or not on this CPU); *lane0 gets lane 0 of the
 * first accumulator, whose value the recurrence fixes (acc0 = 2, m = 1 -
 * 2^-20, a = 2^-20 for f32 and f64, so acc_n = 1 + m^n: the tests recompute it). */
double bench_fma_kernel(bench_fma_isa isa, bench_fma_kind kind, size_t iterations,
                        double *lane0);

typedef struct bench_fma_peak_entry {
    bench_fma_kind kind;
    size_t threads;
    double gflops;    /* of the fastest pass */
    double median_gflops;
} bench_fma_peak_entry;

typedef struct bench_fma_peak {
    bench_fma_isa isa;
    int bf16_dot; /* the CPU has it: measured */
    int amx_bf16; /* likewise */
    bench_fma_peak_entry entries[BENCH_FMA_PEAK_MAX];
    size_t count;
} bench_fma_peak;

/* After a run: the entries of `header` (the run's, measured at its start)
 * measured again into *again, the same kinds and threads in the same
 * order. A busy moment during the header's measurement lowers its peak and
 * raises every share column against it (126% of "the peak" was seen); the
 * second measurement shows it. 0, or -1 when one failed (its entry 0). */
int bench_fma_peak_remeasure(const bench_fma_peak *header, bench_fma_peak *again);

/* Re-measured entries above the header's by more than this factor are
 * reported: their rows' shares overstate by up to the ratio. */
#define BENCH_FMA_RECHECK_SLACK 1.10

/* The footer line of the second measurement ("# FMA peak after the run:
 * ..."), and for each entry that came out above the header's by more than
 * BENCH_FMA_RECHECK_SLACK a line saying by how much the share columns of
 * its rows may overstate. Returns the count of such entries. */
size_t bench_fma_peak_print_recheck(FILE *out, const bench_fma_peak *header,
                                    const bench_fma_peak *again);

/* One measurement: `passes` passes of `iterations` per thread on `threads`
 * threads; best and median GFLOP/s. Returns 0, or -1 (not on this CPU, or a
 * thread could not be started: that pass ran on fewer). */
int bench_fma_peak_rate(bench_fma_isa isa, bench_fma_kind kind, size_t threads,
                        size_t iterations, size_t passes, double *best_gflops,
                        double *median_gflops);

/* Measures f32, f64 (and bf16 dot where the CPU has it) at each thread
 * count, on the best instruction set. Returns 0, or -1 on a failure. */
int bench_fma_peak_measure(bench_fma_peak *peak, const size_t *threads, size_t thread_count);

/* The peak GFLOP/s of a kind at a thread count; 0 when not measured. */
double bench_fma_peak_gflops(const bench_fma_peak *peak, bench_fma_kind kind, size_t threads);

/* The --help paragraph "FMA PEAK. ..." (after a blank line): what the
 * peak is and that the table's peak% is against it, blas% beside. */
void bench_fma_peak_print_help(FILE *out);

/* The header's "# FMA peak: ..." lines. */
void bench_fma_peak_print(FILE *out, const bench_fma_peak *peak);

/* The JSON member "fma_peak": {...}, followed by ",\n". */
void bench_fma_peak_write_json(FILE *out, const bench_fma_peak *peak);

#endif /* ATTN_BENCH_FMA_PEAK_H */
