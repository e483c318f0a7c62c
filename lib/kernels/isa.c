/*
 * Run-time choice of the softmax kernel set. The CPU is asked once per
 * process (pthread_once); the result never changes afterwards, so it is
 * constant state, not mutable global state.
 * ATTN_SIMD=scalar|avx2|avx512|avx512-bf16|amx|neon forces a set, but never
 * one the CPU cannot run. avx512-bf16 and amx are avx512 but for a bf16
 * plan's products (kernels.h, attn_bf16_products_of).
 *
 * Which sets exist depends on the target: the scalar set everywhere, AVX2
 * and AVX-512 on x86-64, NEON on AArch64 (lib/CMakeLists.txt compiles only
 * those). The tables hold NULL for a set not built here, and
 * attn_isa_supported says 0 for it, so it is never chosen.
 */
#include <pthread.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include <attn/attn.h>

#include "kernels/kernels.h"

#define ATTN_DECLARE_KERNELS(isa)                                                             \
    void attn_softmax_row_##isa##_f32(const float *x, float *y, size_t n_valid, size_t n_total, \
                                      float scale);                                           \
    void attn_softmax_row_##isa##_f64(const double *x, double *y, size_t n_valid,             \
                                      size_t n_total, double scale);                          \
    void attn_exp_##isa##_f32(const float *x, float *y, size_t n);                            \
    void attn_exp_##isa##_f64(const double *x, double *y, size_t n);                          \
    float attn_softmax_online_##isa##_f32(const float *s, float *p, size_t n_valid,           \
                                          size_t n_total, float scale, float *max, float *sum); \
    double attn_softmax_online_##isa##_f64(const double *s, double *p, size_t n_valid,        \
                                           size_t n_total, double scale, double *max,         \
                                           double *sum);                                      \
    void attn_softmax_rows_##isa##_f32(const float *x, float *y, size_t rows, size_t ld,      \
                                       size_t n_valid, size_t n_valid_step, size_t n_total,   \
                                       float scale);                                          \
    void attn_softmax_rows_##isa##_f64(const double *x, double *y, size_t rows, size_t ld,    \
                                       size_t n_valid, size_t n_valid_step, size_t n_total,   \
                                       double scale);                                         \
    float attn_softmax_backward_##isa##_f32(const float *P, float *dP, size_t n_valid,       \
                                            size_t n_total, const float *given_dot);          \
    double attn_softmax_backward_##isa##_f64(const double *P, double *dP, size_t n_valid,    \
                                             size_t n_total, const double *given_dot);        \
    void attn_softmax_from_lse_##isa##_f32(const float *s, float *p, size_t n_valid,         \
                                           size_t n_total, float scale, float max,            \
                                           float log_sum);                                    \
    void attn_softmax_from_lse_##isa##_f64(const double *s, double *p, size_t n_valid,       \
                                           size_t n_total, double scale, double max,          \
                                           double log_sum);                                   \
    void attn_gemm_##isa##_f32(int trans_a, int trans_b, size_t M, size_t N, size_t K,        \
                               float alpha, const float *A, size_t lda, const float *B,       \
                               size_t ldb, float beta, float *C, size_t ldc, float *pack);    \
    void attn_gemm_##isa##_f64(int trans_a, int trans_b, size_t M, size_t N, size_t K,        \
                               double alpha, const double *A, size_t lda, const double *B,    \
                               size_t ldb, double beta, double *C, size_t ldc,                \
                               double *pack);                                                 \
    void attn_gemm_shared_a_##isa##_f32(int trans_a, int trans_b, size_t M, size_t N,        \
                                        size_t K, float alpha, const float *A, size_t lda,    \
                                        size_t count, const float *const *B, size_t ldb,      \
                                        const float *const *prepacked, float beta,            \
                                        float *const *C, size_t ldc, float *pack);            \
    void attn_gemm_pack_b_##isa##_f32(int trans_b, size_t K, size_t N, const float *B,        \
                                      size_t ldb, size_t k0, float *packed);                  \
    void attn_gemm_pack_b_##isa##_f64(int trans_b, size_t K, size_t N, const double *B,       \
                                      size_t ldb, size_t k0, double *packed);                 \
    void attn_gemm_shared_a_##isa##_f64(int trans_a, int trans_b, size_t M, size_t N,        \
                                        size_t K, double alpha, const double *A, size_t lda,  \
                                        size_t count, const double *const *B, size_t ldb,     \
                                        const double *const *prepacked, double beta,          \
                                        double *const *C, size_t ldc, double *pack);          \
    void attn_gemm_lower_##isa##_f32(size_t M, size_t N, const float *A, size_t lda,          \
                                     const float *B, size_t ldb, float beta, float *C,        \
                                     size_t ldc, float *pack);                                \
    void attn_gemm_lower_##isa##_f64(size_t M, size_t N, const double *A, size_t lda,         \
                                     const double *B, size_t ldb, double beta, double *C,     \
                                     size_t ldc, double *pack);                                \
    size_t attn_gemm_panel_##isa##_f32(void);                                                \
    size_t attn_gemm_panel_##isa##_f64(void);                                                \
    void attn_rows_dot_##isa##_f32(size_t G, size_t R, size_t n, size_t d, const float *A,    \
                                   size_t lda, const float *B, size_t ldb, size_t ldg,        \
                                   float *S, size_t lds);                                     \
    void attn_rows_dot_##isa##_f64(size_t G, size_t R, size_t n, size_t d, const double *A,   \
                                   size_t lda, const double *B, size_t ldb, size_t ldg,       \
                                   double *S, size_t lds);                                    \
    void attn_rows_axpy_##isa##_f32(size_t G, size_t R, size_t n, size_t m, const float *P,   \
                                    size_t ldp, const float *B, size_t ldb, size_t ldg,       \
                                    float *C, size_t ldc);                                    \
    void attn_rows_axpy_##isa##_f64(size_t G, size_t R, size_t n, size_t m, const double *P,  \
                                    size_t ldp, const double *B, size_t ldb, size_t ldg,      \
                                    double *C, size_t ldc);                                 \
    void attn_dropout_mask_##isa##_f32(const struct attn_dropout *d, size_t b, size_t h,     \
                                       size_t t, size_t j0, size_t n, float *x,             \
                                       float *factors);                                     \
    void attn_dropout_mask_##isa##_f64(const struct attn_dropout *d, size_t b, size_t h,     \
                                       size_t t, size_t j0, size_t n, double *x,            \
                                       double *factors);
