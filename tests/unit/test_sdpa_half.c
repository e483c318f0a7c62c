/*
 * test_sdpa_half: attention on given Q, K, V stored in bfloat16 and float16
 * (attn.h, "half precision (sdpa)"): attn_sdpa_forward_bf16/_f16,
 * attn_sdpa_backward_bf16/_f16 and the one-shots attn_sdpa_bf16/_f16, on
 * each kernel set, against the naive float64 reference of
 * sdpa_reference.c run on the half inputs widened exactly (by the
 * reference decoders of support/sdpa_half.c, not the library's).
 *
 * Inputs: Q, K ~ N(0, gain^2), V, dout ~ N(0, 1), each drawn in double and
 * rounded to the type; the mask float, N(0, 1) with -inf entries (15%);
 * keys j >= L_b NaN in K and V (never read); every element a layout does
 * not address NaN.
 *
 * Each case, in each type, runs a training plan on the default engine
 * (ATTN_THREADS_AUTO) and on BLAS threads (attn_plan_set_threads 0): the
 * forward (out, lse) and, where marked, the backward; then an
 * ATTN_INFERENCE plan and the one-shot, whose out and lse must be the
 * plan's bit for bit (attn.h: a one-shot is that plan created, executed
 * and destroyed). Every output buffer starts as a sentinel pattern: the
 * elements its layout does not address keep it, and the inputs keep
 * their bytes.
 *
 * Forward tolerance: attn.h's bound itself, evaluated per element as the
 * header states it (support/sdpa_half.c, half_check_forward): with n the
 * row's visible keys, d = hs, u = 2^-8 (bf16) or 2^-11 (f16),
 *   g = 2^-24 (n + d + 16) + 2^-23 d scale max_j sum_i |Q_i K_ji|,
 *   |out - x| <= u |x| + (u_P + 4 g) max_j |V_jc| + eta  (u_P = u bf16, 0 f16;
 *   eta half the smallest subnormal: 2^-134, 2^-25),
 *   |lse - l| <= 4 g + 2^-23 |l|,
 * x and l the float64 reference (its own error, ~1e-16 relative, is far
 * below 4g >= 2^-18 max|V|). max_j |V_jc| is the largest |V_jc| in
 * the output element's column c over the visible keys (out_c is a convex
 * combination of that column); eta covers results below the type's
 * normal range (an f16 average of 2^-24 and 0 is 2^-25, a tie that rounds
 * to 0). The bound is the tolerance, nothing added
 * and nothing taken: the header promises it for every element. It is not
 * a trivial one: each check also asserts that the bound stays below 1/16
 * of max|V| (a wrong key, mask, scale or index moves outputs by more) and
 * each test that some elements have a nonzero error (the outputs really
 * are rounded once to the type: a comparison of the library with itself
 * could not pass that). Rows without weight (no visible key, every
 * visible score -inf) must be out 0 exactly and lse -inf; a NaN row all
 * NaN.
 *
 * Backward (attn_half.h: "computes in float from the half inputs and dout:
 * out recomputed in float (a->out is checked, not read), so the row sums
 * <dout, out> carry no rounding of out; each gradient rounded once", except
 * where the products are made in bf16, below): the
 * reference (half_reference_backward) recomputes P and out in float64 from
 * the half inputs, D_t = <dout_t, out_t>, dS = P (dout V^T - D), and the
 * gradients are checked per element, with A the sum of the absolute values
 * of its terms, out expanded (|dV| <= sum_t P |dout|, |dQ| <= scale sum_j
 * P (|dP| + |D|) |K| with |dP| <= sum_c |dout_c V_jc|, |D| <= sum_c
 * |dout_c| sum_j P_j |V_jc|; |dK| likewise with |Q|: the scale the float
 * errors live on, however much the sums cancel), against
 *   |grad - ref| <= u |ref| + eta + eps A,
 *   eps = 2 (6 g_max + 2^-23 max|lse| + 2^-24 (N + Tk + hs + hs_v + 16)),
 * u |ref| + eta: the one rounding of each gradient to the type, eta half
 * the smallest subnormal (2^-25 for f16, 2^-134 for bf16: small gradients
 * of f16 round on the subnormals' absolute grid; only where A > 0); eps A: the
 * relative error of the recomputed weights (the score's g, the lse's
 * 4g + 2^-23|lse|, the exp's few float ulps, within g's 16 2^-24) and
 * 2^-24 per term of the float sums (N = Tk for dQ, Tq * NH/NH_kv for dK
 * and dV; Tk + hs_v for out and D, hs for the scores, hs_v for dP),
 * doubled for the second-order terms and the
 * blocked summation order. eps is ~1e-4 to 1e-3 here, well below u for
 * bf16: a backward that rounded an intermediate (P, dS, dP) to the type,
 * or took D from the out rounded to the type, fails. Except where attn.h
 * says the products are made in bf16 (bf16_products below: P and dS
 * rounded, and D_t from the caller's rounded out, as PyTorch's flash
 * backward does): there eps gains 2 u_P (|dS| <= P (|dP| + |D|) rounded,
 * and D off by u sum_c |dout_c out_c| <= u |D|'s magnitude: A counts |D|
 * once, the two errors twice; with u_P alone the suite's worst ratio was
 * 0.79 on the avx512-bf16 set). Rows of dK, dV for keys j >= L_b and dQ rows
 * without weight have A = 0: exactly 0. And on the float products out is
 * not read: the backward given an out of NaN gives the same bytes.
 *
 * Cases: MHA, GQA 8/2, MQA; causal with Tq = Tk, Tq < Tk (bottom-right)
 * and Tq > Tk; masks (B,NH,Tq,Tk) and broadcast (key padding, shared by
 * heads, by the batch, one row); key lengths (one 0); sliding windows;
 * hs_v != hs; PyTorch's (B,NH,T,hs) layout and padded rows; peaked scores;
 * decode steps (Tq 1, Tk 3000, B 1 or 2 with few (b, g) pairs, so the
 * forward splits the keys and the backward groups key blocks; also read in
 * place from a (B,NH,S_max,hs) cache, NaN in its unused slots); a prefill
 * of 300 (beyond one tile; 160 in sanitizer and unoptimized builds, under
 * valgrind or ATTN_SDPA_SHORT=1, where each type takes every other one of
 * the decode and prefill cases); fully masked rows; NaN confinement (a NaN in
 * one query's Q makes only that row NaN, also in the decode split; NaN in
 * the K and V slots beyond the key lengths never reaches any output,
 * forward or backward).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/sdpa_half.h"
#include "support/sdpa_half_grads.h"
#include "support/test_common.h"

#define C ATTN_CAUSAL

typedef struct worsts {
    check_worst out, grads;
    size_t nonzero;
} worsts;

static attn_plan *plan_for(const hproblem *pr, unsigned flags, unsigned threads,
                           const char *what)
{
    const attn_sdpa_shape shape = hproblem_shape(pr);
    attn_plan *plan = NULL;
    attn_status st = attn_sdpa_plan_create(&plan, pr->ht->dtype, &shape, 0.0, flags,
                                           pr->c.window);
    check_true(st == ATTN_OK, "%s: attn_sdpa_plan_create: %s", what, attn_status_string(st));
    sdpa_keep_plan(plan);
    if (threads != ATTN_THREADS_AUTO) {
        st = attn_plan_set_threads(plan, threads);
        check_true(st == ATTN_OK, "%s: attn_plan_set_threads: %s", what, attn_status_string(st));
    }
    return plan;
}

/* one forward's outputs: out's buffer and lse as written, out dense */
typedef struct fwd {
    void *out;
    float *lse;
    double *dense;
} fwd;

