/*
 * test_sdpa_capacity: a forward on a plan made for a KV cache's capacity
 * Tk, told by key_lengths how many keys exist, whose K and V hold only
 * those keys (attn.h: a forward judges K and V by the rows of the keys
 * that exist, max(1, the largest key length), since it reads no other).
 * This is the array PyTorch's DynamicCache hands over at every decode
 * step: a (B,NH_kv,L,hs) tensor whose heads are L rows apart, L growing
 * by one each step, and a plan made once for a larger capacity.
 *
 * Shape: B 2, NH 8 on NH_kv 2, hs 32, plan Tk 700, key lengths {517, 260}
 * (L = 517); Tq 1 (a decode step: the few-row kernels, the keys split
 * over blocks for these 4 (sequence, head) pairs), and causal Tq 5 and
 * 130 (the products of many rows; from 128 queries on, own threads pack
 * K^T and V first). K and V are (B,NH_kv,L,hs), Q and out
 * (B,NH,Tq,hs), each in an allocation of exactly its elements, so that
 * a read of a slot beyond L leaves it (AddressSanitizer, in the ci-asan
 * build, reports that).
 *
 *  1. Results, f32 and f64, on BLAS threads, 2 own threads and the
 *     one-shot; bf16 and f16 on the default engine; without a mask, with a
 *     full (B,NH,Tq,L) one and with a (B,1,1,L) padding one (-inf entries;
 *     each mask in an allocation of exactly its entries: its columns are
 *     judged as the keys'): out and lse against
 *     the double reference (sdpa_reference.c) of dense copies with Tk = L
 *     and the same key lengths (the same visible keys: keys j >= L_b are
 *     never visible), within sdpa_calls.h's tolerances (f32 1e-5, f64
 *     1e-12, times sqrt(L / 130)) and, for the half types, attn.h's bound
 *     (half_check_forward); inputs unchanged.
 *  2. Statuses, nothing written on error: without key lengths the same
 *     strides are BAD_STRIDE (Tk rows of a head reach into the next head);
 *     a key length of L + 1 too; the backward on a training plan too (it
 *     writes every one of the Tk rows of dK and dV, with K's and V's
 *     strides). out placed right after V's last existing row, where Tk
 *     rows of V would reach, is accepted; out on V's last row is ALIASING.
 *     A (B,1,1,L) padding mask of L columns (mask_sb L) is accepted, one
 *     with mask_sb L - 1 (its sequences' columns overlap) is BAD_STRIDE.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference/sdpa_reference.h"
#include "support/inputs.h"
#include "support/sdpa_calls.h"
#include "support/sdpa_half.h"
#include "support/test_common.h"

enum { B = 2, NH = 8, NH_KV = 2, HS = 32, CAPACITY = 700, L = 517 };
static const size_t lengths[B] = {L, 260};
static const size_t too_long[B] = {L + 1, 260};

/* Q and out (B,NH,Tq,HS), K and V (B,NH_KV,L,HS): PyTorch's contiguous tensors */
static sdpa_view query_view(size_t Tq)
{
    return (sdpa_view){B, NH, Tq, HS, 0, NH * Tq * HS, Tq * HS, HS};
}

static sdpa_view key_view(void)
{
    return (sdpa_view){B, NH_KV, L, HS, 0, NH_KV * L * HS, L * HS, HS};
}

static sdpa_io io_of(const void *Q, const void *K, const void *V, void *out, void *lse,
                     size_t Tq, const size_t *key_lengths)
{
    const sdpa_view q = query_view(Tq), k = key_view();
    sdpa_io io;
    memset(&io, 0, sizeof io);
    io.Q = Q, io.K = K, io.V = V, io.out = out, io.lse = lse;
    io.ldq = io.ldo = q.ld, io.shq = io.sho = q.sh, io.sbq = io.sbo = q.sb;
    io.ldk = io.ldv = k.ld, io.shk = io.shv = k.sh, io.sbk = io.sbv = k.sb;
    io.key_lengths = key_lengths;
    return io;
}

