/*
 * fuzz_api's numeric oracles of the projected calls (oracles 5 to 8):
 * finiteness, weights rows, softmax rows, the accuracy bound of a core
 * (scores, weights, out) and a forward's inputs in double.
 */
#include "fuzz_common.h"

/* ---- numeric oracles -------------------------------------------------------------- */

int all_finite(const prec *p, const void *b, size_t n, double *maxabs)
{
    double m = 0.0;
    int finite = 1;
    for (size_t i = 0; i < n; i++) {
        double v = get(p, b, i);
        finite &= isfinite(v) != 0;
        if (fabs(v) > m)
            m = fabs(v);
    }
    if (maxabs != NULL)
        *maxabs = m;
    return finite;
}

void expect_finite(const prec *p, const void *b, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        ORACLE(isfinite(get(p, b, i)), "%s[%zu] = %g is not finite", what, i, get(p, b, i));
}

/* The structure of one weights row of `valid` visible entries out of n
 * (entries from `valid` on must be exactly 0): all NaN, all 0, or a
 * probability vector. Returns 0 for NaN, 1 for zeros, 2 for a distribution. */
int check_weights_row(const prec *p, const void *w, size_t at, size_t valid, size_t n,
                      const char *what)
{
    for (size_t j = valid; j < n; j++)
        ORACLE(get(p, w, at + j) == 0.0, "%s: masked weight %zu of %zu = %g", what, j, n,
               get(p, w, at + j));
    size_t nans = 0, zeros = 0;
    exact_sum total = {0.0, 0.0};
    for (size_t j = 0; j < valid; j++) {
        double v = get(p, w, at + j);
        nans += isnan(v) != 0;
        zeros += v == 0.0;
        if (!isnan(v)) {
            ORACLE(v >= 0.0 && v <= 1.0 + sum_tol(p, valid), "%s: weight %g outside [0, 1]", what,
                   v);
            exact_add(&total, v);
        }
    }
    const double sum = exact_value(&total);
    if (nans > 0) {
        ORACLE(nans == valid, "%s: %zu of %zu weights NaN (a NaN row is all NaN)", what, nans,
               valid);
        return 0;
    }
    if (zeros == valid)
        return 1;
    ORACLE(fabs(sum - 1.0) <= sum_tol(p, valid), "%s: row of %zu sums to 1 %+.3e", what, valid,
           sum - 1.0);
    return 2;
}

/* attn_softmax_rows' documented semantics on one row of n inputs x (double)
 * with result y (typed, at offset) */
void check_softmax_row(const prec *p, const double *x, const void *y, size_t at, size_t n)
{
    size_t nans = 0, pos_inf = 0;
    double m = -(double)INFINITY;
    for (size_t j = 0; j < n; j++) {
        nans += isnan(x[j]) != 0;
        pos_inf += x[j] == (double)INFINITY;
        if (x[j] > m)
            m = x[j];
    }
    for (size_t j = 0; j < n; j++) {
        const double v = get(p, y, at + j);
        if (nans > 0) {
            ORACLE(isnan(v), "softmax_rows: row with a NaN gives %g at %zu", v, j);
        } else if (pos_inf > 0) {
            const double share = 1.0 / (double)pos_inf;
            ORACLE(x[j] == (double)INFINITY ? fabs(v - share) <= 2.0 * p->u * share : v == 0.0,
                   "softmax_rows: +inf row (%zu of %zu +inf): %g at %zu (x = %g)", pos_inf, n, v, j,
                   x[j]);
        } else if (m == -(double)INFINITY) {
            ORACLE(v == 0.0, "softmax_rows: all -inf row gives %g at %zu", v, j);
        }
    }
    if (nans > 0 || pos_inf > 0 || m == -(double)INFINITY)
        return;
    /* finite maximum: the double reference, per entry; the kernel's x - max
     * rounds (u |x - max|), exp and the normalization add sum_tol */
    exact_sum total = {0.0, 0.0};
    for (size_t j = 0; j < n; j++)
        exact_add(&total, exp(x[j] - m));
    const double sum = exact_value(&total);
    for (size_t j = 0; j < n; j++) {
        const double ref = exp(x[j] - m) / sum, v = get(p, y, at + j);
        const double rel = 2.0 * p->u * fabs(x[j] - m) + 4.0 * p->exp_err + sum_tol(p, n);
        const double tol = (ref > 0.0 ? ref * rel : 0.0) + 4.0 * p->min;
        ORACLE(fabs(v - ref) <= tol,
               "softmax_rows: entry %zu of %zu = %.9g (x %.9g, row max %.9g), reference %.9g", j, n,
               v, x[j], m, ref);
    }
    check_weights_row(p, y, at, n, n, "softmax_rows");
}

