/*
 * attn-bench init: orthogonal initialization of the projections against
 * Gaussian, and its effect on the scores.
 *
 * Wq, Wk (C,hs), hs <= C: Gaussian N(0, 1/C) entries (columns of norm about
 * 1), or hs orthonormal columns (the Q of a Gaussian's QR, LAPACKE_dgeqrf +
 * dorgqr: norm exactly 1). Per draw: the condition number of Wq (its
 * singular values), the distance from an isometry ||Wq^T Wq - I||_F/sqrt(hs),
 * the variance the scaled scores have for unit Gaussian inputs given these
 * weights, exactly ||Wq Wk^T||_F^2 / hs, the variance measured on X (T,C) ~
 * N(0,1), and the mean largest weight of softmax(Q K^T / sqrt(hs))
 * (attn_lookup_f64). Orthonormal columns make the first three exact: 1, 0, 1.
 */
#include <attn/attn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "experiments/exp_common.h"
#include "experiments/exp_stats.h"
#include "experiments/linalg.h"

static const char init_description[] =
    "Wq, Wk (C,hs), hs <= C: Gaussian N(0,1/C) entries, or hs orthonormal columns\n"
    "(QR of a Gaussian, LAPACKE_dgeqrf + dorgqr). Over --trials draws per hs: the\n"
    "condition number of Wq, ||Wq^T Wq - I||_F/sqrt(hs), the variance of the\n"
    "scaled scores for unit Gaussian inputs given the weights (exactly\n"
    "||Wq Wk^T||_F^2/hs; its mean and sd over the draws), the variance measured on\n"
    "X (T,C) ~ N(0,1), and the mean largest weight (attn_lookup_f64).\n"
    "--check asserts: orthogonal gives cond(Wq) = 1, Wq^T Wq = I and score variance\n"
    "1 to 1e-9; Gaussian cond(Wq) > 1.1 for hs >= 2; the score variance's sd over\n"
    "draws is smaller with orthogonal weights. An --hs above --C is a bad argument.";

enum { GAUSSIAN = 0, ORTHOGONAL = 1 };
static const char *const init_names[2] = {"gaussian", "orthogonal"};

typedef struct init_stats {
    double condition, isometry_error;
    double exact_variance, exact_variance_sd, measured_variance, max_weight;
} init_stats;

typedef struct init_work {
    size_t T, C, hs;
    double *X, *Wq, *Wk, *Q, *K, *S, *P, *out, *M, *sigma;
} init_work;

static void work_free(init_work *w)
{
    double *arrays[] = {w->X, w->Wq, w->Wk, w->Q, w->K, w->S, w->P, w->out, w->M, w->sigma};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i)
        free(arrays[i]);
}

static int work_create(init_work *w, size_t T, size_t C, size_t hs)
{
    *w = (init_work){.T = T, .C = C, .hs = hs};
    const size_t counts[] = {T * C, C * hs, C * hs, T * hs, T * hs, T * T, T * T, T * hs,
                             C * (C > hs ? C : hs), hs};
    double **arrays[] = {&w->X, &w->Wq, &w->Wk, &w->Q, &w->K, &w->S, &w->P, &w->out, &w->M,
                         &w->sigma};
    int status = 0;
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i)
        if (!(*arrays[i] = malloc(counts[i] * sizeof(double))))
            status = -1;
    return status;
}

static int draw_weights(init_work *w, int init, bench_rng *rng)
{
    if (init == ORTHOGONAL)
        return bench_orthonormal_columns(w->Wq, w->C, w->hs, rng) == 0 &&
                       bench_orthonormal_columns(w->Wk, w->C, w->hs, rng) == 0
                   ? 0
                   : -1;
    bench_exp_fill_normal(w->Wq, w->C * w->hs, 1.0 / sqrt((double)w->C), rng);
    bench_exp_fill_normal(w->Wk, w->C * w->hs, 1.0 / sqrt((double)w->C), rng);
    return 0;
}

/* ||Wq^T Wq - I||_F / sqrt(hs), with M as workspace */
static double isometry_error(init_work *w)
{
    for (size_t i = 0; i < w->hs; ++i)
        for (size_t j = 0; j < w->hs; ++j) {
            double dot = 0.0;
            for (size_t c = 0; c < w->C; ++c)
                dot += w->Wq[c * w->hs + i] * w->Wq[c * w->hs + j];
            w->M[i * w->hs + j] = dot - (i == j ? 1.0 : 0.0);
        }
    return bench_frobenius(w->M, w->hs * w->hs) / sqrt((double)w->hs);
}

/* One draw's statistics; exact_variance_sd is left 0 (the caller's). */
static int one_trial(init_work *w, int init, bench_rng *rng, init_stats *s)
{
    if (draw_weights(w, init, rng) != 0 || bench_singular_values(w->Wq, w->C, w->hs, w->sigma))
        return -1;
    s->condition = w->sigma[0] / w->sigma[w->hs - 1];
    s->isometry_error = isometry_error(w);
    bench_matmul(w->Wq, w->Wk, w->M, w->C, w->hs, w->C, 1);
    const double norm = bench_frobenius(w->M, w->C * w->C);
    s->exact_variance = norm * norm / (double)w->hs;
    bench_exp_fill_normal(w->X, w->T * w->C, 1.0, rng);
    bench_matmul(w->X, w->Wq, w->Q, w->T, w->C, w->hs, 0);
    bench_matmul(w->X, w->Wk, w->K, w->T, w->C, w->hs, 0);
    bench_matmul(w->Q, w->K, w->S, w->T, w->hs, w->T, 1);
    s->measured_variance = bench_variance(w->S, w->T * w->T) / (double)w->hs;
    if (attn_lookup_f64(w->T, w->T, w->hs, w->hs, 0.0, w->Q, w->K, w->K, w->out, w->P) !=
        ATTN_OK)
        return -1;
    bench_weights_stats weights;
    bench_weights_stats_of(w->P, w->T, &weights);
    s->max_weight = weights.max_weight;
    return 0;
}

