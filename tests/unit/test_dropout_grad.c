/*
 * test_dropout_grad: the dropped forward and its gradients (attn.h,
 * attn_plan_set_dropout), with a fixed seed and offset.
 *
 *  1. sdpa plans against the independent reference (dropout_ref.h: the
 *     mask from attn.h's mapping, naive loops in double), both precisions:
 *     out (and the undropped lse) within sdpa_forward_tol, dQ, dK, dV
 *     within sdpa_grad_tol (sdpa_calls.h; both times 1/(1-p) = 2, the
 *     largest factor of a kept weight), over multi-head, GQA, causal and
 *     not, an additive mask with -inf entries, key lengths, Tq != Tk, one
 *     query (the decode kernels), and two key tiles (Tk 600), on own
 *     threads 1 and 3 (bit for bit the same) and BLAS threads.
 *  2. Central finite differences in double (h = 1e-5; the error of the
 *     difference quotient is O(h^2 |f'''|) + O(u |f| / h) ~ 1e-10, bound
 *     1e-7 relative to the largest gradient): every entry of Q, K, V of an
 *     sdpa plan (GQA, causal, mask, key lengths) and of X, Wq, Wk, Wv, Wo
 *     of a projected plan (causal and not, two own threads), against the
 *     plan's backward for L = sum(out o dout). The mask is a function of
 *     (seed, offset, b, h, t, j) alone, so L is smooth in the inputs.
 *  3. The forward and the backward see the same mask: with dout zero but
 *     for query t, dV_j = P_tj Md_tj dout_t, zero exactly where the
 *     reference drops (b, h, t, j) and nonzero elsewhere (P > 0: no mask).
 */
#include <math.h>
#include <string.h>

#include "support/test_common.h"

#include "support/dropout_ref.h"
#include "support/sdpa_calls.h"

typedef struct grad_case {
    size_t B, NH, NH_kv, Tq, Tk, hs, hs_v;
    int causal, masked, lengths;
} grad_case;

/* One problem's inputs (dense, attn's layout) in double. */
typedef struct problem {
    attn_sdpa_shape shape;
    size_t nq, nk, nv, no;
    double *q, *k, *v, *mask, *dout;
    size_t lengths[4];
    int causal, masked, with_lengths;
} problem;

static problem problem_of(const grad_case *c, unsigned long seed)
{
    problem pr = {.shape = {c->B, c->NH, c->NH_kv, c->Tq, c->Tk, c->hs, c->hs_v},
                  .causal = c->causal, .masked = c->masked, .with_lengths = c->lengths};
    test_rng rng;
    rng_seed(&rng, seed);
    pr.nq = c->B * c->Tq * c->NH * c->hs;
    pr.nk = c->B * c->Tk * c->NH_kv * c->hs;
    pr.nv = c->B * c->Tk * c->NH_kv * c->hs_v;
    pr.no = c->B * c->Tq * c->NH * c->hs_v;
    pr.q = talloc(pr.nq * sizeof(double));
    pr.k = talloc(pr.nk * sizeof(double));
    pr.v = talloc(pr.nv * sizeof(double));
    pr.dout = talloc(pr.no * sizeof(double));
    rng_fill_normal(&rng, pr.q, pr.nq, 1.0);
    rng_fill_normal(&rng, pr.k, pr.nk, 1.0);
    rng_fill_normal(&rng, pr.v, pr.nv, 1.0);
    rng_fill_normal(&rng, pr.dout, pr.no, 1.0);
    const size_t nm = c->B * c->NH * c->Tq * c->Tk;
    pr.mask = talloc(nm * sizeof(double));
    for (size_t i = 0; i < nm; i++)
        pr.mask[i] = rng_uniform(&rng) < 0.2 ? (double)-INFINITY : rng_normal(&rng);
    for (size_t b = 0; b < c->B && b < 4; b++)
        pr.lengths[b] = c->Tk - b % 2 * (c->Tk / 3);
    return pr;
}

