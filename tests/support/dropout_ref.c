/* The dropout reference (dropout_ref.h). */
#include "support/dropout_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/philox.h"

int dropout_ref_keep(const dropout_ref *d, size_t b, size_t h, size_t t, size_t j)
{
    if (d->p == 0.0)
        return 1;
    /* attn.h: the key of (seed, offset), then the counter (j/4, t, h, b) */
    const uint32_t derive[4] = {(uint32_t)d->offset, (uint32_t)(d->offset >> 32), 0, 0};
    const uint32_t seed[2] = {(uint32_t)d->seed, (uint32_t)(d->seed >> 32)};
    uint32_t key[4], words[4];
    attn_philox4x32_10(derive, seed, key);
    const uint32_t counter[4] = {(uint32_t)(j / 4), (uint32_t)t, (uint32_t)h, (uint32_t)b};
    attn_philox4x32_10(counter, key, words);
    return (double)words[j % 4] >= floor(d->p * 4294967296.0);
}

double dropout_ref_factor(const dropout_ref *d, size_t b, size_t h, size_t t, size_t j)
{
    return dropout_ref_keep(d, b, h, t, j) ? 1.0 / (1.0 - d->p) : 0.0;
}

static const double *row(const double *x, size_t ld, size_t row_index, size_t head, size_t w)
{
    return x + row_index * ld + head * w;
}

void dropout_ref_forward(const sdpa_ref *r, const dropout_ref *d, double *out, double *lse)
{
    double *P = malloc(r->Tk * sizeof(double));
    for (size_t b = 0; b < r->B; b++)
        for (size_t h = 0; h < r->NH; h++)
            for (size_t t = 0; t < r->Tq; t++) {
                const size_t g = h / (r->NH / r->NH_kv);
                double l;
                sdpa_ref_weights(r, b, h, t, P, &l);
                if (lse != NULL)
                    lse[(b * r->NH + h) * r->Tq + t] = l;
                double *o = out + ((b * r->Tq + t) * r->NH + h) * r->hs_v;
                memset(o, 0, r->hs_v * sizeof(double));
                for (size_t j = 0; j < r->Tk; j++) {
                    if (!sdpa_ref_visible(r, b, t, j))
                        continue;
                    const double w = P[j] * dropout_ref_factor(d, b, h, t, j);
                    const double *v = row(r->V, r->ldv, b * r->Tk + j, g, r->hs_v);
                    for (size_t c = 0; c < r->hs_v; c++)
                        o[c] += w * v[c];
                }
            }
    free(P);
}

void dropout_ref_backward(const sdpa_ref *r, const dropout_ref *d, const double *dout,
                          double *dQ, double *dK, double *dV)
{
    const size_t nq = r->B * r->Tq * r->NH, nk = r->B * r->Tk * r->NH_kv;
    double *out = malloc(nq * r->hs_v * sizeof(double));
    double *P = malloc(r->Tk * sizeof(double));
    dropout_ref_forward(r, d, out, NULL);
    memset(dQ, 0, nq * r->hs * sizeof(double));
    memset(dK, 0, nk * r->hs * sizeof(double));
    memset(dV, 0, nk * r->hs_v * sizeof(double));
    for (size_t b = 0; b < r->B; b++)
        for (size_t h = 0; h < r->NH; h++)
            for (size_t t = 0; t < r->Tq; t++) {
                const size_t g = h / (r->NH / r->NH_kv), qrow = (b * r->Tq + t) * r->NH + h;
                const double *dO = dout + qrow * r->hs_v, *O = out + qrow * r->hs_v;
                const double *q = row(r->Q, r->ldq, b * r->Tq + t, h, r->hs);
                double l, D = 0.0;
                sdpa_ref_weights(r, b, h, t, P, &l);
                for (size_t c = 0; c < r->hs_v; c++)
                    D += dO[c] * O[c];
                for (size_t j = 0; j < r->Tk; j++) {
                    if (!sdpa_ref_visible(r, b, t, j))
                        continue;
                    const size_t krow = (b * r->Tk + j) * r->NH_kv + g;
                    const double md = dropout_ref_factor(d, b, h, t, j);
                    const double *k = row(r->K, r->ldk, b * r->Tk + j, g, r->hs);
                    const double *v = row(r->V, r->ldv, b * r->Tk + j, g, r->hs_v);
                    double dP = 0.0;
                    for (size_t c = 0; c < r->hs_v; c++) {
                        dV[krow * r->hs_v + c] += P[j] * md * dO[c];
                        dP += dO[c] * v[c];
                    }
                    const double dS = P[j] * (md * dP - D);
                    for (size_t i = 0; i < r->hs; i++) {
                        dQ[qrow * r->hs + i] += r->scale * dS * k[i];
                        dK[krow * r->hs + i] += r->scale * dS * q[i];
                    }
                }
            }
    free(P);
    free(out);
}