ATTN_DECLARE_KERNELS(scalar)
/* ATTN_ON_X86(name) / ATTN_ON_ARM(name): a set's kernel where it is built,
 * else NULL. */
#if defined(__x86_64__)
ATTN_DECLARE_KERNELS(avx2)
ATTN_DECLARE_KERNELS(avx512)
#define ATTN_ON_X86(name) name
#else
#define ATTN_ON_X86(name) NULL
#endif
#if defined(__aarch64__)
ATTN_DECLARE_KERNELS(neon)
#define ATTN_ON_ARM(name) name
#else
#define ATTN_ON_ARM(name) NULL
#endif

static const char *const isa_names[ATTN_ISA_COUNT] = {
    [ATTN_ISA_SCALAR] = "scalar",
    [ATTN_ISA_AVX2] = "avx2",
    [ATTN_ISA_AVX512] = "avx512",
    [ATTN_ISA_NEON] = "neon",
    [ATTN_ISA_AVX512_BF16] = "avx512-bf16",
    [ATTN_ISA_AMX] = "amx",
};

static int valid(attn_isa isa)
{
    return (unsigned)isa < ATTN_ISA_COUNT;
}

/* The kernel `prefix` of every kernel set, in a table, and its getter
 * prefix_kernel_f32 / _f64 (kernels.h): NULL for a value outside attn_isa
 * and for a set not built on this architecture. */
