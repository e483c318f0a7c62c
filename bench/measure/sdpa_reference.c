#include "measure/sdpa_reference.h"

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
    double u, u_P;       /* a half type's bound (sdpa_reference.h); u = 0: none */
    double *stat_dD;     /* a half type's sampled backward: how far D_t may be off (B,NH,Tq) */
    double *kbound;      /* (hs): that error carried into dK_j */
} sdpa_scratch;

typedef struct sdpa_error {
    double max_diff, max_ref;
    double max_bound; /* a half type's: the largest bound of attn.h over the entries */
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

/* The compared entry's bound (a half type's, sdpa_reference.h). */
static void sdpa_bound(sdpa_error *e, double bound)
{
    if (bound > e->max_bound)
        e->max_bound = bound;
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

#define BENCH_TEMPLATE "measure/sdpa_reference.inc.c"
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
    void *blocks[] = {sel->seqs, sel->heads,    sel->rows,  sel->groups, w->s,
                      w->dp,     w->o,          w->dq,      w->stat_lse, w->stat_D,
                      w->keys,   w->stat_dD,    w->kbound};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; ++i)
        free(blocks[i]);
}

static double error_of(const sdpa_error *e)
{
    if (e->bad)
        return (double)INFINITY;
    return e->max_ref > 0.0 ? e->max_diff / e->max_ref : e->max_diff;
}

/* error / tolerance: which array is the worst (an error above a zero tolerance: infinite). */
static double share_of(double error, double tolerance)
{
    if (isnan(error) || isinf(error))
        return (double)INFINITY;
    return tolerance > 0.0 ? error / tolerance : error > 0.0 ? (double)INFINITY : 0.0;
}

/* The tolerance of each array (out, lse, dQ, dK, dV): the run command's of
 * f32 / f64, or a half type's (sdpa_reference.h): each array's largest
 * bound over the largest reference entry, the gradients' plus
 * BENCH_GRAD_TOLERANCE_F32. */
static void tolerances_of(bench_dtype dtype, int backward, const sdpa_error *const *arrays,
                          double *tolerances)
{
    if (!bench_dtype_is_half(dtype)) {
        const double tolerance =
            backward ? (dtype == BENCH_F32 ? BENCH_GRAD_TOLERANCE_F32 : BENCH_GRAD_TOLERANCE_F64)
                     : (dtype == BENCH_F32 ? BENCH_TOLERANCE_F32 : BENCH_TOLERANCE_F64);
        for (size_t i = 0; i < 5; ++i)
            tolerances[i] = tolerance;
        return;
    }
    for (size_t i = 0; i < 5; ++i)
        tolerances[i] = (i >= 2 ? BENCH_GRAD_TOLERANCE_F32 : 0.0) +
                        (arrays[i]->max_ref > 0.0 ? arrays[i]->max_bound / arrays[i]->max_ref
                                                  : arrays[i]->max_bound);
}

/* The check of a problem whose arrays are f32 or f64 (a half type's
 * widened: half its dtype, else p's own). */
static int check_float(const bench_sdpa_problem *p, size_t check_rows, int lse_written,
                       bench_dtype half, bench_check *check)
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
    if (bench_dtype_is_half(half)) {
        w.u = bench_dtype_half_unit(half);
        w.u_P = half == BENCH_BF16 ? w.u : 0.0;
    }
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
    const int bound_keys = backward && !full && w.u > 0.0; /* D from attn's rounded out */
    if (bound_keys) {
        w.stat_dD = calloc(stats, sizeof(double));
        w.kbound = malloc(s->hs * sizeof(double));
    }
    if (!sel.seqs || !sel.heads || !sel.rows || !sel.groups || !w.s || !w.dp || !w.o ||
        !w.dq || !w.keys || (backward && (!w.stat_lse || !w.stat_D)) ||
        (bound_keys && (!w.stat_dD || !w.kbound))) {
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
    double tolerances[5];
    tolerances_of(half, backward, arrays, tolerances);
    double worst = -1.0; /* the largest error / tolerance */
    check->error = -1.0;
    for (size_t i = 0; i < 5; ++i) {
        if (i == 1 && !lse_written)
            continue;
        if (i >= 2 && !backward)
            break;
        const double error = error_of(arrays[i]), share = share_of(error, tolerances[i]);
        if (share > worst || isnan(error)) {
            worst = share;
            check->error = error;
            check->tolerance = tolerances[i];
            check->worst = names[i];
        }
    }
    check->rows = e.rows;
    check->keys = e.keys;
    check->sampled = !full;
    check->status = check->error <= check->tolerance ? BENCH_CHECK_PASSED : BENCH_CHECK_FAILED;
    return 0;
}

/* A half type's problem widened into float copies (exact) of the arrays the
 * reference reads: Q, K, V, out and the backward's dout, dQ, dK, dV (the
 * mask and lse are float already); view gets them, dtype f32. */
static int widen(const bench_sdpa_problem *p, bench_sdpa_problem *view, float **copies)
{
    *view = *p;
    view->shape.dtype = BENCH_F32;
    void **arrays[8] = {&view->Q,    &view->K,  &view->V,  &view->out,
                        &view->dout, &view->dQ, &view->dK, &view->dV};
    const size_t counts[8] = {p->q_count * p->steps, p->kv_count, p->v_count,
                              p->out_count * p->steps, p->out_count, p->q_count,
                              p->kv_count, p->v_count};
    int failed = 0;
    for (size_t i = 0; i < 8; ++i) {
        copies[i] = NULL;
        if (!*arrays[i])
            continue;
        copies[i] = malloc((counts[i] ? counts[i] : 1) * sizeof(float));
        if (!copies[i]) {
            failed = 1;
            continue;
        }
        bench_dtype_half_to_float(p->shape.dtype, *arrays[i], copies[i], counts[i]);
        *arrays[i] = copies[i];
    }
    return failed ? -1 : 0;
}

int bench_sdpa_check_problem(const bench_sdpa_problem *p, size_t check_rows, int lse_written,
                             bench_check *check)
{
    if (!bench_dtype_is_half(p->shape.dtype))
        return check_float(p, check_rows, lse_written, p->shape.dtype, check);
    bench_sdpa_problem view;
    float *copies[8];
    int result = widen(p, &view, copies);
    if (result == 0)
        result = check_float(&view, check_rows, lse_written, p->shape.dtype, check);
    for (size_t i = 0; i < 8; ++i)
        free(copies[i]);
    return result;
}
