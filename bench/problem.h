/*
 * One benchmark configuration and the arrays its measured call works on.
 *
 * Inputs are deterministic: X ~ N(0, 1) and Wq, Wk, Wv ~ N(0, 1) / sqrt(C),
 * drawn from bench_rng with a seed derived from (seed, B, T, C, hs), so a
 * shape has the same inputs in every sweep and both precisions see the same
 * numbers (f32 holds them rounded). The 1/sqrt(C) scale keeps Q, K, V and the
 * scores of order 1 for every C, so the softmax is neither uniform nor
 * one-hot and no timing depends on underflowing exponentials. (The course's
 * small example uses W * 0.25 with C = 64, i.e. 2/sqrt(C).)
 */
#ifndef ATTN_BENCH_PROBLEM_H
#define ATTN_BENCH_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include <attn/attn.h>

#include "dtype.h"

typedef struct bench_shape {
    bench_dtype dtype;
    int causal; /* 0 or 1 */
    size_t B, T, C, hs;
} bench_shape;

typedef struct bench_problem {
    bench_shape shape;
    void *X;       /* (B,T,C) */
    void *Wq;      /* (C,hs) */
    void *Wk;      /* (C,hs) */
    void *Wv;      /* (C,hs) */
    void *out;     /* (B,T,hs) */
    void *weights; /* (B,T,T), or NULL when weights were not requested */
} bench_problem;

/* Allocates and fills the inputs. Returns 0, or -1 with a reason in error
 * (sizes that overflow, memory). */
int bench_problem_create(bench_problem *problem, const bench_shape *shape, int with_weights,
                         uint64_t seed, char *error, size_t error_size);

void bench_problem_destroy(bench_problem *problem);

/* Fills out (and weights) with NaN, so a check sees what a call did not write. */
void bench_problem_poison_outputs(bench_problem *problem);

/* The measured call: attn_self_attention_f32 or _f64 on the problem's arrays. */
attn_status bench_problem_run(const bench_problem *problem);

#endif /* ATTN_BENCH_PROBLEM_H */
