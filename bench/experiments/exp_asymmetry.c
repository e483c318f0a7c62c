/*
 * attn-bench asymmetry: the lesson's point as a number. With separate Wq and
 * Wk the scores S = Q K^T are not symmetric; with a shared Wq = Wk they are,
 * exactly: S[i][j] and S[j][i] are then the same sum of the same products in
 * the same order (computed here by one loop for every entry).
 *
 * Per draw: X (T,C) ~ N(0,1), Wq, Wk (C,hs) ~ N(0,1/C) (Wk = Wq shared),
 * ||S - S^T||_F / ||S||_F of the scores, and the same of the weights
 * P = softmax_rows(S / sqrt(hs)) (attn_lookup_f64), which no sharing makes
 * symmetric: each row is normalized by its own sum.
 */
#include <attn/attn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "experiments/exp_common.h"
#include "experiments/linalg.h"

static const char asymmetry_description[] =
    "Scores S = Q K^T with Q = X Wq, K = X Wk (X ~ N(0,1) (T,C), W ~ N(0,1/C)), once\n"
    "with separate Wq, Wk and once with Wk = Wq (the same X and Wq). Per hs, over\n"
    "--trials draws: ||S - S^T||_F/||S||_F (mean and largest), the same for the\n"
    "weights softmax(S/sqrt(hs)) (attn_lookup_f64), and, like the lesson, the\n"
    "scaled scores S[0,1] and S[1,0] of the first draw. Every entry of S is the\n"
    "same loop, so a shared matrix gives S[i,j] and S[j,i] bit for bit equal.\n"
    "--check asserts: shared gives exactly 0 in every draw; separate gives more\n"
    "than 1 on average (sqrt(2) is expected for independent projections); the\n"
    "shared weights are still asymmetric (each row has its own normalization).";

enum { SEPARATE = 0, SHARED = 1 };
static const char *const kind_names[2] = {"separate Wq, Wk", "shared Wq = Wk"};
static const char *const kind_keys[2] = {"separate", "shared"};

typedef struct asymmetry_stats {
    double scores_mean, scores_max, weights_mean;
    double s01, s10; /* first draw: S[0][1] and S[1][0] / sqrt(hs), as the lesson prints */
} asymmetry_stats;

/* ||A - A^T||_F / ||A||_F of a (T,T) matrix */
static double relative_asymmetry(const double *A, size_t T)
{
    double difference = 0.0, norm = 0.0;
    for (size_t i = 0; i < T; ++i)
        for (size_t j = 0; j < T; ++j) {
            double d = A[i * T + j] - A[j * T + i];
            difference += d * d;
            norm += A[i * T + j] * A[i * T + j];
        }
    return norm > 0.0 ? sqrt(difference / norm) : 0.0;
}

/* S[i][j] = Q_i . K_j, every entry by the same loop. */
static void scores(const double *Q, const double *K, double *S, size_t T, size_t hs)
{
    for (size_t i = 0; i < T; ++i)
        for (size_t j = 0; j < T; ++j) {
            double dot = 0.0;
            for (size_t d = 0; d < hs; ++d)
                dot += Q[i * hs + d] * K[j * hs + d];
            S[i * T + j] = dot;
        }
}

static int measure(const bench_exp_options *o, size_t hs, int kind, asymmetry_stats *stats)
{
    const size_t T = o->T.values[0], C = o->C;
    double *X = malloc(T * C * sizeof *X), *Wq = malloc(C * hs * sizeof *Wq);
    double *Wk = malloc(C * hs * sizeof *Wk), *Q = malloc(T * hs * sizeof *Q);
    double *K = malloc(T * hs * sizeof *K), *S = malloc(T * T * sizeof *S);
    double *P = malloc(T * T * sizeof *P), *out = malloc(T * hs * sizeof *out);
    int status = X && Wq && Wk && Q && K && S && P && out ? 0 : -1;
    bench_rng rng;
    bench_rng_seed(&rng, bench_seed_mix(o->seed, hs)); /* the same X and Wq for both kinds */
    *stats = (asymmetry_stats){0};
    for (size_t trial = 0; status == 0 && trial < o->trials; ++trial) {
        bench_exp_fill_normal(X, T * C, 1.0, &rng);
        bench_exp_fill_normal(Wq, C * hs, 1.0 / sqrt((double)C), &rng);
        bench_exp_fill_normal(Wk, C * hs, 1.0 / sqrt((double)C), &rng);
        bench_matmul(X, Wq, Q, T, C, hs, 0);
        bench_matmul(X, kind == SHARED ? Wq : Wk, K, T, C, hs, 0);
        scores(Q, K, S, T, hs);
        const double a = relative_asymmetry(S, T);
        stats->scores_mean += a / (double)o->trials;
        stats->scores_max = a > stats->scores_max ? a : stats->scores_max;
        if (trial == 0 && T > 1) {
            stats->s01 = S[1] / sqrt((double)hs);
            stats->s10 = S[T] / sqrt((double)hs);
        }
        if (attn_lookup_f64(T, T, hs, hs, 0.0, Q, K, K, out, P) != ATTN_OK)
            status = -1;
        stats->weights_mean += relative_asymmetry(P, T) / (double)o->trials;
    }
    double *arrays[] = {X, Wq, Wk, Q, K, S, P, out};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i)
        free(arrays[i]);
    return status;
}

