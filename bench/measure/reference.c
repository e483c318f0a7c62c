#include "measure/reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measure/naive.h"

const char *const bench_check_status_names[3] = {"passed", "failed", "skipped"};

/* Largest absolute difference and largest absolute reference value seen so
 * far for one array; a NaN difference sticks. */
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

/* The larger of two errors, NaN winning. */
static double worse(double a, double b)
{
    return isnan(a) || a >= b ? a : b;
}

/* A double copy of count elements of array from offset. NULL on failure. */
static double *load_doubles(bench_dtype dtype, const void *array, size_t offset, size_t count)
{
    double *copy = malloc((count ? count : 1) * sizeof *copy);
    for (size_t i = 0; copy && i < count; ++i)
        copy[i] = bench_dtype_load(dtype, array, offset + i);
    return copy;
}

/* ---- forward: checked rows -------------------------------------------------- */

typedef struct row_reference {
    const bench_shape *s;
    size_t D;
    double *X, *Wq, *Wk, *Wv, *Wo; /* X: the batch (T,C); Wo NULL without */
    double *K, *V;                 /* (T,D) of the batch */
    double *q, *y, *out, *weights; /* (D), (D), (out width), (NH*T) */
} row_reference;

/* v (D) = x (C) W (C,D) */
static void row_times_matrix(const double *x, const double *W, double *v, size_t C, size_t D)
{
    for (size_t d = 0; d < D; ++d)
        v[d] = 0.0;
    for (size_t c = 0; c < C; ++c)
        for (size_t d = 0; d < D; ++d)
            v[d] += x[c] * W[c * D + d];
}

/* The reference weights rows (every head) and out row of query position t. */
static void reference_row(row_reference *r, size_t t)
{
    const bench_shape *s = r->s;
    const size_t visible = s->causal ? t + 1 : s->T;
    const double scale = 1.0 / sqrt((double)s->hs);
    row_times_matrix(r->X + t * s->C, r->Wq, r->q, s->C, r->D);
    for (size_t h = 0; h < s->NH; ++h) {
        double *w = r->weights + h * s->T, max = -HUGE_VAL, sum = 0.0;
        for (size_t j = 0; j < visible; ++j) {
            double dot = 0.0;
            for (size_t i = 0; i < s->hs; ++i)
                dot += r->q[h * s->hs + i] * r->K[j * r->D + h * s->hs + i];
            w[j] = dot * scale;
            max = w[j] > max ? w[j] : max;
        }
        for (size_t j = 0; j < visible; ++j)
            sum += (w[j] = exp(w[j] - max));
        for (size_t j = 0; j < s->T; ++j)
            w[j] = j < visible ? w[j] / sum : 0.0;
        for (size_t i = 0; i < s->hs; ++i) {
            double mixed = 0.0;
            for (size_t j = 0; j < visible; ++j)
                mixed += w[j] * r->V[j * r->D + h * s->hs + i];
            r->y[h * s->hs + i] = mixed;
        }
    }
    if (r->Wo)
        row_times_matrix(r->y, r->Wo, r->out, r->D, s->C);
    else
        memcpy(r->out, r->y, r->D * sizeof *r->out);
}

static void row_reference_free(row_reference *r)
{
    double *arrays[] = {r->X, r->Wq, r->Wk, r->Wv, r->Wo, r->K, r->V,
                        r->q, r->y,  r->out, r->weights};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i)
        free(arrays[i]);
}

static int row_reference_create(row_reference *r, const bench_problem *p)
{
    const bench_shape *s = &p->shape;
    memset(r, 0, sizeof *r);
    r->s = s;
    r->D = bench_shape_heads_width(s);
    const size_t W = s->C * r->D, out_width = bench_shape_out_width(s);
    r->Wq = load_doubles(s->dtype, p->Wq, 0, W);
    r->Wk = load_doubles(s->dtype, p->Wk, 0, W);
    r->Wv = load_doubles(s->dtype, p->Wv, 0, W);
    r->Wo = p->Wo ? load_doubles(s->dtype, p->Wo, 0, W) : NULL;
    r->K = malloc(s->T * r->D * sizeof *r->K);
    r->V = malloc(s->T * r->D * sizeof *r->V);
    r->q = malloc(r->D * sizeof *r->q);
    r->y = malloc(r->D * sizeof *r->y);
    r->out = malloc(out_width * sizeof *r->out);
    r->weights = malloc(s->NH * s->T * sizeof *r->weights);
    return r->Wq && r->Wk && r->Wv && (r->Wo || !p->Wo) && r->K && r->V && r->q && r->y &&
                   r->out && r->weights
               ? 0
               : -1;
}

/* K and V of batch b (loaded into r->X). */
static int load_batch(row_reference *r, const bench_problem *p, size_t b)
{
    const bench_shape *s = r->s;
    free(r->X);
    r->X = load_doubles(s->dtype, p->X, b * s->T * s->C, s->T * s->C);
    if (!r->X)
        return -1;
    for (size_t t = 0; t < s->T; ++t) {
        row_times_matrix(r->X + t * s->C, r->Wk, r->K + t * r->D, s->C, r->D);
        row_times_matrix(r->X + t * s->C, r->Wv, r->V + t * r->D, s->C, r->D);
    }
    return 0;
}

/* The query positions checked: n spread evenly over [0, T-1]. */
static size_t checked_position(size_t index, size_t n, size_t T)
{
    return n == 1 ? 0 : index * (T - 1) / (n - 1);
}