static sdpa_ref ref_of(const problem *pr, double *q, double *k, double *v)
{
    const attn_sdpa_shape *s = &pr->shape;
    const sdpa_ref r = {.B = s->B, .NH = s->NH, .NH_kv = s->NH_kv, .Tq = s->Tq, .Tk = s->Tk,
                        .hs = s->hs, .hs_v = s->hs_v, .scale = 1.0 / sqrt((double)s->hs),
                        .causal = pr->causal, .Q = q, .K = k, .V = v,
                        .ldq = s->NH * s->hs, .ldk = s->NH_kv * s->hs,
                        .ldv = s->NH_kv * s->hs_v,
                        .mask = pr->masked ? pr->mask : NULL, .mask_ld = s->Tk,
                        .mask_sh = s->Tq * s->Tk, .mask_sb = s->NH * s->Tq * s->Tk,
                        .key_lengths = pr->with_lengths ? pr->lengths : NULL};
    return r;
}

static attn_plan *plan_of(const test_prec *p, const problem *pr, unsigned threads,
                          const dropout_ref *d)
{
    attn_plan *plan = NULL;
    assert_int_equal(attn_sdpa_plan_create(&plan, p->dtype, &pr->shape, 0.0,
                                           pr->causal ? ATTN_CAUSAL : 0u, 0),
                     ATTN_OK);
    sdpa_keep_plan(plan);
    if (threads != ATTN_THREADS_AUTO)
        assert_int_equal(attn_plan_set_threads(plan, threads), ATTN_OK);
    assert_int_equal(attn_plan_set_dropout(plan, d->p, d->seed, d->offset), ATTN_OK);
    return plan;
}

/* The typed call's io on typed copies of q, k, v, the mask and key lengths. */
static sdpa_io io_of(const test_prec *p, const problem *pr, const double *q, const double *k,
                     const double *v)
{
    const attn_sdpa_shape *s = &pr->shape;
    sdpa_io io = {.Q = prec_typed(p, q, pr->nq), .K = prec_typed(p, k, pr->nk),
                  .V = prec_typed(p, v, pr->nv), .out = talloc(pr->no * p->size),
                  .lse = talloc(s->B * s->NH * s->Tq * p->size)};
    if (pr->masked) {
        io.mask = prec_typed(p, pr->mask, s->B * s->NH * s->Tq * s->Tk);
        io.mask_ld = s->Tk;
        io.mask_sh = s->Tq * s->Tk;
        io.mask_sb = s->NH * s->Tq * s->Tk;
    }
    io.key_lengths = pr->with_lengths ? pr->lengths : NULL;
    return io;
}

static const grad_case cases[] = {
    {2, 4, 4, 7, 7, 4, 4, 0, 0, 0},    {2, 4, 2, 6, 9, 8, 5, 1, 0, 0},
    {1, 6, 2, 5, 11, 4, 4, 0, 1, 0},   {3, 2, 1, 4, 10, 4, 3, 1, 1, 1},
    {2, 4, 2, 1, 40, 8, 8, 0, 0, 1},   {1, 2, 2, 130, 600, 8, 8, 1, 0, 0},
    {2, 2, 2, 140, 150, 16, 16, 0, 1, 1}};

/* ---- 1. against the reference ------------------------------------------------ */

