/*
 * test_softmax_kernel: the fused scale/mask/softmax row kernels of
 * lib/kernels/kernels.h, for every kernel set the CPU runs (others are skipped),
 * against the double reference (ref_softmax_row) and against the scalar
 * kernel.
 *
 * Residual: per row, max_j |y_j - ref_j| / max_j ref_j (check.h), tolerance
 * 1e-5 (f32) / 1e-12 (f64) as justified in precision.h. Inputs and the scale
 * are rounded to the element type first; logits are kept to |scale*x| <~ 30
 * except in the large-logit cases, which use scale 1 (so scale*x is exact and
 * max subtraction is what is being tested) or differences so large that the
 * answer is exactly one-hot.
 * Exact expectations (no tolerance): entries at n_valid..n_total are 0,
 * masked (-inf) entries are 0, an all-masked row or n_valid = 0 is all 0, a
 * NaN makes every valid entry NaN, the entries beside +inf ones are 0 (the
 * +inf entries share the weight, checked within tolerance), nothing is written past n_total, and the in-place result has the
 * same bits as the out-of-place one (same arithmetic on the same values;
 * sweep 2 reads each x_j before writing y_j).
 * Entry by entry (weights_entrywise): the online block's unnormalized
 * weights p_j = exp(y_j), y_j = scale x_j - max, against exp of the exact
 * y_j in double: |p_j - e^y_j| <= e^y_j (u |y_j| + E), u the unit roundoff
 * (the rounding of y_j itself, which no kernel avoids) and E the exp
 * kernel's contract (test_exp: 2e-7 f32, 1e-14 f64); 0 allowed where e^y_j
 * is below the smallest normal number. A kernel whose exp rounded y_j a
 * second time (2^t with t = y log2 e rounded) errs by about 2 u |y_j| and
 * fails at |y_j| above a few units.
 */
#include <math.h>
#include <string.h>

#include "support/inputs.h"
#include "support/test_common.h"

#define MAX_LEN 300

/* y (n_total) = kernel(x); also checks in place == out of place and no write
 * past n_total; returns y as doubles */
static double *run_kernel(const isa_case *c, attn_isa isa, const double *x, size_t n_valid,
                          size_t n_total, double scale)
{
    const test_prec *p = c->prec;
    const size_t bytes = n_total * p->size;
    void *in = prec_typed(p, x, n_total);
    unsigned char *out = talloc(bytes + p->size);
    unsigned char *probe = talloc(bytes + p->size);
    sentinel_fill(out, bytes + p->size);
    sentinel_fill(probe, bytes + p->size);
    assert_true(p->softmax_row(isa, in, out, n_valid, n_total, scale));
    check_true(memcmp(out + bytes, probe + bytes, p->size) == 0,
               "%s: wrote past n_total = %zu", attn_isa_name(isa), n_total);
    assert_true(p->softmax_row(isa, in, in, n_valid, n_total, scale));
    check_true(memcmp(in, out, bytes) == 0, "%s: in place differs (n_valid %zu, n_total %zu)",
               attn_isa_name(isa), n_valid, n_total);
    return prec_doubles(p, out, n_total);
}

/* kernel of c and the scalar kernel against the reference */
static void compare_row(const isa_case *c, const double *x, size_t n_valid, size_t n_total,
                        double scale, const char *what)
{
    const test_prec *p = c->prec;
    scale = p->round(scale);
    double *ref = talloc_doubles(n_total);
    ref_softmax_row(x, ref, n_valid, n_total, scale);
    double *y = run_kernel(c, c->isa, x, n_valid, n_total, scale);
    double *y_scalar = run_kernel(c, ATTN_ISA_SCALAR, x, n_valid, n_total, scale);
    check_residual(residual_rows(y, ref, 1, n_total), p->tol,
                   "%s: n_valid %zu n_total %zu scale %g vs reference", what, n_valid, n_total,
                   scale);
    check_residual(residual_rows(y, y_scalar, 1, n_total), p->tol,
                   "%s: n_valid %zu n_total %zu scale %g vs scalar kernel", what, n_valid,
                   n_total, scale);
    for (size_t j = n_valid; j < n_total; j++)
        check_true(y[j] == 0.0, "%s: y[%zu] = %g beyond n_valid %zu", what, j, y[j], n_valid);
}

static double *random_row(const test_prec *p, test_rng *rng, size_t n, double stddev)
{
    return random_rounded(p, rng, n, stddev);
}

