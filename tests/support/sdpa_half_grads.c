/*
 * The half-precision backward's reference and check (sdpa_half_grads.h);
 * the tolerance's derivation is test_sdpa_half.c's.
 */
#include <math.h>
#include <stddef.h>

#include "support/sdpa_half_grads.h"
#include "reference/sdpa_reference.h"
#include "support/talloc.h"

/* The reference gradients of the backward (out recomputed: the reference's),
 * each element's magnitude A (the sum of the absolute values of its terms)
 * and eps (above); dense arrays. */

hgrads half_reference_backward(const hproblem *pr)
{
    const hcase *c = &pr->c;
    const size_t hv = pr->hs_v, group = c->NH / c->NH_kv;
    const size_t nq = c->B * c->Tq * c->NH * c->hs, nk = c->B * c->Tk * c->NH_kv * c->hs;
    const size_t nv = c->B * c->Tk * c->NH_kv * hv;
    hgrads r = {talloc_doubles(nq), talloc_doubles(nk), talloc_doubles(nv),
                talloc_doubles(nq), talloc_doubles(nk), talloc_doubles(nv), 0.0, 0.0};
    double *P = talloc_doubles(c->Tk), *pv = talloc_doubles(hv);
    double smax = 0.0, lmax = 0.0;
    for (size_t b = 0; b < c->B; b++)
        for (size_t h = 0; h < c->NH; h++) {
            const size_t g = h / group;
            for (size_t t = 0; t < c->Tq; t++) {
                double l, S;
                sdpa_ref_weights(&pr->ref, b, h, t, P, &l);
                half_row_terms(pr, b, h, t, &S);
                smax = fmax(smax, S);
                if (isfinite(l))
                    lmax = fmax(lmax, fabs(l));
                const size_t oi = half_dense_index(pr, 3, b, h, t);
                const size_t qi = half_dense_index(pr, 0, b, h, t);
                const double *dy = pr->dout + oi, *o = pr->out + oi, *q = pr->Q + qi;
                /* pv_c = sum_j P_j |V_jc|: the magnitude of out_c's terms */
                for (size_t i = 0; i < hv; i++)
                    pv[i] = 0.0;
                for (size_t j = 0; j < c->Tk; j++) {
                    const double *v = pr->V + half_dense_index(pr, 2, b, g, j);
                    for (size_t i = 0; i < hv && P[j] != 0.0; i++)
                        pv[i] += P[j] * fabs(v[i]);
                }
                double D = 0.0, Dabs = 0.0;
                for (size_t i = 0; i < hv; i++)
                    D += dy[i] * o[i], Dabs += fabs(dy[i]) * pv[i];
                for (size_t j = 0; j < c->Tk; j++) {
                    if (!sdpa_ref_visible(&pr->ref, b, t, j) || P[j] == 0.0)
                        continue;
                    const size_t ki = half_dense_index(pr, 1, b, g, j);
                    const size_t vi = half_dense_index(pr, 2, b, g, j);
                    const double *k = pr->K + ki, *v = pr->V + vi;
                    double dP = 0.0, dPabs = 0.0;
                    for (size_t i = 0; i < hv; i++) {
                        r.dV[vi + i] += P[j] * dy[i];
                        r.aV[vi + i] += P[j] * fabs(dy[i]);
                        dP += dy[i] * v[i], dPabs += fabs(dy[i] * v[i]);
                    }
                    const double dS = P[j] * (dP - D), dSabs = P[j] * (dPabs + Dabs);
                    for (size_t i = 0; i < c->hs; i++) {
                        r.dQ[qi + i] += pr->scale * dS * k[i];
                        r.aQ[qi + i] += pr->scale * dSabs * fabs(k[i]);
                        r.dK[ki + i] += pr->scale * dS * q[i];
                        r.aK[ki + i] += pr->scale * dSabs * fabs(q[i]);
                    }
                }
            }
        }
    /* P's relative error (scores g, lse 4g + 2^-23|lse|, exp) plus the float
     * sums' 2^-24 per term, doubled (the header) */
    const double gmax = 0x1p-24 * (double)(c->Tk + c->hs + 16) +
                        0x1p-23 * (double)c->hs * pr->scale * smax;
    const double common =
        6.0 * gmax + 0x1p-23 * lmax + 0x1p-24 * (double)(c->Tk + c->hs + hv + 16);
    r.eps_q = 2.0 * (common + 0x1p-24 * (double)c->Tk);
    r.eps_kv = 2.0 * (common + 0x1p-24 * (double)(c->Tq * group));
    return r;
}

static void check_grad(const half_type *ht, const double *got, const double *ref,
                       const double *mag, size_t n, double eps, check_worst *worst,
                       const char *what, const char *name)
{
    double ratio = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const double eta = mag[i] > 0.0 ? ht->tiny : 0.0;
        const double tol = ht->u * fabs(ref[i]) + eta + eps * mag[i];
        const double e = fabs(got[i] - ref[i]);
        const double r = isnan(e) ? HUGE_VAL : e == 0.0 ? 0.0 : e / tol;
        if (!(r <= ratio))
            ratio = r, at = i;
    }
    expect_within(worst, ratio, 1.0,
                  "%s: %s error/tolerance, worst at element %zu: %.9g, reference %.9g, "
                  "magnitude %.3g, eps %.3g",
                  what, name, at, got[at], ref[at], mag[at], eps);
}

void half_check_backward(const hproblem *pr, const hgrads *g, const double *dQ,
                         const double *dK, const double *dV, check_worst *worst,
                         const char *what)
{
    const hcase *c = &pr->c;
    const size_t nq = c->B * c->Tq * c->NH * c->hs, nk = c->B * c->Tk * c->NH_kv * c->hs;
    const size_t nv = c->B * c->Tk * c->NH_kv * pr->hs_v;
    check_grad(pr->ht, dQ, g->dQ, g->aQ, nq, g->eps_q, worst, what, "dQ");
    check_grad(pr->ht, dK, g->dK, g->aK, nk, g->eps_kv, worst, what, "dK");
    check_grad(pr->ht, dV, g->dV, g->aV, nv, g->eps_kv, worst, what, "dV");
}

