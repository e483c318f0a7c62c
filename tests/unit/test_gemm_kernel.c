/*
 * test_gemm_kernel: attn's own matrix products of lib/kernels/kernels.h, for every
 * kernel set the CPU runs (others are skipped), against a double reference.
 *
 * Residual, per element of C = alpha op(A) op(B) + beta C0:
 *   |C - C_ref| <= (K + 2) u (|alpha| sum_k |op(A)_ik| |op(B)_kj| + |beta| |C0_ij|)
 * the classical bound of a length-K dot product (gamma_{K+2}, u the unit
 * roundoff: 2^-24 in f32, 2^-53 in f64; +2 for the scaling by alpha and the
 * addition of beta C0), whatever the order of summation. It is checked as a
 * ratio of the error to this bound, which must stay <= 1.
 * Exact expectations: elements of C's leading dimension beyond N and rows
 * beyond M are never written; beta = 0 never reads C (a NaN there stays
 * out); in the triangular product row i of C is finite when only rows k > i
 * of B hold NaN (it never reads them); the same call twice gives the same
 * bytes.
 * Products sharing op(A), with each op(B) packed by the product or packed
 * whole beforehand (the pack_b kernel, K block by K block), give the bytes of
 * the single products.
 * beta is 0 or 1 only (kernels.h): in a debug build another beta stops the
 * product and the triangular product (an assert: the child process that
 * calls them ends by SIGABRT); Release builds compile the check out.
 * Shapes cover both of the kernel's paths: the unpacked one (small M*N*K)
 * and the packed one with every edge: M across MR and MC (a last micro-tile
 * of each row count), N across NR and NC, K across KC.
 */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid */

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/test_common.h"

typedef struct gemm_case {
    size_t M, N, K;
    int trans_a, trans_b;
    double alpha, beta;
} gemm_case;

static double op(const double *X, size_t ld, int trans, size_t i, size_t j)
{
    return trans ? X[j * ld + i] : X[i * ld + j];
}

/* Runs one case on kernel set `isa`; returns the worst error / bound. */
static double run_case(const isa_case *c, const gemm_case *g, test_rng *rng)
{
    const test_prec *p = c->prec;
    const size_t M = g->M, N = g->N, K = g->K;
    const size_t lda = (g->trans_a ? M : K) + 3, ldb = (g->trans_b ? K : N) + 1, ldc = N + 5;
    const size_t a_rows = g->trans_a ? K : M, b_rows = g->trans_b ? N : K;
    double *A = talloc_doubles(a_rows * lda), *B = talloc_doubles(b_rows * ldb);
    double *C0 = talloc_doubles(M * ldc + 1); /* one past: a sentinel */
    rng_fill_normal(rng, A, a_rows * lda, 1.0);
    rng_fill_normal(rng, B, b_rows * ldb, 1.0);
    rng_fill_normal(rng, C0, M * ldc + 1, 1.0);
    prec_round_array(p, A, a_rows * lda);
    prec_round_array(p, B, b_rows * ldb);
    prec_round_array(p, C0, M * ldc + 1);
    if (g->beta == 0.0)
        for (size_t i = 0; i < M * ldc; i++)
            C0[i] = (double)NAN; /* must not be read */
    const double alpha = p->round(g->alpha);

    const size_t c_bytes = (M * ldc + 1) * p->size;
    void *Ct = prec_typed(p, C0, M * ldc + 1), *Ct2 = prec_typed(p, C0, M * ldc + 1);
    void *At = prec_typed(p, A, a_rows * lda), *Bt = prec_typed(p, B, b_rows * ldb);
    void *pack = talloc(attn_gemm_pack_elements(M, N, K) * p->size + 64);
    assert_true(p->gemm(c->isa, g->trans_a, g->trans_b, M, N, K, alpha, At, lda, Bt, ldb, g->beta,
                        Ct, ldc, pack));
    assert_true(p->gemm(c->isa, g->trans_a, g->trans_b, M, N, K, alpha, At, lda, Bt, ldb, g->beta,
                        Ct2, ldc, pack));
    check_true(memcmp(Ct, Ct2, c_bytes) == 0, "%s %zux%zux%zu: two calls differ",
               attn_isa_name(c->isa), M, N, K);
    const double *C = prec_doubles(p, Ct, M * ldc + 1);

    const double u = p->epsilon / 2;
    double worst = 0.0;
    for (size_t i = 0; i < M; i++) {
        for (size_t j = 0; j < N; j++) {
            double sum = 0.0, magnitude = 0.0;
            for (size_t k = 0; k < K; k++) {
                const double a = op(A, lda, g->trans_a, i, k), b = op(B, ldb, g->trans_b, k, j);
                sum += a * b;
                magnitude += fabs(a * b);
            }
            const double c0 = g->beta == 0.0 ? 0.0 : C0[i * ldc + j];
            const double ref = alpha * sum + g->beta * c0;
            const double bound =
                (double)(K + 2) * u * (fabs(alpha) * magnitude + fabs(g->beta * c0)) + 1e-300;
            const double ratio = fabs(C[i * ldc + j] - ref) / bound;
            worst = ratio > worst || ratio != ratio ? ratio : worst;
        }
        for (size_t j = N; j < ldc; j++) /* the padding of each row is untouched */
            check_true(memcmp(prec_at(p, Ct, i * ldc + j), prec_at(p, Ct2, i * ldc + j),
                              p->size) == 0 &&
                           (C[i * ldc + j] == C0[i * ldc + j] ||
                            (C0[i * ldc + j] != C0[i * ldc + j] &&
                             C[i * ldc + j] != C[i * ldc + j])),
                       "%s %zux%zux%zu: wrote C[%zu][%zu] beyond N", attn_isa_name(c->isa), M, N,
                       K, i, j);
    }
    check_true(C[M * ldc] == C0[M * ldc] || C0[M * ldc] != C0[M * ldc],
               "%s: wrote past the last row", attn_isa_name(c->isa));
    return worst;
}