static void random_lengths(void **state)
{
    const isa_case *c = isa_case_enter(state);
    test_rng rng;
    rng_seed(&rng, 11);
    const double scales[] = {1.0, 0.125, 2.5};
    for (size_t n = 1; n <= MAX_LEN; n++) {
        double scale = scales[n % 3];
        double *x = random_row(c->prec, &rng, n + 19, 3.0);
        compare_row(c, x, n, n, scale, "full row");
        /* n_valid < n_total, as a causal row is */
        size_t extra = 1 + rng_below(&rng, 19);
        compare_row(c, x, n, n + extra, scale, "prefix");
    }
    check_worst_report(attn_isa_name(c->isa));
}

static void fully_masked(void **state)
{
    const isa_case *c = isa_case_enter(state);
    test_rng rng;
    rng_seed(&rng, 12);
    const size_t lengths[] = {1, 2, 7, 8, 15, 16, 17, 31, 33, 64, 65, 129, MAX_LEN};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        size_t n = lengths[i];
        double *x = random_row(c->prec, &rng, n, 1.0);
        double *y = run_kernel(c, c->isa, x, 0, n, 1.0); /* n_valid = 0 */
        for (size_t j = 0; j < n; j++)
            check_true(y[j] == 0.0, "n_valid 0, n %zu: y[%zu] = %g", n, j, y[j]);
        for (size_t j = 0; j < n; j++)
            x[j] = -HUGE_VAL;
        y = run_kernel(c, c->isa, x, n, n, 0.5); /* every entry -inf */
        for (size_t j = 0; j < n; j++)
            check_true(y[j] == 0.0, "all -inf, n %zu: y[%zu] = %g", n, j, y[j]);
    }
}

static void masked_entries(void **state)
{
    const isa_case *c = isa_case_enter(state);
    test_rng rng;
    rng_seed(&rng, 13);
    for (size_t n = 1; n <= MAX_LEN; n += 1 + n / 8) {
        double *x = random_row(c->prec, &rng, n, 2.0);
        for (size_t j = 0; j < n; j++)
            if (rng_uniform(&rng) < 0.4)
                x[j] = -HUGE_VAL;
        x[rng_below(&rng, n)] = 0.5; /* at least one entry unmasked */
        compare_row(c, x, n, n, 0.7, "masked");
        double *y = run_kernel(c, c->isa, x, n, n, c->prec->round(0.7));
        for (size_t j = 0; j < n; j++)
            if (x[j] == -HUGE_VAL)
                check_true(y[j] == 0.0, "n %zu: masked y[%zu] = %g", n, j, y[j]);
    }
}

static void nan_entry(void **state)
{
    const isa_case *c = isa_case_enter(state);
    test_rng rng;
    rng_seed(&rng, 14);
    for (size_t n = 1; n <= 70; n++) {
        double *x = random_row(c->prec, &rng, n + 3, 1.0);
        size_t at = rng_below(&rng, n);
        x[at] = ((double)NAN);
        if (n > 2 && rng_uniform(&rng) < 0.5)
            x[(at + 1) % n] = rng_uniform(&rng) < 0.5 ? -HUGE_VAL : HUGE_VAL;
        double *y = run_kernel(c, c->isa, x, n, n + 3, 1.0);
        for (size_t j = 0; j < n; j++)
            check_true(isnan(y[j]), "n %zu, NaN at %zu: y[%zu] = %g", n, at, j, y[j]);
        for (size_t j = n; j < n + 3; j++)
            check_true(y[j] == 0.0, "n %zu: y[%zu] = %g beyond n_valid", n, j, y[j]);
    }
}

static void positive_infinity(void **state)
{
    const isa_case *c = isa_case_enter(state);
    test_rng rng;
    rng_seed(&rng, 15);
    for (size_t n = 1; n <= 70; n++) {
        double *x = random_row(c->prec, &rng, n, 5.0);
        size_t wanted = 1 + rng_below(&rng, n < 3 ? n : 3);
        for (size_t i = 0; i < wanted; i++)
            x[(i * 7 + n) % n] = HUGE_VAL;
        if (n > 3)
            x[(n / 2 + 1) % n] = -HUGE_VAL; /* masked entries may sit beside them */
        /* the +inf entries share the weight (checked against the reference
         * within tolerance), every other entry is exactly 0 */
        compare_row(c, x, n, n, 1.0, "+inf entries");
        double *y = run_kernel(c, c->isa, x, n, n, 1.0);
        for (size_t j = 0; j < n; j++)
            if (x[j] != HUGE_VAL)
                check_true(y[j] == 0.0, "n %zu: finite entry y[%zu] = %g", n, j, y[j]);
    }
}

