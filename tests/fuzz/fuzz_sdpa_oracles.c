/*
 * fuzz_api's numeric oracles of a successful sdpa call (oracle 9):
 * the keys a query sees, out and lse against the bounds of oracle 8, and
 * the gradients.
 */
#include "fuzz_sdpa.h"

/* ---- numeric oracles of a successful call ------------------------------------------------ */

/* keys [*lo, *hi) that query t of sequence b sees */
void sdpa_visible(sdpa_dims s, int causal, size_t window, const size_t *lengths, size_t b,
                  size_t t, size_t *lo, size_t *hi)
{
    const size_t L = lengths != NULL ? lengths[b] : s.Tk;
    const long long p = (long long)L - (long long)s.Tq + (long long)t; /* small shapes */
    *hi = L;
    if (causal)
        *hi = p < 0 ? 0 : (size_t)p + 1 < L ? (size_t)p + 1 : L;
    *lo = 0;
    if (window > 0 && p >= 0 && (size_t)p + 1 > window)
        *lo = (size_t)p + 1 - window;
}

/* The forward's outputs against the double reference, row by row (oracles
 * 5, 7 and 8 of the header, for sdpa):
 *   - a row without a visible key, or whose visible scores are all -inf
 *     (bounded scores, a -inf mask), is lse -inf exactly, and out 0 exactly
 *     when V is finite on the keys it may multiply by 0 (below);
 *   - a NaN among a row's visible inputs (its query, a visible key, a
 *     visible mask entry) makes out and lse of the row NaN;
 *   - a visible mask entry +inf (bounded scores, no NaN) gives lse +inf;
 *   - otherwise, with every visible input finite and the scores' partial
 *     sums below REAL_MAX/16: out within core_check's bound (the values V
 *     given exactly: kv = 0; scores rounded with kq = hs + 4, the mask added
 *     and the scale applied) and lse within dz + the weights' tolerance +
 *     4u(|max| + |log sum| + 1).
 * (settle_sdpa_outputs checks the bytes out's layout does not address.) */
