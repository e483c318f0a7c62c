#include "reference.h"

#include <math.h>
#include <stdlib.h>

/* Largest absolute difference and largest absolute reference value seen so
 * far for one output array; a NaN difference sticks. */
typedef struct error_tally {
    double max_difference;
    double max_reference;
} error_tally;

static void tally_add(error_tally *tally, double computed, double reference)
{
    double difference = fabs(computed - reference);
    if (isnan(difference) || difference > tally->max_difference)
        tally->max_difference = difference;
    if (fabs(reference) > tally->max_reference)
        tally->max_reference = fabs(reference);
}

static double tally_relative_error(const error_tally *tally)
{
    if (isnan(tally->max_difference))
        return (double)NAN;
    if (tally->max_reference == 0.0)
        return tally->max_difference == 0.0 ? 0.0 : HUGE_VAL;
    return tally->max_difference / tally->max_reference;
}

/* dst[i] = (double)src[offset + i] for i < count */
static void load_doubles(bench_dtype dtype, const void *src, size_t offset, size_t count,
                         double *dst)
{
    for (size_t i = 0; i < count; ++i)
        dst[i] = bench_dtype_load(dtype, src, offset + i);
}

/* product (M,N) = a (M,K) b (K,N), all row-major */
static void naive_matmul(const double *a, const double *b, double *product, size_t M,
                         size_t K, size_t N)
{
    for (size_t i = 0; i < M; ++i) {
        double *row = product + i * N;
        for (size_t j = 0; j < N; ++j)
            row[j] = 0.0;
        for (size_t k = 0; k < K; ++k) {
            double a_ik = a[i * K + k];
            for (size_t j = 0; j < N; ++j)
                row[j] += a_ik * b[k * N + j];
        }
    }
}

/* The query positions checked: n spread evenly over [0, T-1]. */
static size_t checked_position(size_t index, size_t n, size_t T)
{
    return n == 1 ? 0 : index * (T - 1) / (n - 1);
}

typedef struct reference_workspace {
    double *X;  /* (T,C) of one batch */
    double *Wq; /* (C,hs) */
    double *Wk;
    double *Wv;
    double *K; /* (T,hs) */
    double *V;
    double *q;       /* (hs) */
    double *weights; /* (T) */
    double *out;     /* (hs) */
} reference_workspace;

static int workspace_create(reference_workspace *w, const bench_shape *s)
{
    size_t weight_count = s->C * s->hs; /* sizes checked by bench_problem_create */
    w->X = malloc(s->T * s->C * sizeof(double));
    w->Wq = malloc(weight_count * sizeof(double));
    w->Wk = malloc(weight_count * sizeof(double));
    w->Wv = malloc(weight_count * sizeof(double));
    w->K = malloc(s->T * s->hs * sizeof(double));
    w->V = malloc(s->T * s->hs * sizeof(double));
    w->q = malloc(s->hs * sizeof(double));
    w->weights = malloc(s->T * sizeof(double));
    w->out = malloc(s->hs * sizeof(double));
    return w->X && w->Wq && w->Wk && w->Wv && w->K && w->V && w->q && w->weights && w->out
               ? 0
               : -1;
}

static void workspace_destroy(reference_workspace *w)
{
    free(w->X);
    free(w->Wq);
    free(w->Wk);
    free(w->Wv);
    free(w->K);
    free(w->V);
    free(w->q);
    free(w->weights);
    free(w->out);
}

/* The reference weights row and output row of query position t (batch loaded
 * in w->X, K and V computed). */
static void reference_row(const bench_shape *s, reference_workspace *w, size_t t)
{
    naive_matmul(w->X + t * s->C, w->Wq, w->q, 1, s->C, s->hs);
    size_t visible = s->causal ? t + 1 : s->T;
    double scale = 1.0 / sqrt((double)s->hs);
    double max_score = -HUGE_VAL;
    for (size_t j = 0; j < visible; ++j) {
        double dot = 0.0;
        for (size_t d = 0; d < s->hs; ++d)
            dot += w->q[d] * w->K[j * s->hs + d];
        w->weights[j] = dot * scale;
        max_score = w->weights[j] > max_score ? w->weights[j] : max_score;
    }
    double sum = 0.0;
    for (size_t j = 0; j < visible; ++j) {
        w->weights[j] = exp(w->weights[j] - max_score);
        sum += w->weights[j];
    }
    for (size_t j = 0; j < s->T; ++j)
        w->weights[j] = j < visible ? w->weights[j] / sum : 0.0;
    naive_matmul(w->weights, w->V, w->out, 1, s->T, s->hs);
}

double bench_check_tolerance(bench_dtype dtype)
{
    return dtype == BENCH_F32 ? BENCH_TOLERANCE_F32 : BENCH_TOLERANCE_F64;
}

int bench_check_problem(const bench_problem *problem, size_t rows_per_batch,
                        bench_check *check)
{
    const bench_shape *s = &problem->shape;
    reference_workspace w = {0};
    if (workspace_create(&w, s) != 0) {
        workspace_destroy(&w);
        return -1;
    }
    load_doubles(s->dtype, problem->Wq, 0, s->C * s->hs, w.Wq);
    load_doubles(s->dtype, problem->Wk, 0, s->C * s->hs, w.Wk);
    load_doubles(s->dtype, problem->Wv, 0, s->C * s->hs, w.Wv);

    size_t rows = rows_per_batch == 0 || rows_per_batch > s->T ? s->T : rows_per_batch;
    size_t batches[2] = {0, s->B - 1};
    size_t batch_count = s->B > 1 ? 2 : 1;
    error_tally out_tally = {0.0, 0.0}, weights_tally = {0.0, 0.0};
    check->rows_checked = 0;
    for (size_t bi = 0; bi < batch_count; ++bi) {
        size_t b = batches[bi];
        load_doubles(s->dtype, problem->X, b * s->T * s->C, s->T * s->C, w.X);
        naive_matmul(w.X, w.Wk, w.K, s->T, s->C, s->hs);
        naive_matmul(w.X, w.Wv, w.V, s->T, s->C, s->hs);
        for (size_t r = 0; r < rows; ++r) {
            size_t t = checked_position(r, rows, s->T);
            reference_row(s, &w, t);
            size_t row = b * s->T + t;
            for (size_t d = 0; d < s->hs; ++d)
                tally_add(&out_tally, bench_dtype_load(s->dtype, problem->out, row * s->hs + d),
                          w.out[d]);
            for (size_t j = 0; problem->weights && j < s->T; ++j)
                tally_add(&weights_tally,
                          bench_dtype_load(s->dtype, problem->weights, row * s->T + j),
                          w.weights[j]);
            check->rows_checked++;
        }
    }
    workspace_destroy(&w);

    check->out_error = tally_relative_error(&out_tally);
    check->weights_error = problem->weights ? tally_relative_error(&weights_tally) : 0.0;
    check->error = isnan(check->out_error) || check->weights_error <= check->out_error
                       ? check->out_error
                       : check->weights_error;
    check->tolerance = bench_check_tolerance(s->dtype);
    check->passed = check->error <= check->tolerance;
    return 0;
}
