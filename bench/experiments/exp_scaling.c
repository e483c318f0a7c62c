/*
 * attn-bench scaling: why the scores are divided by sqrt(hs).
 *
 * Q = X Wq, K = X Wk with X (T,C) ~ N(0,1) and Wq, Wk (C,hs) ~ N(0,1/C), so
 * q and k have unit-variance entries and q.k has variance hs. For each head
 * size, with the scale s = 1/sqrt(hs) and without it (s = 1), over --trials
 * draws: the variance of the scores s Q K^T, and of the weights
 * P = softmax_rows(s Q K^T) (attn_lookup_f64) the mean largest weight, the
 * mean row entropy and the mean norm of the softmax Jacobian (exp_stats.h).
 */
#include <attn/attn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "experiments/exp_common.h"
#include "experiments/exp_stats.h"
#include "experiments/linalg.h"

static const char scaling_description[] =
    "Q = X Wq, K = X Wk with unit-variance entries (X ~ N(0,1), W ~ N(0,1/C)), so\n"
    "q.k has variance hs. For each hs, with s = 1/sqrt(hs) and with s = 1, over\n"
    "--trials draws at the first --T: the variance of the scores s Q K^T; and of\n"
    "P = softmax_rows(s Q K^T) (attn_lookup_f64): the mean largest weight of a row,\n"
    "the mean row entropy (nats; ln T is uniform), the mean Frobenius norm of the\n"
    "softmax Jacobian diag(p) - p p^T (how much gradient reaches the scores: 0\n"
    "for a one-hot row) and the share of saturated rows (largest weight > 0.99).\n"
    "Unscaled, the rows saturate as hs grows and the gradient stops getting\n"
    "through; scaled, nothing depends on hs.\n"
    "--check asserts: scaled variance in (0.5, 2) for every hs; unscaled variance\n"
    "in (0.5, 2) x hs; unscaled largest weight non-decreasing in hs (0.05 slack)\n"
    "and up by 0.3 or more from the first hs to the last; unscaled entropy lower\n"
    "at the last hs than at the first; unscaled saturated share up by 0.1 or more\n"
    "and scaled below 0.05 at the last hs; unscaled mean Jacobian norm at the last\n"
    "hs below 0.75 x its peak; scaled largest weight within 0.2 over hs and\n"
    "scaled Jacobian norm at the last hs above 0.8 x its peak.";

typedef struct scaling_point {
    double variance;
    bench_weights_stats weights;
} scaling_point;

typedef struct scaling_work {
    size_t T, C, hs;
    double *X, *Wq, *Wk, *Q, *K, *S, *P, *out;
} scaling_work;

static void work_free(scaling_work *w)
{
    double *arrays[] = {w->X, w->Wq, w->Wk, w->Q, w->K, w->S, w->P, w->out};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i)
        free(arrays[i]);
}

static int work_create(scaling_work *w, size_t T, size_t C, size_t hs)
{
    *w = (scaling_work){.T = T, .C = C, .hs = hs};
    w->X = malloc(T * C * sizeof(double));
    w->Wq = malloc(C * hs * sizeof(double));
    w->Wk = malloc(C * hs * sizeof(double));
    w->Q = malloc(T * hs * sizeof(double));
    w->K = malloc(T * hs * sizeof(double));
    w->S = malloc(T * T * sizeof(double));
    w->P = malloc(T * T * sizeof(double));
    w->out = malloc(T * hs * sizeof(double));
    return w->X && w->Wq && w->Wk && w->Q && w->K && w->S && w->P && w->out ? 0 : -1;
}

/* One draw: adds its statistics, scaled ([1]) and unscaled ([0]), into sums. */
static int one_trial(scaling_work *w, bench_rng *rng, scaling_point sums[2])
{
    bench_exp_fill_normal(w->X, w->T * w->C, 1.0, rng);
    bench_exp_fill_normal(w->Wq, w->C * w->hs, 1.0 / sqrt((double)w->C), rng);
    bench_exp_fill_normal(w->Wk, w->C * w->hs, 1.0 / sqrt((double)w->C), rng);
    bench_matmul(w->X, w->Wq, w->Q, w->T, w->C, w->hs, 0);
    bench_matmul(w->X, w->Wk, w->K, w->T, w->C, w->hs, 0);
    bench_matmul(w->Q, w->K, w->S, w->T, w->hs, w->T, 1);
    for (int scaled = 0; scaled < 2; ++scaled) {
        const double scale = scaled ? 1.0 / sqrt((double)w->hs) : 1.0;
        if (attn_lookup_f64(w->T, w->T, w->hs, w->hs, scale, w->Q, w->K, w->K, w->out, w->P) !=
            ATTN_OK)
            return -1;
        bench_weights_stats stats;
        bench_weights_stats_of(w->P, w->T, &stats);
        sums[scaled].variance += scale * scale * bench_variance(w->S, w->T * w->T);
        sums[scaled].weights.max_weight += stats.max_weight;
        sums[scaled].weights.entropy += stats.entropy;
        sums[scaled].weights.jacobian += stats.jacobian;
        sums[scaled].weights.saturated += stats.saturated;
    }
    return 0;
}