/* ---- the accuracy oracle (8) ------------------------------------------------------ */

double *doubles(size_t n)
{
    double *d = alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        d[i] = 0.0;
    return d;
}

/*
 * Reference weights of each query row, compared with `weights` (typed, row t
 * at w_at + t*Tk) when not NULL; the reference output Y (Tq, dv) and its
 * error bound errY (same layout, stride ldy). row_ok[t] is cleared for the
 * rows that are not comparable: a scaled score not finite or within 16x of
 * the overflow threshold, or a rounding bound dz > 0.5.
 */
void core_check(const prec *p, const core *k, const void *weights, size_t w_at, double *Y,
                double *errY, size_t ldy, unsigned char *row_ok, double *scratch)
{
    const double u = p->u;
    double *z = scratch, *w = scratch + k->Tk; /* 2 Tk doubles */
    for (size_t t = 0; t < k->Tq; t++) {
        const size_t keys = k->causal ? t + 1 : k->Tk;
        const double *q = k->Q + t * k->ldq, *aq = k->aQ + t * k->ldq;
        double m = -(double)INFINITY, dz = 0.0;
        int usable = 1;
        for (size_t j = 0; j < keys; j++) {
            const double *kk = k->K + j * k->ldk, *ak = k->aK + j * k->ldk;
            double sc = 0.0, bound = 0.0;
            for (size_t c = 0; c < k->hs; c++) {
                sc += q[c] * kk[c];
                bound += aq[c] * ak[c] + p->min; /* + min: as in project() */
            }
            z[j] = k->scale * sc;
            dz = fmax(dz, k->scale * u * k->kq * bound);
            usable &= bound <= p->max / 16 && k->scale * bound <= p->max / 16;
            m = fmax(m, z[j]);
        }
        exact_sum total = {0.0, 0.0};
        for (size_t j = 0; j < keys; j++) {
            dz = fmax(dz, 2.0 * u * (fabs(z[j]) + fabs(z[j] - m)));
            w[j] = exp(z[j] - m);
            exact_add(&total, w[j]);
        }
        const double sum = exact_value(&total);
        if (!usable || dz > 0.5 || !(sum > 0.0)) {
            row_ok[t] = 0;
            continue;
        }
        const double tol = expm1(2.0 * dz) + 8.0 * p->exp_err + sum_tol(p, keys) +
                           (double)(keys / 64 + 4) * 4.0 * u;
        for (size_t j = 0; j < keys; j++)
            w[j] /= sum;
        if (weights != NULL)
            for (size_t j = 0; j < keys; j++) {
                const double got = get(p, weights, w_at + t * k->Tk + j);
                ORACLE(fabs(got - w[j]) <= w[j] * tol + 4.0 * p->min,
                       "weights (row %zu, key %zu) = %.9g, reference %.9g, tolerance %.3g "
                       "(dz %.3g)",
                       t, j, got, w[j], w[j] * tol, dz);
            }
        for (size_t c = 0; c < k->dv; c++) {
            double y = 0.0, ay = 0.0, aav = 0.0, vmax = 0.0;
            for (size_t j = 0; j < keys; j++) {
                const double vv = k->V[j * k->ldv + c];
                y += w[j] * vv;
                ay += w[j] * fabs(vv);
                aav += w[j] * k->aV[j * k->ldv + c];
                vmax = fmax(vmax, fabs(vv));
            }
            Y[t * ldy + c] = y;
            errY[t * ldy + c] =
                2.0 * ((tol + (double)(keys + 2) * u) * (1.0 + tol) * ay +
                       k->kv * u * (1.0 + tol) * aav + (double)keys * 4.0 * p->min * (1.0 + vmax));
        }
    }
}

