/*
 * What test_engines runs and checks (see its top): the engines a plan is
 * run on, the sets of shapes (full, medium, small) and which one runs here,
 * the tolerances scaled for long sums, the forward reference on a subset of
 * query rows, the typed output buffers refilled with NaN before each run,
 * the checks of out, weights and gradients, and a plan on an engine.
 * Compiled into test_engines alone.
 */
#ifndef ATTN_TEST_ENGINES_CHECKS_H
#define ATTN_TEST_ENGINES_CHECKS_H

#include <stddef.h>

#include <attn/attn.h>

#include "reference/mha.h"
#include "support/check.h"
#include "support/precision.h"

typedef struct engine {
    const char *name;
    int set;          /* 0: the plan's default, attn_plan_set_threads not called */
    unsigned threads; /* the argument of attn_plan_set_threads */
} engine;

/* the plan's default (ATTN_THREADS_AUTO), BLAS threads, 1, 2 and 3 own threads */
extern const engine engines[5];

typedef struct engine_case {
    mha_dims dims;
    int causal, with_Wo;
    int weights; /* forward: ATTN_MATERIALIZED with the weights (1) or without (0) */
} engine_case;

/* The shapes to run (see the top): full, medium in slow builds, small
 * under valgrind; ATTN_ENGINES_SHAPES=full|medium|small says which. */
typedef enum shapes { SHAPES_FULL, SHAPES_MEDIUM, SHAPES_SMALL } shapes;
extern const char *const shapes_names[3];
shapes shapes_to_run(void);

/* the cases of one set */
typedef struct case_set {
    const engine_case *cases;
    size_t n;
} case_set;
#define CASE_SET(array) {array, N_OF(array)}

/* the suite's tolerances for sums of the shape's lengths (see test_engines' top) */
double forward_tol(const test_prec *p, const mha_shape *s);
double grad_tol(const test_prec *p, const mha_shape *s);

/* ---- the forward reference on a subset of query rows ------------------------ */

#define MAX_ROWS 200

typedef struct rows_ref {
    size_t rows[MAX_ROWS], n; /* the query positions checked, in every batch element */
    size_t width;             /* of an output row: C with Wo, else D */
    double *out;              /* (B, n, width) */
    double *weights;          /* (B, NH, n, T) */
    double out_scale;         /* of the out residual (mha.h) */
} rows_ref;

/* the reference rows of a problem */
rows_ref reference_rows(const mha_data *d);

/* Typed outputs of one shape, made once and refilled (NaN) before every
 * run, so that the runs of all engines need no new memory. */
typedef struct run_buffers {
    void *out, *weights; /* weights: (B,NH,T,T), or NULL when not requested */
    mha_grads grads;     /* typed */
    mha_grads doubles;   /* the gradients converted */
    double *row;         /* one row of out or weights, converted */
} run_buffers;

run_buffers buffers_make(const test_prec *p, const mha_shape *s, int training, int with_weights);
/* All bytes 0xFF, a NaN in both precisions: an element the library does
 * not write (or adds to instead of overwriting) fails its residual. A plain
 * memset, as the buffers are large and refilled for every run. */
void buffers_refill(const test_prec *p, const mha_shape *s, run_buffers *b, int with_weights);

/* a description of the run, for the messages */
const char *describe(char *buf, size_t size, const test_prec *p, const mha_shape *s,
                     const engine *e, const char *path);
/* out (and weights when requested) of one run against the rows reference */
void check_rows(const test_prec *p, const mha_shape *s, const rows_ref *r, run_buffers *b,
                int with_weights, check_worst *w_out, check_worst *w_weights, const char *what);
/* A fresh plan for s with `flags` on engine e, or NULL (the failure
 * recorded). The default engine is checked to be the documented one. */
attn_plan *engine_plan(const test_prec *p, const mha_shape *s, unsigned flags, const engine *e,
                       const char *what);
/* the gradient residuals of mha.h, array by array */
void check_grads(const test_prec *p, const mha_shape *s, run_buffers *b, const mha_grads *ref,
                 check_worst *w, const char *what);

#endif /* ATTN_TEST_ENGINES_CHECKS_H */
