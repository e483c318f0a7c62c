/*
 * The reference of one precision, instantiated by sdpa_reference.c through
 * precisions.inc.c (REAL float or double, SUFFIX f32 or f64): the inputs are
 * read in their own type, everything is computed in double. A half type's
 * problem comes widened to float (sdpa_reference.c), with its bound.
 */
#define GLUE_(name, suffix) name##_##suffix
#define GLUE(name, suffix) GLUE_(name, suffix)
#define TYPED(name) GLUE(name, SUFFIX)

static double TYPED(mask_at)(const bench_sdpa_problem *p, size_t b, size_t h, size_t t,
                             size_t j)
{
    if (!p->mask)
        return 0.0;
    const REAL *m = p->mask;
    return (double)m[b * p->mask_sb + h * p->mask_sh + t * p->mask_ld + j];
}

/* Row t of head h of sequence b of an array laid out by `at` (sdpa_layout.h). */
static const REAL *TYPED(row)(const void *array, const bench_sdpa_strides *at, size_t b,
                              size_t h, size_t t)
{
    return (const REAL *)array + bench_sdpa_at(at, b, h, t);
}

static double TYPED(dot)(const REAL *x, const REAL *y, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i)
        sum += (double)x[i] * (double)y[i];
    return sum;
}

/* s[j - lo] = scale <q, k_j> + mask for j in [lo, hi); returns the row's lse
 * (-inf for no key or only -inf scores). */
static double TYPED(row_scores)(const bench_sdpa_problem *p, size_t b, size_t h, size_t t,
                                size_t lo, size_t hi, double *s)
{
    const bench_sdpa_shape *sh = &p->shape;
    const size_t g = h / (sh->NH / sh->NH_kv);
    const double scale = 1.0 / sqrt((double)sh->hs);
    const REAL *q = TYPED(row)(p->Q, &p->strides.q, b, h, t);
    double top = SDPA_NEG_INF;
    for (size_t j = lo; j < hi; ++j) {
        const REAL *k = TYPED(row)(p->K, &p->strides.k, b, g, j);
        s[j - lo] = scale * TYPED(dot)(q, k, sh->hs) + TYPED(mask_at)(p, b, h, t, j);
        if (s[j - lo] > top)
            top = s[j - lo];
    }
    if (top == SDPA_NEG_INF)
        return SDPA_NEG_INF;
    double sum = 0.0;
    for (size_t j = lo; j < hi; ++j)
        sum += exp(s[j - lo] - top);
    return top + log(sum);
}

/* A half type's bound of a row (attn.h's "half precision"), for the query
 * row q over its visible keys [lo, hi): *g = 2^-24 (n + d + 16) +
 * 2^-23 d scale max_j sum_i |q_i K_ji| and *vmax = max_j max_i |V_ji|. */
static void TYPED(row_bound)(const bench_sdpa_problem *p, size_t b, size_t h, size_t t,
                             size_t lo, size_t hi, double *g, double *vmax)
{
    const bench_sdpa_shape *sh = &p->shape;
    const size_t kv = h / (sh->NH / sh->NH_kv);
    const REAL *q = TYPED(row)(p->Q, &p->strides.q, b, h, t);
    double qk = 0.0, v_max = 0.0;
    for (size_t j = lo; j < hi; ++j) {
        const REAL *k = TYPED(row)(p->K, &p->strides.k, b, kv, j);
        const REAL *v = TYPED(row)(p->V, &p->strides.v, b, kv, j);
        double sum = 0.0;
        for (size_t i = 0; i < sh->hs; ++i)
            sum += fabs((double)q[i] * (double)k[i]);
        qk = sum > qk ? sum : qk;
        for (size_t i = 0; i < sh->hs_v; ++i)
            v_max = fabs((double)v[i]) > v_max ? fabs((double)v[i]) : v_max;
    }
    const double d = (double)sh->hs;
    *g = ldexp((double)(hi - lo) + d + 16.0, -24) + ldexp(d * (1.0 / sqrt(d)) * qk, -23);
    *vmax = v_max;
}

/* Forward (and dQ) of the selected rows; the statistics of every row it
 * visits go to stats when full. */