static double plot_value(const void *data, size_t panel, size_t series, size_t point)
{
    const asymmetry_stats *s = &((const asymmetry_stats(*)[2])data)[point][series];
    return panel == 0 ? s->scores_mean : s->weights_mean;
}

static int plot(const bench_exp_run *run, const void *results)
{
    static const char *const panels[2] = {"scores S = Q K^T: ||S - S^T||_F / ||S||_F",
                                          "weights P = softmax(S/sqrt(hs)): ||P - P^T|| / ||P||"};
    char title[128];
    snprintf(title, sizeof title, "asymmetry of attention, T = %zu, C = %zu",
             run->options->T.values[0], run->options->C);
    const bench_exp_grid grid = {
        .title = title, .x_label = "hs", .y_label = "relative asymmetry",
        .panel_titles = panels, .panel_count = 2, .series_titles = kind_names,
        .series_count = 2, .log_x = 2, .y_min = 0.0, .value = plot_value, .data = results};
    return bench_exp_plot_grid(run, &grid);
}

static void check_properties(bench_exp_run *run, const void *results)
{
    const asymmetry_stats(*stats)[2] = (const asymmetry_stats(*)[2])results;
    int shared_zero = 1, separate_large = 1, weights_asymmetric = 1;
    for (size_t i = 0; i < run->options->hs.count; ++i) {
        shared_zero &= stats[i][SHARED].scores_max == 0.0;
        separate_large &= stats[i][SEPARATE].scores_mean > 1.0;
        weights_asymmetric &= stats[i][SHARED].weights_mean > 0.0;
    }
    bench_exp_check(run, shared_zero, "shared Wq = Wk: ||S - S^T|| is exactly 0 in every draw");
    bench_exp_check(run, separate_large,
                    "separate Wq, Wk: ||S - S^T|| / ||S|| > 1 on average (sqrt(2) expected)");
    bench_exp_check(run, weights_asymmetric,
                    "shared Wq = Wk: the softmax weights are still not symmetric");
}

/* One kind of projections of one hs, into the table and the CSV. */
static int measure_point(bench_exp_run *run, size_t index, size_t kind, void *entry)
{
    const bench_exp_options *o = run->options;
    const size_t hs = o->hs.values[index];
    asymmetry_stats *s = entry;
    if (measure(o, hs, (int)kind, s) != 0)
        return -1;
    printf("%5zu %-16s %12.4g %12.4g %14.4g %10.4f %10.4f\n", hs, kind_names[kind],
           s->scores_mean, s->scores_max, s->weights_mean, s->s01, s->s10);
    fprintf(run->csv, "%zu,%zu,%zu,%zu,%s,%.6g,%.6g,%.6g,%.6g,%.6g\n", hs, o->T.values[0], o->C,
            o->trials, kind_keys[kind], s->scores_mean, s->scores_max, s->weights_mean, s->s01,
            s->s10);
    return 0;
}

/* The table's first line and the CSV's header row. */
static const char asymmetry_table_header[] =
    "   hs projections       |S-S^T|/|S|          max    |P-P^T|/|P|     S[0,1]     S[1,0]";

static const char asymmetry_csv_header[] =
    "hs,T,C,trials,projections,score_asymmetry,score_asymmetry_max,weights_asymmetry,"
    "scaled_S01,scaled_S10";

const bench_experiment bench_experiment_asymmetry = {
    "asymmetry", "||S - S^T|| / ||S|| of the scores, separate against shared Wq, Wk",
    asymmetry_description, {"4,8,16,32,64", "2,4,8", "64", "16", "64", "16", "8", "2"},
    asymmetry_table_header, asymmetry_csv_header,
    NULL, 2, sizeof(asymmetry_stats), measure_point, check_properties, plot, 0};
