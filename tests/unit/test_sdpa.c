/*
 * test_sdpa: attention on given Q, K, V (attn.h, "attention on given Q, K, V
 * (sdpa)"): attn_sdpa_plan_create, attn_sdpa_forward_* and
 * attn_sdpa_backward_*, in both precisions, against the naive double
 * reference of sdpa_reference.c, on every engine (support/sdpa_engine_runs.h:
 * run_case).
 * The sdpa suites: test_sdpa (the cases on every engine, the decode split),
 * test_sdpa_gradients (finite differences), test_sdpa_extremes (NaN, +inf
 * and huge scores), test_sdpa_call_errors and test_sdpa_create_errors
 * (every status), test_sdpa_one_shots (one-shots and defaults, bit for
 * bit); test_sdpa_layouts and test_sdpa_strides (batch and head strides).
 *
 * 1. engines: each case below, forward (out and lse) and, where marked,
 *    backward (dQ, dK, dV), on a training plan run on BLAS threads
 *    (attn_plan_set_threads 0), 1 and 2 own threads, and its forward again
 *    on an ATTN_INFERENCE plan (2 own threads); 1 and 2 own threads give the
 *    same bytes (attn.h: own-thread results do not depend on the count).
 *    Cases: plain MHA (NH_kv = NH), GQA (8/2), MQA (NH_kv = 1); causal with
 *    Tq = Tk, Tq < Tk (bottom-right alignment), Tq = 1 decode steps (GQA
 *    ones with head sizes 20 and 13: the few-row kernels' partial vectors
 *    and key tails), Tq > Tk
 *    (leading queries see no key); sliding windows with and without causal
 *    (window 1: the diagonal alone); key_lengths per sequence, one of them
 *    0, some below Tq, the unfilled cache slots (keys j >= L_b) holding NaN
 *    in K and V; additive masks: full (B,NH,Tq,Tk) with a padded row stride
 *    (NaN in the padding), key padding (mask_ld = mask_sh = 0), shared over
 *    heads (mask_sh = 0), over the batch (mask_sb = 0), one row for all
 *    (every stride 0), each with -INFINITY entries and fully masked rows
 *    (out 0 and lse -inf exactly, their dQ rows exactly 0); hs_v != hs;
 *    strided Q, K, V, out and dout (row strides beyond the row, NaN in the
 *    gaps of the inputs, the gaps of out, dQ, dK, dV checked byte for byte
 *    untouched); Q, K, V read in place from one fused (B,T,NH*hs +
 *    NH_kv*(hs + hs_v)) buffer; shapes beyond one tile (lib/engine/tiling.h: blocks of 128
 *    queries, 512 keys; Tq, Tk up to 700/1100, none a multiple of a block,
 *    hs 40, 64, 72; up to 300/600 in unoptimized and sanitizer builds and
 *    under valgrind); the default scale (0 and -1) and given ones.
 *    Every output buffer starts as a sentinel pattern, so an element left
 *    unwritten (or accumulated into) fails; the rows of dK and dV of keys
 *    j >= L_b must be exactly 0.
 * 2. decode split (flash-decoding): few (sequence, kv head) pairs and few
 *    queries, B = 1, NH = 4, NH_kv = 1, Tq = 1, Tk = 5000 (and with a length
 *    of 3333, and Tq = 4 causal at Tk = 3000; GQA 6/3 with hs 20, hs_v 13,
 *    every key/value head in one item): against the reference, and
 *    against the same sequence replicated into a B = 8 call (8 pairs: not
 *    split); backward of the split shapes too.
 *
 * Under valgrind (~50x slower), or with ATTN_SDPA_SHORT=1 in the
 * environment (other slow hosts: CI's AArch64 build under qemu-aarch64),
 * each case runs on BLAS threads and 2 own threads, in one precision
 * (alternating from case to case), without the extra inference-plan
 * forward, with the smaller large shapes and decode splits of Tk <= 2000;
 * unoptimized and sanitizer builds run everything but the large shapes at
 * full size.
 *
 * Residuals and tolerances: support/sdpa_calls.h; the decode split against
 * the unsplit B = 8 call: the forward tolerance.
 *     Both are within it of the reference and observed an order below it;
 *     the split only regroups the sum over keys (partial sums merged with
 *     their maxima), so their difference is rounding of the same size.
 * Observed (every kernel set, Release; each test prints its largest):
 * out <= 2.3e-7 (f32), 4.1e-16 (f64); lse <= 2.1e-7, 4.5e-16; gradients
 * <= 2.4e-6, 4.2e-15, except the window-1 case's f32 6.9e-6 (its dS is
 * 0 in exact arithmetic, P = 1 on the diagonal: dQ and dK are rounding
 * noise measured against the 0.01 floor); decode split against unsplit
 * <= 1.0e-7; finite differences <= 2.8e-10. A real defect is off by 1e-2
 * or more: the reference with top-left instead of bottom-right causal
 * alignment fails every Tq < Tk, lengths and window case by 0.1-2.
 * The cases placed last (huge windows) are ones that crashed or hung the
 * library when they were written.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/sdpa_engine_runs.h"
#include "support/test_common.h"

/* ---- 1. the cases ------------------------------------------------------------------------ */

