/*
 * The FMA peak (machine/fma_peak.h): every kernel this CPU runs does the
 * work it counts -- lane 0 of its first chain equals the recurrence
 * acc <- acc * m + a (acc0 = 2, m = 1 - 2^-20, a = 2^-20) iterated in plain
 * C, rounded as the kernel rounds (fused; the scalar kernel's a * b + c
 * may also round twice), so that one step more or less shows -- and its FLOP count equals iterations x chains x lanes x 2, the lanes
 * counted here from the vector width -- and the measured peaks are positive
 * and finite at 1 and 2 threads; a kind or instruction set this CPU lacks
 * (the bf16 dot product without AVX512_BF16) gives nothing and says so.
 * After a run the peak is measured again (bench_fma_peak_remeasure: the
 * same entries, positive) and the footer (bench_fma_peak_print_recheck)
 * names exactly the entries that came out more than
 * BENCH_FMA_RECHECK_SLACK above the header's, on made-up numbers.
 * Exits 1 on the first assertion that does not hold.
 */
#include <string.h>
#include <math.h>
#include <stdio.h>

#include "machine/fma_peak.h"

static int failures;

#define EXPECT(condition, ...)                                                                 \
    do {                                                                                       \
        if (!(condition)) {                                                                    \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                       \
            printf(__VA_ARGS__);                                                               \
            putchar('\n');                                                                     \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

/* The footer of a header whose f32 peak at 2 threads met a busy moment
 * (300 against 500 GFLOP/s after: 1.67x) while f32 at 1 thread (250 and
 * 270: within the slack) and f64 (130 and 125) did not: exactly one
 * warning, naming that entry and the ratio. */
static void recheck_footer(void)
{
    bench_fma_peak header = {.isa = BENCH_FMA_AVX512, .count = 3};
    header.entries[0] = (bench_fma_peak_entry){BENCH_FMA_F32, 1, 250.0, 240.0};
    header.entries[1] = (bench_fma_peak_entry){BENCH_FMA_F32, 2, 300.0, 290.0};
    header.entries[2] = (bench_fma_peak_entry){BENCH_FMA_F64, 2, 130.0, 120.0};
    bench_fma_peak after = header;
    after.entries[0].gflops = 270.0;
    after.entries[1].gflops = 500.0;
    after.entries[2].gflops = 125.0;
    char text[2048] = {0};
    FILE *out = tmpfile();
    EXPECT(out != NULL, "tmpfile");
    if (!out)
        return;
    const size_t above = bench_fma_peak_print_recheck(out, &header, &after);
    rewind(out);
    const size_t n = fread(text, 1, sizeof text - 1, out);
    fclose(out);
    text[n] = '\0';
    EXPECT(above == 1, "print_recheck: %zu entries above the header's, 1 expected", above);
    EXPECT(strstr(text, "f32, 2 threads measured 1.67x higher") != NULL &&
               strstr(text, "f32, 1 thread measured") == NULL &&
               strstr(text, "f64, 2 threads measured") == NULL,
           "print_recheck: the warning names f32 at 2 threads alone:\n%s", text);
    EXPECT(strstr(text, "f32, 1 thread: 270.0 GFLOP/s; f32, 2 threads: 500.0 GFLOP/s; f64, 2 "
                        "threads: 125.0 GFLOP/s") != NULL,
           "print_recheck: every re-measured entry in the footer:\n%s", text);
    after.entries[1].gflops = 320.0; /* 1.07x: within the slack */
    out = tmpfile();
    EXPECT(out != NULL && bench_fma_peak_print_recheck(out, &header, &after) == 0,
           "print_recheck: no warning within the slack");
    if (out)
        fclose(out);
}

/* The recurrence in the kernel's precision and rounding, one chain, one lane. */
static double recurrence(int f32, int fused, size_t iterations)
{
    const double m = 1.0 - 1.0 / 1048576.0, a = 1.0 / 1048576.0;
    float x32 = 2.0f;
    double x64 = 2.0;
    for (size_t i = 0; i < iterations; ++i) {
        if (fused) {
            x32 = fmaf(x32, (float)m, (float)a);
            x64 = fma(x64, m, a);
        } else {
            volatile float p32 = x32 * (float)m;
            volatile double p64 = x64 * m;
            x32 = p32 + (float)a;
            x64 = p64 + a;
        }
    }
    return f32 ? (double)x32 : x64;
}

/* Lanes of one vector of the instruction set, counted from its width. */
static size_t lanes_expected(bench_fma_isa isa, bench_fma_kind kind)
{
    const size_t bits = isa == BENCH_FMA_AVX512 ? 512 : isa == BENCH_FMA_AVX2 ? 256
                        : isa == BENCH_FMA_NEON ? 128 : 0;
    const size_t element = kind == BENCH_FMA_F64 ? 64 : 32;
    return bits ? bits / element : 1;
}

int main(void)
{
    const bench_fma_isa best = bench_fma_best_isa();
    const size_t iterations = 1000;
    printf("best instruction set: %s; bf16 dot product: %s\n", bench_fma_isa_names[best],
           bench_fma_has_bf16_dot() ? "yes" : "no");
    for (int isa = BENCH_FMA_SCALAR; isa <= (int)best; ++isa) {
        if (isa == BENCH_FMA_NEON && best != BENCH_FMA_NEON)
            continue; /* x86 runs no NEON */
        for (int kind = BENCH_FMA_F32; kind <= BENCH_FMA_F64; ++kind) {
            double lane0 = -1.0;
            const double flops = bench_fma_kernel((bench_fma_isa)isa, (bench_fma_kind)kind,
                                                  iterations, &lane0);
            const double counted = (double)iterations * BENCH_FMA_CHAINS *
                                   (double)lanes_expected((bench_fma_isa)isa, (bench_fma_kind)kind) * 2.0;
            EXPECT(flops == counted, "%s %s: %g FLOPs counted by the kernel, %g here",
                   bench_fma_isa_names[isa], bench_fma_kind_names[kind], flops, counted);
            /* the scalar kernel's a * b + c may be contracted to an FMA or not */
            const double want = recurrence(kind == BENCH_FMA_F32, 1, iterations);
            const double unfused = recurrence(kind == BENCH_FMA_F32, 0, iterations);
            EXPECT(lane0 == want || (isa == BENCH_FMA_SCALAR && lane0 == unfused), "%s %s: lane 0 %.9g, recurrence %.9g",
                   bench_fma_isa_names[isa], bench_fma_kind_names[kind], lane0, want);
        }
    }
    double lane0 = 0.0;
    const double bf16 = bench_fma_kernel(BENCH_FMA_AVX512, BENCH_FMA_BF16_DOT, iterations, &lane0);
    if (bench_fma_has_bf16_dot())
        EXPECT(bf16 == (double)iterations * BENCH_FMA_CHAINS * 16 * 4 && lane0 > 0.0,
               "bf16 dot: %g FLOPs, lane 0 %g", bf16, lane0);
    else
        EXPECT(bf16 == 0.0, "bf16 dot on a CPU without it: %g FLOPs", bf16);
    const double amx = bench_fma_kernel(BENCH_FMA_AVX512, BENCH_FMA_AMX_BF16, iterations * 64,
                                        &lane0);
    if (bench_fma_has_amx_bf16()) /* 1000 steps of 4 tile products; c = 1000 * 32 * 2^-20 */
        EXPECT(amx == 1000.0 * 4 * 16384 && lane0 == 1000.0 * 32 / 1048576.0,
               "amx bf16: %g FLOPs, lane 0 %g", amx, lane0);
    else
        EXPECT(amx == 0.0, "amx bf16 on a CPU without it: %g FLOPs", amx);
    for (size_t threads = 1; threads <= 2; ++threads)
        for (int kind = BENCH_FMA_F32; kind <= BENCH_FMA_F64; ++kind) {
            double best_gflops = 0.0, median_gflops = 0.0;
            const int status = bench_fma_peak_rate(best, (bench_fma_kind)kind, threads, 100000,
                                                   3, &best_gflops, &median_gflops);
            EXPECT(status == 0 && isfinite(best_gflops) && best_gflops > 0.0 &&
                       isfinite(median_gflops) && median_gflops > 0.0 &&
                       median_gflops <= best_gflops,
                   "%s %zu threads: status %d, best %g, median %g GFLOP/s",
                   bench_fma_kind_names[kind], threads, status, best_gflops, median_gflops);
            printf("%s, %zu thread%s: %.1f GFLOP/s (median %.1f)\n", bench_fma_kind_names[kind],
                   threads, threads == 1 ? "" : "s", best_gflops, median_gflops);
        }
    bench_fma_peak peak;
    const size_t thread_counts[] = {1};
    EXPECT(bench_fma_peak_measure(&peak, thread_counts, 1) == 0 &&
               bench_fma_peak_gflops(&peak, BENCH_FMA_F32, 1) > 0.0 &&
               bench_fma_peak_gflops(&peak, BENCH_FMA_F64, 1) > 0.0 &&
               (bench_fma_peak_gflops(&peak, BENCH_FMA_BF16_DOT, 1) > 0.0) == bench_fma_has_bf16_dot() &&
               (bench_fma_peak_gflops(&peak, BENCH_FMA_AMX_BF16, 1) > 0.0) == bench_fma_has_amx_bf16(),
           "bench_fma_peak_measure at 1 thread");
    bench_fma_peak again;
    EXPECT(bench_fma_peak_remeasure(&peak, &again) == 0 && again.count == peak.count &&
               again.entries[0].kind == peak.entries[0].kind &&
               again.entries[0].threads == peak.entries[0].threads &&
               again.entries[0].gflops > 0.0,
           "bench_fma_peak_remeasure: the header's entries measured again");
    recheck_footer();
    printf("%d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