static attn_plan *capacity_plan(attn_dtype dtype, size_t Tq, unsigned flags, unsigned threads)
{
    const attn_sdpa_shape shape = {B, NH, NH_KV, Tq, CAPACITY, HS, 0};
    attn_plan *plan = NULL;
    attn_status st = attn_sdpa_plan_create(&plan, dtype, &shape, 0.0, flags, 0);
    check_true(st == ATTN_OK, "attn_sdpa_plan_create: %s", attn_status_string(st));
    sdpa_keep_plan(plan);
    if (threads != ATTN_THREADS_AUTO) {
        st = attn_plan_set_threads(plan, threads);
        check_true(st == ATTN_OK, "attn_plan_set_threads: %s", attn_status_string(st));
    }
    return plan;
}

/* ---- 1. results, f32 and f64 ------------------------------------------------------ */

/* An additive (B,NH,Tq,L) mask of exactly its entries, N(0,1) with -inf at
 * a tenth of them, or (padding) a (B,1,1,L) one of 0 and -inf; its strides
 * into *ld, *sh, *sb. */
static double *mask_of(size_t Tq, int padding, test_rng *rng, size_t *ld, size_t *sh,
                       size_t *sb)
{
    const size_t n = padding ? B * L : B * NH * Tq * L;
    double *m = random_rounded(&test_prec_f32, rng, n, 1.0);
    for (size_t i = 0; i < n; i++)
        if (padding ? i % L >= L - 7 || m[i] < -1.5 : rng_uniform(rng) < 0.1)
            m[i] = -HUGE_VAL;
        else if (padding)
            m[i] = 0.0;
    *ld = padding ? 0 : L, *sh = padding ? 0 : Tq * L, *sb = padding ? L : NH * Tq * L;
    return m;
}

/* mask: 0 none, 1 a full (B,NH,Tq,L) one, 2 a (B,1,1,L) padding one */
static void float_results(const test_prec *p, size_t Tq, unsigned flags, int mask,
                          test_rng *rng, check_worst *worst)
{
    const sdpa_view qv = query_view(Tq), kv = key_view();
    const size_t nq = sdpa_view_end(&qv), nk = sdpa_view_end(&kv);
    size_t mld = 0, msh = 0, msb = 0;
    const double *md = mask ? mask_of(Tq, mask == 2, rng, &mld, &msh, &msb) : NULL;
    const size_t nm = mask == 0 ? 0 : mask == 2 ? B * L : B * NH * Tq * L;
    const void *M = mask ? prec_typed(p, md, nm) : NULL;
    void *Q = prec_typed(p, random_rounded(&test_prec_f32, rng, nq, 1.0), nq);
    void *K = prec_typed(p, random_rounded(&test_prec_f32, rng, nk, 1.0), nk);
    void *V = prec_typed(p, random_rounded(&test_prec_f32, rng, nk, 1.0), nk);
    void *inputs = talloc((2 * nk + nq) * p->size);
    memcpy(inputs, K, nk * p->size);
    memcpy((char *)inputs + nk * p->size, V, nk * p->size);
    memcpy((char *)inputs + 2 * nk * p->size, Q, nq * p->size);
    /* the reference on dense copies: Tk = L, the same lengths */
    const double *Qd = sdpa_view_gather(p, Q, &qv), *Kd = sdpa_view_gather(p, K, &kv),
                 *Vd = sdpa_view_gather(p, V, &kv);
    const sdpa_ref r = {B, NH, NH_KV, Tq, L, HS, HS, sdpa_ref_scale(0.0, HS),
                        (flags & ATTN_CAUSAL) != 0, 0, Qd, Kd, Vd, NH * HS, NH_KV * HS,
                        NH_KV * HS, md, mld, msb, msh, lengths};
    double *ref_out = talloc_doubles(nq), *ref_lse = talloc_doubles(B * NH * Tq);
    sdpa_ref_forward(&r, ref_out, ref_lse);
    const double tol = sdpa_forward_tol(p, L, HS);
    static const unsigned engines[3] = {0, 2, ATTN_THREADS_AUTO}; /* AUTO: the one-shot */
    static const char *const names[3] = {"BLAS threads", "2 own threads", "one-shot"};
    for (int e = 0; e < 3; e++) {
        char what[160];
        snprintf(what, sizeof what, "%s %s Tq %zu%s%s, %s", attn_simd_name(), p->name, Tq,
                 flags & ATTN_CAUSAL ? " causal" : "",
                 mask == 2 ? ", padding mask" : mask ? ", mask" : "", names[e]);
        void *out = talloc(nq * p->size), *lse = talloc(B * NH * Tq * p->size);
        sentinel_fill(out, nq * p->size);
        sdpa_io io = io_of(Q, K, V, out, lse, Tq, lengths);
        io.mask = M, io.mask_ld = mld, io.mask_sh = msh, io.mask_sb = msb;
        attn_status st;
        if (e < 2) {
            st = sdpa_forward(p, capacity_plan(p->dtype, Tq, flags | ATTN_INFERENCE, engines[e]),
                              &io);
        } else {
            const attn_sdpa_shape shape = {B, NH, NH_KV, Tq, CAPACITY, HS, 0};
            st = sdpa_one_shot(p, &shape, 0.0, flags, 0, &io);
        }
        expect_true(st == ATTN_OK, "%s: %s", what, attn_status_string(st));
        if (st != ATTN_OK)
            continue;
        expect_within(worst, residual_scaled(sdpa_view_gather(p, out, &qv), ref_out, nq,
                                            max_abs(Vd, nk)),
                      tol, "%s: out", what);
        expect_within(worst, sdpa_residual_lse(prec_doubles(p, lse, B * NH * Tq), ref_lse,
                                              B * NH * Tq),
                      tol, "%s: lse", what);
        expect_true(memcmp(inputs, K, nk * p->size) == 0 &&
                        memcmp((char *)inputs + nk * p->size, V, nk * p->size) == 0 &&
                        memcmp((char *)inputs + 2 * nk * p->size, Q, nq * p->size) == 0,
                    "%s: the inputs changed", what);
    }
}