/* out (rows, C) typed against Y Wo, Wo (D, C) typed; rows with !row_ok skipped */
void check_projected(const prec *p, const double *Y, const double *errY, size_t rows,
                     size_t D, size_t C, const void *Wo, const void *out,
                     const unsigned char *row_ok, const char *what)
{
    for (size_t r = 0; r < rows; r++) {
        if (!row_ok[r])
            continue;
        for (size_t c = 0; c < C; c++) {
            double ref, err;
            if (Wo == NULL) { /* out = Y, C = D */
                ref = Y[r * D + c];
                err = errY[r * D + c];
            } else {
                double a = 0.0;
                ref = err = 0.0;
                for (size_t kk = 0; kk < D; kk++) {
                    const double wo = get(p, Wo, kk * C + c);
                    ref += Y[r * D + kk] * wo;
                    err += errY[r * D + kk] * fabs(wo);
                    a += fabs(Y[r * D + kk] * wo);
                }
                err = 2.0 * (err + (double)(D + 2) * p->u * a) + 4.0 * p->min;
            }
            const double got = get(p, out, r * C + c);
            ORACLE(fabs(got - ref) <= err, "%s[%zu][%zu] = %.9g, reference %.9g, tolerance %.3g",
                   what, r, c, got, ref, err);
        }
    }
}

/* ---- a forward's inputs in double (oracles 7 and 8) ---------------------------------- */

/* Q = X W and aQ = |X| |W| (rows, D) */
static void project(const prec *p, const void *X, const void *W, size_t rows, size_t C, size_t D,
                    double *Q, double *aQ)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < D; c++) {
            double s = 0.0, a = 0.0;
            for (size_t kk = 0; kk < C; kk++) {
                const double x = get(p, X, r * C + kk), w = get(p, W, kk * D + c);
                s += x * w;
                /* + min: a product below the normal range rounds with an
                 * absolute error up to u min (gradual underflow), which the
                 * relative model kq u aQ then covers */
                a += fabs(x * w) + p->min;
            }
            Q[r * D + c] = s;
            aQ[r * D + c] = a;
        }
}

double used_scale(const prec *p, double scale, size_t d)
{
    double s = scale > 0.0 ? scale : 1.0 / sqrt((double)d);
    return p->f64 ? s : (double)(float)s;
}

head_ref head_ref_make(const prec *p, shape s, double scale, int causal, const void *X,
                       const void *Wq, const void *Wk, const void *Wv, const void *Wo)
{
    head_ref h;
    memset(&h, 0, sizeof h);
    h.p = p;
    h.s = s;
    h.D = s.NH * s.hs;
    h.rows = s.B * s.T;
    h.scale = used_scale(p, scale, s.hs);
    h.causal = causal;
    double m1, m2, m3;
    h.finite_inputs = all_finite(p, X, h.rows * s.C, &h.mx) & all_finite(p, Wq, s.C * h.D, &m1) &
                      all_finite(p, Wk, s.C * h.D, &m2) & all_finite(p, Wv, s.C * h.D, &m3);
    h.mw = fmax(m1, fmax(m2, m3));
    if (Wo != NULL)
        h.finite_inputs &= all_finite(p, Wo, h.D * s.C, &h.mo);
    return h;
}

/* oracle 7's forward bounds */
static double bound_q(const head_ref *h)
{
    return (double)h->s.C * h->mx * h->mw;
}