static void products(void **state)
{
    const isa_case *c = isa_case_enter(state);
    static const size_t Ms[] = {1, 5, 12, 13, 97, 200};
    static const size_t Ns[] = {1, 7, 16, 33, 64, 600};
    static const size_t Ks[] = {1, 3, 64, 257, 300};
    static const double alphas[] = {1.0, 0.125, -2.0};
    test_rng rng;
    rng_seed(&rng, 901 + (uint64_t)c->isa);
    double worst = 0.0;
    int direct = 0, packed = 0;
    for (int n = 0; n < 90; n++) {
        gemm_case g = {Ms[rng_below(&rng, 6)], Ns[rng_below(&rng, 6)], Ks[rng_below(&rng, 5)],
                       (int)rng_below(&rng, 2), (int)rng_below(&rng, 2),
                       alphas[rng_below(&rng, 3)], (double)rng_below(&rng, 2)};
        if (n < 12) /* the unpacked path for sure */
            g.M = 1 + (size_t)n % 7, g.N = 1 + (size_t)n * 3 % 20, g.K = 1 + (size_t)n * 5 % 40;
        if (g.M * g.N * g.K > 6000000)
            g.K = 64;
        attn_gemm_is_direct(g.M, g.N, g.K) ? direct++ : packed++;
        const double ratio = run_case(c, &g, &rng);
        check_true(ratio <= 1.0,
                   "%s %s %zux%zux%zu trans %d%d alpha %g beta %g: error %.3g x the bound",
                   attn_isa_name(c->isa), c->prec->name, g.M, g.N, g.K, g.trans_a, g.trans_b,
                   g.alpha, g.beta, ratio);
        worst = ratio > worst ? ratio : worst;
    }
    /* packed products whose last rows are a partial micro-tile of every
     * row count below ATTN_GEMM_MR_MAX (the second MC block of 144 + r rows
     * has r), A and A^T (read in place and packed: N > 2 panels); and K
     * beyond one span of ATTN_GEMM_KSPAN: a second span added to C, its own
     * blocks a whole one and a part (1030 = 768 + 256 + 6), or a single k
     * (769) */
    gemm_case special[11];
    size_t specials = 0;
    for (size_t r = 1; r < 8; r++) {
        const gemm_case g = {144 + r,          64 * r + 1,    40, (int)(r % 2),
                             (int)(r / 2 % 2), alphas[r % 3], (double)(r / 4)};
        special[specials++] = g;
    }
    for (int t = 0; t < 4; t++) {
        const gemm_case g = {13 + (size_t)t, t < 2 ? 70 : 200, t % 2 ? 769 : 1030, t % 2,
                             t / 2,          alphas[t % 3],    (double)(t % 2)};
        special[specials++] = g;
    }
    for (size_t i = 0; i < specials; i++) {
        const gemm_case *g = &special[i];
        packed++;
        const double ratio = run_case(c, g, &rng);
        check_true(ratio <= 1.0, "%s %s %zux%zux%zu trans %d%d: error %.3g x the bound",
                   attn_isa_name(c->isa), c->prec->name, g->M, g->N, g->K, g->trans_a,
                   g->trans_b, ratio);
        worst = ratio > worst ? ratio : worst;
    }
    print_message("  %s/%s: worst error %.3g x the bound (%d unpacked, %d packed products)\n",
                  attn_isa_name(c->isa), c->prec->name, worst, direct, packed);
    check_true(direct > 0 && packed > 0, "both paths ran");
}

