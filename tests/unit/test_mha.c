/*
 * test_mha: the multi-head forward, through the one-shots
 * attn_mha_forward_* and through plans, in both precisions, against the
 * double reference ref_mha (itself checked against single heads in
 * test_reference):
 *   - one-shots (hs = C/NH) over many shapes: NH = 1..4 and 8, B > 1,
 *     T = 1, C not a multiple of 8, causal and not, Wo and NULL;
 *   - plans with NH*hs != C, custom scales (and scale <= 0 for the
 *     default), weights (B,NH,T,T) requested or NULL, on training plans and
 *     on inference plans of each path (default, ATTN_MATERIALIZED,
 *     ATTN_TILED), including T >= ATTN_TILED_MIN_T on a small C and hs;
 *   - NH = 1 without Wo equals attn_self_attention bit for bit (memcmp);
 *   - plan results equal one-shot results bit for bit, forward and backward;
 *   - the path flags: the default path is the materialized one below
 *     ATTN_TILED_MIN_T and the tiled one from there on (bitwise equal to the
 *     forced path), and without ATTN_INFERENCE the path flags change nothing.
 *
 * Bitwise claims and why they hold: attn.h documents attn_self_attention as
 * a plan with NH = 1 and ATTN_INFERENCE, and the multi-head one-shots as
 * attn_plan_create + attn_forward/attn_backward + attn_plan_destroy; equal
 * shapes, scale and path then mean the same sequence of GEMM and softmax
 * kernel calls on the same operands, and BLAS is deterministic for a fixed
 * thread count (test_threads), so any difference in a single bit is a
 * different computation. A training forward stores the weights in its own
 * buffer where an inference forward uses a scores buffer, but the arithmetic
 * is the same, so those agree bitwise too (below ATTN_TILED_MIN_T).
 *
 * Residuals (mha.h): out max|out - ref| / (max|V| * max_c sum_k |Wo[k][c]|)
 * (without Wo: / max|V|); weights per row (check.h). Tolerances 1e-5 (f32),
 * 1e-12 (f64), justified in precision.h: the output projection adds one
 * GEMM of length D <= 48 here, whose rounding (~sqrt(D) u relative to
 * sum_k |Y_k Wo_kc|) is within the same budget.
 * Inputs: X ~ N(0,1), W ~ N(0, 1.5^2/C) (scores of a few units), Wo ~
 * N(0, 1/D), all rounded to the element type before the reference sees them.
 */
#include <string.h>

#include "reference/mha.h"
#include "support/test_common.h"

#define N_OF(array) (sizeof(array) / sizeof((array)[0]))

/* ---- against the reference ------------------------------------------------ */

static void check_one_shot(const test_prec *p, const mha_data *d, const mha_typed *t,
                           void *context)
{
    (void)context;
    mha_check_forward(p, d, mha_one_shot_forward(p, &d->s, t), NULL, "one-shot");
}

static void one_shot_shapes(void **state)
{
    const test_prec *p = TEST_PREC(state);
    /* hs = C/NH, default scale */
    const mha_dims dims[] = {
        {1, 1, 1, 1, 1, 0},    {1, 1, 8, 4, 2, 0},     {2, 1, 6, 3, 2, 0},
        {1, 6, 64, 4, 16, 0},  {3, 7, 12, 2, 6, 0},    {2, 17, 33, 3, 11, 0},
        {1, 31, 24, 1, 24, 0}, {4, 9, 20, 4, 5, 0},    {2, 40, 48, 2, 24, 0},
        {1, 70, 36, 4, 9, 0},  {1, 5, 16, 8, 2, 0},    {5, 3, 4, 4, 1, 0},
    };
    mha_each_case(p, 301, dims, N_OF(dims), MHA_WO_BOTH, check_one_shot, NULL);
    check_worst_report(p->name);
}

/* every plan kind, weights requested and not */
static void check_plans(const test_prec *p, const mha_data *d, const mha_typed *t,
                        void *context)
{
    (void)context;
    const unsigned kinds[] = {0u, ATTN_INFERENCE, ATTN_INFERENCE | ATTN_MATERIALIZED,
                              ATTN_INFERENCE | ATTN_TILED};
    for (size_t k = 0; k < N_OF(kinds); k++) {
        attn_plan *plan = mha_plan(p, &d->s, kinds[k]);
        void *w;
        void *out = mha_plan_forward(p, plan, &d->s, t, &w);
        mha_check_forward(p, d, out, w, "plan, weights requested");
        out = mha_plan_forward(p, plan, &d->s, t, NULL);
        mha_check_forward(p, d, out, NULL, "plan, weights NULL");
    }
}

/* Plans: NH*hs != C, custom scales (scale <= 0: the default). */
static void plan_shapes(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const mha_dims dims[] = {
        {2, 5, 7, 3, 2, 0.0},   {1, 9, 4, 2, 5, 0.3},   {3, 6, 10, 4, 3, -1.0},
        {1, 1, 3, 2, 4, 1.7},   {2, 33, 16, 1, 24, 0.0}, {1, 20, 8, 4, 1, 0.9},
        {2, 12, 5, 3, 7, 0.05}, {1, 16, 6, 2, 3, 0.0},
    };
    mha_each_case(p, 302, dims, N_OF(dims), MHA_WO_BOTH, check_plans, NULL);
    check_worst_report(p->name);
}