static void sdpa_matches_reference(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const dropout_ref d = {0.5, 0xfeedbeefull, 12345};
    for (size_t c = 0; c < N_OF(cases); c++) {
        const problem pr = problem_of(&cases[c], 100 + c);
        const attn_sdpa_shape *s = &pr.shape;
        /* the reference reads the inputs rounded to the precision */
        double *q = talloc(pr.nq * sizeof(double)), *k = talloc(pr.nk * sizeof(double));
        double *v = talloc(pr.nv * sizeof(double));
        memcpy(q, pr.q, pr.nq * sizeof(double));
        memcpy(k, pr.k, pr.nk * sizeof(double));
        memcpy(v, pr.v, pr.nv * sizeof(double));
        prec_round_array(p, q, pr.nq);
        prec_round_array(p, k, pr.nk);
        prec_round_array(p, v, pr.nv);
        prec_round_array(p, pr.mask, s->B * s->NH * s->Tq * s->Tk);
        prec_round_array(p, pr.dout, pr.no);
        const sdpa_ref r = ref_of(&pr, q, k, v);
        const size_t nl = s->B * s->NH * s->Tq;
        double *out = talloc(pr.no * sizeof(double)), *lse = talloc(nl * sizeof(double));
        double *g[3] = {talloc(pr.nq * sizeof(double)), talloc(pr.nk * sizeof(double)),
                        talloc(pr.nv * sizeof(double))};
        const size_t n[3] = {pr.nq, pr.nk, pr.nv};
        dropout_ref_forward(&r, &d, out, lse);
        dropout_ref_backward(&r, &d, pr.dout, g[0], g[1], g[2]);
        const double largest = fmax(max_abs(g[0], n[0]), fmax(max_abs(g[1], n[1]), max_abs(g[2], n[2])));
        const unsigned threads[] = {1, 3, 0};
        void *first[4] = {NULL};
        for (size_t th = 0; th < N_OF(threads); th++) {
            attn_plan *plan = plan_of(p, &pr, threads[th], &d);
            sdpa_io io = io_of(p, &pr, q, k, v);
            void *grads[3] = {talloc(pr.nq * p->size), talloc(pr.nk * p->size),
                              talloc(pr.nv * p->size)};
            assert_int_equal(sdpa_forward(p, plan, &io), ATTN_OK);
            assert_int_equal(sdpa_backward(p, plan, &io, prec_typed(p, pr.dout, pr.no), grads[0],
                                           grads[1], grads[2]),
                             ATTN_OK);
            double *got = talloc(pr.no * sizeof(double)), *got_lse = talloc(nl * sizeof(double));
            p->to_double(got, io.out, pr.no);
            p->to_double(got_lse, io.lse, nl);
            const double tol = 2 * sdpa_forward_tol(p, s->Tk, s->hs);
            assert_true(residual_scaled(got, out, pr.no, max_abs(v, pr.nv)) <= tol);
            assert_true(sdpa_residual_lse(got_lse, lse, nl) <= tol);
            for (int a = 0; a < 3; a++) {
                double *gd = talloc(n[a] * sizeof(double));
                p->to_double(gd, grads[a], n[a]);
                const double res = sdpa_grad_residual(gd, g[a], n[a], largest);
                if (res > 2 * sdpa_grad_tol(p, s->Tq, s->Tk, s->NH / s->NH_kv, s->hs))
                    fail_msg("case %zu threads %u gradient %d: residual %.3g", c, threads[th], a,
                             res);
            }
            if (th == 0) {
                first[0] = io.out;
                for (int a = 0; a < 3; a++)
                    first[a + 1] = grads[a];
            } else if (threads[th] != 0) { /* own threads: the same bits */
                assert_memory_equal(first[0], io.out, pr.no * p->size);
                for (int a = 0; a < 3; a++)
                    assert_memory_equal(first[a + 1], grads[a], n[a] * p->size);
            }
        }
    }
}

/* ---- 2. finite differences ------------------------------------------------------ */

static double loss_of(const double *out, const double *dout, size_t n)
{
    double l = 0;
    for (size_t i = 0; i < n; i++)
        l += out[i] * dout[i];
    return l;
}

/* f64 io on the arrays themselves */
static sdpa_io io_f64(const problem *pr, const double *q, const double *k, const double *v,
                      double *out, double *lse)
{
    const attn_sdpa_shape *s = &pr->shape;
    sdpa_io io = {.Q = q, .K = k, .V = v, .out = out, .lse = lse,
                  .key_lengths = pr->with_lengths ? pr->lengths : NULL};
    if (pr->masked) {
        io.mask = pr->mask;
        io.mask_ld = s->Tk;
        io.mask_sh = s->Tq * s->Tk;
        io.mask_sb = s->NH * s->Tq * s->Tk;
    }
    return io;
}

