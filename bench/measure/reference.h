/*
 * Correctness check of a configuration before it is timed.
 *
 * Forward (op=forward): plain loops in double on the call's own inputs (for
 * f32 the float values, read exactly). To stay cheap for long sequences it
 * checks the first and the last batch and, in each, `rows_per_batch` query
 * positions spread evenly over [0, T-1] (both ends; 0 or >= T means every
 * position). Each checked row is computed in full: K, V of the whole batch,
 * the query's weights row in every head, its heads row and its out row
 * (times Wo when there is one). Error, per array (out, and the weights when
 * the call wrote them): max |attn - reference| / max |reference| over the
 * checked rows; the larger one is compared with the forward tolerance.
 *
 * Backward (op=backward), when T <= check_grad_max_T: the naive backward
 * (naive.h) in double on double copies of the inputs; the same relative
 * error over each of dX, dWq, dWk, dWv (and dWo), the largest compared with
 * the gradient tolerance. Longer backward configurations are not checked
 * (status skipped): the naive reference costs O(B*NH*T^2*hs) in plain loops.
 */
#ifndef ATTN_BENCH_REFERENCE_H
#define ATTN_BENCH_REFERENCE_H

#include <stddef.h>

#include "measure/problem.h"

#define BENCH_TOLERANCE_F32 1e-4
#define BENCH_TOLERANCE_F64 1e-10
#define BENCH_GRAD_TOLERANCE_F32 1e-3
#define BENCH_GRAD_TOLERANCE_F64 1e-9

typedef enum bench_check_status {
    BENCH_CHECK_PASSED,
    BENCH_CHECK_FAILED, /* error above tolerance, or NaN */
    BENCH_CHECK_SKIPPED /* not checked (backward beyond check_grad_max_T) */
} bench_check_status;

/* A check's outcome, of either sweep command (measure/sdpa_reference.h
 * fills the members the run command leaves 0). */
typedef struct bench_check {
    bench_check_status status;
    double error;       /* the largest relative error (see above; of the arrays') */
    double tolerance;   /* the worst array's (a half type's arrays each have their own) */
    size_t rows;        /* forward: query rows compared (of every head compared);
                         * run's backward: B*T */
    size_t keys;        /* sdpa's backward: key rows of dK, dV compared */
    const char *worst;  /* sdpa: the array with the largest error ("out", "lse",
                         * "dQ", "dK", "dV"); NULL: not said */
    int sampled;        /* sdpa: 0 when everything was compared */
} bench_check;

typedef struct bench_check_policy {
    size_t rows_per_batch;
    size_t check_grad_max_T;
} bench_check_policy;

extern const char *const bench_check_status_names[3];

/* Checks the outputs of the last call on problem. Returns 0, or -1 when
 * memory for the reference runs out. */
int bench_check_problem(const bench_problem *problem, const bench_check_policy *policy,
                        bench_check *check);

#endif /* ATTN_BENCH_REFERENCE_H */
