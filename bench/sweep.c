#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>

int bench_shape_is_valid(const bench_shape *shape)
{
    (void)shape; /* every combination of positive sizes is a valid call today */
    return 1;
}

/* The product of the list lengths, or 0 when it exceeds BENCH_SWEEP_MAX. */
static size_t combination_count(const bench_options *o)
{
    size_t lengths[6] = {o->dtype_count, o->causal_count, o->B.count,
                         o->C.count,     o->hs.count,     o->T.count};
    size_t product = 1;
    for (size_t i = 0; i < 6; ++i) {
        if (lengths[i] > BENCH_SWEEP_MAX / product)
            return 0;
        product *= lengths[i];
    }
    return product;
}

int bench_sweep_build(const bench_options *o, bench_sweep *sweep, char *error,
                      size_t error_size)
{
    sweep->count = 0;
    size_t capacity = combination_count(o);
    if (capacity == 0) {
        snprintf(error, error_size, "the sweep has more than %d configurations",
                 BENCH_SWEEP_MAX);
        return -1;
    }
    sweep->shapes = malloc(capacity * sizeof *sweep->shapes);
    if (!sweep->shapes) {
        snprintf(error, error_size, "out of memory for %zu configurations", capacity);
        return -1;
    }
    for (size_t d = 0; d < o->dtype_count; ++d)
        for (size_t m = 0; m < o->causal_count; ++m)
            for (size_t b = 0; b < o->B.count; ++b)
                for (size_t c = 0; c < o->C.count; ++c)
                    for (size_t h = 0; h < o->hs.count; ++h)
                        for (size_t t = 0; t < o->T.count; ++t) {
                            bench_shape shape = {
                                .dtype = o->dtypes[d],
                                .causal = o->causal[m],
                                .B = o->B.values[b],
                                .C = o->C.values[c],
                                .hs = o->hs.values[h],
                                .T = o->T.values[t],
                            };
                            if (bench_shape_is_valid(&shape))
                                sweep->shapes[sweep->count++] = shape;
                        }
    return 0;
}

void bench_sweep_free(bench_sweep *sweep)
{
    free(sweep->shapes);
    sweep->shapes = NULL;
    sweep->count = 0;
}