/* the forward on plan, or (plan NULL) the one-shot */
static fwd forward_run(const hproblem *pr, attn_plan *plan, const char *what)
{
    const size_t no = hproblem_extent(pr, 3), nl = pr->c.B * pr->c.NH * pr->c.Tq;
    void *before;
    fwd f = {half_sentinel_buffer(no, &before), talloc(nl * sizeof(float)), NULL};
    sentinel_fill(f.lse, nl * sizeof(float));
    const sdpa_io io = hproblem_io(pr, f.out, f.lse);
    const attn_sdpa_shape shape = hproblem_shape(pr);
    const attn_status st = plan != NULL ? half_forward(pr->ht, plan, &io)
                                        : half_one_shot(pr->ht, &shape, 0.0, pr->c.causal,
                                                        pr->c.window, &io);
    expect_true(st == ATTN_OK, "%s: forward: %s", what, attn_status_string(st));
    if (st != ATTN_OK)
        return f;
    expect_true(half_unaddressed_intact(pr, 3, f.out, before, no),
                "%s: the forward wrote outside out's elements", what);
    f.dense = half_gather(pr, 3, f.out);
    return f;
}

/* Whether a bf16 training plan on attn's own threads multiplies in bf16
 * (attn_half.h: the amx and avx512-bf16 sets, 128 queries or more, hs and
 * hs_v multiples of 32, at most 256): its backward rounds P and dS to bf16
 * before their products and takes D from the rounded out, which adds up to
 * 2 u_P A to each gradient's error. */
