/* Residuals and assertions (see check.h). */
#include "support/check.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

double max_abs(const double *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(x[i]) > m)
            m = fabs(x[i]);
    return m;
}

/* |a - b|, with NaN/NaN and equal infinities as 0 and any other special
 * mismatch as +inf */
static double difference(double a, double b)
{
    if (isnan(a) || isnan(b))
        return (isnan(a) && isnan(b)) ? 0.0 : HUGE_VAL;
    if (isinf(a) || isinf(b))
        return a == b ? 0.0 : HUGE_VAL;
    return fabs(a - b);
}

double residual_scaled(const double *got, const double *ref, size_t n, double scale)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = difference(got[i], ref[i]);
        if (e > worst || isnan(e))
            worst = e;
    }
    if (worst == 0.0)
        return 0.0;
    return scale > 0.0 ? worst / scale : HUGE_VAL;
}

double residual_rows(const double *got, const double *ref, size_t rows, size_t cols)
{
    double worst = 0.0;
    for (size_t r = 0; r < rows; r++) {
        const double *g = got + r * cols, *f = ref + r * cols;
        double scale = 0.0;
        for (size_t j = 0; j < cols; j++)
            if (isfinite(f[j]) && fabs(f[j]) > scale)
                scale = fabs(f[j]);
        double e = residual_scaled(g, f, cols, scale);
        if (e > worst)
            worst = e;
    }
    return worst;
}

/* The caller's message (fmt and its arguments) in the array `buffer`. */
#define FORMAT_CONTEXT(buffer, fmt)                                                              \
    do {                                                                                         \
        va_list args_;                                                                           \
        va_start(args_, fmt);                                                                    \
        vsnprintf(buffer, sizeof buffer, fmt, args_);                                            \
        va_end(args_);                                                                           \
    } while (0)

static double worst_seen;

void check_residual(double residual, double tol, const char *fmt, ...)
{
    if (!(residual <= tol)) {
        char context[512];
        FORMAT_CONTEXT(context, fmt);
        print_error("%s: residual %.3e exceeds tolerance %.1e\n", context, residual, tol);
        fail();
    }
    if (residual > worst_seen)
        worst_seen = residual;
}

void check_worst_report(const char *what)
{
    print_message("  %s: largest residual %.2e\n", what, worst_seen);
    worst_seen = 0.0;
}

void check_worst_reset(void)
{
    worst_seen = 0.0;
}

void check_true(int cond, const char *fmt, ...)
{
    if (cond)
        return;
    char context[512];
    FORMAT_CONTEXT(context, fmt);
    print_error("%s\n", context);
    fail();
}

static unsigned char pattern(size_t i)
{
    /* not constant, not periodic in a power of two: a shifted or partial
     * write cannot reproduce it */
    return (unsigned char)((i * 131u + (i >> 8) * 7u + 0x5Au) & 0xFFu);
}

void sentinel_fill(void *p, size_t bytes)
{
    unsigned char *b = p;
    for (size_t i = 0; i < bytes; i++)
        b[i] = pattern(i);
}

int sentinel_intact(const void *p, size_t bytes)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < bytes; i++)
        if (b[i] != pattern(i))
            return 0;
    return 1;
}

/* ---- soft checks ------------------------------------------------------------ */

static int soft_failures;

void test_enter(void)
{
    soft_failures = 0;
}

void test_leave(const char *what)
{
    check_true(soft_failures == 0, "%s: %d check(s) failed (listed above)", what,
               soft_failures);
}

void expect_true(int ok, const char *fmt, ...)
{
    if (ok)
        return;
    char context[512];
    FORMAT_CONTEXT(context, fmt);
    print_error("FAILED %s\n", context);
    soft_failures++;
}

void expect_within(check_worst *w, double residual, double tol, const char *fmt, ...)
{
    if (!(residual <= tol)) {
        char context[512];
        FORMAT_CONTEXT(context, fmt);
        print_error("FAILED %s: residual %.3e exceeds tolerance %.2e\n", context, residual, tol);
        soft_failures++;
    }
    if (w != NULL && (w->tol == 0.0 || !(residual / tol <= w->residual / w->tol))) {
        w->residual = residual;
        w->tol = tol;
    }
}
