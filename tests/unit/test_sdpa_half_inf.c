/*
 * test_sdpa_half_inf: half-precision forwards (attn_sdpa_forward_bf16/_f16)
 * with +inf scores, on each kernel set: attn.h gives the row's weight to
 * its +inf keys in equal shares (out their values' mean, lse +inf). Such a
 * row is recomputed alone by the engine (sdpa_forward.c, row_alone), in a
 * prefill of 160 queries (on the amx and avx512-bf16 sets the one whose
 * other rows take the bf16 products and softmax) and in a decode step
 * whose keys are split (the split results merged, then the row alone);
 * its out is rounded from that float row into the caller's out. Inputs as
 * test_sdpa_half's (support/sdpa_half.c), a full float mask with -inf
 * entries, then +inf put in a few rows (two keys far apart, or one);
 * checked by half_check_forward against the float64 reference: those rows
 * within u |x| + 2^-19 of the mean and lse +inf, every other row within
 * attn_half.h's bound, and nothing written outside out's elements. Also
 * a NaN value in a bf16-products prefill, forward and backward (nan_value,
 * nan_value_backward, at the tests).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support/sdpa_calls.h"
#include "support/sdpa_half.h"
#include "support/sdpa_half_grads.h"
#include "support/test_common.h"

static const hcase inf_cases[] = {
    {"prefill 160, GQA 8/2, full mask, (B,NH,T,hs)", 1, 8, 2, 160, 160, 32, 0, 0, 0, NULL,
     HM_FULL, 0, HL_BHSD, 1, 0},
    {"decode split, GQA 8/2, Tk 3000, full mask", 1, 8, 2, 1, 3000, 64, 0, 0, 0, NULL, HM_FULL,
     0, HL_DENSE, 1, 0},
};

/* mask entry (b, h, t, j) := +inf in the reference's and the call's mask */
static void plus_inf(hproblem *pr, size_t b, size_t h, size_t t, size_t j)
{
    const size_t at = b * pr->mask_sb + h * pr->mask_sh + t * pr->mask_ld + j;
    pr->mask[at] = HUGE_VAL;
    pr->mask_f[at] = INFINITY;
}

/* The forward of pr on a new plan: out gathered dense, lse; nothing
 * written outside out's elements. */
static double *forward(hproblem *pr, float *lse, const char *what)
{
    const size_t no = hproblem_extent(pr, 3);
    void *before, *out = half_sentinel_buffer(no, &before);
    const attn_sdpa_shape shape = hproblem_shape(pr);
    attn_plan *plan = NULL;
    attn_status st = attn_sdpa_plan_create(&plan, pr->ht->dtype, &shape, 0.0, pr->c.causal, 0);
    check_true(st == ATTN_OK, "%s: plan: %s", what, attn_status_string(st));
    sdpa_keep_plan(plan);
    const sdpa_io io = hproblem_io(pr, out, lse);
    st = half_forward(pr->ht, plan, &io);
    check_true(st == ATTN_OK, "%s: forward: %s", what, attn_status_string(st));
    expect_true(half_unaddressed_intact(pr, 3, out, before, no),
                "%s: the forward wrote outside out's elements", what);
    sdpa_drop_plan(plan);
    return half_gather(pr, 3, out);
}

