/*
 * Which CPUs run the bf16 products (kernels.h, attn_bf16_gemm_fn) and the
 * getter of each set's: AVX512-BF16 (vdpbf16ps) for the avx512-bf16 set,
 * AMX-BF16 tiles for the amx set. AMX's tile data is a state Linux grants a
 * process only on request (arch_prctl(ARCH_REQ_XCOMP_PERM,
 * XFEATURE_XTILEDATA), kernel 5.16 on); it is asked once, and a refusal
 * (an older kernel, a sandbox, valgrind) leaves the amx set unsupported, so
 * that the avx512-bf16 or avx512 set runs instead.
 */
#define _GNU_SOURCE /* syscall */
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "kernels/kernels.h"

#if defined(__x86_64__)
/* CPUID leaf 7: subleaf 1 EAX bit 5 AVX512-BF16; subleaf 0 EDX bit 22
 * AMX-BF16, bit 24 AMX-TILE. */
static unsigned cpuid7(unsigned subleaf, int reg)
{
    unsigned r[4] = {0, 0, 0, 0};
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, subleaf, r[0], r[1], r[2], r[3]);
    return r[reg];
}
enum { EAX = 0, EDX = 3 };

int attn_cpu_has_bf16_dot(void)
{
    return (cpuid7(1, EAX) >> 5 & 1u) != 0;
}

/* Intel's cores (Cooper Lake, Sapphire Rapids) issue vdpbf16ps at half the
 * rate of float FMAs: on a Xeon (Sapphire/Emerald Rapids class, 2 threads)
 * attn-bench measured 189.5 GFLOP/s of bf16 dot products against 379.9 of
 * float FMAs, and a bf16 prefill (T 2048, 32/8 heads, hs 128, causal) took
 * 274 ms on the avx512-bf16 set against 186 on avx512. AMD's Zen 4 and 5
 * issue it at about twice the float rate (971 against 520 GFLOP/s, Zen 5). */
int attn_cpu_bf16_dot_is_fast(void)
{
    unsigned max, vendor[3];
    __cpuid(0, max, vendor[0], vendor[2], vendor[1]); /* EBX, EDX, ECX: "GenuineIntel" */
    (void)max;
    return memcmp(vendor, "GenuineIntel", 12) != 0;
}

#if defined(__linux__)
enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
static int amx_granted;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

/* CPUID says AMX-BF16 and AMX-TILE, XCR0 that the OS manages the tile
 * configuration and data (bits 17, 18), and Linux grants this process the
 * tile data. */
static void ask_amx(void)
{
    const unsigned edx = cpuid7(0, EDX);
    unsigned a, b, c, d;
    if ((edx >> 22 & 1u) == 0 || (edx >> 24 & 1u) == 0 || !__get_cpuid(1, &a, &b, &c, &d) ||
        (c >> 27 & 1u) == 0) /* OSXSAVE: xgetbv allowed */
        return;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo >> 17 & 3u) != 3u)
        return;
    amx_granted = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

int attn_cpu_has_amx_bf16(void)
{
    pthread_once(&amx_once, ask_amx);
    return amx_granted;
}
#else
int attn_cpu_has_amx_bf16(void)
{
    return 0;
}
#endif
#else
int attn_cpu_has_bf16_dot(void)
{
    return 0;
}
int attn_cpu_bf16_dot_is_fast(void)
{
    return 0;
}
int attn_cpu_has_amx_bf16(void)
{
    return 0;
}
#endif

attn_bf16_products attn_bf16_products_of(attn_isa isa)
{
    attn_bf16_products p = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
#if defined(__x86_64__)
    if (isa == ATTN_ISA_AVX512_BF16 || isa == ATTN_ISA_AMX) {
        p.gemm = isa == ATTN_ISA_AMX ? attn_bf16_gemm_amx : attn_bf16_gemm_avx512_bf16;
        p.round = attn_bf16_round_avx512_bf16;
        p.round_transposed = attn_bf16_round_transposed_avx512_bf16;
        p.softmax_online = attn_bf16_softmax_online_avx512_bf16;
        p.pack = attn_bf16_pack_avx512_bf16;
        p.dot = attn_bf16_dot_avx512_bf16;
        p.round_scaled = attn_bf16_round_scaled_avx512_bf16;
        p.pack16 = attn_bf16_pack16_avx512_bf16;
    }
#endif
    (void)isa;
    return p;
}