/* ---- the paths of inference plans ------------------------------------------ */

static void *forward_on_new_plan(const test_prec *p, const mha_data *d, const mha_typed *t,
                                 unsigned flags)
{
    return mha_plan_forward(p, mha_plan(p, &d->s, flags), &d->s, t, NULL);
}

/* T = 600: the tiled path, forced, over several query blocks (128) and
 * key blocks (512) */
static void check_tiled(const test_prec *p, const mha_data *d, const mha_typed *t,
                        void *context)
{
    (void)context;
    mha_check_forward(p, d, forward_on_new_plan(p, d, t, ATTN_INFERENCE | ATTN_TILED), NULL,
                      "T 600, ATTN_TILED");
}

/* T >= ATTN_TILED_MIN_T: the default is the tiled path (to the bit), and
 * right, as is the materialized one, forced (two of the four cases: the
 * reference at this length is the suite's most expensive part) */
static void check_long(const test_prec *p, const mha_data *d, const mha_typed *t,
                       void *context)
{
    (void)context;
    if (d->s.causal != d->s.with_Wo)
        return;
    const mha_forward_ref ref = mha_reference_forward(d);
    void *by_default = forward_on_new_plan(p, d, t, ATTN_INFERENCE);
    mha_check_forward_with(p, d, &ref, by_default, NULL, "long, default path");
    void *tiled = forward_on_new_plan(p, d, t, ATTN_INFERENCE | ATTN_TILED);
    check_true(memcmp(by_default, tiled, mha_out_elems(&d->s) * p->size) == 0,
               "T %zu causal %d: the default path is not the tiled one", d->s.T, d->s.causal);
    mha_check_forward_with(p, d, &ref,
                           forward_on_new_plan(p, d, t, ATTN_INFERENCE | ATTN_MATERIALIZED), NULL,
                           "long, ATTN_MATERIALIZED");
}

/* Below ATTN_TILED_MIN_T the default is the materialized path; without
 * ATTN_INFERENCE the path flags change nothing. Bitwise. */
static void check_short(const test_prec *p, const mha_data *d, const mha_typed *t,
                        void *context)
{
    (void)context;
    const size_t bytes = mha_out_elems(&d->s) * p->size;
    void *by_default = forward_on_new_plan(p, d, t, ATTN_INFERENCE);
    void *materialized = forward_on_new_plan(p, d, t, ATTN_INFERENCE | ATTN_MATERIALIZED);
    check_true(memcmp(by_default, materialized, bytes) == 0,
               "causal %d: the default path at T %zu is not the materialized one", d->s.causal,
               d->s.T);
    attn_plan *training = mha_plan(p, &d->s, 0u);
    void *plain = mha_plan_forward(p, training, &d->s, t, NULL);
    mha_grads g_plain = mha_plan_backward(p, training, &d->s, t);
    const unsigned forced[] = {ATTN_TILED, ATTN_MATERIALIZED};
    for (size_t i = 0; i < N_OF(forced); i++) {
        attn_plan *flagged = mha_plan(p, &d->s, forced[i]);
        void *out = mha_plan_forward(p, flagged, &d->s, t, NULL);
        mha_grads g = mha_plan_backward(p, flagged, &d->s, t);
        check_true(memcmp(out, plain, bytes) == 0 && mha_grads_identical(p, &d->s, &g, &g_plain),
                   "causal %d: flag %#x changed a training plan", d->s.causal, forced[i]);
    }
}

static void inference_paths(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const mha_dims medium = {2, 600, 6, 2, 3, 0.0};
    mha_each_case(p, 303, &medium, 1, MHA_WO_BOTH, check_tiled, NULL);
    /* T = ATTN_TILED_MIN_T + 37 (no multiple of a block), C 4, NH 2, hs 2 */
    const mha_dims longer = {1, ATTN_TILED_MIN_T + 37, 4, 2, 2, 0.0};
    mha_each_case(p, 304, &longer, 1, MHA_WO_BOTH, check_long, NULL);
    const mha_dims shorter = {2, 150, 6, 3, 2, 0.0};
    mha_each_case(p, 305, &shorter, 1, MHA_WO_SET, check_short, NULL);
    check_worst_report(p->name);
}

/* ---- bitwise identities ------------------------------------------------------ */

