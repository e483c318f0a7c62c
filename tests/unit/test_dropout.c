/*
 * test_dropout: attention dropout's draws and settings (attn.h,
 * attn_plan_set_dropout); test_dropout_grad checks the dropped results and
 * gradients against the reference.
 *
 *  1. The generator: Philox-4x32-10 (lib/core/philox.h) reproduces
 *     Random123's known-answer vectors (counter 0 key 0; every word
 *     0xffffffff; the pi digits).
 *  2. The masks the engines apply, read back through a probe: with Q = 0
 *     every visible weight is 1/Tk, and with V = the identity (hs_v = Tk)
 *     out[b,t,h][j] = P Md = keep(b,h,t,j) / ((1-p) Tk), so keep = (out != 0)
 *     (projected plans: X = I, Wq = 0, Wv = I per head). On these masks:
 *     - the keep rate of p = 0.1, 0.5, 0.9 over n = 2*4*128*256 = 262144
 *       draws is within 5 binomial sigmas of 1 - p (sqrt(n p (1-p)); a
 *       fair generator fails one such check with probability 6e-7, and the
 *       seeds are fixed, so the test is deterministic);
 *     - the sample correlation of keep between neighbours (t, j) and
 *       (t, j+1) (within one Philox call and across calls), (t+1, j),
 *       heads h and h+1, sequences b and b+1, is below 5/sqrt(pairs): under
 *       independence sqrt(pairs) r is asymptotically N(0, 1);
 *     - they equal the reference mask (dropout_ref.h: attn.h's mapping
 *       evaluated independently) for every (b, h, t, j): a pure function of
 *       (seed, offset, b, h, t, j), the same for sdpa shapes of one and two
 *       key tiles (Tk 256, 600), a single query (Tq 1, the decode kernels),
 *       and projected plans;
 *     - the same on own threads 1, 2, 3, on ATTN_THREADS_AUTO and on BLAS
 *       threads (0), the outputs bit for bit equal on own threads;
 *     - another seed, or another offset, changes about 2p(1-p) of them.
 *  3. The expectation: the mean of 3000 dropped forwards (offsets 0..2999)
 *     is the undropped output within 5 standard errors per element (CLT:
 *     an output's variance is p/(1-p) sum_j P_j^2 V_j^2).
 *  4. Statuses: NULL_POINTER, INFERENCE_PLAN (both plan kinds, any p),
 *     BAD_DROPOUT for p < 0, p >= 1, NaN, +-inf; nothing changed on error
 *     (the next forward is bit for bit the one before); p = 0 after p > 0
 *     gives the bits of a plan never set; weights asked of a projected
 *     forward are the undropped ones, bit for bit.
 */
#include <math.h>
#include <string.h>

#include "support/test_common.h"

#include "core/philox.h"
#include "support/dropout_ref.h"
#include "support/sdpa_calls.h"

typedef struct probe_shape {
    size_t B, NH, Tq, Tk;
} probe_shape;

static size_t mask_index(const probe_shape *s, size_t b, size_t h, size_t t, size_t j)
{
    return ((b * s->NH + h) * s->Tq + t) * s->Tk + j;
}

static size_t mask_size(const probe_shape *s)
{
    return s->B * s->NH * s->Tq * s->Tk;
}