static void TYPED(check_rows)(const bench_sdpa_problem *p, const sdpa_selection *sel,
                              int lse_written, int full, sdpa_scratch *w, sdpa_errors *e)
{
    const bench_sdpa_shape *s = &p->shape;
    const int backward = s->op == BENCH_OP_BACKWARD;
    const REAL *out = p->out, *lse = p->lse, *dout = p->dout, *dQ = p->dQ;
    const bench_sdpa_layout_strides *at = &p->strides;
    const size_t G = s->NH / s->NH_kv;
    const double scale = 1.0 / sqrt((double)s->hs);
    for (size_t bi = 0; bi < sel->seq_count; ++bi)
        for (size_t hi_ = 0; hi_ < sel->head_count; ++hi_)
            for (size_t ti = 0; ti < sel->row_count; ++ti) {
                const size_t b = sel->seqs[bi], h = sel->heads[hi_], t = sel->rows[ti];
                const size_t g = h / G;
                size_t lo, hi;
                bench_sdpa_visible_range(s, b, t, &lo, &hi);
                const double row_lse = TYPED(row_scores)(p, b, h, t, lo, hi, w->s);
                for (size_t i = 0; i < s->hs_v; ++i)
                    w->o[i] = 0.0;
                if (row_lse != SDPA_NEG_INF)
                    for (size_t j = lo; j < hi; ++j) {
                        w->s[j - lo] = exp(w->s[j - lo] - row_lse); /* now P */
                        const REAL *v = TYPED(row)(p->V, &at->v, b, g, j);
                        for (size_t i = 0; i < s->hs_v; ++i)
                            w->o[i] += w->s[j - lo] * (double)v[i];
                    }
                const size_t o_row = bench_sdpa_at(&at->o, b, h, t);
                for (size_t i = 0; i < s->hs_v; ++i)
                    sdpa_compare(&e->out, (double)out[o_row + i], w->o[i]);
                const size_t stat = (b * s->NH + h) * s->Tq + t;
                if (lse_written)
                    sdpa_compare_lse(&e->lse, (double)lse[stat], row_lse);
                if (w->u > 0.0 && row_lse != SDPA_NEG_INF) { /* a half type's bound */
                    double gamma, vmax;
                    TYPED(row_bound)(p, b, h, t, lo, hi, &gamma, &vmax);
                    for (size_t i = 0; i < s->hs_v; ++i)
                        sdpa_bound(&e->out,
                                   w->u * fabs(w->o[i]) + (w->u_P + 4.0 * gamma) * vmax);
                    if (lse_written)
                        sdpa_bound(&e->lse, 4.0 * gamma + ldexp(fabs(row_lse), -23));
                }
                e->rows++;
                if (!backward)
                    continue;
                /* dQ_t = scale sum_j P_j (dP_j - D) K_j, D = sum_j P_j dP_j */
                const REAL *d = dout + o_row;
                double D = 0.0;
                if (row_lse != SDPA_NEG_INF)
                    for (size_t j = lo; j < hi; ++j) {
                        const REAL *v = TYPED(row)(p->V, &at->v, b, g, j);
                        w->dp[j - lo] = TYPED(dot)(d, v, s->hs_v);
                        D += w->s[j - lo] * w->dp[j - lo];
                    }
                for (size_t i = 0; i < s->hs; ++i)
                    w->dq[i] = 0.0;
                if (row_lse != SDPA_NEG_INF)
                    for (size_t j = lo; j < hi; ++j) {
                        const double dS = w->s[j - lo] * (w->dp[j - lo] - D);
                        const REAL *k = TYPED(row)(p->K, &at->k, b, g, j);
                        for (size_t i = 0; i < s->hs; ++i)
                            w->dq[i] += scale * dS * (double)k[i];
                    }
                const size_t q_row = bench_sdpa_at(&at->q, b, h, t);
                for (size_t i = 0; i < s->hs; ++i) {
                    sdpa_compare(&e->dQ, (double)dQ[q_row + i], w->dq[i]);
                    sdpa_bound(&e->dQ, w->u * fabs(w->dq[i])); /* a half type's rounding */
                }
                if (full) {
                    w->stat_lse[stat] = row_lse;
                    w->stat_D[stat] = D;
                }
            }
}

/* The backward's lse_t and D_t of every query of the selected sequences and
 * key/value heads, from attn's own forward (sampled checks). */
static void TYPED(stats_from_attn)(const bench_sdpa_problem *p, const sdpa_selection *sel,
                                   sdpa_scratch *w)
{
    const bench_sdpa_shape *s = &p->shape;
    const REAL *out = p->out, *lse = p->lse, *dout = p->dout;
    const size_t G = s->NH / s->NH_kv;
    for (size_t bi = 0; bi < sel->seq_count; ++bi)
        for (size_t gi = 0; gi < sel->group_count; ++gi)
            for (size_t h = sel->groups[gi] * G; h < (sel->groups[gi] + 1) * G; ++h)
                for (size_t t = 0; t < s->Tq; ++t) {
                    const size_t b = sel->seqs[bi];
                    const size_t stat = (b * s->NH + h) * s->Tq + t;
                    const size_t o_row = bench_sdpa_at(&p->strides.o, b, h, t);
                    w->stat_lse[stat] = (double)lse[stat];
                    w->stat_D[stat] = TYPED(dot)(dout + o_row, out + o_row, s->hs_v);
                    if (w->stat_dD) { /* a half type's out is rounded: D off by at most */
                        double sum = 0.0;
                        for (size_t i = 0; i < s->hs_v; ++i)
                            sum += fabs((double)dout[o_row + i] * (double)out[o_row + i]);
                        w->stat_dD[stat] = w->u * (1.0 + 2.0 * w->u) * sum;
                    }
                }
}