static void inf_rows(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    test_rng rng;
    rng_seed(&rng, ht->dtype == ATTN_BF16 ? 5111 : 5112);
    for (size_t i = 0; i < N_OF(inf_cases); i++) {
        hproblem pr = hproblem_make(ht, &inf_cases[i], &rng);
        const size_t last = pr.c.Tq - 1, far = pr.c.Tk - 7;
        plus_inf(&pr, 0, 1, last, 3); /* two +inf keys far apart: other tiles, splits */
        plus_inf(&pr, 0, 1, last, far);
        plus_inf(&pr, 0, 6, last / 2, far - 100); /* one */
        hproblem_refresh(&pr);
        const size_t nl = pr.c.B * pr.c.NH * pr.c.Tq;
        float *lse = talloc(nl * sizeof(float));
        size_t infinite = 0;
        for (size_t r = 0; r < nl; r++)
            infinite += pr.lse[r] == HUGE_VAL;
        expect_true(infinite == 2, "%s \"%s\": the reference has %zu +inf rows, not 2",
                    ht->name, pr.c.name, infinite);
        char what[256];
        snprintf(what, sizeof what, "%s %s \"%s\"", attn_simd_name(), ht->name, pr.c.name);
        check_worst worst;
        memset(&worst, 0, sizeof worst);
        half_check_forward(&pr, forward(&pr, lse, what), lse, &worst, NULL, what);
        print_message("  %s: out, lse largest error/bound %.3f\n", what, worst.residual);
    }
    test_leave("+inf rows");
}

/* A NaN in one value (key j, column c of key/value head g) of a causal
 * prefill that takes the bf16 products on the amx and avx512-bf16 sets:
 * exactly the outputs whose weights reach it are NaN (column c of the rows
 * of g's heads from query j on), none of the rows before (a product that
 * multiplied the NaN by their zero weights, in a padded tile or the causal
 * diagonal, would make them NaN: such a (b, g) takes the float products on
 * its values widened), every other output within the bound of the
 * reference without the NaN. */
static const hcase nan_case = {"prefill 160, GQA 8/2, causal, a NaN value, (B,NH,T,hs)", 1, 8,
                               2, 160, 160, 32, 0, ATTN_CAUSAL, 0, NULL, HM_NONE, 0, HL_BHSD,
                               1, 0};
enum { NAN_G = 1, NAN_J = 40, NAN_COL = 5 }; /* the NaN's head, key, column */

/* nan_case's problem, its inputs drawn from `seed` (the NaN not yet in). */
static hproblem nan_problem(const half_type *ht, unsigned seed)
{
    test_rng rng;
    rng_seed(&rng, seed);
    return hproblem_make(ht, &nan_case, &rng);
}

static void nan_value(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    const hcase c = nan_case;
    hproblem pr = nan_problem(ht, ht->dtype == ATTN_BF16 ? 5113 : 5114);
    const size_t g = NAN_G, j = NAN_J, col = NAN_COL, group = c.NH / c.NH_kv;
    half_poke(&pr, 2, 0, g, j, col, (double)NAN); /* the reference stays without it */
    float *lse = talloc(c.NH * c.Tq * sizeof(float));
    char what[256];
    snprintf(what, sizeof what, "%s %s \"%s\"", attn_simd_name(), ht->name, c.name);
    double *out = forward(&pr, lse, what);
    size_t wrong = 0;
    for (size_t h = 0; h < c.NH; h++)
        for (size_t t = 0; t < c.Tq; t++) {
            double *o = out + half_dense_index(&pr, 3, 0, h, t);
            const int reached = h / group == g && t >= j;
            for (size_t i = 0; i < c.hs; i++)
                wrong += (isnan(o[i]) != 0) != (reached && i == col);
            if (reached) /* checked: the reference's value in its place */
                o[col] = pr.out[half_dense_index(&pr, 3, 0, h, t) + col];
        }
    expect_true(wrong == 0, "%s: %zu outputs NaN where they should not be, or not NaN", what,
                wrong);
    check_worst worst;
    memset(&worst, 0, sizeof worst);
    half_check_forward(&pr, out, lse, &worst, NULL, what);
    print_message("  %s: other outputs' largest error/bound %.3f\n", what, worst.residual);
    test_leave("a NaN value");
}

