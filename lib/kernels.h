/*
 * Internal interface of the softmax kernels: one portable scalar kernel and
 * one per SIMD instruction set, all generated from lib/softmax_kernel.inc.c,
 * selected at run time. Not installed; tests reach it through the static
 * library.
 */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include <stddef.h>

typedef enum attn_isa {
    ATTN_ISA_SCALAR = 0,
    ATTN_ISA_AVX2 = 1,   /* AVX2 + FMA */
    ATTN_ISA_AVX512 = 2, /* AVX-512F + FMA */
    ATTN_ISA_COUNT = 3
} attn_isa;

/* Whether this CPU (and OS) can run kernels of `isa`. */
int attn_isa_supported(attn_isa isa);

/* The kernel set this process uses: the best supported one, or the one named
 * by ATTN_SIMD (scalar|avx2|avx512) when the CPU supports it. Decided once. */
attn_isa attn_isa_active(void);

const char *attn_isa_name(attn_isa isa);

/*
 * Fused scale / mask / softmax of one row.
 *   x (n_total) in, y (n_total) out; x == y allowed (in place).
 *   y[j] = exp(scale*x[j] - m) / sum_{k<n_valid} exp(scale*x[k] - m),  j < n_valid
 *   y[j] = 0,                                                         j >= n_valid
 * where m = max_{k<n_valid} scale*x[k]. n_valid == 0 (fully masked) gives a row
 * of zeros; entries equal to -inf are masked too. Reads x at most twice.
 */
typedef void (*attn_softmax_row_f32_fn)(const float *x, float *y, size_t n_valid,
                                        size_t n_total, float scale);
typedef void (*attn_softmax_row_f64_fn)(const double *x, double *y, size_t n_valid,
                                        size_t n_total, double scale);

/*
 * One key block of the tiled (online) softmax, for a row whose earlier key
 * blocks left a running max m (start: -REAL_MAX) and sum l (start: 0):
 *   m' = max(m, max_{j<n_valid} scale*s[j])
 *   p[j] = exp(scale*s[j] - m') for j < n_valid, p[j] = 0 up to n_total
 *   l' = l * exp(m - m') + sum_j p[j]
 * returns alpha = exp(m - m') >= 0, by which the caller rescales the row's
 * partial output; s == p allowed. When m' is +inf (a +inf score) p is zeroed,
 * m' = +inf is stored and -1 is returned: the caller recomputes the row.
 */
typedef float (*attn_softmax_online_f32_fn)(const float *s, float *p, size_t n_valid,
                                            size_t n_total, float scale, float *max, float *sum);
typedef double (*attn_softmax_online_f64_fn)(const double *s, double *p, size_t n_valid,
                                             size_t n_total, double scale, double *max,
                                             double *sum);

/* For sources templated over `real` (see real.h): the kernel types. */
#ifdef ATTN_REAL_BITS
#if ATTN_REAL_BITS == 32
typedef attn_softmax_row_f32_fn attn_softmax_row_fn;
typedef attn_softmax_online_f32_fn attn_softmax_online_fn;
#else
typedef attn_softmax_row_f64_fn attn_softmax_row_fn;
typedef attn_softmax_online_f64_fn attn_softmax_online_fn;
#endif
#endif

/* The row kernel of `isa`; NULL for a value outside attn_isa. */
attn_softmax_row_f32_fn attn_softmax_row_kernel_f32(attn_isa isa);
attn_softmax_row_f64_fn attn_softmax_row_kernel_f64(attn_isa isa);
attn_softmax_online_f32_fn attn_softmax_online_kernel_f32(attn_isa isa);
attn_softmax_online_f64_fn attn_softmax_online_kernel_f64(attn_isa isa);

/* y[i] = exp(x[i]) with the kernel's polynomial exp, for i < n (x == y allowed).
 * Accuracy against libm: relative error <= 2e-7 (f32), <= 1e-14 (f64) where
 * the result is a normal number; exp(-inf) = 0, exp(+inf) = +inf, NaN -> NaN,
 * overflow -> +inf, results below the normal range are flushed to 0 or
 * computed as subnormals (absolute error below the smallest normal). */
typedef void (*attn_exp_f32_fn)(const float *x, float *y, size_t n);
typedef void (*attn_exp_f64_fn)(const double *x, double *y, size_t n);
attn_exp_f32_fn attn_exp_kernel_f32(attn_isa isa);
attn_exp_f64_fn attn_exp_kernel_f64(attn_isa isa);

#endif /* ATTN_KERNELS_H */
