#include "util/dtype.h"

#include <string.h>

#include <attn/attn.h>

static const char *const names[BENCH_DTYPE_ALL_COUNT] = {"f32", "f64", "bf16", "f16"};

const char *bench_dtype_name(bench_dtype dtype)
{
    return (unsigned)dtype < BENCH_DTYPE_ALL_COUNT ? names[dtype] : "?";
}

size_t bench_dtype_size(bench_dtype dtype)
{
    switch (dtype) {
    case BENCH_F32:
        return sizeof(float);
    case BENCH_F64:
        return sizeof(double);
    default:
        return sizeof(uint16_t);
    }
}

int bench_dtype_is_half(bench_dtype dtype)
{
    return dtype == BENCH_BF16 || dtype == BENCH_F16;
}

bench_dtype bench_dtype_float_part(bench_dtype dtype)
{
    return bench_dtype_is_half(dtype) ? BENCH_F32 : dtype;
}

double bench_dtype_half_unit(bench_dtype dtype)
{
    return dtype == BENCH_BF16 ? 1.0 / 256.0 : dtype == BENCH_F16 ? 1.0 / 2048.0 : 0.0;
}

void bench_dtype_half_to_float(bench_dtype dtype, const void *src, float *dst, size_t n)
{
    if (dtype == BENCH_BF16)
        attn_bf16_to_f32(src, dst, n);
    else
        attn_f16_to_f32(src, dst, n);
}

void bench_dtype_half_from_float(bench_dtype dtype, const float *src, void *dst, size_t n)
{
    if (dtype == BENCH_BF16)
        attn_bf16_from_f32(src, dst, n);
    else
        attn_f16_from_f32(src, dst, n);
}

void bench_dtype_store(bench_dtype dtype, void *array, size_t index, double value)
{
    const float single = (float)value;
    switch (dtype) {
    case BENCH_F32:
        ((float *)array)[index] = single;
        break;
    case BENCH_F64:
        ((double *)array)[index] = value;
        break;
    default:
        bench_dtype_half_from_float(dtype, &single, (uint16_t *)array + index, 1);
        break;
    }
}

double bench_dtype_load(bench_dtype dtype, const void *array, size_t index)
{
    switch (dtype) {
    case BENCH_F32:
        return (double)((const float *)array)[index];
    case BENCH_F64:
        return ((const double *)array)[index];
    default: {
        float single;
        bench_dtype_half_to_float(dtype, (const uint16_t *)array + index, &single, 1);
        return (double)single;
    }
    }
}

