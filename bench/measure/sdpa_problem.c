#include "measure/sdpa_problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

static int multiply(size_t *product, size_t factor)
{
    if (factor != 0 && *product > SIZE_MAX / factor)
        return -1;
    *product *= factor;
    return 0;
}

/* The product of n sizes into *count; -1 on overflow. */
static int element_count(size_t *count, size_t n, const size_t *factors)
{
    *count = 1;
    for (size_t i = 0; i < n; ++i)
        if (multiply(count, factors[i]) != 0)
            return -1;
    return 0;
}

static void *allocate(size_t count, bench_dtype dtype)
{
    size_t bytes = count;
    if (multiply(&bytes, bench_dtype_size(dtype)) != 0)
        return NULL;
    return malloc(bytes ? bytes : 1);
}

/* count values uniform on [-sqrt 3, sqrt 3]: drawn as f32 (for bf16 and f16
 * too, then rounded to the half type with attn's conversion) or f64. */
static void fill_uniform(bench_rng *rng, bench_dtype dtype, void *array, size_t count)
{
    const double half_width = sqrt(3.0);
    if (dtype == BENCH_F64) {
        double *x = array;
        for (size_t i = 0; i < count; ++i)
            x[i] = (2.0 * bench_rng_uniform(rng) - 1.0) * half_width;
        return;
    }
    enum { CHUNK = 256 };
    float chunk[CHUNK];
    for (size_t first = 0; first < count; first += CHUNK) {
        const size_t n = count - first < CHUNK ? count - first : CHUNK;
        float *x = dtype == BENCH_F32 ? (float *)array + first : chunk;
        for (size_t i = 0; i < n; ++i)
            x[i] = (float)((2.0 * bench_rng_uniform(rng) - 1.0) * half_width);
        if (dtype != BENCH_F32)
            bench_dtype_half_from_float(dtype, chunk, (char *)array + first * 2, n);
    }
}

static void fill_value(bench_dtype dtype, void *array, size_t first, size_t count, double value)
{
    for (size_t i = 0; i < count; ++i)
        bench_dtype_store(dtype, array, first + i, value);
}

/* A (B, T, H, d) array in its layout, drawn in the (b, t, h, i) order of
 * bshd: the same numbers in every layout. */
static void fill_strided(bench_rng *rng, bench_dtype dtype, void *array,
                         const bench_sdpa_strides *at, size_t B, size_t T, size_t H, size_t d)
{
    const size_t element = bench_dtype_size(dtype);
    for (size_t b = 0; b < B; ++b)
        for (size_t t = 0; t < T; ++t)
            for (size_t h = 0; h < H; ++h)
                fill_uniform(rng, dtype, (char *)array + bench_sdpa_at(at, b, h, t) * element,
                             d);
}

/* Slots [from, to) of every key/value head of sequence b of K and V: value. */
static void fill_slots(bench_sdpa_problem *p, size_t b, size_t from, size_t to, double value)
{
    const bench_sdpa_shape *s = &p->shape;
    for (size_t g = 0; g < s->NH_kv; ++g)
        for (size_t j = from; j < to; ++j) {
            fill_value(s->dtype, p->K, bench_sdpa_at(&p->strides.k, b, g, j), s->hs, value);
            fill_value(s->dtype, p->V, bench_sdpa_at(&p->strides.v, b, g, j), s->hs_v, value);
        }
}

/* The KV cache slots j >= L_b of every sequence (a loop's L_b = Tk): NaN. */
static void poison_slots(bench_sdpa_problem *p)
{
    const bench_sdpa_shape *s = &p->shape;
    for (size_t b = 0; b < s->B; ++b)
        fill_slots(p, b, bench_sdpa_length(s, b), bench_sdpa_capacity(s), (double)NAN);
    p->poisoned_slots = 1;
}

