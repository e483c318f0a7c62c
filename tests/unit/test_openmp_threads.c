/*
 * test_openmp_threads: attn_use_openmp_threads (attn_openmp.h), the shared
 * engine's phases on this program's own OpenMP runtime (libgomp: built with
 * -fopenmp), wrapped so that the test sees every region attn opens and every
 * thread index a team reports.
 *
 * Problem: an f32 sdpa forward and backward, B 2, GQA 8/2, Tq = Tk = 192
 * (two query blocks of each (sequence, head): 32 items), hs 32, causal;
 * about 50 MFLOP, far above the size below which a call stays on its
 * calling thread. Registered with ATTN_NUM_THREADS=3, so the shared engine
 * has 3 threads on any machine (teams of 3 asked for).
 *
 *  1. On attn's own threads first: out, lse and dQ, dK, dV against the
 *     double reference of sdpa_reference.c (tolerances of sdpa_calls.h),
 *     and no region opened.
 *  2. Hosted: regions opened (forward and backward), each asking for at
 *     most 3 threads, and thread indices 0 .. 2 reported; every output
 *     bitwise equal to step 1's (the same items, attn.h's determinism).
 *  3. A runtime that numbers its threads beyond the engine's count (the
 *     wrapper reports 1000 for thread 1, then for every thread): those claim
 *     no item, the others run them all (the caller after the region when
 *     none is left), results bitwise equal.
 *  4. Calls from both threads of an enclosing parallel region, each on its
 *     own plan: one holds the shared engine and runs a nested region (one
 *     thread: nesting is off), the other runs alone; both bitwise equal.
 *  5. Errors: one function without the other is NULL_POINTER and changes
 *     nothing (regions still opened); both NULL: attn's own threads again
 *     (no region opened), results bitwise equal.
 */
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <string.h>

#include <attn/attn_openmp.h>

#include "reference/sdpa_reference.h"
#include "support/sdpa_calls.h"
#include "support/test_common.h"

/* libgomp's region entry point (the GNU OpenMP ABI; no header declares it) */
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);

enum { B = 2, NH = 8, NH_KV = 2, T = 192, HS = 32, ENGINE_THREADS = 3 };
#define N_Q ((size_t)B * T * NH * HS)
#define N_KV ((size_t)B * T * NH_KV * HS)
#define N_LSE ((size_t)B * NH * T)

static atomic_uint regions, widest_team, highest_index, bad_numbering;

static void counting_parallel(void (*body)(void *), void *data, unsigned threads,
                              unsigned flags)
{
    atomic_fetch_add(&regions, 1);
    unsigned seen = atomic_load(&widest_team);
    while (threads > seen && !atomic_compare_exchange_weak(&widest_team, &seen, threads)) {
    }
    GOMP_parallel(body, data, threads, flags);
}

static int counting_thread_num(void)
{
    const int index = omp_get_thread_num();
    unsigned seen = atomic_load(&highest_index);
    while ((unsigned)index > seen &&
           !atomic_compare_exchange_weak(&highest_index, &seen, (unsigned)index)) {
    }
    const unsigned bad = atomic_load(&bad_numbering); /* 1: thread 1's index, 2: all */
    return bad == 2 || (bad == 1 && index == 1) ? 1000 : index;
}

static void reset_counts(void)
{
    atomic_store(&regions, 0);
    atomic_store(&widest_team, 0);
    atomic_store(&highest_index, 0);
}

typedef struct run_out {
    float out[N_Q], lse[N_LSE], dQ[N_Q], dK[N_KV], dV[N_KV];
} run_out;

static float Q[N_Q], K[N_KV], V[N_KV], dout[N_Q];

/* A forward and backward on a new plan (ATTN_THREADS_AUTO); 0 when a call failed. */
static int run_once(run_out *r)
{
    const attn_sdpa_shape shape = {B, NH, NH_KV, T, T, HS, HS};
    attn_plan *plan = NULL;
    if (attn_sdpa_plan_create(&plan, ATTN_F32, &shape, 0.0, ATTN_CAUSAL, 0) != ATTN_OK)
        return 0;
    attn_sdpa_args_f32 a;
    memset(&a, 0, sizeof a);
    a.Q = Q;
    a.K = K;
    a.V = V;
    a.out = r->out;
    a.lse = r->lse;
    const int ok = attn_sdpa_forward_f32(plan, &a) == ATTN_OK &&
                   attn_sdpa_backward_f32(plan, &a, dout, r->dQ, r->dK, r->dV) == ATTN_OK;
    attn_plan_destroy(plan);
    return ok;
}

static int same_bits(const run_out *x, const run_out *y)
{
    return memcmp(x, y, sizeof *x) == 0;
}

static double *widen(const float *x, size_t n)
{
    double *d = test_malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = (double)x[i];
    return d;
}

