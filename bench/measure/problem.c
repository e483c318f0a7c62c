#include "measure/problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

/* *product = a * b; returns -1 when it overflows size_t. */
static int multiply_sizes(size_t a, size_t b, size_t *product)
{
    if (b != 0 && a > SIZE_MAX / b)
        return -1;
    *product = a * b;
    return 0;
}

int bench_problem_sizes_of(const bench_shape *s, bench_problem_sizes *sizes)
{
    size_t rows = 0, D = 0, tile = 0, batch_heads = 0, heads_tiles = 0;
    if (multiply_sizes(s->B, s->T, &rows) != 0 || multiply_sizes(s->NH, s->hs, &D) != 0 ||
        multiply_sizes(s->B, s->NH, &batch_heads) != 0 ||
        multiply_sizes(rows, s->C, &sizes->X) != 0 ||
        multiply_sizes(s->C, D, &sizes->W) != 0 ||
        multiply_sizes(rows, bench_shape_out_width(s), &sizes->out) != 0 ||
        multiply_sizes(s->T, s->T, &tile) != 0 ||
        multiply_sizes(batch_heads, tile, &heads_tiles) != 0)
        return -1;
    sizes->Wo = s->wo ? sizes->W : 0;
    sizes->weights = heads_tiles;
    return 0;
}

static void *allocate_elements(bench_dtype dtype, size_t count)
{
    size_t bytes = 0;
    if (count == 0 || multiply_sizes(count, bench_dtype_size(dtype), &bytes) != 0)
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
    const size_t sizes[] = {shape->B, shape->T, shape->C, shape->NH, shape->hs};
    uint64_t mixed = seed;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        mixed = bench_seed_mix(mixed, sizes[i]);
    return mixed;
}

/* The arrays of the problem with their element counts, for allocation and
 * poisoning alike; inputs first. */
typedef struct array_slot {
    void **array;
    size_t count;
    int wanted;
    int is_output;
} array_slot;

enum { SLOT_COUNT = 14 };

static void list_slots(bench_problem *p, const bench_problem_sizes *n, int with_weights,
                       array_slot slots[SLOT_COUNT])
{
    const int backward = p->shape.op == BENCH_OP_BACKWARD, wo = p->shape.wo;
    const array_slot all[SLOT_COUNT] = {
        {&p->X, n->X, 1, 0},          {&p->Wq, n->W, 1, 0},
        {&p->Wk, n->W, 1, 0},         {&p->Wv, n->W, 1, 0},
        {&p->Wo, n->Wo, wo, 0},       {&p->dout, n->out, backward, 0},
        {&p->out, n->out, 1, 1},      {&p->weights, n->weights, with_weights, 1},
        {&p->dX, n->X, backward, 1},  {&p->dWq, n->W, backward, 1},
        {&p->dWk, n->W, backward, 1}, {&p->dWv, n->W, backward, 1},
        {&p->dWo, n->Wo, backward && wo, 1}, {NULL, 0, 0, 0},
    };
    memcpy(slots, all, sizeof all);
}

int bench_problem_create(bench_problem *problem, const bench_shape *shape, int with_weights,
                         uint64_t seed, char *error, size_t error_size)
{
    memset(problem, 0, sizeof *problem);
    problem->shape = *shape;
    bench_problem_sizes n;
    if (bench_problem_sizes_of(shape, &n) != 0) {
        snprintf(error, error_size, "array sizes overflow size_t");
        return -1;
    }
    array_slot slots[SLOT_COUNT];
    list_slots(problem, &n, with_weights, slots);
    for (size_t i = 0; slots[i].array; ++i) {
        if (!slots[i].wanted)
            continue;
        *slots[i].array = allocate_elements(shape->dtype, slots[i].count);
        if (!*slots[i].array) {
            bench_problem_destroy(problem);
            snprintf(error, error_size, "out of memory for the inputs and outputs");
            return -1;
        }
    }

    bench_rng rng;
    bench_rng_seed(&rng, shape_seed(seed, shape));
    const bench_dtype dtype = shape->dtype;
    const double weight_scale = 1.0 / sqrt((double)shape->C);
    fill_normal(dtype, problem->X, n.X, 1.0, &rng);
    fill_normal(dtype, problem->Wq, n.W, weight_scale, &rng);
    fill_normal(dtype, problem->Wk, n.W, weight_scale, &rng);
    fill_normal(dtype, problem->Wv, n.W, weight_scale, &rng);
    if (problem->Wo)
        fill_normal(dtype, problem->Wo, n.Wo,
                    1.0 / sqrt((double)bench_shape_heads_width(shape)), &rng);
    if (problem->dout)
        fill_normal(dtype, problem->dout, n.out, 1.0, &rng);
    return 0;
}

void bench_problem_destroy(bench_problem *problem)
{
    bench_problem_sizes n = {0};
    array_slot slots[SLOT_COUNT];
    list_slots(problem, &n, 1, slots);
    for (size_t i = 0; slots[i].array; ++i)
        free(*slots[i].array);
    memset(problem, 0, sizeof *problem);
}

void bench_problem_poison_outputs(bench_problem *problem)
{
    bench_problem_sizes n;
    if (bench_problem_sizes_of(&problem->shape, &n) != 0)
        return;
    array_slot slots[SLOT_COUNT];
    list_slots(problem, &n, problem->weights != NULL, slots);
    for (size_t i = 0; slots[i].array; ++i)
        for (size_t e = 0; slots[i].is_output && *slots[i].array && e < slots[i].count; ++e)
            bench_dtype_store(problem->shape.dtype, *slots[i].array, e, (double)NAN);
}