#define C ATTN_CAUSAL
static const size_t len_decode[3] = {200, 17, 1};
static const size_t len_mixed[4] = {100, 57, 0, 20};
static const size_t len_short[2] = {3, 40};
static const size_t len_keypad[3] = {60, 33, 60};

/* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
 * lengths, backward, finite_slots */
static const spec heads_cases[] = {
    {"MHA", 2, 3, 3, 37, 37, 16, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"MHA causal, scale 0.3", 2, 3, 3, 37, 37, 16, 0, 0.3, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"GQA 8/2 causal", 2, 8, 2, 70, 70, 24, 0, 0.0, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"GQA 6/3, Tq < Tk", 1, 6, 3, 21, 90, 8, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"MQA causal, Tq < Tk, scale -1", 3, 4, 1, 9, 150, 32, 0, -1.0, C, 0, 0, 0, MASK_NONE, NULL,
     1, 0},
    {"MQA decode Tq 1", 2, 8, 1, 1, 77, 16, 0, 0.0, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"decode Tq 1 with lengths", 3, 4, 2, 1, 200, 64, 0, 0.0, C, 0, 0, 0, MASK_NONE, len_decode,
     1, 0},
    {"GQA decode Tq 1, hs 20, hs_v 13, lengths", 3, 6, 3, 1, 203, 20, 13, 0.0, C, 0, 0, 0,
     MASK_NONE, len_decode, 1, 0},
    {"causal Tq > Tk (leading queries see nothing)", 1, 2, 1, 8, 5, 8, 0, 0.0, C, 0, 0, 0,
     MASK_NONE, NULL, 1, 0},
};

static const spec window_length_cases[] = {
    {"sliding window 64, causal", 2, 4, 2, 300, 300, 40, 0, 0.0, C, 64, 0, 0, MASK_NONE, NULL,
     1, 0},
    {"window 20 without causal, Tq < Tk", 1, 2, 2, 50, 80, 16, 0, 0.0, 0, 20, 0, 0, MASK_NONE,
     NULL, 1, 0},
    {"window 1, causal (the diagonal alone)", 1, 2, 1, 20, 20, 8, 0, 0.0, C, 1, 0, 0, MASK_NONE,
     NULL, 1, 0},
    {"window Tq + Tk + 5 (beyond every key)", 1, 2, 1, 20, 30, 8, 0, 0.0, C, 55, 0, 0,
     MASK_NONE, NULL, 1, 0},
    {"lengths (one 0), NaN slots", 4, 4, 2, 20, 100, 16, 0, 0.0, 0, 0, 0, 0, MASK_NONE,
     len_mixed, 1, 0},
    {"lengths (one 0), NaN slots, causal", 4, 4, 2, 20, 100, 16, 0, 0.0, C, 0, 0, 0, MASK_NONE,
     len_mixed, 1, 0},
    {"lengths below Tq, causal", 2, 2, 2, 8, 40, 8, 0, 0.0, C, 0, 0, 0, MASK_NONE, len_short, 1,
     0},
    {"lengths, causal, window 7", 4, 2, 1, 12, 100, 16, 0, 0.0, C, 7, 0, 0, MASK_NONE, len_mixed,
     1, 0},
};

/* window values beyond PTRDIFF_MAX (attn.h: any window > 0; one beyond
 * every key hides nothing) */