/* Means over the trials (and the spread of the exact variance). */
static int measure(const bench_exp_options *o, size_t hs, int init, init_stats *mean)
{
    init_work w;
    int status = work_create(&w, o->T.values[0], o->C, hs);
    bench_rng rng;
    bench_rng_seed(&rng, bench_seed_mix(bench_seed_mix(o->seed, hs), (uint64_t)init));
    *mean = (init_stats){0};
    double deviations = 0.0; /* Welford: sum of squared deviations of the exact variance */
    for (size_t trial = 0; status == 0 && trial < o->trials; ++trial) {
        init_stats s = {0};
        status = one_trial(&w, init, &rng, &s);
        const double n = (double)(trial + 1), before = mean->exact_variance;
        mean->exact_variance += (s.exact_variance - before) / n;
        deviations += (s.exact_variance - before) * (s.exact_variance - mean->exact_variance);
        mean->condition += (s.condition - mean->condition) / n;
        mean->isometry_error += (s.isometry_error - mean->isometry_error) / n;
        mean->measured_variance += (s.measured_variance - mean->measured_variance) / n;
        mean->max_weight += (s.max_weight - mean->max_weight) / n;
    }
    work_free(&w);
    mean->exact_variance_sd = sqrt(deviations / (double)o->trials);
    return status;
}

static double plot_value(const void *data, size_t panel, size_t series, size_t point)
{
    const init_stats *s = &((const init_stats(*)[2])data)[point][series];
    const double values[3] = {s->condition, s->isometry_error, s->exact_variance_sd};
    return values[panel];
}

static int plot(const bench_exp_run *run, const void *results)
{
    static const char *const panels[3] = {"condition number of Wq",
                                          "||Wq^T Wq - I||_F / sqrt(hs)",
                                          "spread (sd over draws) of the score variance"};
    char title[128];
    snprintf(title, sizeof title, "Gaussian against orthogonal Wq, Wk (C = %zu)",
             run->options->C);
    const bench_exp_grid grid = {
        .title = title, .x_label = "hs", .y_label = "", .panel_titles = panels,
        .panel_count = 3, .series_titles = init_names, .series_count = 2, .log_x = 2,
        .log_y = 10, .value = plot_value, .data = results};
    return bench_exp_plot_grid(run, &grid);
}

static void check_properties(bench_exp_run *run, const void *results)
{
    const init_stats(*stats)[2] = (const init_stats(*)[2])results;
    const bench_size_list *hs = &run->options->hs;
    int orthogonal_exact = 1, gaussian_conditioned = 1, spread_smaller = 1;
    for (size_t i = 0; i < hs->count; ++i) {
        const init_stats *g = &stats[i][GAUSSIAN], *q = &stats[i][ORTHOGONAL];
        orthogonal_exact &= q->condition <= 1.0 + 1e-9 && q->isometry_error <= 1e-12 &&
                            fabs(q->exact_variance - 1.0) <= 1e-9;
        gaussian_conditioned &= hs->values[i] < 2 || g->condition > 1.1;
        spread_smaller &= q->exact_variance_sd < g->exact_variance_sd;
    }
    bench_exp_check(run, orthogonal_exact,
                    "orthogonal: cond(Wq) = 1, Wq^T Wq = I and score variance exactly 1 "
                    "(1e-9)");
    bench_exp_check(run, gaussian_conditioned, "gaussian: cond(Wq) > 1.1 for every hs >= 2");
    bench_exp_check(run, spread_smaller,
                    "the score variance varies less between draws with orthogonal weights");
}

/* One initialization of one hs, into the table and the CSV. */
static int measure_point(bench_exp_run *run, size_t index, size_t init, void *entry)
{
    const bench_exp_options *o = run->options;
    init_stats *s = entry;
    if (measure(o, o->hs.values[index], (int)init, s) != 0)
        return -1;
    printf("%5zu %-10s %10.4g %12.3e %10.6f %10.3e %10.4f %10.4f\n", o->hs.values[index],
           init_names[init], s->condition, s->isometry_error, s->exact_variance,
           s->exact_variance_sd, s->measured_variance, s->max_weight);
    fprintf(run->csv, "%zu,%zu,%zu,%zu,%s,%.6g,%.6g,%.9g,%.6g,%.6g,%.6g\n", o->hs.values[index],
            o->C, o->T.values[0], o->trials, init_names[init], s->condition, s->isometry_error,
            s->exact_variance, s->exact_variance_sd, s->measured_variance, s->max_weight);
    return 0;
}

/* The table's first line and the CSV's header row. */
static const char init_table_header[] =
    "   hs init         cond(Wq)  |WtW-I|/rhs  var exact   sd exact  var meas. max weight";

static const char init_csv_header[] =
    "hs,C,T,trials,init,condition,isometry_error,exact_score_variance,"
    "exact_score_variance_sd,measured_score_variance,max_weight";

const bench_experiment bench_experiment_init = {
    "init", "orthogonal against Gaussian initialization of Wq, Wk", init_description,
    {"8,16,32,64,128,256", "4,8,16,32", "256", "32", "256", "32", "16", "4"},
    init_table_header, init_csv_header,
    NULL, 2, sizeof(init_stats), measure_point, check_properties, plot, 1};
