/*
 * attn — scaled dot-product self-attention on CBLAS.
 *
 * Conventions (they hold for every declaration below)
 * ---------------------------------------------------
 *  - Shapes are written PyTorch-style and arrays are dense, row-major, last
 *    index fastest: X (B,T,C) means element X[(b*T + t)*C + c].
 *    B batch, T sequence length, C model width, hs head size,
 *    Tq/Tk query/key counts, d key width, dv value width.
 *  - Every function exists for float (suffix _f32) and double (suffix _f64)
 *    with identical arguments and meaning.
 *  - Every fallible call returns an attn_status; ATTN_OK is 0. On any
 *    nonzero status nothing is printed, nothing aborts, and every output
 *    buffer is left exactly as the caller passed it.
 *  - Arguments are checked in a fixed order and the first failure is
 *    reported: NULL pointers, then zero dimensions, then size overflow, then
 *    the BLAS integer range, then strides, then the scale, then overlap of
 *    outputs with inputs, then memory.
 *  - Softmax uses -INFINITY for masked entries. A row whose entries are all
 *    -INFINITY (or fully masked) yields weights 0 and output 0, never NaN.
 *    A NaN anywhere in a row makes that row's results NaN (it is never
 *    silently dropped). Entries equal to +INFINITY share the row's weight
 *    equally and every finite entry gets 0.
 *  - "scale <= 0" selects the default scale 1/sqrt(d) (1/sqrt(hs) for heads);
 *    a NaN or infinite scale is ATTN_ERR_BAD_SCALE.
 *  - The library keeps no mutable global state, never changes the BLAS
 *    library's process-wide settings (its thread count included), and every
 *    function is safe to call from several threads at once on distinct
 *    output buffers. Results are deterministic for a given build, shape,
 *    SIMD kernel and BLAS thread count.
 *  - The softmax kernel (AVX-512, AVX2 or portable scalar) is chosen once per
 *    process from the CPU; the environment variable ATTN_SIMD=scalar|avx2|
 *    avx512, read at that moment, can force a kernel the CPU supports.
 *
 * Errors (attn_status)
 * --------------------
 *   ATTN_ERR_NULL_POINTER    a required pointer is NULL
 *   ATTN_ERR_ZERO_DIMENSION  a dimension is 0
 *   ATTN_ERR_SIZE_OVERFLOW   a product of dimensions (an array's element or
 *                            byte count) does not fit in size_t
 *   ATTN_ERR_BLAS_RANGE      a dimension or leading dimension handed to BLAS
 *                            exceeds its integer range (INT_MAX here)
 *   ATTN_ERR_BAD_STRIDE      a row stride ld is smaller than the row length
 *   ATTN_ERR_BAD_SCALE       scale is NaN or infinite
 *   ATTN_ERR_ALIASING        an output array overlaps an input array or
 *                            another output array
 *   ATTN_ERR_OUT_OF_MEMORY   a workspace allocation failed
 */
#ifndef ATTN_ATTN_H
#define ATTN_ATTN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version: the macros describe the header, attn_version_* the library */
#define ATTN_VERSION_MAJOR 0
#define ATTN_VERSION_MINOR 1
#define ATTN_VERSION_PATCH 0
#define ATTN_VERSION_NUMBER \
    (ATTN_VERSION_MAJOR * 10000 + ATTN_VERSION_MINOR * 100 + ATTN_VERSION_PATCH)
#define ATTN_VERSION_STRINGIFY_(x) #x
#define ATTN_VERSION_STRINGIFY(x) ATTN_VERSION_STRINGIFY_(x)
#define ATTN_VERSION_STRING                         \
    ATTN_VERSION_STRINGIFY(ATTN_VERSION_MAJOR) "."  \
    ATTN_VERSION_STRINGIFY(ATTN_VERSION_MINOR) "."  \
    ATTN_VERSION_STRINGIFY(ATTN_VERSION_PATCH)

/* ---- symbol visibility: the library is built with hidden symbols */
#if defined(_WIN32) && defined(ATTN_BUILDING_SHARED)
#define ATTN_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define ATTN_API __attribute__((visibility("default")))
#else
#define ATTN_API
#endif

