/*
 * test_exp: the polynomial exp kernels of lib/kernels/kernels.h (attn_exp_kernel_f32
 * and _f64), for every kernel set the CPU runs (the others are skipped).
 *
 * Reference: libm exp() in double evaluated at the kernel's own input (for
 * f32 that is exp((double)x), i.e. expf's exact value before its final
 * rounding -- a stricter yardstick than expf itself). Criteria, from the
 * contract in kernels.h:
 *   result normal (ref >= smallest normal):  |got - ref| / ref <= 2e-7 (f32),
 *                                            1e-14 (f64);
 *   ref below the normal range:  0 <= got and |got - ref| < smallest normal
 *                                (flushed to 0 or a subnormal);
 *   overflow (x more than tol above log(max)):  got = +inf; within tol of
 *                                log(max) either +inf or the relative bound;
 *   exp(-inf) = 0 exactly, exp(+inf) = +inf, exp(NaN) is NaN, exp(-0) = 1.
 * Inputs: ~2 million stratified random points over [-104, 89] (f32) and
 * [-745, 710] (f64), rounded to the element type; every representable value
 * within 4096 steps of 0, +-2^-24, +-2^-12, +-ln2/2, +-ln2 (range-reduction
 * seams), log(max), log(smallest normal), log(smallest subnormal) and the
 * range ends; every array length 1..40 (vector tails) out of place and in
 * place, with the element after the end untouched.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/test_common.h"

#define DENSE_POINTS ((size_t)1 << 21)
#define NEIGHBOURHOOD 4096

typedef struct exp_spec {
    double tol;    /* relative bound where the result is normal */
    double lo, hi; /* sampled range */
} exp_spec;

static exp_spec spec_of(const test_prec *p)
{
    if (p->size == sizeof(float))
        return (exp_spec){2e-7, -104.0, 89.0};
    return (exp_spec){1e-14, -745.0, 710.0};
}

static double worst_relative;

/* NULL when exp(x) = got meets the contract, else what went wrong */
static const char *judge(const test_prec *p, const exp_spec *s, double x, double got)
{
    if (isnan(x))
        return isnan(got) ? NULL : "exp(NaN) is not NaN";
    if (x == -HUGE_VAL)
        return got == 0.0 ? NULL : "exp(-inf) != 0";
    if (x == HUGE_VAL)
        return got == HUGE_VAL ? NULL : "exp(+inf) != +inf";
    if (isnan(got))
        return "NaN for a number";
    const double ref = exp(x);
    const double excess = x - log(p->max); /* > 0: the true result overflows */
    if (excess > s->tol)
        return got == HUGE_VAL ? NULL : "no overflow to +inf";
    if (excess > -s->tol) { /* within rounding distance of the overflow threshold */
        if (got == HUGE_VAL)
            return NULL;
        if (!isfinite(ref))
            return got >= p->max * (1.0 - s->tol) ? NULL : "too small at overflow threshold";
    }
    if (ref < p->min_normal * (1.0 + s->tol)) { /* subnormal range (and its edge) */
        if (got < 0.0 || !(fabs(got - ref) < p->min_normal))
            return "absolute error >= smallest normal below the normal range";
        if (ref < p->min_normal)
            return NULL;
    }
    double rel = fabs(got - ref) / ref;
    if (rel > worst_relative)
        worst_relative = rel;
    return rel <= s->tol ? NULL : "relative error too large";
}

/* Runs the kernel on x[0..n) (values representable in the element type) and
 * judges every result. */
static void check_points(const isa_case *c, const double *x, size_t n, const char *what)
{
    const test_prec *p = c->prec;
    const exp_spec s = spec_of(p);
    void *in = prec_typed(p, x, n);
    void *out = talloc(n * p->size);
    assert_true(p->exp(c->isa, in, out, n));
    double *got = prec_doubles(p, out, n);
    for (size_t i = 0; i < n; i++) {
        const char *problem = judge(p, &s, x[i], got[i]);
        if (problem != NULL) {
            print_error("%s: exp(%.17g = %a) = %.17g, libm %.17g: %s\n", what, x[i], x[i],
                        got[i], exp(x[i]), problem);
            fail();
        }
    }
}

static void dense_range(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const exp_spec s = spec_of(c->prec);
    test_rng rng;
    rng_seed(&rng, 0xE1);
    double *x = talloc(DENSE_POINTS * sizeof(double));
    for (size_t i = 0; i < DENSE_POINTS; i++) {
        double u = ((double)i + rng_uniform(&rng)) / (double)DENSE_POINTS;
        x[i] = c->prec->round(s.lo + (s.hi - s.lo) * u);
    }
    worst_relative = 0.0;
    check_points(c, x, DENSE_POINTS, "dense");
    print_message("  largest relative error %.3e (bound %.0e)\n", worst_relative, s.tol);
}

/* 2*NEIGHBOURHOOD + 1 consecutive representable values centred on the
 * element-type value nearest `centre` */
