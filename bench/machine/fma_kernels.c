/*
 * The FMA peak's micro-kernels (fma_peak.h), one per instruction set and
 * element type, written once as a macro over a vector type and its fused
 * multiply-add: BENCH_FMA_CHAINS accumulators in registers, each step
 * acc_c = acc_c * m + a (a dot-product step: acc_c += dot(x, y)). x86
 * kernels carry a target attribute, so the whole set is compiled into every
 * build and the caller picks the one the CPU runs (fma_peak.c).
 */
#include "machine/fma_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BENCH_FMA_X86 1
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

/* The recurrence's constants (fma_kernels.h), read through volatile so that
 * the compiler cannot fold the chains. */
static volatile double multiplier = 1.0 - 1.0 / 1048576.0;
static volatile double addend = 1.0 / 1048576.0;

#define FMA_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define FMA_DECLARE(c) VEC acc##c = SET1(2.0 + (c)); /* distinct: no chain merged */
#define FMA_STEP(c) acc##c = FMADD(acc##c, m, a);
#define FMA_SUM(c) acc0 = ADD(acc0, acc##c);

/* static double NAME(size_t iterations, double *lane0): the kernel over VEC,
 * with SET1 (from a double), FMADD(acc, m, a) = acc * m + a, ADD and LANE0
 * (to a double) defined before it; the chains start apart (no two can be
 * merged) and are summed into the result so that none is dead code. */
#define FMA_KERNEL(NAME, ATTRIBUTE, VEC_TYPE)                                                  \
    ATTRIBUTE static double NAME(size_t iterations, double *lane0)                             \
    {                                                                                          \
        typedef VEC_TYPE VEC;                                                                  \
        const VEC m = SET1(multiplier), a = SET1(addend);                     \
        FMA_CHAINS(FMA_DECLARE)                                                                \
        for (size_t i = 0; i < iterations; ++i) {                                              \
            FMA_CHAINS(FMA_STEP)                                                               \
        }                                                                                      \
        *lane0 = LANE0(acc0);                                                                  \
        FMA_CHAINS(FMA_SUM)                                                                    \
        return LANE0(acc0);                                                                    \
    }

/* ---- scalar: the fallback ------------------------------------------------------ */

#define SCALAR_F32_SET1(x) ((float)(x))
#define SCALAR_F64_SET1(x) ((double)(x))
#define SCALAR_FMADD(acc, m, a) ((acc) * (m) + (a))
#define SCALAR_ADD(x, y) ((x) + (y))
#define SCALAR_LANE0(x) ((double)(x))

#define FMADD SCALAR_FMADD
#define ADD SCALAR_ADD
#undef SET1
#undef LANE0
#define SET1 SCALAR_F32_SET1
#define LANE0 SCALAR_LANE0
FMA_KERNEL(scalar_f32, , float)
#undef SET1
#undef LANE0
#define SET1 SCALAR_F64_SET1
#define LANE0 SCALAR_LANE0
FMA_KERNEL(scalar_f64, , double)

#if BENCH_FMA_X86
/* ---- AVX2 + FMA ---------------------------------------------------------------- */
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX2_PS_SET1(x) _mm256_set1_ps((float)(x))
#define AVX2_PD_SET1(x) _mm256_set1_pd(x)
#define AVX2_PS_LANE0(x) ((double)_mm256_cvtss_f32(x))
#define AVX2_PD_LANE0(x) _mm256_cvtsd_f64(x)
#undef FMADD
#undef ADD
#define FMADD _mm256_fmadd_ps
#define ADD _mm256_add_ps
#undef SET1
#undef LANE0
#define SET1 AVX2_PS_SET1
#define LANE0 AVX2_PS_LANE0
FMA_KERNEL(avx2_f32, AVX2, __m256)
#undef FMADD
#undef ADD
#define FMADD _mm256_fmadd_pd
#define ADD _mm256_add_pd
#undef SET1
#undef LANE0
#define SET1 AVX2_PD_SET1
#define LANE0 AVX2_PD_LANE0
FMA_KERNEL(avx2_f64, AVX2, __m256d)

/* ---- AVX-512 ------------------------------------------------------------------- */
#define AVX512 __attribute__((target("avx512f")))
#define AVX512_PS_SET1(x) _mm512_set1_ps((float)(x))
#define AVX512_PD_SET1(x) _mm512_set1_pd(x)
#define AVX512_PS_LANE0(x) ((double)_mm512_cvtss_f32(x))
#define AVX512_PD_LANE0(x) _mm512_cvtsd_f64(x)
#undef FMADD
#undef ADD
#define FMADD _mm512_fmadd_ps
#define ADD _mm512_add_ps
#undef SET1
#undef LANE0
#define SET1 AVX512_PS_SET1
#define LANE0 AVX512_PS_LANE0
FMA_KERNEL(avx512_f32, AVX512, __m512)
#undef FMADD
#undef ADD
#define FMADD _mm512_fmadd_pd
#define ADD _mm512_add_pd
#undef SET1
#undef LANE0
#define SET1 AVX512_PD_SET1
#define LANE0 AVX512_PD_LANE0
FMA_KERNEL(avx512_f64, AVX512, __m512d)