static void lower_product(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const test_prec *p = c->prec;
    static const size_t Ms[] = {1, 6, 13, 40, 128};
    static const size_t Ns[] = {1, 16, 37, 64};
    test_rng rng;
    rng_seed(&rng, 911 + (uint64_t)c->isa);
    const double u = p->epsilon / 2;
    for (size_t mi = 0; mi < 5; mi++) {
        for (size_t ni = 0; ni < 4; ni++) {
            const size_t M = Ms[mi], N = Ns[ni], lda = M + 2, ldb = N + 3, ldc = N + 1;
            double *A = talloc_doubles(M * lda), *B = talloc_doubles(M * ldb);
            rng_fill_normal(&rng, A, M * lda, 1.0);
            rng_fill_normal(&rng, B, M * ldb, 1.0);
            prec_round_array(p, A, M * lda);
            prec_round_array(p, B, M * ldb);
            for (size_t i = 0; i < M; i++) /* never read: above the diagonal */
                for (size_t k = i + 1; k < M; k++)
                    A[i * lda + k] = (double)NAN;
            const size_t poisoned = M / 2; /* B's rows from here on hold a NaN */
            for (size_t k = poisoned; k < M; k++)
                B[k * ldb + (k % N)] = (double)NAN;
            void *At = prec_typed(p, A, M * lda), *Bt = prec_typed(p, B, M * ldb);
            void *Ct = talloc(M * ldc * p->size);
            void *pack = talloc(attn_gemm_pack_elements(M, N, M) * p->size + 64);
            assert_true(p->gemm_lower(c->isa, M, N, At, lda, Bt, ldb, 0.0, Ct, ldc, pack));
            const double *C = prec_doubles(p, Ct, M * ldc);
            for (size_t i = 0; i < poisoned; i++) {
                for (size_t j = 0; j < N; j++) {
                    double sum = 0.0, magnitude = 0.0;
                    for (size_t k = 0; k <= i; k++) {
                        sum += A[i * lda + k] * B[k * ldb + j];
                        magnitude += fabs(A[i * lda + k] * B[k * ldb + j]);
                    }
                    const double bound = (double)(i + 3) * u * magnitude + 1e-300;
                    check_true(fabs(C[i * ldc + j] - sum) <= bound,
                               "%s %s lower M %zu N %zu: C[%zu][%zu] = %g, reference %g",
                               attn_isa_name(c->isa), p->name, M, N, i, j, C[i * ldc + j], sum);
                }
            }
        }
    }
}