static const spec huge_window_cases[] = {
    {"window SIZE_MAX (beyond every key)", 1, 2, 1, 20, 30, 8, 0, 0.0, C, SIZE_MAX, 0, 0,
     MASK_NONE, NULL, 1, 0},
    {"window 2^63, not causal", 1, 2, 1, 20, 30, 8, 0, 0.0, 0, (size_t)1 << 63, 0, 0, MASK_NONE,
     NULL, 1, 0},
};

static const spec mask_cases[] = {
    {"mask full, padded rows", 2, 4, 2, 33, 45, 16, 0, 0.0, C, 0, 0, 0, MASK_FULL, NULL, 1, 0},
    {"mask full, not causal", 2, 2, 2, 17, 29, 8, 0, 0.5, 0, 0, 0, 0, MASK_FULL, NULL, 1, 0},
    {"mask key padding (ld 0, sh 0), lengths", 3, 4, 2, 20, 60, 16, 0, 0.0, 0, 0, 0, 0,
     MASK_KEYPAD, len_keypad, 1, 0},
    {"mask shared over heads (sh 0), causal", 2, 4, 1, 30, 30, 8, 0, 0.0, C, 0, 0, 0, MASK_HEADS,
     NULL, 1, 0},
    {"mask shared over the batch (sb 0), window 50", 2, 2, 2, 25, 140, 16, 0, 0.0, 0, 50, 0, 0,
     MASK_BATCH, NULL, 1, 0},
    {"mask one row (every stride 0)", 2, 3, 3, 10, 70, 16, 0, 0.0, 0, 0, 0, 0, MASK_ROW, NULL, 1,
     0},
};

static const spec layout_cases[] = {
    {"hs_v 40 > hs 24, strided, scale 0.2", 2, 4, 2, 40, 50, 24, 40, 0.2, C, 0, 5, 0, MASK_NONE,
     NULL, 1, 0},
    {"hs_v 8 < hs 40, strided", 1, 6, 3, 17, 33, 40, 8, 0.0, 0, 0, 3, 0, MASK_NONE, NULL, 1, 0},
    {"fused QKV, ldo padded, causal", 2, 6, 2, 64, 64, 16, 0, 0.0, C, 0, 4, 1, MASK_NONE, NULL,
     1, 0},
    {"fused QKV, MHA, hs_v 24", 1, 4, 4, 150, 150, 40, 24, 0.0, 0, 0, 0, 1, MASK_NONE, NULL, 1,
     0},
    {"fused QKV, mask full", 2, 4, 2, 40, 40, 8, 0, 0.0, C, 0, 1, 1, MASK_FULL, NULL, 1, 0},
};

/* smaller in unoptimized and sanitizer builds and under valgrind (slow_run) */
static const spec large_cases_small[] = {
    {"causal, hs 8: the diagonal's score rows in groups", 1, 2, 1, 200, 200, 8, 0, 0.0, C, 0, 0,
     0, MASK_NONE, NULL, 1, 0},
    {"large causal MQA", 1, 2, 1, 300, 300, 72, 0, 0.0, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"large, Tq < Tk, more than one key block", 1, 2, 2, 130, 600, 40, 0, 0.0, 0, 0, 0, 0,
     MASK_NONE, NULL, 1, 0},
};
static const spec large_cases[] = {
    {"causal, hs 8: the diagonal's score rows in groups", 1, 2, 1, 200, 200, 8, 0, 0.0, C, 0, 0,
     0, MASK_NONE, NULL, 1, 0},
    {"large causal MQA", 1, 2, 1, 700, 700, 72, 0, 0.0, C, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"large, Tq < Tk", 2, 2, 2, 333, 650, 40, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1, 0},
    {"large, one (sequence, head): split backward", 1, 1, 1, 129, 1100, 64, 0, 0.0, C, 0, 0, 0,
     MASK_NONE, NULL, 1, 0},
    {"large, mask full, strided", 1, 2, 1, 257, 513, 64, 0, 0.0, C, 0, 3, 0, MASK_FULL, NULL, 1,
     0},
    {"large GQA, window 300, lengths", 2, 4, 2, 200, 700, 40, 0, 0.0, C, 300, 0, 0, MASK_NONE,
     (const size_t[]){700, 555}, 1, 0},
};
#undef C