/* out of the sdpa probe (double), and the mask read from it (talloc'd) */
static unsigned char *sdpa_probe(const test_prec *p, const probe_shape *s, unsigned threads,
                                 const dropout_ref *d, double **out_doubles)
{
    const size_t hs = 4, nq = s->B * s->Tq * s->NH, nk = s->B * s->Tk * s->NH;
    const attn_sdpa_shape shape = {s->B, s->NH, s->NH, s->Tq, s->Tk, hs, s->Tk};
    attn_plan *plan = NULL;
    assert_int_equal(attn_sdpa_plan_create(&plan, p->dtype, &shape, 0.0, 0, 0), ATTN_OK);
    sdpa_keep_plan(plan);
    if (threads != ATTN_THREADS_AUTO)
        assert_int_equal(attn_plan_set_threads(plan, threads), ATTN_OK);
    assert_int_equal(attn_plan_set_dropout(plan, d->p, d->seed, d->offset), ATTN_OK);
    double *q = talloc(nq * hs * sizeof(double)), *k = talloc(nk * hs * sizeof(double));
    double *v = talloc(nk * s->Tk * sizeof(double));
    memset(q, 0, nq * hs * sizeof(double));
    for (size_t i = 0; i < nk * hs; i++)
        k[i] = (double)(i % 7) - 3.0;
    memset(v, 0, nk * s->Tk * sizeof(double));
    for (size_t r = 0; r < nk; r++) /* row (b, j, h): e_j */
        v[r * s->Tk + r / s->NH % s->Tk] = 1.0;
    void *out = prec_typed(p, v, nq * s->Tk); /* any contents */
    const sdpa_io io = {.Q = prec_typed(p, q, nq * hs), .K = prec_typed(p, k, nk * hs),
                        .V = prec_typed(p, v, nk * s->Tk), .out = out};
    assert_int_equal(sdpa_forward(p, plan, &io), ATTN_OK);
    sdpa_drop_plan(plan);
    double *o = talloc(nq * s->Tk * sizeof(double));
    p->to_double(o, out, nq * s->Tk);
    unsigned char *keep = talloc(mask_size(s));
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++)
            for (size_t t = 0; t < s->Tq; t++)
                for (size_t j = 0; j < s->Tk; j++)
                    keep[mask_index(s, b, h, t, j)] =
                        o[((b * s->Tq + t) * s->NH + h) * s->Tk + j] != 0.0;
    if (out_doubles != NULL)
        *out_doubles = o;
    return keep;
}

/* the mask of a projected plan (T = Tq = Tk, hs = T, C = T) read likewise */
static unsigned char *projected_probe(const test_prec *p, const probe_shape *s,
                                      const dropout_ref *d)
{
    const size_t T = s->Tq, C = T, D = s->NH * T;
    attn_plan *plan = NULL;
    assert_int_equal(attn_plan_create(&plan, p->dtype, s->B, T, C, s->NH, T, 0.0, 0), ATTN_OK);
    sdpa_keep_plan(plan);
    assert_int_equal(attn_plan_set_dropout(plan, d->p, d->seed, d->offset), ATTN_OK);
    double *x = talloc(s->B * T * C * sizeof(double)), *w0 = talloc(C * D * sizeof(double));
    double *wk = talloc(C * D * sizeof(double)), *wv = talloc(C * D * sizeof(double));
    memset(x, 0, s->B * T * C * sizeof(double));
    memset(w0, 0, C * D * sizeof(double));
    memset(wv, 0, C * D * sizeof(double));
    for (size_t r = 0; r < s->B * T; r++)
        x[r * C + r % T] = 1.0;
    for (size_t c = 0; c < C; c++)
        for (size_t h = 0; h < s->NH; h++)
            wv[c * D + h * T + c] = 1.0;
    for (size_t i = 0; i < C * D; i++)
        wk[i] = (double)(i % 5) - 2.0;
    void *out = talloc(s->B * T * D * p->size);
    assert_int_equal(p->forward(plan, prec_typed(p, x, s->B * T * C), prec_typed(p, w0, C * D),
                                prec_typed(p, wk, C * D), prec_typed(p, wv, C * D), NULL, out,
                                NULL),
                     ATTN_OK);
    sdpa_drop_plan(plan);
    double *o = talloc(s->B * T * D * sizeof(double));
    p->to_double(o, out, s->B * T * D);
    unsigned char *keep = talloc(mask_size(s));
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++)
            for (size_t t = 0; t < T; t++)
                for (size_t j = 0; j < T; j++)
                    keep[mask_index(s, b, h, t, j)] = o[(b * T + t) * D + h * T + j] != 0.0;
    return keep;
}

static size_t mismatches_with_reference(const probe_shape *s, const unsigned char *keep,
                                        const dropout_ref *d)
{
    size_t bad = 0;
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++)
            for (size_t t = 0; t < s->Tq; t++)
                for (size_t j = 0; j < s->Tk; j++)
                    bad += keep[mask_index(s, b, h, t, j)] !=
                           (unsigned char)dropout_ref_keep(d, b, h, t, j);
    return bad;
}