static void compare_row(const row_reference *r, const bench_problem *p, size_t b, size_t t,
                        error_tally *out_tally, error_tally *weights_tally)
{
    const bench_shape *s = r->s;
    const size_t out_width = bench_shape_out_width(s), row = b * s->T + t;
    for (size_t i = 0; i < out_width; ++i)
        tally_add(out_tally, bench_dtype_load(s->dtype, p->out, row * out_width + i),
                  r->out[i]);
    for (size_t h = 0; p->weights && h < s->NH; ++h)
        for (size_t j = 0; j < s->T; ++j)
            tally_add(weights_tally,
                      bench_dtype_load(s->dtype, p->weights,
                                       ((b * s->NH + h) * s->T + t) * s->T + j),
                      r->weights[h * s->T + j]);
}

static int check_forward(const bench_problem *p, size_t rows_per_batch, bench_check *check)
{
    const bench_shape *s = &p->shape;
    row_reference r;
    if (row_reference_create(&r, p) != 0) {
        row_reference_free(&r);
        return -1;
    }
    const size_t rows = rows_per_batch == 0 || rows_per_batch > s->T ? s->T : rows_per_batch;
    const size_t batches[2] = {0, s->B - 1};
    error_tally out_tally = {0.0, 0.0}, weights_tally = {0.0, 0.0};
    check->rows = 0;
    for (size_t bi = 0; bi < (s->B > 1 ? 2u : 1u); ++bi) {
        if (load_batch(&r, p, batches[bi]) != 0) {
            row_reference_free(&r);
            return -1;
        }
        for (size_t i = 0; i < rows; ++i) {
            size_t t = checked_position(i, rows, s->T);
            reference_row(&r, t);
            compare_row(&r, p, batches[bi], t, &out_tally, &weights_tally);
            check->rows++;
        }
    }
    row_reference_free(&r);
    check->error = tally_relative_error(&out_tally);
    if (p->weights)
        check->error = worse(check->error, tally_relative_error(&weights_tally));
    check->tolerance = s->dtype == BENCH_F32 ? BENCH_TOLERANCE_F32 : BENCH_TOLERANCE_F64;
    return 0;
}

/* ---- backward: every gradient ------------------------------------------------ */

/* The inputs of p as doubles, with f64 gradient buffers. */
static int double_copy(const bench_problem *p, bench_problem *copy)
{
    char reason[128];
    bench_shape shape = p->shape;
    shape.dtype = BENCH_F64;
    if (bench_problem_create(copy, &shape, 0, 0, reason, sizeof reason) != 0)
        return -1;
    bench_problem_sizes n;
    bench_problem_sizes_of(&shape, &n);
    const void *from[] = {p->X, p->Wq, p->Wk, p->Wv, p->Wo, p->dout};
    void *to[] = {copy->X, copy->Wq, copy->Wk, copy->Wv, copy->Wo, copy->dout};
    const size_t counts[] = {n.X, n.W, n.W, n.W, n.Wo, n.out};
    for (size_t a = 0; a < 6; ++a)
        for (size_t i = 0; from[a] && i < counts[a]; ++i)
            ((double *)to[a])[i] = bench_dtype_load(p->shape.dtype, from[a], i);
    return 0;
}

static double array_error(bench_dtype dtype, const void *computed, const double *reference,
                          size_t count)
{
    error_tally tally = {0.0, 0.0};
    for (size_t i = 0; i < count; ++i)
        tally_add(&tally, bench_dtype_load(dtype, computed, i), reference[i]);
    return tally_relative_error(&tally);
}

static int check_backward(const bench_problem *p, bench_check *check)
{
    const bench_shape *s = &p->shape;
    bench_problem reference;
    bench_naive_workspace workspace;
    if (double_copy(p, &reference) != 0)
        return -1;
    if (bench_naive_workspace_create(&workspace, &reference.shape) != 0) {
        bench_problem_destroy(&reference);
        return -1;
    }
    bench_naive_run(&reference, &workspace);
    bench_naive_workspace_destroy(&workspace);

    bench_problem_sizes n;
    bench_problem_sizes_of(s, &n);
    const void *computed[] = {p->dX, p->dWq, p->dWk, p->dWv, p->dWo};
    const double *expected[] = {reference.dX, reference.dWq, reference.dWk, reference.dWv,
                                reference.dWo};
    const size_t counts[] = {n.X, n.W, n.W, n.W, n.Wo};
    check->error = 0.0;
    for (size_t a = 0; a < 5; ++a)
        if (computed[a])
            check->error = worse(check->error, array_error(s->dtype, computed[a], expected[a],
                                                           counts[a]));
    bench_problem_destroy(&reference);
    check->rows = s->B * s->T;
    check->tolerance = s->dtype == BENCH_F32 ? BENCH_GRAD_TOLERANCE_F32
                                             : BENCH_GRAD_TOLERANCE_F64;
    return 0;
}

int bench_check_problem(const bench_problem *problem, const bench_check_policy *policy,
                        bench_check *check)
{
    memset(check, 0, sizeof *check);
    int result;
    if (problem->shape.op == BENCH_OP_FORWARD) {
        result = check_forward(problem, policy->rows_per_batch, check);
    } else if (problem->shape.T <= policy->check_grad_max_T) {
        result = check_backward(problem, check);
    } else {
        check->status = BENCH_CHECK_SKIPPED;
        return 0;
    }
    check->status = check->error <= check->tolerance ? BENCH_CHECK_PASSED : BENCH_CHECK_FAILED;
    return result;
}