typedef struct fd_ctx {
    attn_plan *plan;
    const problem *pr;      /* sdpa */
    double *x[5], *out;     /* sdpa: Q, K, V; projected: X, Wq, Wk, Wv, Wo */
    const double *dout;
    size_t no;
} fd_ctx;

static double sdpa_ctx_loss(fd_ctx *c)
{
    const sdpa_io io = io_f64(c->pr, c->x[0], c->x[1], c->x[2], c->out, NULL);
    assert_int_equal(sdpa_forward(&test_prec_f64, c->plan, &io), ATTN_OK);
    return loss_of(c->out, c->dout, c->no);
}

static double projected_ctx_loss(fd_ctx *c)
{
    assert_int_equal(attn_forward_f64(c->plan, c->x[0], c->x[1], c->x[2], c->x[3], c->x[4],
                                      c->out, NULL),
                     ATTN_OK);
    return loss_of(c->out, c->dout, c->no);
}

/* the largest |g - fd| over x's entries; *largest: the largest |g| */
static double fd_error(fd_ctx *c, double (*loss)(fd_ctx *), double *x, size_t n,
                       const double *g, double *largest)
{
    const double h = 1e-5;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        const double keep = x[i];
        x[i] = keep + h;
        const double up = loss(c);
        x[i] = keep - h;
        const double down = loss(c);
        x[i] = keep;
        const double fd = (up - down) / (2 * h);
        worst = fabs(fd - g[i]) > worst ? fabs(fd - g[i]) : worst;
        *largest = fabs(g[i]) > *largest ? fabs(g[i]) : *largest;
    }
    return worst;
}

static void sdpa_finite_differences(void **state)
{
    (void)state;
    const dropout_ref d = {0.3, 31337, 2};
    const grad_case fd_cases[] = {{2, 4, 2, 5, 7, 4, 3, 1, 1, 1}, {1, 2, 1, 6, 6, 4, 4, 0, 0, 0}};
    for (size_t c = 0; c < N_OF(fd_cases); c++) {
        const problem pr = problem_of(&fd_cases[c], 7 + c);
        attn_plan *plan = plan_of(&test_prec_f64, &pr, 2, &d);
        const size_t n[3] = {pr.nq, pr.nk, pr.nv};
        double *g[3];
        for (int a = 0; a < 3; a++)
            g[a] = talloc(n[a] * sizeof(double));
        double *out = talloc(pr.no * sizeof(double));
        double *lse = talloc(pr.shape.B * pr.shape.NH * pr.shape.Tq * sizeof(double));
        const sdpa_io io = io_f64(&pr, pr.q, pr.k, pr.v, out, lse);
        assert_int_equal(sdpa_forward(&test_prec_f64, plan, &io), ATTN_OK);
        assert_int_equal(sdpa_backward(&test_prec_f64, plan, &io, pr.dout, g[0], g[1], g[2]),
                         ATTN_OK);
        fd_ctx ctx = {plan, &pr, {pr.q, pr.k, pr.v}, talloc(pr.no * sizeof(double)), pr.dout,
                      pr.no};
        for (int a = 0; a < 3; a++) {
            double largest = 0;
            const double err = fd_error(&ctx, sdpa_ctx_loss, ctx.x[a], n[a], g[a], &largest);
            if (err > 1e-7 * fmax(largest, 1.0))
                fail_msg("sdpa case %zu array %d: |g - fd| %.3g (max |g| %.3g)", c, a, err,
                         largest);
        }
    }
}

