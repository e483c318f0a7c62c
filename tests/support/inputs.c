/* Random test inputs and library calls on them (see inputs.h). */
#include "support/inputs.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/check.h"
#include "reference/reference.h"
#include "support/talloc.h"

double *random_rounded(const test_prec *p, test_rng *rng, size_t n, double stddev)
{
    double *x = talloc_doubles(n);
    rng_fill_normal(rng, x, n, stddev);
    prec_round_array(p, x, n);
    return x;
}

double *rounded_copy(const test_prec *p, const double *src, size_t n)
{
    double *x = talloc_doubles(n);
    memcpy(x, src, n * sizeof(double));
    prec_round_array(p, x, n);
    return x;
}

void head_project_values(head_data *h)
{
    ref_matmul(h->B * h->T, h->hs, h->C, h->X, h->C, h->Wv, h->hs, h->V, h->hs);
}

head_data head_random(const test_prec *p, test_rng *rng, size_t B, size_t T, size_t C, size_t hs,
                      double w_gain)
{
    const double w_stddev = w_gain / sqrt((double)C);
    head_data h = {B, T, C, hs, NULL, NULL, NULL, NULL, NULL};
    h.X = random_rounded(p, rng, B * T * C, 1.0);
    h.Wq = random_rounded(p, rng, C * hs, w_stddev);
    h.Wk = random_rounded(p, rng, C * hs, w_stddev);
    h.Wv = random_rounded(p, rng, C * hs, w_stddev);
    h.V = talloc_doubles(B * T * hs);
    head_project_values(&h);
    return h;
}

head_data head_from(const test_prec *p, size_t B, size_t T, size_t C, size_t hs, const double *X,
                    const double *Wq, const double *Wk, const double *Wv)
{
    head_data h = {B, T, C, hs, NULL, NULL, NULL, NULL, NULL};
    h.X = rounded_copy(p, X, B * T * C);
    h.Wq = rounded_copy(p, Wq, C * hs);
    h.Wk = rounded_copy(p, Wk, C * hs);
    h.Wv = rounded_copy(p, Wv, C * hs);
    h.V = talloc_doubles(B * T * hs);
    head_project_values(&h);
    return h;
}

void head_run(const test_prec *p, const head_data *h, const double *X, int causal, double **out,
              double **weights)
{
    const size_t nw = h->C * h->hs, no = h->B * h->T * h->hs, nwts = h->B * h->T * h->T;
    void *tout = talloc(no * p->size);
    void *tw = weights != NULL ? talloc(nwts * p->size) : NULL;
    attn_status st = p->self_attention(
        h->B, h->T, h->C, h->hs, causal, prec_typed(p, X != NULL ? X : h->X, h->B * h->T * h->C),
        prec_typed(p, h->Wq, nw), prec_typed(p, h->Wk, nw), prec_typed(p, h->Wv, nw), tout, tw);
    check_true(st == ATTN_OK, "self_attention (%zu,%zu,%zu,%zu): %s", h->B, h->T, h->C, h->hs,
               attn_status_string(st));
    *out = prec_doubles(p, tout, no);
    if (weights != NULL)
        *weights = prec_doubles(p, tw, nwts);
}

void head_check(const test_prec *p, const head_data *h, int causal, int with_weights,
                const char *what)
{
    const size_t no = h->B * h->T * h->hs, nwts = h->B * h->T * h->T;
    double *ref_out = talloc_doubles(no), *ref_w = talloc_doubles(nwts);
    ref_self_attention(h->B, h->T, h->C, h->hs, causal, h->X, h->Wq, h->Wk, h->Wv, ref_out, ref_w);
    double *out, *w = NULL;
    head_run(p, h, NULL, causal, &out, with_weights ? &w : NULL);
    check_residual(residual_scaled(out, ref_out, no, max_abs(h->V, no)), p->tol,
                   "%s: out B %zu T %zu C %zu hs %zu causal %d weights %d", what, h->B, h->T,
                   h->C, h->hs, causal, with_weights);
    if (with_weights)
        check_residual(residual_rows(w, ref_w, h->B * h->T, h->T), p->tol,
                       "%s: weights B %zu T %zu C %zu hs %zu causal %d", what, h->B, h->T, h->C,
                       h->hs, causal);
}

void head_check_rows(const test_prec *p, const head_data *h, int causal, int with_weights,
                     const size_t *rows, size_t n_rows, const char *what)
{
    const size_t B = h->B, T = h->T, C = h->C, hs = h->hs;
    double *Q = talloc_doubles(B * T * hs), *K = talloc_doubles(B * T * hs);
    ref_matmul(B * T, hs, C, h->X, C, h->Wq, hs, Q, hs);
    ref_matmul(B * T, hs, C, h->X, C, h->Wk, hs, K, hs);
    double *out, *w = NULL;
    head_run(p, h, NULL, causal, &out, with_weights ? &w : NULL);
    const double v_scale = max_abs(h->V, B * T * hs);
    double *ref_out = talloc_doubles(hs), *ref_w = talloc_doubles(T);
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < n_rows; i++) {
            const size_t t = rows[i], r = b * T + t, keys = causal ? t + 1 : T;
            ref_attend(1, keys, hs, hs, 1.0 / sqrt((double)hs), 0, Q + r * hs, hs,
                       K + b * T * hs, hs, h->V + b * T * hs, hs, ref_out, hs, ref_w, T);
            check_residual(residual_scaled(out + r * hs, ref_out, hs, v_scale), p->tol,
                           "%s: out[%zu][%zu] B %zu T %zu causal %d weights %d", what, b, t, B, T,
                           causal, with_weights);
            if (!with_weights)
                continue;
            for (size_t j = keys; j < T; j++)
                ref_w[j] = 0.0;
            check_residual(residual_rows(w + r * T, ref_w, 1, T), p->tol,
                           "%s: weights[%zu][%zu] B %zu T %zu causal %d", what, b, t, B, T, causal);
        }
}