static void fill_mask(bench_sdpa_problem *p, bench_rng *rng)
{
    const bench_sdpa_shape *s = &p->shape;
    const bench_dtype m = bench_dtype_float_part(s->dtype); /* a half call's mask is float */
    if (s->mask == BENCH_SDPA_MASK_PADDING) {
        for (size_t b = 0; b < s->B; ++b) {
            const size_t length = bench_sdpa_length(s, b);
            fill_value(m, p->mask, b * s->Tk, length, 0.0);
            fill_value(m, p->mask, b * s->Tk + length, s->Tk - length, -(double)INFINITY);
        }
        return;
    }
    fill_uniform(rng, m, p->mask, p->mask_count); /* [-sqrt 3, sqrt 3], then -inf */
    for (size_t b = 0; b < s->B; ++b) {
        const size_t length = bench_sdpa_length(s, b);
        for (size_t row = 0; row < s->NH * s->Tq; ++row)
            fill_value(m, p->mask, (b * s->NH * s->Tq + row) * s->Tk + length,
                       s->Tk - length, -(double)INFINITY);
    }
}

/* Element counts; -1 when one overflows. */
static int count_elements(bench_sdpa_problem *p)
{
    const bench_sdpa_shape *s = &p->shape;
    const size_t T = bench_sdpa_capacity(s);
    const size_t q[] = {s->B, s->Tq, s->NH, s->hs}, k[] = {s->B, T, s->NH_kv, s->hs},
                 v[] = {s->B, T, s->NH_kv, s->hs_v}, o[] = {s->B, s->Tq, s->NH, s->hs_v},
                 l[] = {s->B, s->NH, s->Tq}, m[] = {s->B, s->NH, s->Tq, s->Tk},
                 steps[] = {p->steps, s->B, s->NH, s->hs > s->hs_v ? s->hs : s->hs_v};
    size_t all_steps;
    if (element_count(&p->q_count, 4, q) || element_count(&p->kv_count, 4, k) ||
        element_count(&p->v_count, 4, v) || element_count(&p->out_count, 4, o) ||
        element_count(&p->lse_count, 3, l) || element_count(&p->mask_count, 4, m) ||
        element_count(&all_steps, 4, steps))
        return -1;
    if (s->mask == BENCH_SDPA_MASK_PADDING) {
        p->mask_count = s->B * s->Tk;
        p->mask_sb = s->Tk; /* mask_ld = mask_sh = 0: broadcast over heads and queries */
    } else if (s->mask == BENCH_SDPA_MASK_FULL) {
        p->mask_ld = s->Tk;
        p->mask_sh = s->Tq * s->Tk;
        p->mask_sb = s->NH * s->Tq * s->Tk;
    } else {
        p->mask_count = 0;
    }
    return 0;
}

static int allocate_arrays(bench_sdpa_problem *p)
{
    const bench_sdpa_shape *s = &p->shape;
    const bench_dtype d = s->dtype, f = bench_dtype_float_part(d); /* f: mask, lse */
    const int loop = s->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP;
    p->Q = allocate(p->q_count * p->steps, d);
    p->K = allocate(p->kv_count, d);
    p->V = allocate(p->v_count, d);
    p->out = allocate(p->out_count * p->steps, d);
    p->lse = allocate(p->lse_count, f);
    int failed = !p->Q || !p->K || !p->V || !p->out || !p->lse;
    if (p->mask_count) {
        p->mask = allocate(p->mask_count, f);
        failed |= !p->mask;
    }
    if (s->op == BENCH_OP_BACKWARD) {
        p->dout = allocate(p->out_count, d);
        p->dQ = allocate(p->q_count, d);
        p->dK = allocate(p->kv_count, d);
        p->dV = allocate(p->v_count, d);
        failed |= !p->dout || !p->dQ || !p->dK || !p->dV;
    }
    if (loop) {
        p->K_new = allocate(p->steps * s->B * s->NH_kv * s->hs, d);
        p->V_new = allocate(p->steps * s->B * s->NH_kv * s->hs_v, d);
        failed |= !p->K_new || !p->V_new;
    }
    const int with_lengths =
        loop || (s->mask == BENCH_SDPA_MASK_NONE && s->lengths && s->lengths->count > 0);
    if (with_lengths) {
        p->key_lengths = malloc(s->B * sizeof *p->key_lengths);
        failed |= !p->key_lengths;
    }
    return failed ? -1 : 0;
}