static int bf16_products(const hproblem *pr, int own_threads)
{
    const char *set = attn_simd_name();
    return pr->ht->dtype == ATTN_BF16 && own_threads &&
           (strcmp(set, "amx") == 0 || strcmp(set, "avx512-bf16") == 0) &&
           pr->c.Tq >= 128 && pr->c.hs % 32 == 0 && pr->hs_v % 32 == 0 && pr->c.hs <= 256 &&
           pr->hs_v <= 256;
}

static void backward_run(const hproblem *pr, attn_plan *plan, const fwd *f, worsts *w,
                         int own_threads, const char *what)
{
    void *g[3], *g0[3];
    size_t n[3];
    for (int a = 0; a < 3; a++) {
        n[a] = hproblem_extent(pr, a);
        g[a] = half_sentinel_buffer(n[a], &g0[a]);
    }
    const sdpa_io io = hproblem_io(pr, f->out, f->lse);
    const attn_status st = half_backward(pr->ht, plan, &io, pr->dout_h, g[0], g[1], g[2]);
    expect_true(st == ATTN_OK, "%s: backward: %s", what, attn_status_string(st));
    if (st != ATTN_OK)
        return;
    for (int a = 0; a < 3; a++)
        expect_true(half_unaddressed_intact(pr, a, g[a], g0[a], n[a]),
                    "%s: the backward wrote outside %s's elements", what, a == 0   ? "dQ"
                                                                         : a == 1 ? "dK"
                                                                                  : "dV");
    hgrads ref = half_reference_backward(pr);
    const int products = bf16_products(pr, own_threads);
    if (products) { /* P and dS rounded, D from the rounded out: 2 u_P A */
        ref.eps_q += 2.0 * pr->ht->u_P;
        ref.eps_kv += 2.0 * pr->ht->u_P;
    }
    half_check_backward(pr, &ref, half_gather(pr, 0, g[0]), half_gather(pr, 1, g[1]),
                        half_gather(pr, 2, g[2]), &w->grads, what);
    if (products) /* out is read (attn_half.h) */
        return;
    /* elsewhere out is checked, not read: an out of NaN gives the same bytes */
    const size_t no = hproblem_extent(pr, 3);
    void *nan_out = talloc(2 * no), *again[3];
    for (size_t i = 0; i < no; i++)
        half_set_bits(nan_out, i, (uint16_t)(pr->ht->inf | pr->ht->quiet));
    const sdpa_io io_nan = hproblem_io(pr, nan_out, f->lse);
    for (int a = 0; a < 3; a++)
        again[a] = half_sentinel_buffer(n[a], &g0[a]);
    const attn_status st2 =
        half_backward(pr->ht, plan, &io_nan, pr->dout_h, again[0], again[1], again[2]);
    int same = st2 == ATTN_OK;
    for (int a = 0; a < 3; a++)
        same &= memcmp(g[a], again[a], 2 * n[a]) == 0;
    expect_true(same, "%s: the backward given an out of NaN: %s, %s", what,
                attn_status_string(st2), same ? "same bytes" : "other gradients");
}

/* copies of the input buffers, to compare after the calls */
typedef struct inputs {
    void *b[4];
    size_t bytes[4];
    float *mask;
} inputs;