/* dK, dV of the selected key rows. */
static void TYPED(check_keys)(const bench_sdpa_problem *p, const sdpa_selection *sel,
                              sdpa_scratch *w, sdpa_errors *e)
{
    const bench_sdpa_shape *s = &p->shape;
    const REAL *dK = p->dK, *dV = p->dV;
    const bench_sdpa_layout_strides *at = &p->strides;
    const size_t G = s->NH / s->NH_kv;
    const double scale = 1.0 / sqrt((double)s->hs);
    for (size_t bi = 0; bi < sel->seq_count; ++bi) {
        const size_t b = sel->seqs[bi];
        size_t key_count = 0;
        sdpa_select_keys(sel, s, b, w->keys, &key_count);
        for (size_t gi = 0; gi < sel->group_count; ++gi)
            for (size_t ki = 0; ki < key_count; ++ki) {
                const size_t g = sel->groups[gi], j = w->keys[ki];
                for (size_t i = 0; i < s->hs; ++i)
                    w->dq[i] = 0.0; /* dK_j */
                for (size_t i = 0; i < s->hs_v; ++i)
                    w->o[i] = 0.0; /* dV_j */
                for (size_t i = 0; w->kbound && i < s->hs; ++i)
                    w->kbound[i] = 0.0; /* the reference's own error of dK_j (stat_dD) */
                const REAL *k = TYPED(row)(p->K, &at->k, b, g, j);
                const REAL *v = TYPED(row)(p->V, &at->v, b, g, j);
                for (size_t h = g * G; h < (g + 1) * G; ++h)
                    for (size_t t = 0; t < s->Tq; ++t) {
                        size_t lo, hi;
                        bench_sdpa_visible_range(s, b, t, &lo, &hi);
                        const size_t stat = (b * s->NH + h) * s->Tq + t;
                        if (j < lo || j >= hi || w->stat_lse[stat] == SDPA_NEG_INF)
                            continue;
                        const REAL *q = TYPED(row)(p->Q, &at->q, b, h, t);
                        const double score =
                            scale * TYPED(dot)(q, k, s->hs) + TYPED(mask_at)(p, b, h, t, j);
                        const double P = exp(score - w->stat_lse[stat]);
                        const REAL *d = TYPED(row)(p->dout, &at->o, b, h, t);
                        const double dS = P * (TYPED(dot)(d, v, s->hs_v) - w->stat_D[stat]);
                        for (size_t i = 0; i < s->hs; ++i)
                            w->dq[i] += scale * dS * (double)q[i];
                        for (size_t i = 0; i < s->hs_v; ++i)
                            w->o[i] += P * (double)d[i];
                        for (size_t i = 0; w->kbound && i < s->hs; ++i)
                            w->kbound[i] += scale * P * w->stat_dD[stat] * fabs((double)q[i]);
                    }
                const size_t k_at = bench_sdpa_at(&at->k, b, g, j);
                const size_t v_at = bench_sdpa_at(&at->v, b, g, j);
                for (size_t i = 0; i < s->hs; ++i) {
                    sdpa_compare(&e->dK, (double)dK[k_at + i], w->dq[i]);
                    sdpa_bound(&e->dK, w->u * fabs(w->dq[i]) + (w->kbound ? w->kbound[i] : 0.0));
                }
                for (size_t i = 0; i < s->hs_v; ++i) {
                    sdpa_compare(&e->dV, (double)dV[v_at + i], w->o[i]);
                    sdpa_bound(&e->dV, w->u * fabs(w->o[i]));
                }
                e->keys++;
            }
    }
}

static void TYPED(check_all)(const bench_sdpa_problem *p, const sdpa_selection *sel,
                             int lse_written, int full, sdpa_scratch *w, sdpa_errors *e)
{
    TYPED(check_rows)(p, sel, lse_written, full, w, e);
    if (p->shape.op != BENCH_OP_BACKWARD)
        return;
    if (!full)
        TYPED(stats_from_attn)(p, sel, w);
    TYPED(check_keys)(p, sel, w, e);
}

#undef TYPED
#undef GLUE
#undef GLUE_
