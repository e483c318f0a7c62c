#include "problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* *product = a * b; returns -1 when it overflows size_t. */
static int multiply_sizes(size_t a, size_t b, size_t *product)
{
    if (b != 0 && a > SIZE_MAX / b)
        return -1;
    *product = a * b;
    return 0;
}

static void *allocate_elements(bench_dtype dtype, size_t count)
{
    size_t bytes = 0;
    if (multiply_sizes(count, bench_dtype_size(dtype), &bytes) != 0)
        return NULL;
    return malloc(bytes);
}

static void fill_normal(bench_dtype dtype, void *array, size_t count, double scale,
                        bench_rng *rng)
{
    for (size_t i = 0; i < count; ++i)
        bench_dtype_store(dtype, array, i, scale * bench_rng_normal(rng));
}

static uint64_t shape_seed(uint64_t seed, const bench_shape *shape)
{
    uint64_t mixed = bench_seed_mix(seed, shape->B);
    mixed = bench_seed_mix(mixed, shape->T);
    mixed = bench_seed_mix(mixed, shape->C);
    return bench_seed_mix(mixed, shape->hs);
}

int bench_problem_create(bench_problem *problem, const bench_shape *shape, int with_weights,
                         uint64_t seed, char *error, size_t error_size)
{
    memset(problem, 0, sizeof *problem);
    problem->shape = *shape;
    size_t rows = 0, x_count = 0, w_count = 0, out_count = 0, weights_count = 0;
    if (multiply_sizes(shape->B, shape->T, &rows) != 0 ||
        multiply_sizes(rows, shape->C, &x_count) != 0 ||
        multiply_sizes(shape->C, shape->hs, &w_count) != 0 ||
        multiply_sizes(rows, shape->hs, &out_count) != 0 ||
        multiply_sizes(rows, shape->T, &weights_count) != 0) {
        snprintf(error, error_size, "array sizes overflow size_t");
        return -1;
    }
    bench_dtype dtype = shape->dtype;
    problem->X = allocate_elements(dtype, x_count);
    problem->Wq = allocate_elements(dtype, w_count);
    problem->Wk = allocate_elements(dtype, w_count);
    problem->Wv = allocate_elements(dtype, w_count);
    problem->out = allocate_elements(dtype, out_count);
    if (with_weights)
        problem->weights = allocate_elements(dtype, weights_count);
    if (!problem->X || !problem->Wq || !problem->Wk || !problem->Wv || !problem->out ||
        (with_weights && !problem->weights)) {
        bench_problem_destroy(problem);
        snprintf(error, error_size, "out of memory for the inputs and outputs");
        return -1;
    }

    bench_rng rng;
    bench_rng_seed(&rng, shape_seed(seed, shape));
    double weight_scale = 1.0 / sqrt((double)shape->C);
    fill_normal(dtype, problem->X, x_count, 1.0, &rng);
    fill_normal(dtype, problem->Wq, w_count, weight_scale, &rng);
    fill_normal(dtype, problem->Wk, w_count, weight_scale, &rng);
    fill_normal(dtype, problem->Wv, w_count, weight_scale, &rng);
    return 0;
}

void bench_problem_destroy(bench_problem *problem)
{
    free(problem->X);
    free(problem->Wq);
    free(problem->Wk);
    free(problem->Wv);
    free(problem->out);
    free(problem->weights);
    memset(problem, 0, sizeof *problem);
}

void bench_problem_poison_outputs(bench_problem *problem)
{
    const bench_shape *s = &problem->shape;
    size_t rows = s->B * s->T; /* checked in bench_problem_create */
    for (size_t i = 0; i < rows * s->hs; ++i)
        bench_dtype_store(s->dtype, problem->out, i, (double)NAN);
    for (size_t i = 0; problem->weights && i < rows * s->T; ++i)
        bench_dtype_store(s->dtype, problem->weights, i, (double)NAN);
}

attn_status bench_problem_run(const bench_problem *p)
{
    const bench_shape *s = &p->shape;
    if (s->dtype == BENCH_F32)
        return attn_self_attention_f32(s->B, s->T, s->C, s->hs, s->causal, p->X, p->Wq, p->Wk,
                                       p->Wv, p->out, p->weights);
    return attn_self_attention_f64(s->B, s->T, s->C, s->hs, s->causal, p->X, p->Wq, p->Wk,
                                   p->Wv, p->out, p->weights);
}
