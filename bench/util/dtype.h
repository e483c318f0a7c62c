/*
 * The element types attn-bench measures, handled as data instead of as two
 * copies of every routine: buffers are void * and elements are read and
 * written through bench_dtype_load / bench_dtype_store (always via double,
 * which holds every float exactly).
 */
#ifndef ATTN_BENCH_DTYPE_H
#define ATTN_BENCH_DTYPE_H

#include <stddef.h>

typedef enum bench_dtype { BENCH_F32 = 0, BENCH_F64 = 1 } bench_dtype;

#define BENCH_DTYPE_COUNT 2

/* "f32" or "f64" */
const char *bench_dtype_name(bench_dtype dtype);

/* Parses "f32" or "f64"; returns 0 on success, -1 on an unknown name. */
int bench_dtype_parse(const char *text, bench_dtype *dtype);

size_t bench_dtype_size(bench_dtype dtype);

/* array[index] = value, rounded to the element type */
void bench_dtype_store(bench_dtype dtype, void *array, size_t index, double value);

/* (double)array[index] */
double bench_dtype_load(bench_dtype dtype, const void *array, size_t index);

/* value rounded to the element type and back, i.e. what a store/load keeps */
double bench_dtype_round(bench_dtype dtype, double value);

#endif /* ATTN_BENCH_DTYPE_H */
