/*
 * test_lookup: attn_lookup_* (soft lookup q (Tq,d), k (Tk,d), v (Tk,dv))
 * against the double reference over many shapes: Tq = 1, Tk = 1, d = 1,
 * dv = 1, Tq != Tk, d != dv, sizes that are not multiples of the vector
 * widths, with weights requested and with weights = NULL (the library then
 * works through a workspace, in blocks of query rows for long key sets),
 * explicit scales and the default (scale <= 0 -> 1/sqrt(d)), and inputs
 * aliasing one another (q == k == v is allowed; only outputs may not
 * overlap).
 *
 * Residuals (check.h): weights per row max|w - ref| / max ref; out
 * max|out - ref| / max|v|. Tolerance 1e-5 (f32) / 1e-12 (f64), justified in
 * precision.h; q, k, v are N(0,1) and the scales keep scale * q.k = O(1..10).
 * One case has 262147 keys (more than one block of the workspace, so one query
 * row at a time): sums of that length are where float accumulation is most
 * exposed (random-walk growth ~sqrt(Tk) u); the residuals observed there are
 * 6e-7 (f32) and 4e-14 (f64), still well inside the tolerances.
 */
#include <math.h>
#include <string.h>

#include "support/inputs.h"
#include "support/test_common.h"

typedef struct lookup_shape {
    size_t Tq, Tk, d, dv;
    double scale; /* passed as is; <= 0 selects 1/sqrt(d) */
} lookup_shape;

/* Runs one lookup (weights requested or not) and compares with the reference. */
static void check_lookup(const test_prec *p, test_rng *rng, lookup_shape s, int with_weights)
{
    const size_t nq = s.Tq * s.d, nk = s.Tk * s.d, nv = s.Tk * s.dv;
    double *q = random_rounded(p, rng, nq, 1.0), *k = random_rounded(p, rng, nk, 1.0),
           *v = random_rounded(p, rng, nv, 1.0);

    double *ref_out = talloc_doubles(s.Tq * s.dv), *ref_w = talloc_doubles(s.Tq * s.Tk);
    ref_lookup(s.Tq, s.Tk, s.d, s.dv, s.scale, q, k, v, ref_out, ref_w);

    void *out = talloc(s.Tq * s.dv * p->size);
    void *w = with_weights ? talloc(s.Tq * s.Tk * p->size) : NULL;
    attn_status st = p->lookup(s.Tq, s.Tk, s.d, s.dv, s.scale, prec_typed(p, q, nq),
                               prec_typed(p, k, nk), prec_typed(p, v, nv), out, w);
    check_true(st == ATTN_OK, "lookup (%zu,%zu,%zu,%zu): %s", s.Tq, s.Tk, s.d, s.dv,
               attn_status_string(st));
    check_residual(residual_scaled(prec_doubles(p, out, s.Tq * s.dv), ref_out, s.Tq * s.dv,
                                   max_abs(v, nv)),
                   p->tol, "out Tq %zu Tk %zu d %zu dv %zu scale %g weights %d", s.Tq, s.Tk,
                   s.d, s.dv, s.scale, with_weights);
    if (with_weights)
        check_residual(residual_rows(prec_doubles(p, w, s.Tq * s.Tk), ref_w, s.Tq, s.Tk), p->tol,
                       "weights Tq %zu Tk %zu d %zu dv %zu scale %g", s.Tq, s.Tk, s.d, s.dv,
                       s.scale);
}

static void random_shapes(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const lookup_shape shapes[] = {
        {1, 1, 1, 1, 1.0},    {1, 5, 3, 2, 1.0},     {7, 3, 5, 9, 0.0},
        {17, 33, 8, 1, 0.0},  {33, 17, 1, 12, 1.0},  {64, 100, 16, 32, 0.0},
        {3, 129, 31, 7, 0.2}, {100, 1, 4, 4, 0.0},   {1, 300, 17, 5, 0.0},
        {9, 9, 64, 64, -1.0}, {31, 47, 2, 3, 2.0},   {16, 16, 16, 16, 0.25},
        {5, 8, 128, 1, 0.0},  {150, 4096, 4, 3, 0.5}, /* several blocks without weights */
    };
    test_rng rng;
    rng_seed(&rng, 31);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int with_weights = 1; with_weights >= 0; with_weights--)
            check_lookup(p, &rng, shapes[i], with_weights);
    check_worst_report(p->name);
}

static void long_keys(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 32);
    check_lookup(p, &rng, (lookup_shape){3, ((size_t)1 << 18) + 3, 2, 2, 0.0}, 0);
    check_lookup(p, &rng, (lookup_shape){3, ((size_t)1 << 18) + 3, 2, 2, 0.0}, 1);
    check_worst_report(p->name);
}

/* scale <= 0 (0, -0, negative) selects 1/sqrt(d): the same weights as the
 * explicit 1/sqrt(d) (rounded to the element type by both) */