/* NH = 1 without Wo is the single projected head of attn_self_attention. */
static void check_single_head(const test_prec *p, const mha_data *d, const mha_typed *t,
                              void *context)
{
    (void)context;
    const mha_shape *s = &d->s;
    const size_t bytes = mha_out_elems(s) * p->size, w_bytes = mha_weights_elems(s) * p->size;
    const int is_long = s->T >= ATTN_TILED_MIN_T;
    void *head = talloc(bytes);
    assert_int_equal(p->self_attention(s->B, s->T, s->C, s->hs, s->causal, t->X, t->Wq, t->Wk,
                                       t->Wv, head, NULL),
                     ATTN_OK);
    if (s->hs == s->C)
        check_true(memcmp(mha_one_shot_forward(p, s, t), head, bytes) == 0,
                   "NH 1 one-shot differs from self_attention (T %zu causal %d)", s->T,
                   s->causal);
    check_true(memcmp(forward_on_new_plan(p, d, t, ATTN_INFERENCE), head, bytes) == 0,
               "NH 1 inference plan differs from self_attention (C %zu hs %zu T %zu)", s->C,
               s->hs, s->T);
    if (is_long)
        return; /* no (B,T,T) weights at this length */
    /* weights requested (materialized as well) */
    void *head2 = talloc(bytes), *head_w = talloc(w_bytes), *w;
    assert_int_equal(p->self_attention(s->B, s->T, s->C, s->hs, s->causal, t->X, t->Wq, t->Wk,
                                       t->Wv, head2, head_w),
                     ATTN_OK);
    check_true(memcmp(head2, head, bytes) == 0,
               "NH 1 with weights differs from self_attention (T %zu causal %d)", s->T,
               s->causal);
    /* a training plan takes the tiled path (keeping each row's log-sum-exp)
     * and recomputes the weights from it: its heads are the tiled inference
     * plan's to the bit; heads and weights are checked against the reference */
    void *trained = mha_plan_forward(p, mha_plan(p, s, 0u), s, t, &w);
    check_true(memcmp(trained, forward_on_new_plan(p, d, t, ATTN_INFERENCE | ATTN_TILED),
                      bytes) == 0,
               "NH 1 training plan differs from the tiled inference plan (T %zu causal %d)",
               s->T, s->causal);
    mha_check_forward(p, d, head2, head_w, "NH 1 self_attention");
    mha_check_forward(p, d, trained, w, "NH 1");
}

static void single_head_is_self_attention(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const mha_dims dims[] = {
        {1, 1, 3, 1, 3, 0},   {3, 7, 5, 1, 5, 0},  {2, 19, 12, 1, 4, 0},
        {1, 40, 9, 1, 17, 0}, {2, ATTN_TILED_MIN_T + 5, 2, 1, 2, 0},
    };
    mha_each_case(p, 306, dims, N_OF(dims), MHA_WO_NONE, check_single_head, NULL);
    check_worst_report(p->name);
}

/* The one-shots are plans: forward and backward agree to the bit. (An
 * inference plan's tiled forward is not the training forward's bits: on
 * own threads its heads are the sdpa engine's, forward.h; each is checked
 * against the reference.) */
static void check_plan_is_one_shot(const test_prec *p, const mha_data *d, const mha_typed *t,
                                   void *context)
{
    (void)context;
    const mha_shape *s = &d->s;
    const size_t bytes = mha_out_elems(s) * p->size;
    void *one_shot = mha_one_shot_forward(p, s, t);
    void *inference = forward_on_new_plan(p, d, t, ATTN_INFERENCE);
    attn_plan *training = mha_plan(p, s, 0u);
    void *trained = mha_plan_forward(p, training, s, t, NULL);
    void *tiled = forward_on_new_plan(p, d, t, ATTN_INFERENCE | ATTN_TILED);
    check_true(memcmp(one_shot, inference, bytes) == 0,
               "forward: plan and one-shot differ (T %zu causal %d Wo %d)", s->T, s->causal,
               s->with_Wo);
    mha_check_forward(p, d, trained, NULL, "training plan");
    mha_check_forward(p, d, tiled, NULL, "tiled inference plan");
    mha_grads g_plan = mha_plan_backward(p, training, s, t);
    mha_grads g_one = mha_one_shot_backward(p, s, t);
    check_true(mha_grads_identical(p, s, &g_plan, &g_one),
               "backward: plan and one-shot differ (T %zu causal %d Wo %d)", s->T, s->causal,
               s->with_Wo);
    mha_check_forward(p, d, one_shot, NULL, "plan = one-shot");
}

static void plan_equals_one_shot(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const mha_dims dims[] = {
        {1, 1, 4, 2, 2, 0},    {2, 6, 8, 4, 2, 0},     {3, 9, 12, 3, 4, 0},
        {1, 33, 20, 1, 20, 0}, {2, 130, 16, 2, 8, 0},
    };
    mha_each_case(p, 307, dims, N_OF(dims), MHA_WO_BOTH, check_plan_is_one_shot, NULL);
    check_worst_report(p->name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MHA_PREC_CASES(one_shot_shapes),
        MHA_PREC_CASES(plan_shapes),
        MHA_PREC_CASES(inference_paths),
        MHA_PREC_CASES(single_head_is_self_attention),
        MHA_PREC_CASES(plan_equals_one_shot),
    };
    return cmocka_run_group_tests_name("multi-head forward", tests, NULL, NULL);
}