static int measure(const bench_exp_options *o, size_t hs, scaling_point result[2])
{
    scaling_work w;
    const size_t T = o->T.values[0];
    int status = work_create(&w, T, o->C, hs);
    bench_rng rng;
    bench_rng_seed(&rng, bench_seed_mix(o->seed, hs));
    result[0] = result[1] = (scaling_point){0};
    for (size_t trial = 0; status == 0 && trial < o->trials; ++trial)
        status = one_trial(&w, &rng, result);
    work_free(&w);
    for (int s = 0; s < 2; ++s) {
        result[s].variance /= (double)o->trials;
        result[s].weights.max_weight /= (double)o->trials;
        result[s].weights.entropy /= (double)o->trials;
        result[s].weights.jacobian /= (double)o->trials;
        result[s].weights.saturated /= (double)o->trials;
    }
    return status;
}

/* The largest and the last of a quantity over hs, for one scale. */
static void peak_and_last(const scaling_point (*points)[2], size_t n, int scaled,
                          double (*quantity)(const scaling_point *), double *peak,
                          double *last)
{
    *peak = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double value = quantity(&points[i][scaled]);
        *peak = value > *peak ? value : *peak;
    }
    *last = quantity(&points[n - 1][scaled]);
}

static double jacobian_of(const scaling_point *p)
{
    return p->weights.jacobian;
}

static double max_weight_of(const scaling_point *p)
{
    return p->weights.max_weight;
}

static void check_properties(bench_exp_run *run, const void *results)
{
    const scaling_point(*points)[2] = (const scaling_point(*)[2])results;
    const bench_size_list *hs = &run->options->hs;
    const size_t n = hs->count;
    int variance_scaled = 1, variance_unscaled = 1, monotone = 1;
    double scaled_min_max = 1.0, scaled_max_max, unscaled_peak_jacobian, unscaled_last_jacobian,
           scaled_peak_jacobian, scaled_last_jacobian, last_max;
    for (size_t i = 0; i < n; ++i) {
        double per_hs = points[i][0].variance / (double)hs->values[i];
        variance_scaled &= points[i][1].variance > 0.5 && points[i][1].variance < 2.0;
        variance_unscaled &= per_hs > 0.5 && per_hs < 2.0;
        if (i > 0)
            monotone &=
                points[i][0].weights.max_weight >= points[i - 1][0].weights.max_weight - 0.05;
        double scaled_max = points[i][1].weights.max_weight;
        scaled_min_max = scaled_max < scaled_min_max ? scaled_max : scaled_min_max;
    }
    peak_and_last(points, n, 1, max_weight_of, &scaled_max_max, &last_max);
    peak_and_last(points, n, 0, jacobian_of, &unscaled_peak_jacobian, &unscaled_last_jacobian);
    peak_and_last(points, n, 1, jacobian_of, &scaled_peak_jacobian, &scaled_last_jacobian);
    const scaling_point *first = points[0], *last = points[n - 1];
    bench_exp_check(run, variance_scaled, "scaled scores have variance in (0.5, 2) for every hs");
    bench_exp_check(run, variance_unscaled, "unscaled scores have variance in (0.5, 2) x hs");
    bench_exp_check(run,
                    monotone && last[0].weights.max_weight >= first[0].weights.max_weight + 0.3,
                    "unscaled, the largest weight grows with hs (%.3f at hs=%zu, %.3f at hs=%zu)",
                    first[0].weights.max_weight, hs->values[0], last[0].weights.max_weight,
                    hs->values[n - 1]);
    bench_exp_check(run, last[0].weights.entropy < first[0].weights.entropy,
                    "unscaled, the row entropy falls with hs (%.3f -> %.3f of ln T)",
                    first[0].weights.entropy, last[0].weights.entropy);
    bench_exp_check(run,
                    last[0].weights.saturated > first[0].weights.saturated + 0.1 &&
                        last[1].weights.saturated < 0.05,
                    "unscaled, saturated rows (weight > 0.99) grow with hs (%.2f -> %.2f); "
                    "scaled, %.2f at hs=%zu",
                    first[0].weights.saturated, last[0].weights.saturated,
                    last[1].weights.saturated, hs->values[n - 1]);
    bench_exp_check(run, unscaled_last_jacobian < 0.75 * unscaled_peak_jacobian,
                    "unscaled, the mean Jacobian norm collapses past its peak (%.4f -> %.4f)",
                    unscaled_peak_jacobian, unscaled_last_jacobian);
    bench_exp_check(run,
                    scaled_max_max - scaled_min_max < 0.2 &&
                        scaled_last_jacobian > 0.8 * scaled_peak_jacobian,
                    "scaled, the largest weight (%.3f to %.3f) and the Jacobian norm stay level",
                    scaled_min_max, scaled_max_max);
}

