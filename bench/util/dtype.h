/*
 * The element types attn-bench measures, handled as data instead of as two
 * copies of every routine: buffers are void * and elements are read and
 * written through bench_dtype_load / bench_dtype_store (always via double,
 * which holds every float, bfloat16 and float16 exactly).
 *
 * f32 and f64 are every command's (the run command, the ceilings' GEMMs);
 * bf16 and f16 (attn.h's "half precision": attn_bf16, attn_f16, 16 bits in
 * storage, float in arithmetic) are the sdpa command's only, after them in
 * the enum so that arrays over the float types (BENCH_DTYPE_COUNT) keep
 * their size. A half type's elements are converted with attn's own
 * attn_*_from_f32 / attn_*_to_f32 (widening exact, narrowing to nearest
 * even), after the value is rounded to float.
 */
#ifndef ATTN_BENCH_DTYPE_H
#define ATTN_BENCH_DTYPE_H

#include <stddef.h>

typedef enum bench_dtype {
    BENCH_F32 = 0,
    BENCH_F64 = 1,
    BENCH_BF16 = 2, /* attn_bf16: the sdpa command's only */
    BENCH_F16 = 3   /* attn_f16: the sdpa command's only */
} bench_dtype;

/* The float types (f32, f64): every command's, and the GEMM ceiling's. */
#define BENCH_DTYPE_COUNT 2
/* Every type, the half ones included (the sdpa command's --dtype). */
#define BENCH_DTYPE_ALL_COUNT 4

/* "f32", "f64", "bf16" or "f16" */
const char *bench_dtype_name(bench_dtype dtype);

size_t bench_dtype_size(bench_dtype dtype);

/* bf16 or f16 */
int bench_dtype_is_half(bench_dtype dtype);

/* The float type of a dtype's arithmetic and of the arrays a half call
 * keeps in float (mask, lse): f32 for bf16 and f16, else the dtype. */
bench_dtype bench_dtype_float_part(bench_dtype dtype);

/* The unit roundoff of a half type: 2^-8 (bf16), 2^-11 (f16); 0 otherwise. */
double bench_dtype_half_unit(bench_dtype dtype);

/* array[index] = value, rounded to the element type */
void bench_dtype_store(bench_dtype dtype, void *array, size_t index, double value);

/* (double)array[index] */
double bench_dtype_load(bench_dtype dtype, const void *array, size_t index);

/* n elements of a half type (bf16, f16) widened into float (exact). */
void bench_dtype_half_to_float(bench_dtype dtype, const void *src, float *dst, size_t n);

/* n floats rounded to a half type (bf16, f16), to nearest even. */
void bench_dtype_half_from_float(bench_dtype dtype, const float *src, void *dst, size_t n);

#endif /* ATTN_BENCH_DTYPE_H */