static void shared_and_prepacked(void **state)
{
    const isa_case *c = isa_case_enter(state);
    const test_prec *p = c->prec;
    /* unpacked, packed within one block, across K, M and N blocks, and
     * across two spans of K */
    static const size_t shapes[][3] = {{5, 9, 7}, {48, 64, 100}, {150, 600, 300}, {1, 33, 257},
                                       {20, 70, 1030}};
    test_rng rng;
    rng_seed(&rng, 921 + (uint64_t)c->isa);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        for (int trans = 0; trans < 4; trans++) {
            const int ta = trans & 1, tb = trans >> 1;
            const size_t lda = ta ? M : K, ldb = tb ? K : N;
            double *A = talloc_doubles(M * K);
            rng_fill_normal(&rng, A, M * K, 1.0);
            const void *At = prec_typed(p, A, M * K);
            const void *B[3];
            void *C[3], *single[3], *prepacked_C[3], *packed[3];
            void *pack = talloc(attn_gemm_pack_elements(M, N, K) * p->size + 64);
            for (int m = 0; m < 3; m++) {
                double *Bd = talloc_doubles(K * N);
                rng_fill_normal(&rng, Bd, K * N, 1.0);
                B[m] = prec_typed(p, Bd, K * N);
                C[m] = talloc(M * N * p->size);
                single[m] = talloc(M * N * p->size);
                prepacked_C[m] = talloc(M * N * p->size);
                packed[m] = talloc(attn_gemm_packed_b_elements(K, N) * p->size);
                for (size_t k0 = 0; k0 < K; k0 += ATTN_GEMM_KC)
                    assert_true(p->gemm_pack_b(c->isa, tb, K, N, B[m], ldb, k0, packed[m]));
                assert_true(p->gemm(c->isa, ta, tb, M, N, K, 1.0, At, lda, B[m], ldb, 0.0,
                                    single[m], N, pack));
            }
            assert_true(p->gemm_shared_a(c->isa, ta, tb, M, N, K, At, lda, 3, B, ldb, NULL, C, N,
                                         pack));
            assert_true(p->gemm_shared_a(c->isa, ta, tb, M, N, K, At, lda, 3, B, ldb,
                                         (const void *const *)packed, prepacked_C, N, pack));
            for (int m = 0; m < 3; m++) {
                check_true(memcmp(C[m], single[m], M * N * p->size) == 0,
                           "%s %s %zux%zux%zu trans %d%d: shared op(A), product %d differs",
                           attn_isa_name(c->isa), p->name, M, N, K, ta, tb, m);
                check_true(memcmp(prepacked_C[m], single[m], M * N * p->size) == 0,
                           "%s %s %zux%zux%zu trans %d%d: prepacked op(B), product %d differs",
                           attn_isa_name(c->isa), p->name, M, N, K, ta, tb, m);
            }
        }
    }
}

#ifndef NDEBUG
/* Whether fn(c) run in a child process ends by SIGABRT (an assert). */
static int aborts(void (*fn)(const isa_case *), const isa_case *c)
{
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fn(c);
        _exit(0);
    }
    int status = 0;
    assert_true(waitpid(pid, &status, 0) == pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void product_beta_half(const isa_case *c)
{
    const test_prec *p = c->prec;
    const double one[4] = {1, 1, 1, 1};
    void *A = prec_typed(p, one, 4), *B = prec_typed(p, one, 4), *C = prec_typed(p, one, 4);
    void *pack = talloc(attn_gemm_pack_elements(2, 2, 2) * p->size + 64);
    p->gemm(c->isa, 0, 0, 2, 2, 2, 1.0, A, 2, B, 2, 0.5, C, 2, pack);
}

static void lower_beta_half(const isa_case *c)
{
    const test_prec *p = c->prec;
    const double one[4] = {1, 1, 1, 1};
    void *A = prec_typed(p, one, 4), *B = prec_typed(p, one, 4), *C = prec_typed(p, one, 4);
    void *pack = talloc(attn_gemm_pack_elements(2, 2, 2) * p->size + 64);
    p->gemm_lower(c->isa, 2, 2, A, 2, B, 2, 0.5, C, 2, pack);
}
#endif

/* beta is 0 or 1 (kernels.h; the products above use both): another value is
 * a caller's error that debug builds stop at (an assert, SIGABRT), for the
 * product and the triangular product; Release builds do not check. */
static void beta_contract(void **state)
{
    const isa_case *c = isa_case_enter(state);
#ifdef NDEBUG
    (void)c;
    print_message("  NDEBUG: the check of beta is compiled out of this build\n");
#else
    print_message("  (an assertion message from the child processes is expected)\n");
    check_true(aborts(product_beta_half, c), "%s %s: the product took beta = 0.5",
               attn_isa_name(c->isa), c->prec->name);
    check_true(aborts(lower_beta_half, c), "%s %s: the triangular product took beta = 0.5",
               attn_isa_name(c->isa), c->prec->name);
#endif
}

int main(void)
{
    if (isa_variant_skipped(1))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        ISA_CASES(products),
        ISA_CASES(lower_product),
        ISA_CASES(shared_and_prepacked),
        ISA_CASES(beta_contract),
    };
    return cmocka_run_group_tests_name("own matrix-product kernels", tests, NULL, NULL);
}
