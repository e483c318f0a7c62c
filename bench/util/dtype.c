#include "util/dtype.h"

#include <string.h>

const char *bench_dtype_name(bench_dtype dtype)
{
    return dtype == BENCH_F32 ? "f32" : "f64";
}

int bench_dtype_parse(const char *text, bench_dtype *dtype)
{
    if (strcmp(text, "f32") == 0) {
        *dtype = BENCH_F32;
        return 0;
    }
    if (strcmp(text, "f64") == 0) {
        *dtype = BENCH_F64;
        return 0;
    }
    return -1;
}

size_t bench_dtype_size(bench_dtype dtype)
{
    return dtype == BENCH_F32 ? sizeof(float) : sizeof(double);
}

void bench_dtype_store(bench_dtype dtype, void *array, size_t index, double value)
{
    if (dtype == BENCH_F32)
        ((float *)array)[index] = (float)value;
    else
        ((double *)array)[index] = value;
}

double bench_dtype_load(bench_dtype dtype, const void *array, size_t index)
{
    if (dtype == BENCH_F32)
        return (double)((const float *)array)[index];
    return ((const double *)array)[index];
}

double bench_dtype_round(bench_dtype dtype, double value)
{
    return dtype == BENCH_F32 ? (double)(float)value : value;
}