/* ---- 1. the generator ------------------------------------------------------ */

static void philox_known_answers(void **state)
{
    (void)state;
    static const uint32_t cases[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (size_t c = 0; c < N_OF(cases); c++) {
        uint32_t out[4];
        attn_philox4x32_10(cases[c], cases[c] + 4, out);
        for (int w = 0; w < 4; w++)
            assert_int_equal(out[w], cases[c][6 + w]);
    }
}

/* ---- 2. the masks ------------------------------------------------------------ */

/* sample correlation of keep over the pairs (i, i + step) for which
 * `pair` holds, and the number of pairs */
typedef int (*pair_fn)(const probe_shape *s, size_t b, size_t h, size_t t, size_t j);
static int pair_right(const probe_shape *s, size_t b, size_t h, size_t t, size_t j)
{
    (void)b, (void)h, (void)t;
    return j + 1 < s->Tk;
}
static int pair_right_same_call(const probe_shape *s, size_t b, size_t h, size_t t, size_t j)
{
    return pair_right(s, b, h, t, j) && j % 4 != 3;
}
static int pair_right_next_call(const probe_shape *s, size_t b, size_t h, size_t t, size_t j)
{
    return pair_right(s, b, h, t, j) && j % 4 == 3;
}
static int pair_down(const probe_shape *s, size_t b, size_t h, size_t t, size_t j)
{
    (void)b, (void)h, (void)j;
    return t + 1 < s->Tq;
}
static int pair_head(const probe_shape *s, size_t b, size_t h, size_t t, size_t j)
{
    (void)b, (void)t, (void)j;
    return h + 1 < s->NH;
}
static int pair_batch(const probe_shape *s, size_t b, size_t h, size_t t, size_t j)
{
    (void)h, (void)t, (void)j;
    return b + 1 < s->B;
}

static void check_correlation(const probe_shape *s, const unsigned char *keep, pair_fn pair,
                              size_t step, const char *name)
{
    double n = 0, sx = 0, sy = 0, sxy = 0;
    for (size_t b = 0; b < s->B; b++)
        for (size_t h = 0; h < s->NH; h++)
            for (size_t t = 0; t < s->Tq; t++)
                for (size_t j = 0; j < s->Tk; j++) {
                    if (!pair(s, b, h, t, j))
                        continue;
                    const size_t i = mask_index(s, b, h, t, j);
                    const double x = keep[i], y = keep[i + step];
                    n += 1;
                    sx += x;
                    sy += y;
                    sxy += x * y;
                }
    const double mx = sx / n, my = sy / n;
    const double r = (sxy / n - mx * my) / sqrt(mx * (1 - mx) * my * (1 - my));
    print_message("    corr %-16s r = %+.5f (bound %.5f, %.0f pairs)\n", name, r, 5 / sqrt(n), n);
    assert_true(fabs(r) <= 5.0 / sqrt(n));
}

static void keep_rate_and_independence(void **state)
{
    (void)state;
    const probe_shape s = {2, 4, 128, 256};
    const double ps[] = {0.1, 0.5, 0.9};
    for (size_t c = 0; c < N_OF(ps); c++) {
        const dropout_ref d = {ps[c], 0x0123456789abcdefull + c, 1000 + c};
        const unsigned char *keep = sdpa_probe(&test_prec_f64, &s, ATTN_THREADS_AUTO, &d, NULL);
        const double n = (double)mask_size(&s);
        double kept = 0;
        for (size_t i = 0; i < mask_size(&s); i++)
            kept += keep[i];
        const double sigma = sqrt(n * ps[c] * (1 - ps[c]));
        print_message("  p = %.1f: keep rate %.5f (1-p = %.1f, %+.2f sigma, n = %.0f)\n", ps[c],
                      kept / n, 1 - ps[c], (kept - n * (1 - ps[c])) / sigma, n);
        assert_true(fabs(kept - n * (1 - ps[c])) <= 5 * sigma);
        check_correlation(&s, keep, pair_right, 1, "(t,j)-(t,j+1)");
        check_correlation(&s, keep, pair_right_same_call, 1, "same call");
        check_correlation(&s, keep, pair_right_next_call, 1, "next call");
        check_correlation(&s, keep, pair_down, s.Tk, "(t,j)-(t+1,j)");
        check_correlation(&s, keep, pair_head, s.Tq * s.Tk, "head h-h+1");
        check_correlation(&s, keep, pair_batch, s.NH * s.Tq * s.Tk, "batch b-b+1");
        assert_int_equal(mismatches_with_reference(&s, keep, &d), 0);
    }
}

static void masks_pure_function(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const dropout_ref d = {0.3, 42, 7};
    const probe_shape shapes[] = {{2, 2, 64, 256}, {1, 2, 8, 600}, {2, 3, 1, 300}};
    for (size_t c = 0; c < N_OF(shapes); c++) {
        const probe_shape *s = &shapes[c];
        double *first = NULL, *other = NULL;
        const unsigned char *keep = sdpa_probe(p, s, 1, &d, &first);
        assert_int_equal(mismatches_with_reference(s, keep, &d), 0);
        const unsigned threads[] = {2, 3, ATTN_THREADS_AUTO, 0};
        for (size_t i = 0; i < N_OF(threads); i++) {
            keep = sdpa_probe(p, s, threads[i], &d, &other);
            assert_int_equal(mismatches_with_reference(s, keep, &d), 0);
            if (threads[i] != 0) /* own threads: the same bits */
                assert_memory_equal(first, other, s->B * s->Tq * s->NH * s->Tk * sizeof(double));
        }
    }
    const probe_shape s = {2, 2, 48, 48};
    assert_int_equal(mismatches_with_reference(&s, projected_probe(p, &s, &d), &d), 0);
}

static void other_seed_or_offset(void **state)
{
    (void)state;
    const probe_shape s = {1, 2, 64, 128};
    const dropout_ref d = {0.5, 99, 5}, seed = {0.5, 100, 5}, offset = {0.5, 99, 6};
    const unsigned char *a = sdpa_probe(&test_prec_f64, &s, 1, &d, NULL);
    const unsigned char *b = sdpa_probe(&test_prec_f64, &s, 1, &seed, NULL);
    const unsigned char *c = sdpa_probe(&test_prec_f64, &s, 1, &offset, NULL);
    const unsigned char *again = sdpa_probe(&test_prec_f64, &s, 2, &d, NULL);
    size_t by_seed = 0, by_offset = 0;
    for (size_t i = 0; i < mask_size(&s); i++) {
        by_seed += a[i] != b[i];
        by_offset += a[i] != c[i];
    }
    /* independent masks differ in half the draws: 8192 of 16384 */
    assert_true(by_seed > mask_size(&s) / 2 - 5 * 64 && by_seed < mask_size(&s) / 2 + 5 * 64);
    assert_true(by_offset > mask_size(&s) / 2 - 5 * 64 &&
                by_offset < mask_size(&s) / 2 + 5 * 64);
    assert_memory_equal(a, again, mask_size(&s));
}

/* ---- 3. the expectation ------------------------------------------------------ */

static void mean_is_undropped(void **state)
{
    (void)state;
    const attn_sdpa_shape shape = {1, 2, 1, 6, 9, 4, 3};
    const size_t nq = 6 * 2 * 4, nk = 9 * 4, no = 6 * 2 * 3, runs = 3000;
    const double p = 0.3;
    test_rng rng;
    rng_seed(&rng, 11);
    double *q = talloc(nq * sizeof(double)), *k = talloc(nk * sizeof(double));
    double *v = talloc(9 * 3 * sizeof(double)), *out = talloc(no * sizeof(double));
    double *mean = talloc(no * sizeof(double)), *ref = talloc(no * sizeof(double));
    rng_fill_normal(&rng, q, nq, 1.0);
    rng_fill_normal(&rng, k, nk, 1.0);
    rng_fill_normal(&rng, v, 27, 1.0);
    attn_plan *plan = NULL;
    assert_int_equal(attn_sdpa_plan_create(&plan, ATTN_F64, &shape, 0.0, ATTN_CAUSAL, 0),
                     ATTN_OK);
    sdpa_keep_plan(plan);
    attn_sdpa_args_f64 a = {.Q = q, .K = k, .V = v, .out = ref};
    assert_int_equal(attn_sdpa_forward_f64(plan, &a), ATTN_OK);
    memset(mean, 0, no * sizeof(double));
    a.out = out;
    for (size_t r = 0; r < runs; r++) {
        assert_int_equal(attn_plan_set_dropout(plan, p, 2024, r), ATTN_OK);
        assert_int_equal(attn_sdpa_forward_f64(plan, &a), ATTN_OK);
        for (size_t i = 0; i < no; i++)
            mean[i] += out[i] / (double)runs;
    }
    const sdpa_ref r = {.B = 1, .NH = 2, .NH_kv = 1, .Tq = 6, .Tk = 9, .hs = 4, .hs_v = 3,
                        .scale = 0.5, .causal = 1, .Q = q, .K = k, .V = v,
                        .ldq = 8, .ldk = 4, .ldv = 3};
    double P[9], lse, worst = 0;
    for (size_t h = 0; h < 2; h++)
        for (size_t t = 0; t < 6; t++) {
            sdpa_ref_weights(&r, 0, h, t, P, &lse);
            for (size_t c = 0; c < 3; c++) {
                double var = 0;
                for (size_t j = 0; j < 9; j++)
                    var += P[j] * P[j] * v[j * 3 + c] * v[j * 3 + c];
                const double se = sqrt(var * p / (1 - p) / (double)runs);
                const size_t i = (t * 2 + h) * 3 + c;
                const double z = fabs(mean[i] - ref[i]) / (se + 1e-300);
                worst = z > worst ? z : worst;
                assert_true(fabs(mean[i] - ref[i]) <= 5 * se + 1e-12);
            }
        }
    print_message("  mean of %zu dropped forwards: largest |z| = %.2f (bound 5)\n", runs, worst);
}

/* ---- 4. statuses --------------------------------------------------------------- */

static void statuses(void **state)
{
    (void)state;
    assert_string_not_equal(attn_status_string(ATTN_ERR_BAD_DROPOUT), "unknown attn_status");
    assert_int_equal(attn_plan_set_dropout(NULL, 0.5, 1, 2), ATTN_ERR_NULL_POINTER);
    const attn_sdpa_shape shape = {2, 2, 2, 5, 7, 4, 4};
    attn_plan *inf_sdpa = NULL, *inf_proj = NULL, *plan = NULL;
    assert_int_equal(attn_sdpa_plan_create(&inf_sdpa, ATTN_F64, &shape, 0, ATTN_INFERENCE, 0),
                     ATTN_OK);
    assert_int_equal(attn_plan_create(&inf_proj, ATTN_F64, 1, 4, 4, 1, 4, 0, ATTN_INFERENCE),
                     ATTN_OK);
    sdpa_keep_plan(inf_sdpa);
    sdpa_keep_plan(inf_proj);
    const double any[] = {0.0, 0.5, (double)NAN, 2.0};
    for (size_t i = 0; i < N_OF(any); i++) {
        assert_int_equal(attn_plan_set_dropout(inf_sdpa, any[i], 1, 2), ATTN_ERR_INFERENCE_PLAN);
        assert_int_equal(attn_plan_set_dropout(inf_proj, any[i], 1, 2), ATTN_ERR_INFERENCE_PLAN);
    }
    assert_int_equal(attn_sdpa_plan_create(&plan, ATTN_F64, &shape, 0, 0, 0), ATTN_OK);
    sdpa_keep_plan(plan);
    double q[2 * 5 * 8], k[2 * 7 * 8], v[2 * 7 * 8], before[2 * 5 * 8], after[2 * 5 * 8];
    double fresh[2 * 5 * 8], off[2 * 5 * 8];
    for (size_t i = 0; i < N_OF(q); i++)
        q[i] = sin((double)i);
    for (size_t i = 0; i < N_OF(k); i++) {
        k[i] = cos((double)i);
        v[i] = sin(3.0 * (double)i);
    }
    attn_sdpa_args_f64 a = {.Q = q, .K = k, .V = v, .out = fresh};
    assert_int_equal(attn_sdpa_forward_f64(plan, &a), ATTN_OK);
    assert_int_equal(attn_plan_set_dropout(plan, 0.5, 77, 3), ATTN_OK);
    a.out = before;
    assert_int_equal(attn_sdpa_forward_f64(plan, &a), ATTN_OK);
    assert_memory_not_equal(before, fresh, sizeof fresh);
    const double bad[] = {-0.1, -1e-300, 1.0, 1.5, (double)NAN, HUGE_VAL, -HUGE_VAL};
    for (size_t i = 0; i < N_OF(bad); i++)
        assert_int_equal(attn_plan_set_dropout(plan, bad[i], 1, 2), ATTN_ERR_BAD_DROPOUT);
    a.out = after;
    assert_int_equal(attn_sdpa_forward_f64(plan, &a), ATTN_OK);
    assert_memory_equal(before, after, sizeof after);
    /* the largest p below 1 is accepted; p = 0 gives a never-set plan's bits */
    assert_int_equal(attn_plan_set_dropout(plan, nextafter(1.0, 0.0), 1, 2), ATTN_OK);
    assert_int_equal(attn_plan_set_dropout(plan, -0.0, 1, 2), ATTN_OK);
    a.out = off;
    assert_int_equal(attn_sdpa_forward_f64(plan, &a), ATTN_OK);
    assert_memory_equal(off, fresh, sizeof fresh);
}

/* A projected forward's weights are the undropped ones; its out is not. */
static void projected_weights_undropped(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const size_t B = 2, T = 9, C = 8, NH = 2, hs = 4, D = NH * hs;
    test_rng rng;
    rng_seed(&rng, 5);
    double *x = talloc(B * T * C * sizeof(double)), *w = talloc(4 * C * D * sizeof(double));
    rng_fill_normal(&rng, x, B * T * C, 1.0);
    rng_fill_normal(&rng, w, 4 * C * D, 0.5);
    const void *X = prec_typed(p, x, B * T * C), *Wq = prec_typed(p, w, C * D);
    const void *Wk = prec_typed(p, w + C * D, C * D), *Wv = prec_typed(p, w + 2 * C * D, C * D);
    const void *Wo = prec_typed(p, w + 3 * C * D, D * C);
    void *out[2], *P[2];
    for (int dropped = 0; dropped < 2; dropped++) {
        attn_plan *plan = NULL;
        assert_int_equal(attn_plan_create(&plan, p->dtype, B, T, C, NH, hs, 0, ATTN_CAUSAL),
                         ATTN_OK);
        sdpa_keep_plan(plan);
        assert_int_equal(attn_plan_set_dropout(plan, dropped ? 0.4 : 0.0, 3, 4), ATTN_OK);
        out[dropped] = talloc(B * T * C * p->size);
        P[dropped] = talloc(B * NH * T * T * p->size);
        assert_int_equal(p->forward(plan, X, Wq, Wk, Wv, Wo, out[dropped], P[dropped]), ATTN_OK);
    }
    assert_memory_equal(P[0], P[1], B * NH * T * T * p->size);
    assert_memory_not_equal(out[0], out[1], B * T * C * p->size);
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_CASE("philox_known_answers", philox_known_answers, NULL),
        SDPA_CASE("keep_rate_and_independence", keep_rate_and_independence, NULL),
        SDPA_PREC_CASES(masks_pure_function),
        SDPA_CASE("other_seed_or_offset", other_seed_or_offset, NULL),
        SDPA_CASE("mean_is_undropped", mean_is_undropped, NULL),
        SDPA_CASE("statuses", statuses, NULL),
        SDPA_PREC_CASES(projected_weights_undropped),
    };
    return cmocka_run_group_tests_name("dropout", tests, NULL, NULL);
}