void check_sdpa_forward(const prec *p, sdpa_dims s, double scale, int causal,
                        size_t window, const sdpa_call *a, const sdpa_io *x)
{
    if (p->half) {
        check_sdpa_half_forward(p, s, scale, causal, window, a, x);
        return;
    }
    const double u = p->u;
    const size_t group = s.NH / s.NH_kv;
    double *z = doubles(s.Tk), *bound = doubles(s.Tk), *w = doubles(s.Tk);
    for (size_t b = 0; b < s.B; b++)
        for (size_t h = 0; h < s.NH; h++)
            for (size_t t = 0; t < s.Tq; t++) {
                const size_t g = h / group;
                const size_t o_at = sdpa_at(a, SO, b, h, t), l_at = (b * s.NH + h) * s.Tq + t;
                size_t lo, hi;
                sdpa_visible(s, causal, window, x->lengths, b, t, &lo, &hi);
                /* attn.h: keys that only the mask or the window hides may be
                 * multiplied by a weight of 0, so a NaN (or inf) in their V may
                 * reach the row: out is claimed only when V is finite on every
                 * key the row may multiply ([0, hi)) */
                int v_finite = 1;
                for (size_t j = 0; j < hi; j++)
                    for (size_t c = 0; c < s.hs_v; c++)
                        v_finite &= isfinite(get(p, x->V, sdpa_at(a, SV, b, g, j) + c)) != 0;
                if (hi <= lo) {
                    for (size_t c = 0; c < s.hs_v && v_finite; c++)
                        ORACLE(get(p, x->out, o_at + c) == 0.0,
                               "row (b %zu, h %zu, t %zu) sees no key: out[%zu] = %g", b, h, t, c,
                               get(p, x->out, o_at + c));
                    ORACLE(x->lse == NULL || get(p, x->lse, l_at) == -(double)INFINITY,
                           "row (b %zu, h %zu, t %zu) sees no key: lse %g", b, h, t,
                           get(p, x->lse, l_at));
                    continue;
                }
                const size_t q_at = sdpa_at(a, SQ, b, h, t);
                int has_nan = 0, finite = 1, plus_inf = 0, bounded = 1, v_ok = 1;
                for (size_t i = 0; i < s.hs; i++) {
                    has_nan |= isnan(get(p, x->Q, q_at + i)) != 0;
                    finite &= isfinite(get(p, x->Q, q_at + i)) != 0;
                }
                double m = -(double)INFINITY, vmax = 0.0;
                for (size_t j = lo; j < hi; j++) {
                    const size_t k_at = sdpa_at(a, SK, b, g, j);
                    double dot = 0.0, bd = 0.0;
                    for (size_t i = 0; i < s.hs; i++) {
                        const double q = get(p, x->Q, q_at + i), k = get(p, x->K, k_at + i);
                        has_nan |= isnan(k) != 0;
                        finite &= isfinite(k) != 0;
                        dot += q * k;
                        bd += fabs(q * k);
                    }
                    const double mk = x->mask != NULL
                                          ? get(p, x->mask,
                                                b * a->mask_sb + h * a->mask_sh + t * a->mask_ld + j)
                                          : 0.0;
                    has_nan |= isnan(mk) != 0;
                    plus_inf |= mk == (double)INFINITY;
                    bounded &= bd <= p->max / 16 && scale * bd <= p->max / 16;
                    z[j] = scale * dot + mk;
                    bound[j] = bd;
                    if (z[j] > m)
                        m = z[j];
                    for (size_t c = 0; c < s.hs_v; c++) {
                        const double v = get(p, x->V, sdpa_at(a, SV, b, g, j) + c);
                        v_ok &= isfinite(v) && fabs(v) <= p->max / 4;
                        vmax = fmax(vmax, fabs(v));
                    }
                }
                if (has_nan) {
                    for (size_t c = 0; c < s.hs_v; c++)
                        ORACLE(isnan(get(p, x->out, o_at + c)),
                               "row (b %zu, h %zu, t %zu) has a NaN input: out[%zu] = %g", b, h,
                               t, c, get(p, x->out, o_at + c));
                    ORACLE(x->lse == NULL || isnan(get(p, x->lse, l_at)),
                           "row (b %zu, h %zu, t %zu) has a NaN input: lse %g", b, h, t,
                           get(p, x->lse, l_at));
                    continue;
                }
                if (!finite || !bounded)
                    continue;
                if (plus_inf) {
                    ORACLE(x->lse == NULL || get(p, x->lse, l_at) == (double)INFINITY,
                           "row (b %zu, h %zu, t %zu) has a +inf score: lse %g", b, h, t,
                           get(p, x->lse, l_at));
                    continue;
                }
                if (m == -(double)INFINITY) {
                    for (size_t c = 0; c < s.hs_v && v_finite; c++)
                        ORACLE(get(p, x->out, o_at + c) == 0.0,
                               "row (b %zu, h %zu, t %zu) fully masked: out[%zu] = %g", b, h, t,
                               c, get(p, x->out, o_at + c));
                    ORACLE(x->lse == NULL || get(p, x->lse, l_at) == -(double)INFINITY,
                           "row (b %zu, h %zu, t %zu) fully masked: lse %g", b, h, t,
                           get(p, x->lse, l_at));
                    continue;
                }
                if (!v_ok || !v_finite)
                    continue;
                /* the accuracy bound (core_check's, for given Q, K, V) */
                const size_t n = hi - lo;
                double dz = 0.0;
                exact_sum total = {0.0, 0.0};
                for (size_t j = lo; j < hi; j++) {
                    if (z[j] == -(double)INFINITY) {
                        w[j] = 0.0;
                        continue;
                    }
                    dz = fmax(dz, scale * u * (double)(s.hs + 4) * bound[j] +
                                      2.0 * u * (fabs(z[j]) + fabs(z[j] - m)));
                    w[j] = exp(z[j] - m);
                    exact_add(&total, w[j]);
                }
                const double sum = exact_value(&total);
                if (dz > 0.5 || !(sum > 0.0))
                    continue;
                const double tol = expm1(2.0 * dz) + 8.0 * p->exp_err + sum_tol(p, n) +
                                   (double)(n / 64 + 4) * 4.0 * u;
                for (size_t c = 0; c < s.hs_v; c++) {
                    double y = 0.0, ay = 0.0;
                    for (size_t j = lo; j < hi; j++) {
                        const double v = get(p, x->V, sdpa_at(a, SV, b, g, j) + c);
                        y += w[j] / sum * v;
                        ay += w[j] / sum * fabs(v);
                    }
                    const double err = 2.0 * ((tol + (double)(n + 2) * u) * (1.0 + tol) * ay +
                                              (double)n * 4.0 * p->min * (1.0 + vmax));
                    const double got = get(p, x->out, o_at + c);
                    ORACLE(fabs(got - y) <= err,
                           "out (b %zu, h %zu, t %zu)[%zu] = %.9g, reference %.9g, tolerance "
                           "%.3g (dz %.3g, %zu keys)",
                           b, h, t, c, got, y, err, dz, n);
                }
                if (x->lse != NULL) {
                    const double ref = m + log(sum), got = get(p, x->lse, l_at);
                    const double err = dz + tol + 4.0 * u * (fabs(m) + fabs(log(sum)) + 1.0);
                    ORACLE(fabs(got - ref) <= err,
                           "lse (b %zu, h %zu, t %zu) = %.9g, reference %.9g, tolerance %.3g", b,
                           h, t, got, ref, err);
                }
            }
}