#define ATTN_KERNEL_TABLE(prefix, precision)                                                \
    static const prefix##_##precision##_fn prefix##_##precision##_table[ATTN_ISA_COUNT] = { \
        [ATTN_ISA_SCALAR] = prefix##_scalar_##precision,                                    \
        [ATTN_ISA_AVX2] = ATTN_ON_X86(prefix##_avx2_##precision),                           \
        [ATTN_ISA_AVX512] = ATTN_ON_X86(prefix##_avx512_##precision),                       \
        [ATTN_ISA_NEON] = ATTN_ON_ARM(prefix##_neon_##precision),                           \
        [ATTN_ISA_AVX512_BF16] = ATTN_ON_X86(prefix##_avx512_##precision),                  \
        [ATTN_ISA_AMX] = ATTN_ON_X86(prefix##_avx512_##precision)};                         \
    prefix##_##precision##_fn prefix##_kernel_##precision(attn_isa isa)                     \
    {                                                                                       \
        return valid(isa) ? prefix##_##precision##_table[isa] : NULL;                       \
    }
#define ATTN_KERNEL_TABLES(prefix) ATTN_KERNEL_TABLE(prefix, f32) ATTN_KERNEL_TABLE(prefix, f64)
ATTN_KERNEL_TABLES(attn_softmax_row)
ATTN_KERNEL_TABLES(attn_softmax_online)
ATTN_KERNEL_TABLES(attn_exp)
ATTN_KERNEL_TABLES(attn_softmax_rows)
ATTN_KERNEL_TABLES(attn_softmax_backward)
ATTN_KERNEL_TABLES(attn_softmax_from_lse)
ATTN_KERNEL_TABLES(attn_gemm)
ATTN_KERNEL_TABLES(attn_gemm_shared_a)
ATTN_KERNEL_TABLES(attn_gemm_pack_b)
ATTN_KERNEL_TABLES(attn_gemm_lower)
ATTN_KERNEL_TABLES(attn_gemm_panel)
ATTN_KERNEL_TABLES(attn_rows_dot)
ATTN_KERNEL_TABLES(attn_rows_axpy)
ATTN_KERNEL_TABLES(attn_dropout_mask)

/* The half-precision kernels of each set (convert_<isa>.c,
 * rows_<half>_<isa>.c). */
#define ATTN_DECLARE_HALF(isa, half)                                                        \
    void attn_##half##_widen_##isa(const uint16_t *src, float *dst, size_t n);              \
    void attn_##half##_narrow_##isa(const float *src, uint16_t *dst, size_t n);             \
    void attn_##half##_narrow_scaled_##isa(const float *src, float scale, uint16_t *dst,    \
                                           size_t n);                                       \
    void attn_rows_dot_##half##_##isa(size_t G, size_t R, size_t n, size_t d, const float *A, \
                                      size_t lda, const uint16_t *B, size_t ldb, size_t ldg,  \
                                      float *S, size_t lds);                                \
    void attn_rows_axpy_##half##_##isa(size_t G, size_t R, size_t n, size_t m,              \
                                       const float *P, size_t ldp, const uint16_t *B,       \
                                       size_t ldb, size_t ldg, float *C, size_t ldc);
#define ATTN_DECLARE_HALVES(isa) ATTN_DECLARE_HALF(isa, bf16) ATTN_DECLARE_HALF(isa, f16)
ATTN_DECLARE_HALVES(scalar)
#if defined(__x86_64__)
ATTN_DECLARE_HALVES(avx2)
ATTN_DECLARE_HALVES(avx512)
#endif
#if defined(__aarch64__)
ATTN_DECLARE_HALVES(neon)
#endif
#define ATTN_HALF_ENTRY(isa, half, on)                                                      \
    {on(attn_##half##_widen_##isa), on(attn_##half##_narrow_##isa),                         \
     on(attn_##half##_narrow_scaled_##isa), on(attn_rows_dot_##half##_##isa),                \
     on(attn_rows_axpy_##half##_##isa)}
#define ATTN_HALF_ROW(isa, on) {ATTN_HALF_ENTRY(isa, f16, on), ATTN_HALF_ENTRY(isa, bf16, on)}
#define ATTN_BUILT(name) name
static const attn_half_kernels half_table[ATTN_ISA_COUNT][2] = {
    [ATTN_ISA_SCALAR] = ATTN_HALF_ROW(scalar, ATTN_BUILT),
    [ATTN_ISA_AVX2] = ATTN_HALF_ROW(avx2, ATTN_ON_X86),
    [ATTN_ISA_AVX512] = ATTN_HALF_ROW(avx512, ATTN_ON_X86),
    [ATTN_ISA_NEON] = ATTN_HALF_ROW(neon, ATTN_ON_ARM),
    [ATTN_ISA_AVX512_BF16] = ATTN_HALF_ROW(avx512, ATTN_ON_X86),
    [ATTN_ISA_AMX] = ATTN_HALF_ROW(avx512, ATTN_ON_X86)};

attn_half_kernels attn_half_kernels_of(attn_isa isa, int bf16)
{
    const attn_half_kernels none = {NULL, NULL, NULL, NULL, NULL};
    return valid(isa) ? half_table[isa][bf16 != 0] : none;
}

#if defined(__x86_64__)
/* F16C (vcvtph2ps, vcvtps2ph: the avx2 set's float16 conversions), from
 * CPUID leaf 1 (ECX bit 29): clang 14 has no "f16c" for
 * __builtin_cpu_supports. Every AVX2 CPU has it. */
static int has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}
#endif

int attn_isa_supported(attn_isa isa)
{
    switch (isa) {
    case ATTN_ISA_SCALAR:
        return 1;
#if defined(__x86_64__)
    case ATTN_ISA_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
    case ATTN_ISA_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    case ATTN_ISA_AVX512_BF16:
        __builtin_cpu_init();
        return attn_isa_supported(ATTN_ISA_AVX512) && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && attn_cpu_has_bf16_dot();
    case ATTN_ISA_AMX: /* its tiles, and avx512-bf16 for the rest */
        return attn_isa_supported(ATTN_ISA_AVX512_BF16) && attn_cpu_has_amx_bf16();
#endif
#if defined(__aarch64__)
    case ATTN_ISA_NEON: /* baseline on AArch64; the kernel says so too where it can */
#if defined(__linux__) && defined(HWCAP_ASIMD)
        return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
#else
        return 1;
#endif
#endif
    default:
        return 0;
    }
}

const char *attn_isa_name(attn_isa isa)
{
    return valid(isa) ? isa_names[isa] : "unknown";
}

static attn_isa chosen_isa = ATTN_ISA_SCALAR;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

static void choose_isa(void)
{
    attn_isa best = ATTN_ISA_SCALAR;
    for (int isa = ATTN_ISA_COUNT - 1; isa > ATTN_ISA_SCALAR; isa--) {
        /* avx512-bf16 only where vdpbf16ps outruns float FMAs
         * (bf16_products.c); otherwise avx512, unless forced */
        if (isa == ATTN_ISA_AVX512_BF16 && !attn_cpu_bf16_dot_is_fast())
            continue;
        if (attn_isa_supported((attn_isa)isa)) {
            best = (attn_isa)isa;
            break;
        }
    }
    const char *forced = getenv("ATTN_SIMD");
    if (forced != NULL) {
        for (int isa = 0; isa < ATTN_ISA_COUNT; isa++)
            if (strcmp(forced, isa_names[isa]) == 0 && attn_isa_supported((attn_isa)isa))
                best = (attn_isa)isa;
    }
    chosen_isa = best;
}

attn_isa attn_isa_active(void)
{
    pthread_once(&chosen_once, choose_isa);
    return chosen_isa;
}

const char *attn_simd_name(void)
{
    return attn_isa_name(attn_isa_active());
}