static inputs inputs_keep(const hproblem *pr)
{
    inputs in;
    const void *src[4] = {pr->q, pr->k, pr->v, pr->dout_h};
    for (int a = 0; a < 4; a++) {
        in.bytes[a] = 2 * hproblem_extent(pr, a);
        in.b[a] = talloc(in.bytes[a]);
        memcpy(in.b[a], src[a], in.bytes[a]);
    }
    in.mask = talloc(pr->n_mask * sizeof(float) + 1);
    if (pr->n_mask > 0)
        memcpy(in.mask, pr->mask_f, pr->n_mask * sizeof(float));
    return in;
}

static int inputs_same(const hproblem *pr, const inputs *in)
{
    const void *now[4] = {pr->q, pr->k, pr->v, pr->dout_h};
    int same = pr->n_mask == 0 || memcmp(in->mask, pr->mask_f, pr->n_mask * sizeof(float)) == 0;
    for (int a = 0; a < 4; a++)
        same &= memcmp(in->b[a], now[a], in->bytes[a]) == 0;
    return same;
}

/* One problem on the training plans (default engine, BLAS threads), then
 * an inference plan and the one-shot (bit for bit). */
static void run_problem(const hproblem *pr, worsts *w)
{
    const hcase *c = &pr->c;
    const inputs in = inputs_keep(pr);
    static const unsigned engines[2] = {ATTN_THREADS_AUTO, 0};
    static const char *const names[2] = {"default engine", "BLAS threads"};
    char what[512];
    for (int e = 0; e < 2; e++) {
        snprintf(what, sizeof what, "%s %s \"%s\" (B %zu NH %zu/%zu Tq %zu Tk %zu hs %zu/%zu), %s",
                 attn_simd_name(), pr->ht->name, c->name, c->B, c->NH, c->NH_kv, c->Tq, c->Tk,
                 c->hs, pr->hs_v, names[e]);
        attn_plan *plan = plan_for(pr, c->causal, engines[e], what);
        const fwd f = forward_run(pr, plan, what);
        if (f.dense == NULL)
            continue;
        half_check_forward(pr, f.dense, f.lse, &w->out, &w->nonzero, what);
        if (c->backward)
            backward_run(pr, plan, &f, w, engines[e] != 0, what);
        sdpa_drop_plan(plan);
    }
    snprintf(what, sizeof what, "%s %s \"%s\", inference plan and one-shot", attn_simd_name(),
             pr->ht->name, c->name);
    attn_plan *plan = plan_for(pr, c->causal | ATTN_INFERENCE, ATTN_THREADS_AUTO, what);
    const fwd fi = forward_run(pr, plan, what), fo = forward_run(pr, NULL, what);
    if (fi.dense != NULL)
        half_check_forward(pr, fi.dense, fi.lse, &w->out, &w->nonzero, what);
    const size_t nl = c->B * c->NH * c->Tq;
    expect_true(fi.dense != NULL && fo.dense != NULL &&
                    memcmp(fi.out, fo.out, 2 * hproblem_extent(pr, 3)) == 0 &&
                    memcmp(fi.lse, fo.lse, nl * sizeof(float)) == 0,
                "%s: the one-shot's out or lse differ from its plan's", what);
    sdpa_drop_plan(plan);
    expect_true(inputs_same(pr, &in), "%s: a call changed its inputs", what);
}

static void report(const half_type *ht, const worsts *w, const char *what, int need_nonzero)
{
    if (w->out.tol > 0.0)
        print_message("  %s %s %s: out, lse largest error/bound %.3f\n", attn_simd_name(),
                      ht->name, what, w->out.residual);
    if (w->grads.tol > 0.0)
        print_message("  %s %s %s: gradients largest error/tolerance %.3f\n", attn_simd_name(),
                      ht->name, what, w->grads.residual);
    expect_true(!need_nonzero || w->nonzero > 0,
                "%s %s: every output equals the reference exactly: not rounded to the type?",
                ht->name, what);
}