static void heads(void **state)
{
    (void)state;
    run_cases(heads_cases, N_OF(heads_cases), 1101, "heads");
}

static void windows_and_lengths(void **state)
{
    (void)state;
    run_cases(window_length_cases, N_OF(window_length_cases), 1102, "windows and lengths");
}

static void huge_windows(void **state)
{
    (void)state;
    run_cases(huge_window_cases, N_OF(huge_window_cases), 1106, "huge windows");
}

static void masks(void **state)
{
    (void)state;
    run_cases(mask_cases, N_OF(mask_cases), 1103, "masks");
}

static void layouts(void **state)
{
    (void)state;
    run_cases(layout_cases, N_OF(layout_cases), 1104, "layouts");
}

static void large_shapes(void **state)
{
    (void)state;
    if (slow_run())
        run_cases(large_cases_small, N_OF(large_cases_small), 1105, "large shapes (small set)");
    else
        run_cases(large_cases, N_OF(large_cases), 1105, "large shapes");
}

/* ---- 2. the decode split ------------------------------------------------------------------ */

/* A copy of pr with its one sequence replicated `copies` times. */
static problem replicated(const problem *pr, size_t copies, test_rng *rng)
{
    spec c = pr->c;
    c.B = copies;
    size_t *lengths = NULL;
    if (pr->lengths != NULL) {
        lengths = talloc(copies * sizeof(size_t));
        for (size_t b = 0; b < copies; b++)
            lengths[b] = pr->lengths[0];
        c.lengths = lengths;
    }
    problem r = problem_make(&c, rng); /* the layout; values copied below */
    for (size_t b = 0; b < copies; b++) {
        memcpy(r.in + r.q_at + b * c.Tq * r.ldq, pr->in + pr->q_at, pr->nq * sizeof(double));
        memcpy(r.in + r.k_at + b * c.Tk * r.ldk, pr->in + pr->k_at, pr->nk * sizeof(double));
        memcpy(r.in + r.v_at + b * c.Tk * r.ldv, pr->in + pr->v_at, pr->nv * sizeof(double));
        memcpy(r.dout + b * c.Tq * r.ldo, pr->dout, pr->no * sizeof(double));
    }
    return r;
}

