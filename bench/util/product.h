/*
 * The configurations of a sweep are the cartesian product of its option
 * lists (axes), enumerated with the last axis varying fastest: combination
 * n has index[k] = (n / (counts[k+1] * ... * counts[axes-1])) % counts[k].
 * Both sweep commands (run, sdpa) build their configurations this way.
 */
#ifndef ATTN_BENCH_PRODUCT_H
#define ATTN_BENCH_PRODUCT_H

#include <stddef.h>

#define BENCH_PRODUCT_MAX_AXES 24

typedef struct bench_product {
    size_t counts[BENCH_PRODUCT_MAX_AXES];
    size_t axes;
    size_t total; /* the number of combinations */
} bench_product;

/* The product of counts[0..axes-1]. Returns 0, or -1 when an axis is empty,
 * there are more than BENCH_PRODUCT_MAX_AXES axes or more than `most`
 * combinations. */
int bench_product_init(bench_product *product, const size_t *counts, size_t axes, size_t most);

/* index[k]: the entry of axis k in combination n (n < total). */
void bench_product_at(const bench_product *product, size_t n, size_t *index);

#endif /* ATTN_BENCH_PRODUCT_H */
