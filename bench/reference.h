/*
 * Correctness check of one configuration against a naive reference.
 *
 * The reference is plain loops in double on the call's own inputs (for f32
 * the float values, read exactly): Q, K, V = X Wq, X Wk, X Wv; scores
 * q.k / sqrt(hs); causal keys j > t get weight 0; softmax with the row max
 * subtracted; out = weights V.
 *
 * To stay cheap for long sequences it checks the first and the last batch
 * and, in each, `rows_per_batch` query positions spread evenly over
 * [0, T-1] (both ends included; 0 or >= T means every position). Each checked
 * row is computed in full: its query against all keys, its whole weights row
 * and output row.
 *
 * Error measure, per array (out, and weights when requested):
 *   max |attn - reference| / max |reference|   over the checked rows;
 * the larger of the two is compared with the tolerance of the dtype.
 */
#ifndef ATTN_BENCH_REFERENCE_H
#define ATTN_BENCH_REFERENCE_H

#include <stddef.h>

#include "problem.h"

#define BENCH_TOLERANCE_F32 1e-4
#define BENCH_TOLERANCE_F64 1e-10

typedef struct bench_check {
    double out_error;     /* relative error of out (see above) */
    double weights_error; /* the same for weights; 0 without weights */
    double error;         /* the larger: the number compared with tolerance */
    double tolerance;
    size_t rows_checked; /* query rows, over all checked batches */
    int passed;          /* error <= tolerance (NaN fails) */
} bench_check;

double bench_check_tolerance(bench_dtype dtype);

/* Checks the outputs of the last bench_problem_run. Returns 0, or -1 when
 * memory for the reference runs out. */
int bench_check_problem(const bench_problem *problem, size_t rows_per_batch,
                        bench_check *check);

#endif /* ATTN_BENCH_REFERENCE_H */