static int forward_bounded(const head_ref *h, int with_Wo)
{
    const double L = h->p->max / 4, q = bound_q(h);
    return h->finite_inputs && q <= L && (double)h->s.hs * q * q <= L &&
           (!with_Wo || (double)h->D * q * h->mo <= L);
}

/* whether scale * |S| stays well below the overflow threshold (no row of
 * finite scores can then become all -inf) */
static int scaled_bounded(const head_ref *h)
{
    const double q = bound_q(h);
    return h->scale * (double)h->s.hs * q * q <= h->p->max / 4;
}

/* oracle 7's backward bounds (md = max|dout|) */
int backward_bounded(const head_ref *h, double md, int with_Wo)
{
    const double L = h->p->max / 4, q = bound_q(h), T = (double)h->s.T, hs = (double)h->s.hs;
    const double rows = (double)h->rows, D = (double)h->D;
    const double dy = with_Wo ? (double)h->s.C * md * h->mo : md;
    const double dq = fmax(1.0, h->scale) * T * 2.0 * hs * dy * q * q;
    const double g = fmax(dq, T * dy);
    return forward_bounded(h, with_Wo) && (!with_Wo || rows * q * md <= L) && T * dy <= L &&
           2.0 * hs * dy * q <= L && dq <= L && rows * h->mx * g <= L && 3.0 * D * g * h->mw <= L;
}

/* oracles 5, 7 and 8 on a successful forward: weights (B,NH,T,T) or NULL, out */
void check_forward(head_ref *h, const void *X, const void *Wq, const void *Wk,
                   const void *Wv, const void *Wo, const void *weights, const void *out)
{
    const prec *p = h->p;
    const shape s = h->s;
    const int bounded = forward_bounded(h, Wo != NULL);
    if (weights != NULL)
        for (size_t row = 0; row < s.B * s.NH * s.T; row++) {
            const size_t t = row % s.T, valid = h->causal ? t + 1 : s.T;
            const int kind = check_weights_row(p, weights, row * s.T, valid, s.T, "weights");
            if (bounded) {
                ORACLE(kind != 0, "weights row %zu NaN from finite, bounded inputs", row);
                ORACLE(kind != 1 || !scaled_bounded(h), "weights row %zu all 0 from bounded scores",
                       row);
            }
        }
    const size_t out_cols = Wo != NULL ? s.C : h->D;
    if (bounded)
        expect_finite(p, out, h->rows * out_cols, "out");
    if (!bounded) /* Q, K, V or S may overflow: no reference to compare with */
        return;
    const size_t n = h->rows * h->D;
    h->Q = doubles(n), h->K = doubles(n), h->V = doubles(n);
    h->aQ = doubles(n), h->aK = doubles(n), h->aV = doubles(n);
    project(p, X, Wq, h->rows, s.C, h->D, h->Q, h->aQ);
    project(p, X, Wk, h->rows, s.C, h->D, h->K, h->aK);
    project(p, X, Wv, h->rows, s.C, h->D, h->V, h->aV);
    double *Y = doubles(n), *errY = doubles(n);
    unsigned char *row_ok = alloc(h->rows);
    memset(row_ok, 1, h->rows);
    double *scratch = doubles(2 * s.T);
    for (size_t b = 0; b < s.B; b++)
        for (size_t hd = 0; hd < s.NH; hd++) {
            const size_t at = b * s.T * h->D + hd * s.hs;
            const core k = {s.T,
                            s.T,
                            s.hs,
                            s.hs,
                            h->D,
                            h->D,
                            h->D,
                            h->Q + at,
                            h->K + at,
                            h->V + at,
                            h->aQ + at,
                            h->aK + at,
                            h->aV + at,
                            (double)(2 * s.C + s.hs + 4),
                            (double)(s.C + 1),
                            h->scale,
                            h->causal};
            core_check(p, &k, weights, (b * s.NH + hd) * s.T * s.T, Y + at, errY + at, h->D,
                       row_ok + b * s.T, scratch);
        }
    check_projected(p, Y, errY, h->rows, h->D, out_cols, Wo, out, row_ok, "out");
}