static void run_cases(const half_type *ht, const hcase *cases, size_t n, uint64_t seed,
                      const char *what)
{
    test_enter();
    test_rng rng;
    rng_seed(&rng, seed + (ht->dtype == ATTN_BF16 ? 0 : 1000));
    worsts w;
    memset(&w, 0, sizeof w);
    for (size_t i = 0; i < n; i++) {
        const hproblem pr = hproblem_make(ht, &cases[i], &rng);
        run_problem(&pr, &w);
    }
    report(ht, &w, what, 1);
    test_leave(what);
}

/* ---- the cases ------------------------------------------------------------------------ */

static const size_t len3[3] = {37, 0, 12}, len2[2] = {29, 7}, len_decode[1] = {2345};
static const size_t len_masked[3] = {12, 0, 5}, len_cache[2] = {1000, 7};

/* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, causal, window, lengths, mask, masked_rows, layout,
 * gain, backward */
static const hcase feature_cases[] = {
    {"MHA, causal Tq = Tk", 2, 4, 4, 33, 33, 32, 0, C, 0, NULL, HM_NONE, 0, HL_DENSE, 1, 1},
    {"GQA 8/2, causal bottom-right Tq < Tk", 2, 8, 2, 9, 41, 16, 0, C, 0, NULL, HM_NONE, 0,
     HL_DENSE, 1, 1},
    {"GQA 8/2, full mask with -inf", 2, 8, 2, 13, 27, 16, 0, 0, 0, NULL, HM_FULL, 0, HL_DENSE, 1,
     1},
    {"key-padding mask (ld = sh = 0)", 3, 4, 2, 11, 23, 16, 0, 0, 0, NULL, HM_KEYPAD, 0,
     HL_DENSE, 1, 1},
    {"mask shared by the heads (sh = 0), causal", 2, 4, 4, 17, 17, 16, 0, C, 0, NULL, HM_HEADS,
     0, HL_DENSE, 1, 1},
    {"mask shared by the batch (sb = 0)", 2, 4, 1, 7, 19, 16, 0, 0, 0, NULL, HM_BATCH, 0,
     HL_DENSE, 1, 1},
    {"MQA 6/1, one mask row (every stride 0)", 2, 6, 1, 10, 31, 16, 0, 0, 0, NULL, HM_ROW, 0,
     HL_DENSE, 1, 1},
    {"key lengths 37, 0, 12, causal", 3, 4, 2, 6, 40, 16, 0, C, 0, len3, HM_NONE, 0, HL_DENSE, 1,
     1},
    {"MQA 8/1, key lengths, full mask", 2, 8, 1, 5, 29, 16, 0, 0, 0, len2, HM_FULL, 0, HL_DENSE,
     1, 1},
    {"sliding window 8, causal, GQA 8/2", 2, 8, 2, 30, 30, 16, 0, C, 8, NULL, HM_NONE, 0,
     HL_DENSE, 1, 1},
    {"sliding window 5, not causal, Tq < Tk", 1, 4, 4, 7, 25, 16, 0, 0, 5, NULL, HM_NONE, 0,
     HL_DENSE, 1, 1},
    {"hs_v 24 > hs 16, GQA 8/2, causal", 2, 8, 2, 12, 20, 16, 24, C, 0, NULL, HM_NONE, 0,
     HL_DENSE, 1, 1},
    {"hs_v 8 < hs 64, MHA", 2, 2, 2, 9, 15, 64, 8, 0, 0, NULL, HM_NONE, 0, HL_DENSE, 1, 1},
    {"peaked scores (gain 3), GQA 4/2, causal", 1, 4, 2, 20, 50, 64, 0, C, 0, NULL, HM_NONE, 0,
     HL_DENSE, 3, 1},
};

static const hcase layout_cases[] = {
    {"PyTorch (B,NH,T,hs), GQA 8/2, causal", 2, 8, 2, 19, 19, 32, 0, C, 0, NULL, HM_NONE, 0,
     HL_BHSD, 1, 1},
    {"PyTorch (B,NH,T,hs), Tq < Tk, lengths, mask, hs_v 24", 2, 4, 2, 8, 29, 16, 24, 0, 0, len2,
     HM_FULL, 0, HL_BHSD, 1, 1},
    {"padded rows and sequences, MQA, window 6", 2, 4, 1, 9, 14, 16, 12, C, 6, NULL, HM_KEYPAD,
     0, HL_PADDED, 1, 1},
};