/* Row t of sequence b of array i of x, every head: whether each element
 * is finite (and, with want_zero, exactly 0); *m (or NULL) gets the
 * largest magnitude. */
static int sdpa_row_scan(const prec *p, sdpa_dims s, const sdpa_call *a, int i, const void *x,
                         size_t b, size_t t, int want_zero, double *m)
{
    size_t H, T, w;
    sdpa_array_dims(s, i, &H, &T, &w);
    int ok = 1;
    for (size_t h = 0; h < H; h++)
        for (size_t k = 0; k < w; k++) {
            const double v = get(p, x, sdpa_at(a, i, b, h, t) + k);
            ok &= want_zero ? v == 0.0 : isfinite(v) != 0;
            if (m != NULL)
                *m = fmax(*m, fabs(v));
        }
    return ok;
}

/* whether x and y hold the same bytes at every element of array i's layout */
int sdpa_same(const prec *p, sdpa_dims s, const sdpa_call *a, int i, const void *x,
              const void *y)
{
    size_t H, T, w;
    sdpa_array_dims(s, i, &H, &T, &w);
    for (size_t b = 0; b < s.B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t t = 0; t < T; t++) {
                const size_t at = sdpa_at(a, i, b, h, t) * p->es;
                if (memcmp((const unsigned char *)x + at, (const unsigned char *)y + at,
                           w * p->es) != 0)
                    return 0;
            }
    return 1;
}

/* The backward's structure and finiteness: rows of dK, dV of keys j >= L_b
 * and dQ rows of queries without a visible key (below) are exactly 0; with every
 * input finite (the mask finite or -inf), the forward's out and lse, and the
 * bounds below REAL_MAX/4, every gradient is finite:
 *   |s| <= scale hs mq mk, |dP| <= hs_v md mv (= |D|), |dS| <= 2 |dP|,
 *   |dV| <= Tq G md, |dQ| <= scale Tk |dS| mk, |dK| <= scale Tq G |dS| mq,
 * G = NH / NH_kv. (settle_sdpa_outputs checks the bytes their layouts do
 * not address.) */
