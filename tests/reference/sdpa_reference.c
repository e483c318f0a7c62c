/* The naive double reference of the sdpa calls (see sdpa_reference.h). */
#include "reference/sdpa_reference.h"

#include <math.h>
#include <stdint.h>

#include "support/talloc.h"

double sdpa_ref_scale(double scale, size_t hs)
{
    return scale > 0.0 ? scale : 1.0 / sqrt((double)hs);
}

size_t sdpa_ref_length(const sdpa_ref *r, size_t b)
{
    return r->key_lengths != NULL ? r->key_lengths[b] : r->Tk;
}

int sdpa_ref_visible(const sdpa_ref *r, size_t b, size_t t, size_t j)
{
    const size_t L = sdpa_ref_length(r, b);
    if (j >= L)
        return 0;
    /* p = L - Tq + t, kept in signed arithmetic (small test shapes) */
    const long long p = (long long)L - (long long)r->Tq + (long long)t;
    if (r->causal && (long long)j > p)
        return 0;
    /* j > p - window, i.e. j + window > p; a window beyond every key hides nothing */
    if (r->window > 0 && r->window < (size_t)INT64_MAX / 2 &&
        (long long)j + (long long)r->window <= p)
        return 0;
    return 1;
}

static const double *q_row(const sdpa_ref *r, size_t b, size_t t, size_t h)
{
    return r->Q + (b * r->Tq + t) * r->ldq + h * r->hs;
}

static const double *k_row(const sdpa_ref *r, size_t b, size_t j, size_t g)
{
    return r->K + (b * r->Tk + j) * r->ldk + g * r->hs;
}

static const double *v_row(const sdpa_ref *r, size_t b, size_t j, size_t g)
{
    return r->V + (b * r->Tk + j) * r->ldv + g * r->hs_v;
}

static size_t kv_head(const sdpa_ref *r, size_t h)
{
    return h / (r->NH / r->NH_kv);
}

void sdpa_ref_weights(const sdpa_ref *r, size_t b, size_t h, size_t t, double *P, double *lse)
{
    const size_t g = kv_head(r, h);
    const double *q = q_row(r, b, t, h);
    /* scores of the visible keys; P[j] holds s_j for now */
    double m = -HUGE_VAL;
    int visible_any = 0, has_nan = 0;
    size_t plus_inf = 0;
    for (size_t j = 0; j < r->Tk; j++) {
        P[j] = 0.0;
        if (!sdpa_ref_visible(r, b, t, j))
            continue;
        const double *k = k_row(r, b, j, g);
        double dot = 0.0;
        for (size_t i = 0; i < r->hs; i++)
            dot += q[i] * k[i];
        double s = r->scale * dot;
        if (r->mask != NULL)
            s += r->mask[b * r->mask_sb + h * r->mask_sh + t * r->mask_ld + j];
        P[j] = s;
        visible_any = 1;
        if (isnan(s))
            has_nan = 1;
        else if (s > m)
            m = s;
        if (s == HUGE_VAL)
            plus_inf++;
    }
    if (!visible_any) {
        *lse = -HUGE_VAL;
        return; /* P is all 0 */
    }
    if (has_nan) {
        for (size_t j = 0; j < r->Tk; j++)
            if (sdpa_ref_visible(r, b, t, j))
                P[j] = (double)NAN;
        *lse = (double)NAN;
        return;
    }
    if (m == -HUGE_VAL) { /* every visible score -inf: fully masked */
        for (size_t j = 0; j < r->Tk; j++)
            P[j] = 0.0;
        *lse = -HUGE_VAL;
        return;
    }
    if (m == HUGE_VAL) { /* the +inf scores share the weight */
        for (size_t j = 0; j < r->Tk; j++)
            if (sdpa_ref_visible(r, b, t, j))
                P[j] = P[j] == HUGE_VAL ? 1.0 / (double)plus_inf : 0.0;
        *lse = HUGE_VAL;
        return;
    }
    double sum = 0.0;
    for (size_t j = 0; j < r->Tk; j++)
        if (sdpa_ref_visible(r, b, t, j)) {
            P[j] = exp(P[j] - m); /* exp(-inf) = 0 for masked entries */
            sum += P[j];
        }
    for (size_t j = 0; j < r->Tk; j++)
        P[j] /= sum;
    *lse = m + log(sum);
}

