#define _GNU_SOURCE /* syscall */
#include "machine/fma_peak.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "machine/fma_kernels.h"
#include "util/timing.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

const char *const bench_fma_isa_names[4] = {"scalar", "neon", "avx2+fma", "avx512"};
const char *const bench_fma_kind_names[BENCH_FMA_KIND_COUNT] = {"f32", "f64", "bf16-dot",
                                                                 "amx-bf16"};

/* Steps per thread and pass: about 20 ms at 2 FMAs a cycle and 3 GHz. */
#define BENCH_FMA_ITERATIONS ((size_t)1 << 23)

bench_fma_isa bench_fma_best_isa(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return BENCH_FMA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return BENCH_FMA_AVX2;
    return BENCH_FMA_SCALAR;
#elif defined(__aarch64__)
    return BENCH_FMA_NEON;
#else
    return BENCH_FMA_SCALAR;
#endif
}

int bench_fma_has_bf16_dot(void)
{
#if defined(ATTN_BENCH_CPU_SUPPORTS_AVX512BF16)
    return bench_fma_best_isa() == BENCH_FMA_AVX512 && __builtin_cpu_supports("avx512bf16");
#elif defined(__x86_64__) || defined(__i386__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (bench_fma_best_isa() != BENCH_FMA_AVX512 || !__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
        return 0;
    return (eax >> 5) & 1u; /* CPUID.(EAX=7, ECX=1):EAX bit 5, AVX512_BF16 */
#else
    return 0;
#endif
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__linux__)
enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
static int amx_granted;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

static void ask_amx(void)
{
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (bench_fma_best_isa() != BENCH_FMA_AVX512 || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) ||
        !(edx >> 22 & 1u) || !(edx >> 24 & 1u) || !__get_cpuid(1, &eax, &ebx, &ecx, &edx) ||
        !(ecx >> 27 & 1u))
        return;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    amx_granted = (lo >> 17 & 3u) == 3u &&
                  syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}
#endif

int bench_fma_has_amx_bf16(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && defined(__linux__)
    pthread_once(&amx_once, ask_amx);
    return amx_granted;
#else
    return 0;
#endif
}

size_t bench_fma_lanes(bench_fma_isa isa, bench_fma_kind kind)
{
    static const size_t vector_bytes[4] = {0, 16, 32, 64};
    if (isa == BENCH_FMA_SCALAR)
        return kind >= BENCH_FMA_BF16_DOT ? 0 : 1;
    return vector_bytes[isa] / (kind == BENCH_FMA_F64 ? sizeof(double) : sizeof(float));
}

/* FLOPs of one step of one chain: an FMA on each lane (2), a bf16 dot
 * product two pairs per f32 lane (4); the tile kernel: 4 tile products of
 * 16384 FLOPs per BENCH_FMA_AMX_DIVISOR steps, spread over the chains. */
static double flops_per_step(bench_fma_isa isa, bench_fma_kind kind)
{
    if (kind == BENCH_FMA_AMX_BF16)
        return 4.0 * 16384.0 / BENCH_FMA_AMX_DIVISOR / BENCH_FMA_CHAINS;
    return (double)bench_fma_lanes(isa, kind) * (kind == BENCH_FMA_BF16_DOT ? 4.0 : 2.0);
}

/* Whether this CPU runs the kernel. */
static int runs_here(bench_fma_isa isa, bench_fma_kind kind)
{
    if (!bench_fma_kernel_for(isa, kind))
        return 0;
    if (kind == BENCH_FMA_BF16_DOT)
        return bench_fma_has_bf16_dot();
    if (kind == BENCH_FMA_AMX_BF16)
        return bench_fma_has_amx_bf16();
    return isa <= bench_fma_best_isa() && (isa != BENCH_FMA_NEON || bench_fma_best_isa() == BENCH_FMA_NEON);
}

double bench_fma_kernel(bench_fma_isa isa, bench_fma_kind kind, size_t iterations,
                        double *lane0)
{
    *lane0 = 0.0;
    if (!runs_here(isa, kind))
        return 0.0;
    bench_fma_keep(bench_fma_kernel_for(isa, kind)(iterations, lane0));
    return (double)iterations * BENCH_FMA_CHAINS * flops_per_step(isa, kind);
}

typedef struct fma_thread {
    bench_fma_kernel_fn *kernel;
    size_t iterations;
    atomic_int *go; /* the threads start together when it is set */
    double start, end;
} fma_thread;

static void *fma_thread_main(void *context)
{
    fma_thread *t = context;
    double lane0;
    while (!atomic_load_explicit(t->go, memory_order_acquire))
        ;
    t->start = bench_monotonic_seconds();
    bench_fma_keep(t->kernel(t->iterations, &lane0));
    t->end = bench_monotonic_seconds();
    return NULL;
}