static const hcase long_cases[] = {
    {"decode: Tq 1, Tk 3000, B 1, GQA 8/2 (split keys)", 1, 8, 2, 1, 3000, 64, 0, C, 0, NULL,
     HM_NONE, 0, HL_DENSE, 1, 1},
    {"decode: length 2345 of a 3000 slot (B,NH,T,hs) cache", 1, 8, 2, 1, 3000, 64, 0, C, 0,
     len_decode, HM_NONE, 0, HL_BHSD, 1, 1},
    {"decode: B 2, MQA 4/1, Tk 3000, key-padding mask", 2, 4, 1, 1, 3000, 64, 0, 0, 0, NULL,
     HM_KEYPAD, 0, HL_DENSE, 1, 1},
    {"decode: B 2, GQA 8/2, lengths 1000 and 7 in a (B,NH,S_max,hs) cache of 1130 slots", 2, 8,
     2, 1, 1000, 64, 0, C, 0, len_cache, HM_NONE, 0, HL_CACHE, 1, 1},
    {"decode: B 2, GQA 15/5 in a cache, its 5 key/value heads read apart", 2, 15, 5, 1,
     700, 32, 0, C, 0, NULL, HM_NONE, 0, HL_CACHE, 1, 1},
    {"decode: Tq 4 (speculative), window 64, in a cache", 1, 8, 2, 4, 700, 32, 48, C, 64, NULL,
     HM_NONE, 0, HL_CACHE, 1, 1},
    /* prefills of 128 queries and more on own threads: on the amx and
     * avx512-bf16 sets a bf16 plan multiplies in bf16 (engine/sdpa_bf16.h) */
    {"prefill 200, not causal, key-padding mask, GQA 8/2, hs_v 96", 1, 8, 2, 200, 200, 64, 96,
     0, 0, NULL, HM_KEYPAD, 0, HL_DENSE, 1, 0},
    {"prefill 192, causal window 100, MHA in (B,NH,T,hs)", 1, 2, 2, 192, 192, 32, 0, C, 100,
     NULL, HM_NONE, 0, HL_BHSD, 1, 0},
    {"prefill 300 (beyond a tile), GQA 4/2, causal", 1, 4, 2, 300, 300, 64, 0, C, 0, NULL,
     HM_NONE, 0, HL_DENSE, 1, 1},
    {"prefill 129 (a block of one query), padded rows, GQA 8/2, causal", 2, 8, 2, 129, 129, 32,
     0, C, 0, NULL, HM_NONE, 0, HL_PADDED, 1, 0},
    /* sanitizer and unoptimized builds, valgrind, ATTN_SDPA_SHORT=1 (sdpa_calls.h) */
    {"prefill 160 (beyond a tile), GQA 4/2, causal", 1, 4, 2, 160, 160, 64, 0, C, 0, NULL,
     HM_NONE, 0, HL_DENSE, 1, 1},
};

static const hcase special_cases[] = {
    {"fully masked rows (every 5th), a length 0, causal Tq > L", 3, 4, 2, 8, 12, 16, 0, C, 0,
     len_masked, HM_FULL, 1, HL_DENSE, 1, 1},
    {"causal Tq > Tk (the first rows see no key)", 1, 4, 4, 12, 6, 16, 0, C, 0, NULL, HM_NONE, 0,
     HL_DENSE, 1, 1},
};

static void features(void **state)
{
    run_cases(HALF_TYPE(state), feature_cases, N_OF(feature_cases), 5101, "features");
}

static void layouts(void **state)
{
    run_cases(HALF_TYPE(state), layout_cases, N_OF(layout_cases), 5102, "layouts");
}

