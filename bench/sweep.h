/*
 * The configurations of a sweep: the cartesian product of the dtype, causal,
 * B, C, hs and T lists, in that nesting order (T varies fastest), leaving out
 * invalid combinations (none today: hs may exceed C).
 */
#ifndef ATTN_BENCH_SWEEP_H
#define ATTN_BENCH_SWEEP_H

#include <stddef.h>

#include "options.h"
#include "problem.h"

#define BENCH_SWEEP_MAX 100000

typedef struct bench_sweep {
    bench_shape *shapes;
    size_t count;
} bench_sweep;

/* Whether attn-bench runs this combination. */
int bench_shape_is_valid(const bench_shape *shape);

/* Returns 0, or -1 with a reason in error (more than BENCH_SWEEP_MAX
 * configurations, memory). */
int bench_sweep_build(const bench_options *options, bench_sweep *sweep, char *error,
                      size_t error_size);

void bench_sweep_free(bench_sweep *sweep);

#endif /* ATTN_BENCH_SWEEP_H */
