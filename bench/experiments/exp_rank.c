/*
 * attn-bench rank: the scores Q K^T of one head have rank at most hs.
 *
 * S = Q K^T (T,T) with Q = X Wq, K = X Wk, X (T,C) ~ N(0,1), Wq, Wk (C,hs) ~
 * N(0,1/C): a product through an hs-wide space, so at most hs of its T
 * singular values (LAPACKE_dgesdd) are nonzero. Numerical rank as LAPACK and
 * NumPy count it: singular values above sigma_1 * T * DBL_EPSILON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "experiments/exp_common.h"
#include "experiments/linalg.h"

static const char rank_description[] =
    "S = Q K^T (T,T) with Q = X Wq, K = X Wk (X ~ N(0,1) (T,C), W ~ N(0,1/C) (C,hs)).\n"
    "For each T and hs: the singular values of S (LAPACKE_dgesdd), the numerical\n"
    "rank (values above sigma_1 * T * DBL_EPSILON, as LAPACK and NumPy count),\n"
    "sigma_min(T,hs)/sigma_1 (the last that may be nonzero) and sigma_(hs+1)/sigma_1\n"
    "(the first that must vanish). The plot shows the spectra: a cliff at i = hs.\n"
    "--check asserts: rank <= hs everywhere, and rank = min(T, hs, C).";

typedef struct rank_point {
    size_t T, hs, rank, expected;
    double sigma_1, kept_ratio, dropped_ratio; /* sigma_min(hs,T) / sigma_1; sigma_hs+1 / sigma_1 */
} rank_point;