/* out_t of row (b, h, t) from its weights, dense (hs_v) */
static void weighted_sum(const sdpa_ref *r, size_t b, size_t h, size_t t, const double *P,
                         double *o)
{
    const size_t g = kv_head(r, h);
    for (size_t c = 0; c < r->hs_v; c++)
        o[c] = 0.0;
    for (size_t j = 0; j < r->Tk; j++) {
        if (!sdpa_ref_visible(r, b, t, j))
            continue;
        const double *v = v_row(r, b, j, g);
        for (size_t c = 0; c < r->hs_v; c++)
            o[c] += P[j] * v[c];
    }
}

void sdpa_ref_forward(const sdpa_ref *r, double *out, double *lse)
{
    double *P = talloc_doubles(r->Tk);
    for (size_t b = 0; b < r->B; b++)
        for (size_t t = 0; t < r->Tq; t++)
            for (size_t h = 0; h < r->NH; h++) {
                double l;
                sdpa_ref_weights(r, b, h, t, P, &l);
                weighted_sum(r, b, h, t, P, out + ((b * r->Tq + t) * r->NH + h) * r->hs_v);
                if (lse != NULL)
                    lse[(b * r->NH + h) * r->Tq + t] = l;
            }
}

void sdpa_ref_backward(const sdpa_ref *r, const double *dout, double *dQ, double *dK,
                       double *dV)
{
    const size_t nq = r->B * r->Tq * r->NH * r->hs, nk = r->B * r->Tk * r->NH_kv * r->hs;
    const size_t nv = r->B * r->Tk * r->NH_kv * r->hs_v;
    for (size_t i = 0; i < nq; i++)
        dQ[i] = 0.0;
    for (size_t i = 0; i < nk; i++)
        dK[i] = 0.0;
    for (size_t i = 0; i < nv; i++)
        dV[i] = 0.0;
    double *P = talloc_doubles(r->Tk), *o = talloc_doubles(r->hs_v);
    for (size_t b = 0; b < r->B; b++)
        for (size_t h = 0; h < r->NH; h++) {
            const size_t g = kv_head(r, h);
            for (size_t t = 0; t < r->Tq; t++) {
                double l;
                sdpa_ref_weights(r, b, h, t, P, &l);
                weighted_sum(r, b, h, t, P, o);
                const double *dy = dout + ((b * r->Tq + t) * r->NH + h) * r->hs_v;
                double D = 0.0;
                for (size_t c = 0; c < r->hs_v; c++)
                    D += dy[c] * o[c];
                const double *q = q_row(r, b, t, h);
                double *dq = dQ + ((b * r->Tq + t) * r->NH + h) * r->hs;
                for (size_t j = 0; j < r->Tk; j++) {
                    if (!sdpa_ref_visible(r, b, t, j))
                        continue;
                    const double *k = k_row(r, b, j, g), *v = v_row(r, b, j, g);
                    double *dk = dK + ((b * r->Tk + j) * r->NH_kv + g) * r->hs;
                    double *dv = dV + ((b * r->Tk + j) * r->NH_kv + g) * r->hs_v;
                    double dP = 0.0;
                    for (size_t c = 0; c < r->hs_v; c++) {
                        dv[c] += P[j] * dy[c];
                        dP += dy[c] * v[c];
                    }
                    const double dS = P[j] * (dP - D);
                    for (size_t i = 0; i < r->hs; i++) {
                        dq[i] += r->scale * dS * k[i];
                        dk[i] += r->scale * dS * q[i];
                    }
                }
            }
        }
}