/* One pass on `threads` threads (the caller one of them): its wall time,
 * first start to last end, and *ran the threads that ran (fewer when one
 * could not be started). */
static double fma_pass(bench_fma_kernel_fn *kernel, size_t threads, size_t iterations,
                       size_t *ran)
{
    enum { MAX_THREADS = 256 };
    fma_thread work[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    atomic_int go = 0;
    threads = threads > MAX_THREADS ? MAX_THREADS : threads;
    for (size_t i = 0; i < threads; ++i)
        work[i] = (fma_thread){kernel, iterations, &go, 0.0, 0.0};
    size_t started = 1;
    while (started < threads &&
           pthread_create(&ids[started], NULL, fma_thread_main, &work[started]) == 0)
        started++;
    atomic_store_explicit(&go, 1, memory_order_release);
    fma_thread_main(&work[0]);
    double first = work[0].start, last = work[0].end;
    for (size_t i = 1; i < started; ++i) {
        pthread_join(ids[i], NULL);
        first = work[i].start < first ? work[i].start : first;
        last = work[i].end > last ? work[i].end : last;
    }
    *ran = started;
    return last - first;
}

int bench_fma_peak_rate(bench_fma_isa isa, bench_fma_kind kind, size_t threads,
                        size_t iterations, size_t passes, double *best_gflops,
                        double *median_gflops)
{
    *best_gflops = *median_gflops = 0.0;
    if (!runs_here(isa, kind) || passes == 0 || passes > 64)
        return -1;
    threads = threads ? threads : 1;
    bench_fma_kernel_fn *kernel = bench_fma_kernel_for(isa, kind);
    const double flops_per_thread =
        (double)iterations * BENCH_FMA_CHAINS * flops_per_step(isa, kind);
    double rates[64];
    size_t ran = 0;
    fma_pass(kernel, threads, iterations / 8 + 1, &ran); /* untimed: clocks up */
    for (size_t p = 0; p < passes; ++p) {
        const double wall = fma_pass(kernel, threads, iterations, &ran);
        if (wall <= 0.0 || ran != threads)
            return -1;
        rates[p] = flops_per_thread * (double)ran / wall * 1e-9;
        *best_gflops = rates[p] > *best_gflops ? rates[p] : *best_gflops;
    }
    *median_gflops = bench_median(rates, passes);
    return 0;
}

int bench_fma_peak_measure(bench_fma_peak *peak, const size_t *threads, size_t thread_count)
{
    memset(peak, 0, sizeof *peak);
    peak->isa = bench_fma_best_isa();
    peak->bf16_dot = bench_fma_has_bf16_dot();
    peak->amx_bf16 = bench_fma_has_amx_bf16();
    int result = 0;
    for (size_t t = 0; t < thread_count; ++t)
        for (int kind = 0; kind < BENCH_FMA_KIND_COUNT; ++kind) {
            const bench_fma_isa isa = kind >= BENCH_FMA_BF16_DOT ? BENCH_FMA_AVX512 : peak->isa;
            if ((kind == BENCH_FMA_BF16_DOT && !peak->bf16_dot) ||
                (kind == BENCH_FMA_AMX_BF16 && !peak->amx_bf16) || peak->count == BENCH_FMA_PEAK_MAX ||
                bench_fma_peak_gflops(peak, (bench_fma_kind)kind, threads[t]) > 0.0)
                continue;
            bench_fma_peak_entry *e = &peak->entries[peak->count];
            *e = (bench_fma_peak_entry){.kind = (bench_fma_kind)kind, .threads = threads[t]};
            if (bench_fma_peak_rate(isa, e->kind, e->threads, BENCH_FMA_ITERATIONS,
                                    BENCH_FMA_PASSES, &e->gflops, &e->median_gflops) != 0)
                result = -1;
            else
                peak->count++;
        }
    return result;
}

int bench_fma_peak_remeasure(const bench_fma_peak *header, bench_fma_peak *again)
{
    *again = *header;
    int result = 0;
    for (size_t i = 0; i < again->count; ++i) {
        bench_fma_peak_entry *e = &again->entries[i];
        const bench_fma_isa isa = e->kind >= BENCH_FMA_BF16_DOT ? BENCH_FMA_AVX512 : again->isa;
        if (bench_fma_peak_rate(isa, e->kind, e->threads, BENCH_FMA_ITERATIONS,
                                BENCH_FMA_PASSES, &e->gflops, &e->median_gflops) != 0)
            result = -1;
    }
    return result;
}

size_t bench_fma_peak_print_recheck(FILE *out, const bench_fma_peak *header,
                                    const bench_fma_peak *again)
{
    if (header->count == 0 || again->count != header->count)
        return 0;
    fputs("# FMA peak after the run (the header's method again):", out);
    for (size_t i = 0; i < again->count; ++i) {
        const bench_fma_peak_entry *e = &again->entries[i];
        fprintf(out, "%s %s, %zu thread%s: %.1f GFLOP/s", i ? ";" : "",
                bench_fma_kind_names[e->kind], e->threads, e->threads == 1 ? "" : "s", e->gflops);
    }
    fputc('\n', out);
    size_t above = 0;
    for (size_t i = 0; i < again->count; ++i) {
        const bench_fma_peak_entry *h = &header->entries[i], *e = &again->entries[i];
        if (!(h->gflops > 0.0) || !(e->gflops > BENCH_FMA_RECHECK_SLACK * h->gflops))
            continue;
        fprintf(out,
                "# FMA peak: %s, %zu thread%s measured %.2fx higher after the run than in the "
                "header (a busy moment then): the peak%% of its rows may overstate by as much\n",
                bench_fma_kind_names[e->kind], e->threads, e->threads == 1 ? "" : "s",
                e->gflops / h->gflops);
        above++;
    }
    return above;
}

double bench_fma_peak_gflops(const bench_fma_peak *peak, bench_fma_kind kind, size_t threads)
{
    for (size_t i = 0; i < peak->count; ++i)
        if (peak->entries[i].kind == kind && peak->entries[i].threads == threads)
            return peak->entries[i].gflops;
    return 0.0;
}

void bench_fma_peak_print_help(FILE *out)
{
    fprintf(out,
            "\n"
            "FMA PEAK. A register-only micro-kernel of %d independent FMA chains a thread\n"
            "(AVX-512, AVX2+FMA, NEON or scalar: the best the CPU runs), at each\n"
            "--threads count (every thread of the row), f32 and f64 (and vdpbf16ps\n"
            "where the CPU has AVX512_BF16, AMX-BF16 tiles where it has AMX), best of\n"
            "%d passes: the table's peak%% is against the peak of the row's dtype and\n"
            "threads (bf16 rows: the tiles' when the library runs its amx set,\n"
            "vdpbf16ps' on its avx512-bf16 set, else f32's: float products), blas%%\n"
            "against the GEMM ceiling (information: OpenBLAS may run another core's\n"
            "kernels). Measured again after the run (a footer line); where that comes\n"
            "out more than %.0f%% above the header's, a busy moment lowered the header's\n"
            "and a footer line says by how much its rows' peak%% may overstate.\n",
            BENCH_FMA_CHAINS, BENCH_FMA_PASSES, (BENCH_FMA_RECHECK_SLACK - 1.0) * 100.0);
}

void bench_fma_peak_print(FILE *out, const bench_fma_peak *peak)
{
    fprintf(out,
            "# FMA peak: register-only %s kernel, %d independent FMA chains a thread, best of %d "
            "passes, measured now (the share columns are against it); bf16 dot product: %s; "
            "bf16 tiles: %s\n",
            bench_fma_isa_names[peak->isa], BENCH_FMA_CHAINS, BENCH_FMA_PASSES,
            peak->bf16_dot ? "vdpbf16ps (AVX512_BF16)" : "not on this CPU (no AVX512_BF16)",
            peak->amx_bf16 ? "tdpbf16ps (AMX-BF16)" : "none (no AMX-BF16, or not granted)");
    for (size_t i = 0; i < peak->count; ++i) {
        const bench_fma_peak_entry *e = &peak->entries[i];
        fprintf(out, "# FMA peak: %s, %zu thread%s: %.1f GFLOP/s (median %.1f)\n",
                bench_fma_kind_names[e->kind], e->threads, e->threads == 1 ? "" : "s",
                e->gflops, e->median_gflops);
    }
}

void bench_fma_peak_write_json(FILE *out, const bench_fma_peak *peak)
{
    fprintf(out,
            "  \"fma_peak\": {\"method\": \"register-only FMA micro-kernel, %d chains a thread, "
            "best of %d passes\", \"isa\": \"%s\", \"bf16_dot\": %s, \"amx_bf16\": %s, "
            "\"entries\": [",
            BENCH_FMA_CHAINS, BENCH_FMA_PASSES, bench_fma_isa_names[peak->isa],
            peak->bf16_dot ? "true" : "false", peak->amx_bf16 ? "true" : "false");
    for (size_t i = 0; i < peak->count; ++i) {
        const bench_fma_peak_entry *e = &peak->entries[i];
        fprintf(out, "%s\n    {\"kind\": \"%s\", \"threads\": %zu, \"gflops\": %.4g, "
                     "\"median_gflops\": %.4g}",
                i ? "," : "", bench_fma_kind_names[e->kind], e->threads, e->gflops,
                e->median_gflops);
    }
    fputs(peak->count ? "\n  ]},\n" : "]},\n", out);
}