/* panel: 0 std of the scores, 1 largest weight, 2 entropy / ln T, 3 Jacobian,
 * 4 saturated rows; series 0 unscaled, 1 scaled. The entropy is stored over
 * ln T already. */
static double plot_value(const void *data, size_t panel, size_t series, size_t point)
{
    const scaling_point *p = &((const scaling_point(*)[2])data)[point][series];
    const double values[5] = {sqrt(p->variance), p->weights.max_weight, p->weights.entropy,
                              p->weights.jacobian, p->weights.saturated};
    return values[panel];
}

static int plot(const bench_exp_run *run, const void *results)
{
    static const char *const panels[5] = {
        "standard deviation of the scores", "mean largest weight of a row",
        "mean row entropy / ln T", "mean ||softmax Jacobian||_F (gradient that gets through)",
        "share of saturated rows (largest weight > 0.99)"};
    static const char *const series[2] = {"s = 1 (unscaled)", "s = 1/sqrt(hs)"};
    static const int dashed[2] = {1, 0};
    char title[128];
    snprintf(title, sizeof title, "softmax(s Q K^T), T = %zu, unit-variance q and k",
             run->options->T.values[0]);
    const bench_exp_grid grid = {
        .title = title, .x_label = "hs", .y_label = "", .panel_titles = panels,
        .panel_count = 5, .series_titles = series, .dashed = dashed, .series_count = 2,
        .log_x = 2, .y_min = 0.0, .value = plot_value, .data = results};
    return bench_exp_plot_grid(run, &grid);
}

/* Both scales of one hs (scaling_point[2]), into the table and the CSV. */
static int measure_hs(bench_exp_run *run, size_t index, size_t variant, void *entry)
{
    const bench_exp_options *o = run->options;
    const size_t hs = o->hs.values[index];
    const double lnT = log((double)o->T.values[0]);
    scaling_point *pair = entry;
    (void)variant;
    if (measure(o, hs, pair) != 0)
        return -1;
    for (int s = 1; s >= 0; --s) {
        scaling_point *p = &pair[s];
        printf("%5zu %-11s %12.4g %10.4f %9.4f %11.4f %12.5f %9.3f\n", hs,
               s ? "1/sqrt(hs)" : "1", p->variance, p->weights.max_weight, p->weights.entropy,
               p->weights.entropy / lnT, p->weights.jacobian, p->weights.saturated);
        fprintf(run->csv, "%zu,%zu,%zu,%zu,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", hs,
                o->T.values[0], o->C, o->trials, s ? "inv_sqrt_hs" : "none", p->variance,
                p->weights.max_weight, p->weights.entropy, p->weights.entropy / lnT,
                p->weights.jacobian, p->weights.saturated);
        p->weights.entropy /= lnT; /* kept as a fraction of the uniform row's */
    }
    return 0;
}

/* The table's first line and the CSV's header row. */
static const char scaling_table_header[] =
    "   hs scale        var(scores) max weight   entropy entropy/lnT |Jacobian|_F saturated";

static const char scaling_csv_header[] =
    "hs,T,C,trials,scale,score_variance,max_weight,entropy,entropy_over_lnT,jacobian_norm,"
    "saturated_rows";

const bench_experiment bench_experiment_scaling = {
    "scaling", "why the scores are divided by sqrt(hs)", scaling_description,
    {"4:512:x2", "4:64:x2", "256", "32", "256", "32", "4", "2"},
    scaling_table_header, scaling_csv_header,
    NULL, 1, 2 * sizeof(scaling_point), measure_hs, check_properties, plot, 0};