static void decode_split(void **state)
{
    (void)state;
    static const size_t length[1] = {3333}, length_short[1] = {1333};
    static const spec cases_short[] = { /* under valgrind */
        {"decode split, Tk 2000", 1, 4, 1, 1, 2000, 64, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1,
         0},
        {"decode split, length 1333 of 2000", 1, 4, 1, 1, 2000, 64, 0, 0.0, ATTN_CAUSAL, 0, 0, 0,
         MASK_NONE, length_short, 1, 0},
        {"decode split, Tq 4 causal, Tk 1500", 1, 2, 1, 4, 1500, 40, 0, 0.0, ATTN_CAUSAL, 0, 0,
         0, MASK_NONE, NULL, 1, 0},
    };
    /* name, B, NH, NH_kv, Tq, Tk, hs, hs_v, scale, causal, window, pad, fused, mask,
     * lengths, backward, finite_slots */
    static const spec cases[] = {
        {"decode split, Tk 5000", 1, 4, 1, 1, 5000, 64, 0, 0.0, 0, 0, 0, 0, MASK_NONE, NULL, 1,
         0},
        {"decode split, length 3333 of 5000", 1, 4, 1, 1, 5000, 64, 0, 0.0, ATTN_CAUSAL, 0, 0, 0,
         MASK_NONE, length, 1, 0},
        {"decode split, Tq 4 causal, Tk 3000", 1, 2, 1, 4, 3000, 40, 0, 0.0, ATTN_CAUSAL, 0, 0,
         0, MASK_NONE, NULL, 1, 0},
        {"decode split, GQA 4/2, Tq 2, window 1000", 1, 4, 2, 2, 2100, 64, 0, 0.0, ATTN_CAUSAL,
         1000, 0, 0, MASK_NONE, NULL, 1, 0},
        {"decode split, GQA 6/3, hs 20, hs_v 13, length 3333 of 5000", 1, 6, 3, 1, 5000, 20, 13,
         0.0, ATTN_CAUSAL, 0, 0, 0, MASK_NONE, length, 1, 0},
    };
    test_enter();
    test_rng rng;
    rng_seed(&rng, 1301);
    worsts w[2];
    memset(w, 0, sizeof w);
    check_worst w_split = {0.0, 0.0};
    const spec *list = sdpa_reduced_run() ? cases_short : cases;
    const size_t n_list = sdpa_reduced_run() ? N_OF(cases_short) : N_OF(cases);
    for (size_t ci = 0; ci < n_list; ci++) {
        run_case(&list[ci], &rng, w); /* against the reference, every engine */
        const problem pr = problem_make(&list[ci], &rng);
        const problem rep = replicated(&pr, 8, &rng);
        const test_prec *precs[2] = {&test_prec_f32, &test_prec_f64};
        for (size_t pi = 0; pi < 2; pi++) {
            if (!precision_runs(pi, ci))
                continue;
            const test_prec *p = precs[pi];
            const double tol = forward_tol(p, &pr.c);
            for (size_t k = 0; k < N_OF(engines); k++) {
                if (!engine_runs(k))
                    continue;
                char what[640];
                describe(what, sizeof what, p, &pr.c, engines[k].name,
                         "split (B 1) against unsplit (B 8)");
                attn_plan *one = problem_plan(p, &pr, ATTN_INFERENCE, engines[k].threads, what);
                attn_plan *eight =
                    problem_plan(p, &rep, ATTN_INFERENCE, engines[k].threads, what);
                if (one == NULL || eight == NULL)
                    continue;
                const typed t1 = typed_make(p, &pr), t8 = typed_make(p, &rep);
                outputs o1 = outputs_make(p, &pr, 0), o8 = outputs_make(p, &rep, 0);
                const sdpa_io io1 = io_of(&pr, &t1, &o1, 1), io8 = io_of(&rep, &t8, &o8, 1);
                const attn_status s1 = sdpa_forward(p, one, &io1);
                const attn_status s8 = sdpa_forward(p, eight, &io8);
                sdpa_drop_plan(one);
                sdpa_drop_plan(eight);
                expect_true(s1 == ATTN_OK && s8 == ATTN_OK, "%s: %s, %s", what,
                            attn_status_string(s1), attn_status_string(s8));
                if (s1 != ATTN_OK || s8 != ATTN_OK)
                    continue;
                double v_scale = 0.0;
                for (size_t i = 0; i < pr.nv; i++)
                    if (isfinite(pr.in[pr.v_at + i]))
                        v_scale = fmax(v_scale, fabs(pr.in[pr.v_at + i]));
                const double *out1 = prec_doubles(p, o1.out, pr.no);
                const double *lse1 = prec_doubles(p, o1.lse, pr.nl);
                const double *out8 = prec_doubles(p, o8.out, rep.no);
                const double *lse8 = prec_doubles(p, o8.lse, rep.nl);
                for (size_t b = 0; b < 8; b++) {
                    expect_within(&w_split,
                                  residual_scaled(out1, out8 + b * pr.no, pr.no, v_scale), tol,
                                  "%s: out of copy %zu", what, b);
                    expect_within(&w_split,
                                  sdpa_residual_lse(lse1, lse8 + b * pr.nl, pr.nl), tol,
                                  "%s: lse of copy %zu", what, b);
                }
            }
        }
    }
    for (int pi = 0; pi < 2; pi++) {
        report(pi ? "decode f64 out" : "decode f32 out", &w[pi].out);
        report(pi ? "decode f64 gradients" : "decode f32 gradients", &w[pi].grads);
    }
    report("decode split against unsplit (both precisions)", &w_split);
    test_leave("decode split");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_CASE("heads", heads, NULL),
        SDPA_CASE("windows_and_lengths", windows_and_lengths, NULL),
        SDPA_CASE("masks", masks, NULL),
        SDPA_CASE("layouts", layouts, NULL),
        SDPA_CASE("large_shapes", large_shapes, NULL),
        SDPA_CASE("decode_split", decode_split, NULL),
        /* last: cases that crashed the library when written (a crash ends a
         * sanitizer build's run) */
        SDPA_CASE("huge_windows", huge_windows, NULL),
    };
    return cmocka_run_group_tests_name("sdpa", tests, NULL, NULL);
}