typedef enum attn_status {
    ATTN_OK = 0,
    ATTN_ERR_NULL_POINTER = 1,
    ATTN_ERR_ZERO_DIMENSION = 2,
    ATTN_ERR_SIZE_OVERFLOW = 3,
    ATTN_ERR_BLAS_RANGE = 4,
    ATTN_ERR_BAD_STRIDE = 5,
    ATTN_ERR_BAD_SCALE = 6,
    ATTN_ERR_ALIASING = 7,
    ATTN_ERR_OUT_OF_MEMORY = 8
} attn_status;

/* A static, human-readable description of `status`; never NULL (an unknown
 * value gives "unknown attn_status"). */
ATTN_API const char *attn_status_string(attn_status status);

/* ATTN_VERSION_NUMBER and ATTN_VERSION_STRING of the library actually linked. */
ATTN_API unsigned attn_version_number(void);
ATTN_API const char *attn_version_string(void);

/* Name of the softmax kernel this process uses: "avx512", "avx2" or
 * "scalar". Never NULL. */
ATTN_API const char *attn_simd_name(void);

/* ---- row softmax ---------------------------------------------------------
 * x holds `rows` rows of `cols` entries, row r starting at x + r*ld.
 * In place, each row becomes softmax(row): exp(x_j - max) / sum_k exp(x_k - max).
 * Entries between cols and ld are neither read nor written.
 * Errors: NULL_POINTER (x), ZERO_DIMENSION (rows or cols), BAD_STRIDE
 * (ld < cols), SIZE_OVERFLOW ((rows-1)*ld + cols elements). */
ATTN_API attn_status attn_softmax_rows_f32(float *x, size_t rows, size_t cols, size_t ld);
ATTN_API attn_status attn_softmax_rows_f64(double *x, size_t rows, size_t cols, size_t ld);

/* ---- soft lookup ---------------------------------------------------------
 * q (Tq,d), k (Tk,d), v (Tk,dv) -> out (Tq,dv), weights (Tq,Tk) or NULL:
 *   weights = softmax_rows(scale * q k^T),   out = weights v.
 * scale <= 0 means 1/sqrt(d); the lesson's unscaled lookup is scale = 1.
 * Without a weights buffer a (Tq,Tk) workspace is allocated for the call.
 * Errors: NULL_POINTER (q, k, v, out), ZERO_DIMENSION, SIZE_OVERFLOW,
 * BLAS_RANGE, BAD_SCALE, ALIASING (out or weights overlapping q, k, v or each
 * other), OUT_OF_MEMORY. */
ATTN_API attn_status attn_lookup_f32(size_t Tq, size_t Tk, size_t d, size_t dv, double scale,
                                     const float *q, const float *k, const float *v,
                                     float *out, float *weights);
ATTN_API attn_status attn_lookup_f64(size_t Tq, size_t Tk, size_t d, size_t dv, double scale,
                                     const double *q, const double *k, const double *v,
                                     double *out, double *weights);

/* ---- one projected head (the course's self_attention) --------------------
 * X (B,T,C); Wq, Wk, Wv (C,hs) -> out (B,T,hs), weights (B,T,T) or NULL:
 *   Q = X Wq,  K = X Wk,  V = X Wv                      (B,T,hs)
 *   S = Q K^T / sqrt(hs); if causal, S[b][t][j] = -inf for j > t   (B,T,T)
 *   weights = softmax_rows(S),  out = weights V          (B,T,hs)
 * causal is 0 (every position sees every position) or nonzero.
 * A workspace of 3*B*T*hs + T*T elements is allocated for the call (T*T only
 * when weights is NULL) and freed before returning.
 * Errors: NULL_POINTER (X, Wq, Wk, Wv, out), ZERO_DIMENSION, SIZE_OVERFLOW,
 * BLAS_RANGE, ALIASING (out or weights overlapping X, Wq, Wk, Wv or each
 * other), OUT_OF_MEMORY. */
ATTN_API attn_status attn_self_attention_f32(size_t B, size_t T, size_t C, size_t hs, int causal,
                                             const float *X, const float *Wq, const float *Wk,
                                             const float *Wv, float *out, float *weights);
ATTN_API attn_status attn_self_attention_f64(size_t B, size_t T, size_t C, size_t hs, int causal,
                                             const double *X, const double *Wq, const double *Wk,
                                             const double *Wv, double *out, double *weights);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_ATTN_H */