static void neighbourhood(const isa_case *c, double centre, const char *what)
{
    const test_prec *p = c->prec;
    enum { N = 2 * NEIGHBOURHOOD + 1 };
    double *x = talloc(N * sizeof(double));
    double v = p->round(centre);
    for (int i = 0; i < NEIGHBOURHOOD; i++)
        v = -p->next_up(-v); /* step down */
    for (int i = 0; i < N; i++) {
        x[i] = v;
        v = p->next_up(v);
    }
    char label[96];
    snprintf(label, sizeof label, "near %s", what);
    check_points(c, x, N, label);
}

static void neighbourhoods(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const test_prec *p = c->prec;
    const exp_spec s = spec_of(p);
    const double ln2 = log(2.0);
    const double denorm_min_log = log(p->min_normal * p->epsilon); /* smallest subnormal */
    const struct {
        double centre;
        const char *what;
    } centres[] = {
        {0.0, "0"},
        {0x1p-24, "2^-24"},
        {-0x1p-24, "-2^-24"},
        {0x1p-12, "2^-12"},
        {-0x1p-12, "-2^-12"},
        {ln2 / 2, "ln2/2"},
        {-ln2 / 2, "-ln2/2"},
        {ln2, "ln2"},
        {-ln2, "-ln2"},
        {log(p->max), "log(max)"},
        {log(p->min_normal), "log(smallest normal)"},
        {denorm_min_log, "log(smallest subnormal)"},
        {s.lo, "range start"},
        {s.hi, "range end"},
    };
    worst_relative = 0.0;
    for (size_t i = 0; i < sizeof centres / sizeof centres[0]; i++)
        neighbourhood(c, centres[i].centre, centres[i].what);
    print_message("  largest relative error %.3e (bound %.0e)\n", worst_relative, s.tol);
}

static void special_values(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const test_prec *p = c->prec;
    const double x[] = {-HUGE_VAL, HUGE_VAL, ((double)NAN), -((double)NAN), 0.0, -0.0, p->max, -p->max,
                        p->round(1e30), p->round(-1e30), p->min_normal, -p->min_normal,
                        p->min_normal * p->epsilon, 1.0, -1.0, 1000.0, -1000.0, 800.0, -800.0};
    const size_t n = sizeof x / sizeof x[0];
    check_points(c, x, n, "special");
    /* exact cases */
    void *in = prec_typed(p, x, n), *out = talloc(n * p->size);
    assert_true(p->exp(c->isa, in, out, n));
    double *got = prec_doubles(p, out, n);
    check_true(got[0] == 0.0 && !signbit(got[0]), "exp(-inf) = %g", got[0]);
    check_true(got[1] == HUGE_VAL, "exp(+inf) = %g", got[1]);
    check_true(isnan(got[2]) && isnan(got[3]), "exp(NaN) = %g, %g", got[2], got[3]);
    check_true(got[4] == 1.0 && got[5] == 1.0, "exp(+-0) = %.17g, %.17g", got[4], got[5]);
    check_true(got[6] == HUGE_VAL && got[7] == 0.0, "exp(+-max) = %g, %g", got[6], got[7]);
}

/* every length 1..40 (all vector tails), in place and out of place, and no
 * write past the end */
static void tails_and_in_place(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const test_prec *p = c->prec;
    test_rng rng;
    rng_seed(&rng, 0xE2);
    for (size_t n = 1; n <= 40; n++) {
        double *x = talloc(n * sizeof(double));
        for (size_t i = 0; i < n; i++)
            x[i] = p->round(rng_range(&rng, -20.0, 20.0));
        x[rng_below(&rng, n)] = -HUGE_VAL;
        void *in = prec_typed(p, x, n);
        unsigned char *out = talloc((n + 1) * p->size);
        sentinel_fill(out, (n + 1) * p->size);
        assert_true(p->exp(c->isa, in, out, n));
        /* the element after the end keeps its pattern */
        unsigned char *probe = talloc((n + 1) * p->size);
        sentinel_fill(probe, (n + 1) * p->size);
        check_true(memcmp(out + n * p->size, probe + n * p->size, p->size) == 0,
                   "n = %zu: wrote past the end", n);
        double *got = prec_doubles(p, out, n);
        const exp_spec s = spec_of(p);
        for (size_t i = 0; i < n; i++) {
            const char *problem = judge(p, &s, x[i], got[i]);
            check_true(problem == NULL, "n = %zu: exp(%.9g) = %.9g: %s", n, x[i], got[i],
                       problem != NULL ? problem : "");
        }
        /* in place gives the same bits */
        assert_true(p->exp(c->isa, in, in, n));
        check_true(memcmp(in, out, n * p->size) == 0, "n = %zu: in place differs", n);
    }
}

int main(void)
{
    if (isa_variant_skipped(1))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        ISA_CASES(dense_range),
        ISA_CASES(neighbourhoods),
        ISA_CASES(special_values),
        ISA_CASES(tails_and_in_place),
    };
    return cmocka_run_group_tests_name("exp kernels", tests, NULL, NULL);
}