static void projected_finite_differences(void **state)
{
    (void)state;
    const size_t B = 2, T = 6, C = 6, NH = 2, hs = 3, D = NH * hs;
    for (int causal = 0; causal < 2; causal++) {
        test_rng rng;
        rng_seed(&rng, 40 + (unsigned long)causal);
        const size_t n[5] = {B * T * C, C * D, C * D, C * D, D * C};
        double *x[5], *g[5];
        for (int a = 0; a < 5; a++) {
            x[a] = talloc(n[a] * sizeof(double));
            g[a] = talloc(n[a] * sizeof(double));
            rng_fill_normal(&rng, x[a], n[a], a == 0 ? 1.0 : 0.6);
        }
        double *dout = talloc(B * T * C * sizeof(double)), *out = talloc(B * T * C * sizeof(double));
        rng_fill_normal(&rng, dout, B * T * C, 1.0);
        attn_plan *plan = NULL;
        assert_int_equal(attn_plan_create(&plan, ATTN_F64, B, T, C, NH, hs, 0.0,
                                          causal ? ATTN_CAUSAL : 0u),
                         ATTN_OK);
        sdpa_keep_plan(plan);
        assert_int_equal(attn_plan_set_threads(plan, 2), ATTN_OK);
        assert_int_equal(attn_plan_set_dropout(plan, 0.25, 77, 9), ATTN_OK);
        assert_int_equal(attn_forward_f64(plan, x[0], x[1], x[2], x[3], x[4], out, NULL), ATTN_OK);
        assert_int_equal(attn_backward_f64(plan, x[0], x[1], x[2], x[3], x[4], dout, g[0], g[1],
                                           g[2], g[3], g[4]),
                         ATTN_OK);
        fd_ctx ctx = {plan, NULL, {x[0], x[1], x[2], x[3], x[4]}, out, dout, B * T * C};
        for (int a = 0; a < 5; a++) {
            double largest = 0;
            const double err = fd_error(&ctx, projected_ctx_loss, x[a], n[a], g[a], &largest);
            if (err > 1e-7 * fmax(largest, 1.0))
                fail_msg("projected causal %d array %d: |g - fd| %.3g (max |g| %.3g)", causal, a,
                         err, largest);
        }
    }
}

/* ---- 3. the same mask forward and backward ---------------------------------------- */

static void dropped_weights_get_no_value_gradient(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const grad_case gc = {1, 3, 3, 20, 70, 4, 2, 0, 0, 0};
    problem pr = problem_of(&gc, 3);
    const dropout_ref d = {0.6, 5, 6};
    attn_plan *plan = plan_of(p, &pr, 1, &d);
    const size_t t = 13, hs_v = 2;
    memset(pr.dout, 0, pr.no * sizeof(double));
    for (size_t h = 0; h < 3; h++)
        for (size_t c = 0; c < hs_v; c++)
            pr.dout[(t * 3 + h) * hs_v + c] = 1.0 + (double)c;
    sdpa_io io = io_of(p, &pr, pr.q, pr.k, pr.v);
    void *dq = talloc(pr.nq * p->size), *dk = talloc(pr.nk * p->size), *dv = talloc(pr.nv * p->size);
    assert_int_equal(sdpa_forward(p, plan, &io), ATTN_OK);
    assert_int_equal(sdpa_backward(p, plan, &io, prec_typed(p, pr.dout, pr.no), dq, dk, dv),
                     ATTN_OK);
    double *g = talloc(pr.nv * sizeof(double));
    p->to_double(g, dv, pr.nv);
    size_t dropped = 0;
    for (size_t h = 0; h < 3; h++)
        for (size_t j = 0; j < 70; j++) {
            const int keep = dropout_ref_keep(&d, 0, h, t, j);
            dropped += !keep;
            for (size_t c = 0; c < hs_v; c++)
                assert_int_equal(g[(j * 3 + h) * hs_v + c] != 0.0, keep);
        }
    assert_true(dropped > 0 && dropped < 210);
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_PREC_CASES(sdpa_matches_reference),
        SDPA_CASE("sdpa_finite_differences", sdpa_finite_differences, NULL),
        SDPA_CASE("projected_finite_differences", projected_finite_differences, NULL),
        SDPA_PREC_CASES(dropped_weights_get_no_value_gradient),
    };
    return cmocka_run_group_tests_name("dropout_grad", tests, NULL, NULL);
}