static void long_rows(void **state)
{
    int slow = sdpa_short_run();
#ifdef SDPA_SLOW_BUILD
    slow = 1;
#endif
    /* every case but one of the two prefills; in a short run (valgrind)
     * bf16 takes the even cases and f16 the odd ones: the same kernels in
     * half the time (both types share every path past the conversions) */
    const half_type *ht = HALF_TYPE(state);
    const size_t parity = ht->dtype == ATTN_BF16 ? 0 : 1;
    hcase cases[N_OF(long_cases) - 1];
    size_t n = 0;
    for (size_t i = 0; i < N_OF(long_cases); i++)
        if (i + 2 < N_OF(long_cases) || (i + 1 == N_OF(long_cases)) == slow)
            if (!sdpa_short_run() || i % 2 == parity)
                cases[n++] = long_cases[i];
    run_cases(ht, cases, n, 5103, "decode and prefill");
}

static void special_rows(void **state)
{
    run_cases(HALF_TYPE(state), special_cases, N_OF(special_cases), 5104, "special rows");
}

/* ---- NaN confinement ---------------------------------------------------------------------- */

static const size_t len_nan[2] = {24, 10}, len_nan_decode[1] = {2000};
static const size_t len_nan_prefill[2] = {150, 97};
static const hcase nan_cases[] = {
    {"GQA 8/2, causal, lengths 24 and 10 of 24", 2, 8, 2, 6, 24, 16, 0, C, 0, len_nan, HM_NONE,
     0, HL_DENSE, 1, 1},
    /* bf16 products (amx, avx512-bf16): NaN keys past each length never
     * multiplied, not even by the zeros that pad P to whole tiles */
    {"prefill 160, GQA 8/2, causal, lengths 150 and 97 of 160", 2, 8, 2, 160, 160, 32, 0, C, 0,
     len_nan_prefill, HM_NONE, 0, HL_DENSE, 1, 1},
    {"decode split, GQA 8/2, length 2000 of 3000", 1, 8, 2, 1, 3000, 64, 0, C, 0,
     len_nan_decode, HM_NONE, 0, HL_BHSD, 1, 1},
};

/* rows of the reference whose lse is NaN */
static size_t nan_rows(const hproblem *pr)
{
    size_t n = 0;
    for (size_t i = 0; i < pr->c.B * pr->c.NH * pr->c.Tq; i++)
        n += isnan(pr->lse[i]) != 0;
    return n;
}

static void nan_confinement(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    test_rng rng;
    rng_seed(&rng, ht->dtype == ATTN_BF16 ? 5105 : 5106);
    worsts w;
    memset(&w, 0, sizeof w);
    for (size_t i = 0; i < N_OF(nan_cases); i++) {
        /* NaN in every K and V slot beyond the key lengths (hproblem_make):
         * never read, forward and backward (run_problem) */
        hproblem pr = hproblem_make(ht, &nan_cases[i], &rng);
        expect_true(nan_rows(&pr) == 0, "%s: the unread NaN reached the reference", ht->name);
        run_problem(&pr, &w);
        /* then a NaN in one element of one query's Q: that row NaN, every
         * other one (the other heads of its group and split) within the bound */
        const size_t b = pr.c.B - 1, h = 3, t = pr.c.Tq - 1;
        half_poke(&pr, 0, b, h, t, 5, (double)NAN);
        hproblem_refresh(&pr);
        expect_true(nan_rows(&pr) == 1, "%s: the reference has %zu NaN rows, not 1", ht->name,
                    nan_rows(&pr));
        char what[256];
        snprintf(what, sizeof what, "%s %s \"%s\", NaN in Q (b %zu, h %zu, t %zu)",
                 attn_simd_name(), ht->name, pr.c.name, b, h, t);
        attn_plan *plan = plan_for(&pr, pr.c.causal, ATTN_THREADS_AUTO, what);
        const fwd f = forward_run(&pr, plan, what);
        if (f.dense != NULL)
            half_check_forward(&pr, f.dense, f.lse, &w.out, &w.nonzero, what);
        sdpa_drop_plan(plan);
    }
    report(ht, &w, "NaN confinement", 1);
    test_leave("NaN confinement");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        HALF_CASES(features),     HALF_CASES(layouts),         HALF_CASES(long_rows),
        HALF_CASES(special_rows), HALF_CASES(nan_confinement),
    };
    return cmocka_run_group_tests_name("sdpa_half", tests, NULL, NULL);
}