static void default_scale(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { Tq = 6, Tk = 11, d = 9, dv = 5 };
    test_rng rng;
    rng_seed(&rng, 33);
    double *q = random_rounded(p, &rng, Tq * d, 1.0), *k = random_rounded(p, &rng, Tk * d, 1.0),
           *v = random_rounded(p, &rng, Tk * dv, 1.0);
    void *tq = prec_typed(p, q, Tq * d), *tk = prec_typed(p, k, Tk * d),
         *tv = prec_typed(p, v, Tk * dv);
    void *out = talloc(Tq * dv * p->size), *w = talloc(Tq * Tk * p->size);
    void *out_e = talloc(Tq * dv * p->size), *w_e = talloc(Tq * Tk * p->size);
    assert_int_equal(p->lookup(Tq, Tk, d, dv, 1.0 / 3.0, tq, tk, tv, out_e, w_e), ATTN_OK);
    const double defaults[] = {0.0, -0.0, -1.0, -1e-300};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        assert_int_equal(p->lookup(Tq, Tk, d, dv, defaults[i], tq, tk, tv, out, w), ATTN_OK);
        check_true(memcmp(w, w_e, Tq * Tk * p->size) == 0 &&
                       memcmp(out, out_e, Tq * dv * p->size) == 0,
                   "scale %g differs from 1/sqrt(d)", defaults[i]);
    }
}

/* Any scale <= 0 selects the default, also one that is not representable in
 * the element type (-1e300 in f32): attn.h makes only NaN and infinite scales
 * errors. */
static void huge_negative_scale(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { Tq = 2, Tk = 3, d = 4, dv = 1 };
    test_rng rng;
    rng_seed(&rng, 35);
    double *q = random_rounded(p, &rng, Tq * d, 1.0), *k = random_rounded(p, &rng, Tk * d, 1.0),
           *v = random_rounded(p, &rng, Tk * dv, 1.0);
    double ref_out[Tq * dv], ref_w[Tq * Tk];
    void *out = talloc(Tq * dv * p->size), *w = talloc(Tq * Tk * p->size);
    attn_status st = p->lookup(Tq, Tk, d, dv, -1e300, prec_typed(p, q, Tq * d),
                               prec_typed(p, k, Tk * d), prec_typed(p, v, Tk * dv), out, w);
    check_true(st == ATTN_OK, "scale -1e300: %s", attn_status_string(st));
    ref_lookup(Tq, Tk, d, dv, -1e300, q, k, v, ref_out, ref_w);
    check_residual(residual_rows(prec_doubles(p, w, Tq * Tk), ref_w, Tq, Tk), p->tol,
                   "scale -1e300: weights");
}

/* Inputs may alias each other: q = k = v = X is the lesson's raw lookup
 * softmax(X X^T) X, and a k that is a suffix of q's buffer is fine too. */
static void aliased_inputs(void **state)
{
    const test_prec *p = TEST_PREC(state);
    enum { T = 13, C = 6 };
    test_rng rng;
    rng_seed(&rng, 34);
    double *X = random_rounded(p, &rng, T * C, 1.0);
    void *tX = prec_typed(p, X, T * C);
    void *out = talloc(T * C * p->size), *w = talloc(T * T * p->size);
    assert_int_equal(p->lookup(T, T, C, C, 0.0, tX, tX, tX, out, w), ATTN_OK);
    double *ref_out = talloc_doubles(T * C), *ref_w = talloc_doubles(T * T);
    ref_lookup(T, T, C, C, 0.0, X, X, X, ref_out, ref_w);
    check_residual(residual_scaled(prec_doubles(p, out, T * C), ref_out, T * C, max_abs(X, T * C)),
                   p->tol, "q = k = v: out");
    check_residual(residual_rows(prec_doubles(p, w, T * T), ref_w, T, T), p->tol,
                   "q = k = v: weights");

    /* keys are rows 3.. of the query buffer, values rows 0..T-4 */
    const size_t Tk = T - 3;
    assert_int_equal(p->lookup(T, Tk, C, C, 0.5, tX, prec_at(p, tX, 3 * C), tX, out, w), ATTN_OK);
    ref_lookup(T, Tk, C, C, 0.5, X, X + 3 * C, X, ref_out, ref_w);
    check_residual(residual_scaled(prec_doubles(p, out, T * C), ref_out, T * C, max_abs(X, T * C)),
                   p->tol, "overlapping k: out");
    check_residual(residual_rows(prec_doubles(p, w, T * Tk), ref_w, T, Tk), p->tol,
                   "overlapping k: weights");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        PREC_CASES(random_shapes),
        PREC_CASES(long_keys),
        PREC_CASES(default_scale),
        PREC_CASES(huge_negative_scale),
        PREC_CASES(aliased_inputs),
    };
    return cmocka_run_group_tests_name("attn_lookup", tests, NULL, NULL);
}