static void results(void **state)
{
    const test_prec *p = *state;
    test_enter();
    test_rng rng;
    rng_seed(&rng, 2501);
    check_worst worst = {0};
    for (int mask = 0; mask < 3; mask++) {
        float_results(p, 1, 0, mask, &rng, &worst);
        float_results(p, 5, ATTN_CAUSAL, mask, &rng, &worst);
    }
    float_results(p, 130, ATTN_CAUSAL, 0, &rng, &worst);
    print_message("  %s %s: largest residual %.2e (tolerance %.1e)\n", attn_simd_name(),
                  p->name, worst.residual, worst.tol);
    test_leave("results");
}

/* ---- 1. results, bf16 and f16 ------------------------------------------------------ */

static void half_results(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    test_rng rng;
    rng_seed(&rng, 2502);
    check_worst worst = {0};
    /* Tq and the mask (sdpa_half.h: a full (B,NH,Tq,L) one, or a padding
     * (B,1,1,L) one, with -inf entries) */
    static const struct {
        size_t Tq;
        half_mask mask;
    } runs[] = {{1, HM_NONE}, {1, HM_FULL}, {1, HM_KEYPAD}, {5, HM_NONE},
                {5, HM_KEYPAD}, {130, HM_NONE}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        const size_t Tq = runs[i].Tq;
        const unsigned flags = Tq > 1 ? ATTN_CAUSAL : 0;
        /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, causal, window, lengths, mask,
         * masked rows, layout, gain, backward: the problem of Tk = L */
        const hcase c = {"capacity", B, NH, NH_KV, Tq, L, HS, 0, flags, 0, lengths,
                         runs[i].mask, 0, HL_BHSD, 0.0, 0};
        const hproblem pr = hproblem_make(ht, &c, &rng);
        const size_t n_out = hproblem_extent(&pr, 3);
        void *out = talloc(2 * n_out);
        float *lse = talloc(B * NH * Tq * sizeof(float));
        const sdpa_io io = hproblem_io(&pr, out, lse);
        char what[96];
        snprintf(what, sizeof what, "%s %s Tq %zu, mask %d", attn_simd_name(), ht->name, Tq,
                 (int)runs[i].mask);
        const attn_status st =
            half_forward(ht, capacity_plan(ht->dtype, Tq, flags | ATTN_INFERENCE,
                                           ATTN_THREADS_AUTO),
                         &io);
        expect_true(st == ATTN_OK, "%s: %s", what, attn_status_string(st));
        if (st == ATTN_OK)
            half_check_forward(&pr, half_gather(&pr, 3, out), lse, &worst, NULL, what);
    }
    print_message("  %s %s: largest error/bound %.2f\n", attn_simd_name(), ht->name,
                  worst.residual);
    test_leave("half results");
}