static size_t minimum(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* The spectrum sigma_i / sigma_1 (T values) and the point of (T, hs). */
static int measure(const bench_exp_options *o, size_t T, size_t hs, double *spectrum,
                   rank_point *point)
{
    const size_t C = o->C;
    double *X = malloc(T * C * sizeof *X), *Wq = malloc(C * hs * sizeof *Wq);
    double *Wk = malloc(C * hs * sizeof *Wk), *Q = malloc(T * hs * sizeof *Q);
    double *K = malloc(T * hs * sizeof *K), *S = malloc(T * T * sizeof *S);
    int status = X && Wq && Wk && Q && K && S ? 0 : -1;
    if (status == 0) {
        bench_rng rng;
        bench_rng_seed(&rng, bench_seed_mix(bench_seed_mix(o->seed, T), hs));
        bench_exp_fill_normal(X, T * C, 1.0, &rng);
        bench_exp_fill_normal(Wq, C * hs, 1.0 / sqrt((double)C), &rng);
        bench_exp_fill_normal(Wk, C * hs, 1.0 / sqrt((double)C), &rng);
        bench_matmul(X, Wq, Q, T, C, hs, 0);
        bench_matmul(X, Wk, K, T, C, hs, 0);
        bench_matmul(Q, K, S, T, hs, T, 1);
        status = bench_singular_values(S, T, T, spectrum);
    }
    if (status == 0) {
        const size_t kept = minimum(hs, T);
        *point = (rank_point){
            .T = T, .hs = hs, .rank = bench_numerical_rank(spectrum, T, T, T),
            .expected = minimum(minimum(T, hs), C), .sigma_1 = spectrum[0],
            .kept_ratio = spectrum[kept - 1] / spectrum[0],
            .dropped_ratio = hs < T ? spectrum[hs] / spectrum[0] : (double)NAN};
        for (size_t i = T; i-- > 0;)
            spectrum[i] /= spectrum[0];
    }
    double *arrays[] = {X, Wq, Wk, Q, K, S};
    for (size_t i = 0; i < 6; ++i)
        free(arrays[i]);
    return status;
}

/* The results of every (T, hs): the point and the spectrum sigma_i / sigma_1
 * (T_max values, NaN beyond T). */
typedef struct rank_results {
    size_t T_max, hs_count;
    rank_point *points; /* [T index][hs index] */
    double *spectra;    /* [T index][hs index][i] */
} rank_results;

static double plot_value(const void *data, size_t panel, size_t series, size_t point)
{
    const rank_results *r = data;
    return r->spectra[(panel * r->hs_count + series) * r->T_max + point];
}

static int plot(const bench_exp_run *run, const void *results)
{
    const bench_exp_options *o = run->options;
    const rank_results *r = results;
    char(*panel_text)[64] = malloc(o->T.count * sizeof *panel_text);
    char(*series_text)[32] = malloc(o->hs.count * sizeof *series_text);
    const char **panels = malloc(o->T.count * sizeof *panels);
    const char **series = malloc(o->hs.count * sizeof *series);
    double *x = malloc(r->T_max * sizeof *x);
    int status = panel_text && series_text && panels && series && x ? 0 : -1;
    for (size_t t = 0; status == 0 && t < o->T.count; ++t) {
        snprintf(panel_text[t], sizeof panel_text[t], "T = %zu", o->T.values[t]);
        panels[t] = panel_text[t];
    }
    for (size_t h = 0; status == 0 && h < o->hs.count; ++h) {
        snprintf(series_text[h], sizeof series_text[h], "hs = %zu", o->hs.values[h]);
        series[h] = series_text[h];
    }
    for (size_t i = 0; status == 0 && i < r->T_max; ++i)
        x[i] = (double)(i + 1);
    if (status == 0) {
        const bench_exp_grid grid = {
            .title = "singular values of Q K^T: sigma_i / sigma_1 (rank <= hs)",
            .x_label = "i", .y_label = "sigma_i / sigma_1", .x = x, .points = r->T_max,
            .panel_titles = panels, .panel_count = o->T.count, .series_titles = series,
            .series_count = o->hs.count, .log_x = 2, .log_y = 10, .key = "bottom left",
            .value = plot_value, .data = r};
        status = bench_exp_plot_grid(run, &grid);
    }
    free(panel_text);
    free(series_text);
    free(panels);
    free(series);
    free(x);
    return status;
}

static void check_properties(bench_exp_run *run, const void *results)
{
    const rank_results *r = results;
    const size_t count = run->options->T.count * run->options->hs.count;
    int at_most_hs = 1, reaches = 1;
    for (size_t i = 0; i < count; ++i) {
        at_most_hs &= r->points[i].rank <= r->points[i].hs;
        reaches &= r->points[i].rank == r->points[i].expected;
    }
    bench_exp_check(run, at_most_hs, "the numerical rank of Q K^T never exceeds hs");
    bench_exp_check(run, reaches, "and it equals min(T, hs, C) for these random draws");
}

static void print_point(FILE *out, const rank_point *p, int csv, size_t C)
{
    if (csv) {
        fprintf(out, "%zu,%zu,%zu,%zu,%zu,%.6g,%.6g,", p->T, p->hs, C, p->rank, p->expected,
                p->sigma_1, p->kept_ratio);
        if (!isnan(p->dropped_ratio))
            fprintf(out, "%.6g", p->dropped_ratio);
        fputc('\n', out);
        return;
    }
    fprintf(out, "%5zu %5zu %6zu %14zu %10.4g %13.3e ", p->T, p->hs, p->rank, p->expected,
            p->sigma_1, p->kept_ratio);
    if (isnan(p->dropped_ratio))
        fprintf(out, "%15s\n", "-");
    else
        fprintf(out, "%15.3e\n", p->dropped_ratio);
}

/* One allocation: the results header, then the points, then the spectra. */
static rank_results *results_create(const bench_exp_options *o)
{
    size_t T_max = 0, count = o->T.count * o->hs.count;
    for (size_t t = 0; t < o->T.count; ++t)
        T_max = o->T.values[t] > T_max ? o->T.values[t] : T_max;
    rank_results *r = malloc(sizeof *r + count * sizeof(rank_point) +
                             count * T_max * sizeof(double));
    if (!r)
        return NULL;
    r->T_max = T_max;
    r->hs_count = o->hs.count;
    r->points = (rank_point *)(r + 1);
    r->spectra = (double *)(r->points + count);
    for (size_t i = 0; i < count * T_max; ++i)
        r->spectra[i] = (double)NAN;
    return r;
}

static void *measure_all(bench_exp_run *run)
{
    const bench_exp_options *o = run->options;
    rank_results *r = results_create(o);
    if (!r)
        return NULL;
    for (size_t t = 0; t < o->T.count; ++t)
        for (size_t h = 0; h < o->hs.count; ++h) {
            const size_t index = t * o->hs.count + h;
            rank_point *p = &r->points[index];
            if (measure(o, o->T.values[t], o->hs.values[h], r->spectra + index * r->T_max,
                        p) != 0) {
                free(r);
                return NULL;
            }
            print_point(stdout, p, 0, o->C);
            print_point(run->csv, p, 1, o->C);
        }
    return r;
}

/* The table's first line and the CSV's header row. */
static const char rank_table_header[] =
    "    T    hs   rank    min(T,hs,C)    sigma_1     s_min/s_1    s_(hs+1)/s_1";

static const char rank_csv_header[] =
    "T,hs,C,rank,min_T_hs_C,sigma_1,sigma_min_T_hs_over_sigma_1,sigma_hs_plus_1_over_sigma_1";

const bench_experiment bench_experiment_rank = {
    "rank", "singular values of Q K^T: its numerical rank never exceeds hs", rank_description,
    {"4:256:x2", "2,4,8,16", "32,64,128,256", "16,32", "256", "32", "1", "1"},
    rank_table_header, rank_csv_header,
    measure_all, 0, 0, NULL, check_properties, plot, 0};
