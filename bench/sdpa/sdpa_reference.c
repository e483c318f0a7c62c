#include "sdpa/sdpa_reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SDPA_NEG_INF (-(double)INFINITY)

/* What the check compares (sdpa_reference.h). */
typedef struct sdpa_selection {
    size_t *seqs, *heads, *rows, *groups;
    size_t seq_count, head_count, row_count, group_count;
    int full;
    size_t check_rows;
} sdpa_selection;

typedef struct sdpa_scratch {
    double *s, *dp;      /* (Tk): one row's scores, then weights; dout . V_j */
    double *o, *dq;      /* (hs_v), (hs) */
    double *stat_lse, *stat_D; /* (B,NH,Tq): the backward's row statistics */
    size_t *keys;        /* the key rows of one sequence */
} sdpa_scratch;

typedef struct sdpa_error {
    double max_diff, max_ref;
    int bad; /* a NaN, or an infinity where there should be none */
} sdpa_error;

typedef struct sdpa_errors {
    sdpa_error out, lse, dQ, dK, dV;
    size_t rows, keys;
} sdpa_errors;

static void sdpa_compare(sdpa_error *e, double got, double want)
{
    if (isnan(got) || isnan(want) || isinf(got)) {
        e->bad |= !(isinf(got) && got == want);
        return;
    }
    const double diff = fabs(got - want);
    if (diff > e->max_diff)
        e->max_diff = diff;
    if (fabs(want) > e->max_ref)
        e->max_ref = fabs(want);
}

static void sdpa_compare_lse(sdpa_error *e, double got, double want)
{
    if (isinf(want) || isinf(got) || isnan(got)) {
        e->bad |= !(got == want);
        return;
    }
    sdpa_compare(e, got, want);
}

/* n indices spread evenly over [0, count), both ends; all when n is 0 or >= count. */
static size_t spread(size_t n, size_t count, size_t *out)
{
    if (n == 0 || n >= count) {
        for (size_t i = 0; i < count; ++i)
            out[i] = i;
        return count;
    }
    if (n == 1) {
        out[0] = 0;
        return 1;
    }
    for (size_t i = 0; i < n; ++i)
        out[i] = (size_t)((double)i * (double)(count - 1) / (double)(n - 1) + 0.5);
    return n;
}

static int compare_sizes(const void *a, const void *b)
{
    const size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static void sdpa_select_keys(const sdpa_selection *sel, const bench_sdpa_shape *s, size_t b,
                             size_t *keys, size_t *count)
{
    *count = spread(sel->full ? 0 : sel->check_rows, s->Tk, keys);
    if (sel->full)
        return;
    const size_t length = bench_sdpa_length(s, b);
    const size_t edges[2] = {length ? length - 1 : 0, length};
    for (size_t i = 0; i < 2; ++i)
        if (edges[i] < s->Tk)
            keys[(*count)++] = edges[i];
    qsort(keys, *count, sizeof *keys, compare_sizes);
    size_t unique = 0;
    for (size_t i = 0; i < *count; ++i)
        if (unique == 0 || keys[unique - 1] != keys[i])
            keys[unique++] = keys[i];
    *count = unique;
}

#define BENCH_TEMPLATE "sdpa/sdpa_reference.inc.c"
#include "util/precisions.inc.c"

/* first and last (one when equal) */
static size_t ends(size_t count, size_t *out)
{
    out[0] = 0;
    if (count < 2)
        return 1;
    out[1] = count - 1;
    return 2;
}

static void free_all(sdpa_selection *sel, sdpa_scratch *w)
{
    void *blocks[] = {sel->seqs, sel->heads, sel->rows, sel->groups, w->s,      w->dp,
                      w->o,      w->dq,      w->stat_lse, w->stat_D, w->keys};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; ++i)
        free(blocks[i]);
}

static double error_of(const sdpa_error *e)
{
    if (e->bad)
        return (double)INFINITY;
    return e->max_ref > 0.0 ? e->max_diff / e->max_ref : e->max_diff;
}