/* ---- AVX512_BF16: vdpbf16ps ---------------------------------------------------- */
/* Each step acc_c += dot of 32 bf16 pairs (x = y = 2^-10 in every pair: the
 * value 0x3A80 in bf16) into 16 f32 lanes. */
#define BF16_DOT(acc, x, y) _mm512_dpbf16_ps(acc, (__m512bh)(x), (__m512bh)(y))
#define BF16_PAIRS(x) _mm512_set1_epi32(0x3A803A80)
__attribute__((target("avx512f,avx512bf16"))) static double avx512_bf16_dot(size_t iterations,
                                                                          double *lane0)
{
    const __m512i x = BF16_PAIRS(0);
#define BF16_DECLARE(c) __m512 acc##c = _mm512_set1_ps((float)(c));
#define BF16_STEP(c) acc##c = BF16_DOT(acc##c, x, x);
#define BF16_SUM(c) acc0 = _mm512_add_ps(acc0, acc##c);
    FMA_CHAINS(BF16_DECLARE)
    for (size_t i = 0; i < iterations; ++i) {
        FMA_CHAINS(BF16_STEP)
    }
    *lane0 = (double)_mm512_cvtss_f32(acc0);
    FMA_CHAINS(BF16_SUM)
    return (double)_mm512_cvtss_f32(acc0);
}

/* ---- AMX-BF16: tdpbf16ps ------------------------------------------------------- */
/* Tiles 0-3 accumulate, 4-7 hold 2^-10 in every bf16 (loaded once); a step
 * is tdpbf16ps on each accumulator; iterations / BENCH_FMA_AMX_DIVISOR
 * steps (fma_peak.h). The tile state is released at the end. */
typedef struct amx_config {
    unsigned char palette, start_row, reserved[14];
    unsigned short colsb[16];
    unsigned char rows[16];
} amx_config;
__attribute__((target("amx-tile,amx-bf16"))) static double amx_bf16(size_t iterations,
                                                                     double *lane0)
{
    unsigned short ones[16 * 32];
    float c[16 * 16];
    for (size_t i = 0; i < 16 * 32; ++i)
        ones[i] = 0x3A80;
    amx_config cfg = {.palette = 1};
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, ones, 64);
    _tile_loadd(5, ones, 64);
    _tile_loadd(6, ones, 64);
    _tile_loadd(7, ones, 64);
    for (size_t i = 0; i < iterations / BENCH_FMA_AMX_DIVISOR; ++i) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, c, 64);
    _tile_release();
    *lane0 = (double)c[0];
    return (double)c[0];
}
#endif /* BENCH_FMA_X86 */

#if defined(__aarch64__)
/* ---- NEON (AArch64) ------------------------------------------------------------ */
#define NEON_PS_SET1(x) vdupq_n_f32((float)(x))
#define NEON_PD_SET1(x) vdupq_n_f64(x)
#define NEON_PS_FMADD(acc, m, a) vfmaq_f32(a, acc, m)
#define NEON_PD_FMADD(acc, m, a) vfmaq_f64(a, acc, m)
#define NEON_PS_LANE0(x) ((double)vgetq_lane_f32(x, 0))
#define NEON_PD_LANE0(x) vgetq_lane_f64(x, 0)
#undef FMADD
#undef ADD
#define FMADD NEON_PS_FMADD
#define ADD vaddq_f32
#undef SET1
#undef LANE0
#define SET1 NEON_PS_SET1
#define LANE0 NEON_PS_LANE0
FMA_KERNEL(neon_f32, , float32x4_t)
#undef FMADD
#undef ADD
#define FMADD NEON_PD_FMADD
#define ADD vaddq_f64
#undef SET1
#undef LANE0
#define SET1 NEON_PD_SET1
#define LANE0 NEON_PD_LANE0
FMA_KERNEL(neon_f64, , float64x2_t)
#endif

static volatile double sink;

bench_fma_kernel_fn *bench_fma_kernel_for(bench_fma_isa isa, bench_fma_kind kind)
{
    switch (isa) {
    case BENCH_FMA_SCALAR:
        return kind == BENCH_FMA_F32 ? scalar_f32 : kind == BENCH_FMA_F64 ? scalar_f64 : NULL;
#if BENCH_FMA_X86
    case BENCH_FMA_AVX2:
        return kind == BENCH_FMA_F32 ? avx2_f32 : kind == BENCH_FMA_F64 ? avx2_f64 : NULL;
    case BENCH_FMA_AVX512:
        return kind == BENCH_FMA_F32        ? avx512_f32
               : kind == BENCH_FMA_F64      ? avx512_f64
               : kind == BENCH_FMA_BF16_DOT ? avx512_bf16_dot
                                            : amx_bf16;
#endif
#if defined(__aarch64__)
    case BENCH_FMA_NEON:
        return kind == BENCH_FMA_F32 ? neon_f32 : kind == BENCH_FMA_F64 ? neon_f64 : NULL;
#endif
    default:
        return NULL;
    }
}

void bench_fma_keep(double value)
{
    sink = value;
}