/* ---- 2. statuses ---------------------------------------------------------------------- */

static void statuses(void **state)
{
    const test_prec *p = *state;
    test_enter();
    const sdpa_view qv = query_view(1), kv = key_view();
    const size_t nq = sdpa_view_end(&qv), nk = sdpa_view_end(&kv), es = p->size;
    /* one buffer: K, V, then room for out where Tk rows of V would reach */
    unsigned char *buf = talloc((3 * nk + nq) * es);
    sentinel_fill(buf, (3 * nk + nq) * es);
    test_rng rng;
    rng_seed(&rng, 2503);
    p->from_double(buf, random_rounded(&test_prec_f32, &rng, 2 * nk, 1.0), 2 * nk);
    void *Q = prec_typed(p, random_rounded(&test_prec_f32, &rng, nq, 1.0), nq);
    const void *K = buf, *V = buf + nk * es;
    void *lse = talloc(B * NH * es);
    void *before = talloc((3 * nk + nq) * es);
    attn_plan *inference = capacity_plan(p->dtype, 1, ATTN_INFERENCE, ATTN_THREADS_AUTO);
    attn_plan *training = capacity_plan(p->dtype, 1, 0, ATTN_THREADS_AUTO);
    void *out_after_v = buf + 2 * nk * es; /* inside V's span at Tk rows, past it at L */
    void *out_on_v = buf + (2 * nk - HS) * es; /* on V's last row of its last head */
    /* a (B,1,1,L) padding mask of exactly its entries, passed with mask_sb */
    const double *zeros = talloc_doubles(B * L);
    const void *padding = prec_typed(p, zeros, B * L);
    struct {
        const char *what;
        attn_plan *plan;
        void *out;
        const size_t *key_lengths;
        size_t mask_sb; /* 0: no mask */
        attn_status want;
    } cases[] = {
        {"no key lengths: Tk rows of a head reach the next", inference, out_after_v, NULL, 0,
         ATTN_ERR_BAD_STRIDE},
        {"a key length of L + 1", inference, out_after_v, too_long, 0, ATTN_ERR_BAD_STRIDE},
        {"the backward writes Tk rows of dK, dV", training, out_after_v, lengths, 0,
         ATTN_ERR_BAD_STRIDE},
        {"out on V's last row", inference, out_on_v, lengths, 0, ATTN_ERR_ALIASING},
        {"out right after V's last row", inference, out_after_v, lengths, 0, ATTN_OK},
        {"a padding mask of L columns, mask_sb L", inference, out_after_v, lengths, L,
         ATTN_OK},
        {"a padding mask's mask_sb L - 1 (its L columns overlap)", inference, out_after_v,
         lengths, L - 1, ATTN_ERR_BAD_STRIDE},
    };
    const size_t slots = B * NH_KV * CAPACITY * HS * es; /* bytes of dK (dQ's are fewer) */
    void *dout = talloc(nq * es);
    unsigned char *grads = talloc(3 * slots);
    sentinel_fill(dout, nq * es);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sdpa_io io = io_of(Q, K, V, cases[i].out, lse, 1, cases[i].key_lengths);
        io.mask = cases[i].mask_sb ? padding : NULL, io.mask_sb = cases[i].mask_sb;
        memcpy(before, buf, (3 * nk + nq) * es);
        sentinel_fill(grads, 3 * slots);
        const attn_status st =
            cases[i].plan == training
                ? sdpa_backward(p, training, &io, dout, grads, grads + slots, grads + 2 * slots)
                : sdpa_forward(p, cases[i].plan, &io);
        expect_true(st == cases[i].want, "%s %s: %s: got %s, want %s", attn_simd_name(),
                    p->name, cases[i].what, attn_status_string(st),
                    attn_status_string(cases[i].want));
        if (cases[i].want != ATTN_OK)
            expect_true(memcmp(before, buf, (3 * nk + nq) * es) == 0 &&
                            sentinel_intact(grads, 3 * slots),
                        "%s %s: %s: something was written", attn_simd_name(), p->name,
                        cases[i].what);
    }
    test_leave("statuses");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_PREC_CASES(results),
        HALF_CASES(half_results),
        SDPA_PREC_CASES(statuses),
    };
    return cmocka_run_group_tests_name("sdpa_capacity", tests, NULL, NULL);
}