static void large_logits(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const test_prec *p = c->prec;
    test_rng rng;
    rng_seed(&rng, 16);
    for (size_t n = 1; n <= MAX_LEN; n += 1 + n / 4) {
        double *x = talloc_doubles(n);
        /* spread over +-1e4 (scale 1: scale*x exact, only max subtraction saves it) */
        for (size_t j = 0; j < n; j++)
            x[j] = p->round(rng_range(&rng, -1e4, 1e4));
        compare_row(c, x, n, n, 1.0, "+-1e4");
        /* all near -1e4 or +1e4: a shift the answer must not see */
        for (size_t j = 0; j < n; j++)
            x[j] = p->round(-1e4 + rng_range(&rng, -8.0, 8.0));
        compare_row(c, x, n, n, 1.0, "near -1e4");
        for (size_t j = 0; j < n; j++)
            x[j] = p->round(1e4 + rng_range(&rng, -8.0, 8.0));
        compare_row(c, x, n, n, 1.0, "near +1e4");

        /* scale 1e30 on small integers: gaps of 1e30, exactly one-hot */
        for (size_t j = 0; j < n; j++)
            x[j] = (double)rng_below(&rng, 50) - 25.0;
        size_t top = rng_below(&rng, n);
        x[top] = 30.0;
        compare_row(c, x, n, n, 1e30, "scale 1e30");
        double *y = run_kernel(c, c->isa, x, n, n, p->round(1e30));
        for (size_t j = 0; j < n; j++)
            check_true(y[j] == (j == top ? 1.0 : 0.0), "scale 1e30, n %zu: y[%zu] = %g", n, j,
                       y[j]);

        /* logits +-1e30 at scale 1, the maximum shared by two entries */
        for (size_t j = 0; j < n; j++)
            x[j] = p->round(rng_uniform(&rng) < 0.5 ? -1e30 : 1e29);
        x[top] = p->round(1e30);
        x[(top + n / 2) % n] = p->round(1e30);
        compare_row(c, x, n, n, 1.0, "+-1e30");
    }
    check_worst_report(attn_isa_name(c->isa));
}

static void weights_entrywise(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const test_prec *p = c->prec;
    const double u = p->epsilon / 2.0, E = p->size == sizeof(float) ? 2e-7 : 1e-14;
    const double scales[] = {1.0, 0.125};
    test_rng rng;
    rng_seed(&rng, 17);
    double worst = 0.0;
    for (size_t n = 1; n <= MAX_LEN; n += 1 + n / 8) {
        for (size_t k = 0; k < 2; k++) {
            /* scale a power of two (scale x exact): the spread reaches the flush */
            const double scale = scales[k], spread = p->size == sizeof(float) ? 90.0 : 750.0;
            double *x = talloc_doubles(n);
            for (size_t j = 0; j < n; j++)
                x[j] = p->round(rng_range(&rng, -spread, 0.0) / scale);
            void *in = prec_typed(p, x, n);
            unsigned char *out = talloc(n * p->size);
            double max = -p->max, sum = 0.0, alpha;
            assert_true(p->softmax_online(c->isa, in, out, n, n, scale, &max, &sum, &alpha));
            double *w = prec_doubles(p, out, n);
            for (size_t j = 0; j < n; j++) {
                const double y = scale * x[j] - max, want = exp(y);
                if (want < p->min_normal * (1.0 + 1e-6)) {
                    check_true(w[j] == 0.0 || fabs(w[j] - want) < p->min_normal,
                               "%s n %zu: weight %zu = %g below the normal range, e^y %g",
                               attn_isa_name(c->isa), n, j, w[j], want);
                    continue;
                }
                const double error = fabs(w[j] - want) / want, bound = u * fabs(y) + E;
                if (error / bound > worst)
                    worst = error / bound;
                check_true(error <= bound, "%s n %zu scale %g: weight %zu of y = %.9g errs by "
                           "%.3g relative, above u |y| + E = %.3g", attn_isa_name(c->isa), n,
                           scale, j, y, error, bound);
            }
        }
    }
    print_message("  %s: largest error %.2f of the bound\n", attn_isa_name(c->isa), worst);
}

int main(void)
{
    if (isa_variant_skipped(1))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        ISA_CASES(random_lengths),
        ISA_CASES(fully_masked),
        ISA_CASES(masked_entries),
        ISA_CASES(nan_entry),
        ISA_CASES(positive_infinity),
        ISA_CASES(large_logits),
        ISA_CASES(weights_entrywise),
    };
    return cmocka_run_group_tests_name("softmax row kernels", tests, NULL, NULL);
}