int bench_sdpa_check_problem(const bench_sdpa_problem *p, size_t check_rows, int lse_written,
                             bench_sdpa_check *check)
{
    const bench_sdpa_shape *s = &p->shape;
    const int backward = s->op == BENCH_OP_BACKWARD;
    memset(check, 0, sizeof *check);
    const double macs = bench_sdpa_visible_pairs(s) * (double)s->NH *
                        (double)(s->hs + s->hs_v) * (backward ? 3.0 : 1.0);
    const int full = check_rows == 0 || macs <= BENCH_SDPA_FULL_CHECK_MACS;
    const size_t G = s->NH / s->NH_kv;

    sdpa_selection sel = {.full = full, .check_rows = check_rows};
    sdpa_scratch w = {0};
    const size_t stats = s->B * s->NH * s->Tq;
    sel.seqs = malloc(s->B * sizeof(size_t));
    sel.heads = malloc(s->NH * sizeof(size_t));
    sel.rows = malloc(s->Tq * sizeof(size_t));
    sel.groups = malloc(s->NH_kv * sizeof(size_t));
    w.s = malloc((s->Tk + 1) * sizeof(double));
    w.dp = malloc((s->Tk + 1) * sizeof(double));
    w.o = malloc(s->hs_v * sizeof(double));
    w.dq = malloc(s->hs * sizeof(double));
    w.keys = malloc((s->Tk + 2) * sizeof(size_t));
    if (backward) {
        w.stat_lse = malloc(stats * sizeof(double));
        w.stat_D = malloc(stats * sizeof(double));
    }
    if (!sel.seqs || !sel.heads || !sel.rows || !sel.groups || !w.s || !w.dp || !w.o ||
        !w.dq || !w.keys || (backward && (!w.stat_lse || !w.stat_D))) {
        free_all(&sel, &w);
        return -1;
    }
    if (full) {
        sel.seq_count = spread(0, s->B, sel.seqs);
        sel.head_count = spread(0, s->NH, sel.heads);
        sel.group_count = spread(0, s->NH_kv, sel.groups);
        sel.row_count = spread(0, s->Tq, sel.rows);
    } else {
        sel.seq_count = ends(s->B, sel.seqs);
        sel.group_count = ends(s->NH_kv, sel.groups);
        for (size_t gi = 0; gi < sel.group_count; ++gi)
            for (size_t h = sel.groups[gi] * G; h < (sel.groups[gi] + 1) * G; ++h)
                sel.heads[sel.head_count++] = h;
        sel.row_count = spread(check_rows, s->Tq, sel.rows);
    }

    sdpa_errors e;
    memset(&e, 0, sizeof e);
    if (s->dtype == BENCH_F32)
        check_all_f32(p, &sel, lse_written, full, &w, &e);
    else
        check_all_f64(p, &sel, lse_written, full, &w, &e);
    free_all(&sel, &w);

    const sdpa_error *arrays[5] = {&e.out, &e.lse, &e.dQ, &e.dK, &e.dV};
    static const char *const names[5] = {"out", "lse", "dQ", "dK", "dV"};
    check->error = -1.0;
    for (size_t i = 0; i < 5; ++i) {
        if (i == 1 && !lse_written)
            continue;
        if (i >= 2 && !backward)
            break;
        const double error = error_of(arrays[i]);
        if (error > check->error || isnan(error)) {
            check->error = error;
            check->worst = names[i];
        }
    }
    check->tolerance = backward ? (s->dtype == BENCH_F32 ? BENCH_GRAD_TOLERANCE_F32
                                                         : BENCH_GRAD_TOLERANCE_F64)
                                : (s->dtype == BENCH_F32 ? BENCH_TOLERANCE_F32
                                                         : BENCH_TOLERANCE_F64);
    check->rows = e.rows;
    check->keys = e.keys;
    check->sampled = !full;
    check->status = check->error <= check->tolerance ? BENCH_CHECK_PASSED : BENCH_CHECK_FAILED;
    return 0;
}