static void fill_arrays(bench_sdpa_problem *p, uint64_t seed)
{
    const bench_sdpa_shape *s = &p->shape;
    const bench_dtype d = s->dtype;
    const bench_sdpa_layout_strides *at = &p->strides;
    bench_rng rng;
    /* a half type's inputs are the f32 ones rounded: the same seed */
    uint64_t mixed = bench_seed_mix(seed, bench_dtype_float_part(d));
    const size_t sizes[] = {s->B, s->NH, s->NH_kv, s->Tq, s->Tk, s->hs, s->hs_v};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        mixed = bench_seed_mix(mixed, sizes[i]);
    bench_rng_seed(&rng, mixed);
    const size_t element = bench_dtype_size(d);
    for (size_t step = 0; step < p->steps; ++step)
        fill_strided(&rng, d, (char *)p->Q + step * p->q_count * element, &at->q, s->B, s->Tq,
                     s->NH, s->hs);
    fill_strided(&rng, d, p->K, &at->k, s->B, s->Tk, s->NH_kv, s->hs);
    fill_strided(&rng, d, p->V, &at->v, s->B, s->Tk, s->NH_kv, s->hs_v);
    if (p->dout) /* dout as out */
        fill_strided(&rng, d, p->dout, &at->o, s->B, s->Tq, s->NH, s->hs_v);
    if (p->mask)
        fill_mask(p, &rng);
    if (p->K_new) {
        fill_uniform(&rng, d, p->K_new, p->steps * s->B * s->NH_kv * s->hs);
        fill_uniform(&rng, d, p->V_new, p->steps * s->B * s->NH_kv * s->hs_v);
    }
    if (p->key_lengths) {
        for (size_t b = 0; b < s->B; ++b)
            p->key_lengths[b] = bench_sdpa_length(s, b);
        poison_slots(p);
    }
}

int bench_sdpa_problem_create(bench_sdpa_problem *p, const bench_sdpa_shape *shape,
                              uint64_t seed, char *error, size_t error_size)
{
    memset(p, 0, sizeof *p);
    p->shape = *shape;
    p->strides = bench_sdpa_layout_of(shape);
    p->steps = shape->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP ? shape->steps : 1;
    if (count_elements(p) != 0) {
        snprintf(error, error_size, "the arrays' sizes overflow");
        return -1;
    }
    if (allocate_arrays(p) != 0) {
        bench_sdpa_problem_destroy(p);
        snprintf(error, error_size, "out of memory for the arrays");
        return -1;
    }
    fill_arrays(p, seed);
    return 0;
}

int bench_sdpa_problem_fits(const bench_sdpa_problem *p, const bench_sdpa_shape *s)
{
    const bench_sdpa_shape *a = &p->shape;
    return p->Q && a->dtype == s->dtype && a->op == s->op && a->mask == s->mask &&
           a->B == s->B && a->NH == s->NH && a->NH_kv == s->NH_kv && a->Tq == s->Tq &&
           a->Tk == s->Tk && a->hs == s->hs && a->hs_v == s->hs_v && a->lengths == s->lengths &&
           a->layout == s->layout && a->scenario == s->scenario && a->steps == s->steps;
}

void bench_sdpa_problem_poison_outputs(bench_sdpa_problem *p)
{
    const bench_dtype d = p->shape.dtype;
    fill_value(d, p->out, 0, p->out_count * p->steps, (double)NAN);
    fill_value(bench_dtype_float_part(d), p->lse, 0, p->lse_count, (double)NAN);
    if (p->dQ) {
        fill_value(d, p->dQ, 0, p->q_count, (double)NAN);
        fill_value(d, p->dK, 0, p->kv_count, (double)NAN);
        fill_value(d, p->dV, 0, p->v_count, (double)NAN);
    }
}

void bench_sdpa_problem_destroy(bench_sdpa_problem *p)
{
    void *arrays[] = {p->Q,  p->K,  p->V,     p->mask,  p->out,        p->lse, p->dout,
                      p->dQ, p->dK, p->dV,    p->K_new, p->V_new, p->key_lengths};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i)
        free(arrays[i]);
    memset(p, 0, sizeof *p);
}