void check_sdpa_backward(const prec *p, sdpa_dims s, double scale, int causal,
                         size_t window, const sdpa_call *a, const sdpa_io *x,
                         int from_forward)
{
    for (size_t b = 0; b < s.B; b++)
        for (size_t j = x->lengths != NULL ? x->lengths[b] : s.Tk; j < s.Tk; j++) {
            ORACLE(sdpa_row_scan(p, s, a, SK, x->dK, b, j, 1, NULL),
                   "dK of key %zu >= L_%zu is not 0", j, b);
            ORACLE(sdpa_row_scan(p, s, a, SV, x->dV, b, j, 1, NULL),
                   "dV of key %zu >= L_%zu is not 0", j, b);
        }
    /* a query that sees no key has dQ 0, when nothing it could multiply by a
     * weight of 0 is NaN or infinite: K and V of its sequence's keys, its
     * out and dout rows (attn.h promises no more for the backward) */
    for (size_t b = 0; b < s.B; b++)
        for (size_t t = 0; t < s.Tq; t++) {
            size_t lo, hi;
            sdpa_visible(s, causal, window, x->lengths, b, t, &lo, &hi);
            if (hi > lo)
                continue;
            int clean = 1;
            const size_t L = x->lengths != NULL ? x->lengths[b] : s.Tk;
            for (size_t j = 0; j < L; j++)
                clean &= sdpa_row_scan(p, s, a, SK, x->K, b, j, 0, NULL) &&
                         sdpa_row_scan(p, s, a, SV, x->V, b, j, 0, NULL);
            clean &= sdpa_row_scan(p, s, a, SO, x->out, b, t, 0, NULL) &&
                     sdpa_row_scan(p, s, a, SO, x->dout, b, t, 0, NULL);
            ORACLE(!clean || sdpa_row_scan(p, s, a, SQ, x->dQ, b, t, 1, NULL),
                   "dQ of query %zu of sequence %zu (no key) is not 0", t, b);
        }
    if (!from_forward)
        return;
    double mq = 0.0, mk = 0.0, mv = 0.0, md = 0.0;
    int finite = 1;
    for (size_t b = 0; b < s.B; b++) {
        for (size_t t = 0; t < s.Tq; t++)
            finite &= sdpa_row_scan(p, s, a, SQ, x->Q, b, t, 0, &mq) &
                      sdpa_row_scan(p, s, a, SO, x->dout, b, t, 0, &md);
        for (size_t j = 0; j < (x->lengths != NULL ? x->lengths[b] : s.Tk); j++)
            finite &= sdpa_row_scan(p, s, a, SK, x->K, b, j, 0, &mk) &
                      sdpa_row_scan(p, s, a, SV, x->V, b, j, 0, &mv);
    }
    for (size_t i = 0; x->mask != NULL && i < a->nM; i++) {
        const double v = get(stat_prec(p), x->mask, i);
        finite &= isfinite(v) || v == -(double)INFINITY;
    }
    /* the products Q K^T, dS K and dS^T Q are accumulated unscaled (the
     * scale is the GEMMs' alpha, as in PyTorch's flash backward): a scale
     * below 1 does not shrink their partial sums */
    const double L = p->max / 4, G = (double)(s.NH / s.NH_kv), sc = fmax(scale, 1.0);
    const double dP = (double)s.hs_v * md * mv, dS = 2.0 * dP;
    if (!finite || !(sc * (double)s.hs * mq * mk <= L) || !(mq <= L && mk <= L && mv <= L) ||
        !(dS <= L) || !((double)s.Tq * G * md <= L) ||
        !(sc * (double)s.Tk * dS * mk <= L) || !(sc * (double)s.Tq * G * dS * mq <= L))
        return;
    const void *g[3] = {x->dQ, x->dK, x->dV};
    for (int i = SQ; i <= SV; i++) {
        size_t H, T, w;
        sdpa_array_dims(s, i, &H, &T, &w);
        for (size_t b = 0; b < s.B; b++)
            for (size_t t = 0; t < T; t++)
                ORACLE(sdpa_row_scan(p, s, a, i, g[i], b, t, 0, NULL),
                       "%s row %zu of sequence %zu not finite from finite, bounded inputs",
                       i == SQ ? "dQ" : i == SK ? "dK" : "dV", t, b);
    }
}
