/*
 * Random test inputs and library calls on them, shared by the suites: every
 * input is drawn in double and rounded to the element type, so the double
 * reference sees exactly what the library sees.
 */
#ifndef ATTN_TEST_INPUTS_H
#define ATTN_TEST_INPUTS_H

#include <stddef.h>

#include "support/precision.h"
#include "support/rng.h"

/* n values stddev * N(0,1), rounded to the element type (talloc'd) */
double *random_rounded(const test_prec *p, test_rng *rng, size_t n, double stddev);

/* a copy of src[0..n) rounded to the element type (talloc'd) */
double *rounded_copy(const test_prec *p, const double *src, size_t n);

/* One projected head's inputs, X (B,T,C) and Wq/Wk/Wv (C,hs), with its
 * values V = X Wv (B,T,hs) computed by the reference. */
typedef struct head_data {
    size_t B, T, C, hs;
    double *X, *Wq, *Wk, *Wv, *V;
} head_data;

/* X ~ N(0,1), W* ~ N(0, (w_gain^2)/C): Q, K, V and the scaled scores are
 * O(w_gain) */
head_data head_random(const test_prec *p, test_rng *rng, size_t B, size_t T, size_t C, size_t hs,
                      double w_gain);
/* the given arrays, rounded to the element type */
head_data head_from(const test_prec *p, size_t B, size_t T, size_t C, size_t hs, const double *X,
                    const double *Wq, const double *Wk, const double *Wv);
/* recomputes h->V after h->X or h->Wv changed */
void head_project_values(head_data *h);

/* attn_self_attention on h (with X instead of h->X when X is not NULL);
 * fails the test unless it returns ATTN_OK. *out gets the output as doubles;
 * weights are requested when `weights` is not NULL and returned there. */
void head_run(const test_prec *p, const head_data *h, const double *X, int causal, double **out,
              double **weights);

/* head_run's output and weights against the reference: out residual against
 * max|V|, weights per row (check.h), tolerance p->tol */
void head_check(const test_prec *p, const head_data *h, int causal, int with_weights,
                const char *what);

/* head_check for long sequences, with the reference evaluated only for the
 * query positions rows[0..n_rows) (each < T) of every batch element: the
 * reference row t is the attention of query t over keys 0..t (causal) or
 * all keys, on Q, K, V projected in double. */
void head_check_rows(const test_prec *p, const head_data *h, int causal, int with_weights,
                     const size_t *rows, size_t n_rows, const char *what);

#endif /* ATTN_TEST_INPUTS_H */