/* Step 1's check: r against the double reference. */
static void check_reference(const run_out *r)
{
    double *q = widen(Q, N_Q), *k = widen(K, N_KV), *v = widen(V, N_KV), *g = widen(dout, N_Q);
    double *out = test_malloc(N_Q * sizeof *out), *lse = test_malloc(N_LSE * sizeof *lse);
    double *dq = test_malloc(N_Q * sizeof *dq), *dk = test_malloc(N_KV * sizeof *dk);
    double *dv = test_malloc(N_KV * sizeof *dv);
    const sdpa_ref ref = {.B = B, .NH = NH, .NH_kv = NH_KV, .Tq = T, .Tk = T, .hs = HS,
                          .hs_v = HS, .scale = sdpa_ref_scale(0.0, HS), .causal = 1,
                          .Q = q, .K = k, .V = v, .ldq = NH * HS, .ldk = NH_KV * HS,
                          .ldv = NH_KV * HS};
    sdpa_ref_forward(&ref, out, lse);
    sdpa_ref_backward(&ref, g, dq, dk, dv);
    double *got = widen(r->out, N_Q), *got_lse = widen(r->lse, N_LSE);
    check_residual(residual_scaled(got, out, N_Q, max_abs(v, N_KV)),
                   sdpa_forward_tol(&test_prec_f32, T, HS), "out");
    check_residual(sdpa_residual_lse(got_lse, lse, N_LSE), sdpa_forward_tol(&test_prec_f32, T, HS),
                   "lse");
    const double largest = fmax(max_abs(dq, N_Q), fmax(max_abs(dk, N_KV), max_abs(dv, N_KV)));
    const double gtol = sdpa_grad_tol(&test_prec_f32, T, T, NH / NH_KV, HS);
    double *gq = widen(r->dQ, N_Q), *gk = widen(r->dK, N_KV), *gv = widen(r->dV, N_KV);
    check_residual(sdpa_grad_residual(gq, dq, N_Q, largest), gtol, "dQ");
    check_residual(sdpa_grad_residual(gk, dk, N_KV, largest), gtol, "dK");
    check_residual(sdpa_grad_residual(gv, dv, N_KV, largest), gtol, "dV");
    double *all[] = {q, k, v, g, out, lse, dq, dk, dv, got, got_lse, gq, gk, gv};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        test_free(all[i]);
}

static void openmp_threads(void **state)
{
    (void)state;
    test_rng rng;
    rng_seed(&rng, 7101);
    for (size_t i = 0; i < N_Q; i++) {
        Q[i] = (float)rng_normal(&rng);
        dout[i] = (float)rng_normal(&rng);
    }
    for (size_t i = 0; i < N_KV; i++) {
        K[i] = (float)rng_normal(&rng);
        V[i] = (float)rng_normal(&rng);
    }
    static run_out own, got, nested[2];

    /* 1. attn's own threads */
    reset_counts();
    check_true(run_once(&own), "own threads: a call failed");
    check_reference(&own);
    check_true(atomic_load(&regions) == 0, "own threads: %u regions opened", atomic_load(&regions));

    /* 2. hosted */
    check_true(attn_use_openmp_threads(counting_parallel, counting_thread_num) == ATTN_OK,
               "attn_use_openmp_threads refused a runtime");
    reset_counts();
    memset(&got, 0, sizeof got);
    check_true(run_once(&got), "hosted: a call failed");
    check_true(atomic_load(&regions) >= 2, "hosted: %u regions opened, forward and backward "
               "expected", atomic_load(&regions));
    check_true(atomic_load(&widest_team) == ENGINE_THREADS,
               "hosted: the widest team asked for %u threads, not %d", atomic_load(&widest_team),
               ENGINE_THREADS);
    check_true(atomic_load(&highest_index) == ENGINE_THREADS - 1,
               "hosted: the highest thread index seen is %u, not %d", atomic_load(&highest_index),
               ENGINE_THREADS - 1);
    check_true(same_bits(&got, &own), "hosted: results differ from attn's own threads'");

    /* 3. a thread numbered beyond the engine's count claims nothing */
    for (unsigned bad = 1; bad <= 2; bad++) {
        atomic_store(&bad_numbering, bad);
        memset(&got, 0, sizeof got);
        check_true(run_once(&got), "misnumbered (%u): a call failed", bad);
        atomic_store(&bad_numbering, 0);
        check_true(same_bits(&got, &own),
                   "misnumbered (%u): results differ from attn's own threads'", bad);
    }

    /* 4. two calls from the threads of an enclosing region */
    int ok[2] = {0, 0};
    memset(nested, 0, sizeof nested);
#pragma omp parallel num_threads(2)
    {
        const int me = omp_get_thread_num();
        if (me < 2)
            ok[me] = run_once(&nested[me]);
    }
    for (int i = 0; i < 2; i++)
        check_true(ok[i] && same_bits(&nested[i], &own),
                   "nested: thread %d's results differ from attn's own threads'", i);

    /* 5. errors, then attn's own threads again */
    check_true(attn_use_openmp_threads(counting_parallel, NULL) == ATTN_ERR_NULL_POINTER &&
                   attn_use_openmp_threads(NULL, counting_thread_num) == ATTN_ERR_NULL_POINTER,
               "one function without the other is not NULL_POINTER");
    reset_counts();
    check_true(run_once(&got) && atomic_load(&regions) > 0,
               "after a refused call the runtime is no longer used");
    check_true(attn_use_openmp_threads(NULL, NULL) == ATTN_OK, "unsetting was refused");
    reset_counts();
    memset(&got, 0, sizeof got);
    check_true(run_once(&got), "own threads again: a call failed");
    check_true(atomic_load(&regions) == 0, "unset: %u regions still opened", atomic_load(&regions));
    check_true(same_bits(&got, &own), "own threads again: results differ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(openmp_threads)};
    return cmocka_run_group_tests_name("openmp_threads", tests, NULL, NULL);
}