/* The backward of nan_value's prefill: exactly the gradients whose terms
 * reach the NaN are NaN -- dQ of g's heads from query j on (their dP
 * against key j, and their row sums <dout, out> through out's NaN), dK of
 * every key of g (each is seen by a query from j on), no dV (P dout does
 * not read V) -- and every other element within the tolerance of the
 * reference without the NaN (sdpa_half_grads.h; 2 u_P more where the other
 * (b, g) take the bf16 products). On the amx and avx512-bf16 sets this
 * (b, g) takes the float products on its rows widened by the pack phase,
 * the other one the bf16 products on the call's arrays. */
static void nan_value_backward(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    const hcase c = nan_case;
    hproblem pr = nan_problem(ht, ht->dtype == ATTN_BF16 ? 5115 : 5116);
    const size_t group = c.NH / c.NH_kv;
    hgrads ref = half_reference_backward(&pr); /* without the NaN */
    half_poke(&pr, 2, 0, NAN_G, NAN_J, NAN_COL, (double)NAN);
    char what[256];
    snprintf(what, sizeof what, "%s %s \"%s\", backward", attn_simd_name(), ht->name, c.name);
    const attn_sdpa_shape shape = hproblem_shape(&pr);
    attn_plan *plan = NULL;
    attn_status st = attn_sdpa_plan_create(&plan, ht->dtype, &shape, 0.0, c.causal, 0);
    check_true(st == ATTN_OK, "%s: plan: %s", what, attn_status_string(st));
    sdpa_keep_plan(plan);
    float *lse = talloc(c.NH * c.Tq * sizeof(float));
    const sdpa_io io = hproblem_io(&pr, talloc(2 * hproblem_extent(&pr, 3)), lse);
    st = half_forward(ht, plan, &io);
    check_true(st == ATTN_OK, "%s: forward: %s", what, attn_status_string(st));
    void *grad[3];
    for (int a = 0; a < 3; a++)
        grad[a] = talloc(2 * hproblem_extent(&pr, a));
    st = half_backward(ht, plan, &io, pr.dout_h, grad[0], grad[1], grad[2]);
    check_true(st == ATTN_OK, "%s: backward: %s", what, attn_status_string(st));
    sdpa_drop_plan(plan);
    double *dense[3];
    for (int a = 0; a < 3; a++)
        dense[a] = half_gather(&pr, a, grad[a]);
    const char *set = attn_simd_name();
    if (ht->dtype == ATTN_BF16 && (strcmp(set, "amx") == 0 || strcmp(set, "avx512-bf16") == 0)) {
        ref.eps_q += 2.0 * ht->u_P;
        ref.eps_kv += 2.0 * ht->u_P;
    }
    size_t wrong = 0;
    for (int a = 0; a < 3; a++) {
        const size_t heads = a == 0 ? c.NH : c.NH_kv, rows = a == 0 ? c.Tq : c.Tk;
        const double *want = a == 0 ? ref.dQ : a == 1 ? ref.dK : ref.dV;
        for (size_t h = 0; h < heads; h++)
            for (size_t t = 0; t < rows; t++) {
                const int reached =
                    a == 0 ? h / group == NAN_G && t >= NAN_J : a == 1 && h == NAN_G;
                const size_t at = half_dense_index(&pr, a, 0, h, t);
                for (size_t i = 0; i < c.hs; i++) {
                    wrong += (isnan(dense[a][at + i]) != 0) != reached;
                    if (reached) /* checked: the reference's value in its place */
                        dense[a][at + i] = want[at + i];
                }
            }
    }
    expect_true(wrong == 0, "%s: %zu gradients NaN where they should not be, or not NaN", what,
                wrong);
    check_worst worst;
    memset(&worst, 0, sizeof worst);
    half_check_backward(&pr, &ref, dense[0], dense[1], dense[2], &worst, what);
    print_message("  %s: other gradients' largest error/tolerance %.3f\n", what,
                  worst.residual);
    test_leave("a NaN value, backward");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {HALF_CASES(inf_rows), HALF_CASES(nan_value),
                                       HALF_CASES(nan_value_backward)};
    return cmocka_run_group_tests_name("sdpa_half_inf", tests, NULL, NULL);
}
