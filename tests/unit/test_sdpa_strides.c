/*
 * test_sdpa_strides: the rules of the batch, head and row strides of
 * attn_sdpa_args_* (attn.h, "The arrays of one call", and the ALIASING
 * paragraph of attn_sdpa_forward_f32), in both precisions, on
 * attn_sdpa_forward_*, attn_sdpa_backward_* and the one-shot attn_sdpa_*.
 * (test_sdpa_layouts checks the results in those layouts.)
 *
 * Shape: B 2, NH = NH_kv = 2, Tq = Tk = 3, hs = hs_v = 2, so that one set
 * of strides fits each of Q, K, V and out (in the backward dout takes out's
 * strides, dQ, dK, dV those of Q, K, V). Every array of an error call lives
 * in one sentinel-filled arena, compared byte for byte after the call:
 * nothing may be written. Each case states whether its elements repeat (or
 * two arrays share one), checked by enumeration (sdpa_calls.h), so the
 * test's claim about the layout is itself checked.
 *
 *  1. BAD_STRIDE for each of Q, K, V, out, on the three calls: heads
 *     overlapping (sh < hs, ld large); rows overlapping ((B,NH,T,hs) with
 *     ld < hs); sequences overlapping ((B,NH,T,hs) with sb one short);
 *     (B,NH,T,hs) with sb 0 (the dense default Tq*ld is one head's rows);
 *     the old ld < NH*hs with dense heads; and a layout with no repeated
 *     element that the rule refuses because its dimensions interleave
 *     (ld 4 over 3 rows, sh 6: the rows of a head span 10 > 6). A
 *     dimension of one element takes any stride (B 1, Tq 1, NH_kv 1 with
 *     strides 1 or SIZE_MAX): accepted, and the results equal the reference.
 *  2. SIZE_OVERFLOW: a batch or head stride whose span overflows the
 *     elements or the bytes; BAD_STRIDE comes first. BLAS_RANGE: a row
 *     stride above INT_MAX whose extent fits, in (B,T,NH,hs) and
 *     (B,NH,T,hs) order. Head and batch strides above INT_MAX are no BLAS
 *     argument: Q with sb = 2^31 + 6 and K with sh = 2^31 + 2 in
 *     reserved, untouched address space (mmap, MAP_NORESERVE; skipped
 *     under valgrind or when the system refuses the mapping) give the same
 *     bytes as the dense call, forward and backward, on both engines.
 *  3. ALIASING: out == Q; out with Q's strides inside a fused (B,T,3,NH,hs)
 *     buffer at Q + 1 or on K's columns (refused); out in the fourth block
 *     of a (B,T,4,NH,hs) buffer beside Q, K, V (accepted: disjoint columns
 *     of a period); lse in a gap of Q's rows, a one-row mask in a gap of
 *     out's rows (refused: attn.h judges the mask, lse and key_lengths by
 *     their spans); Q (B,T,NH,hs) with a row's gap after each sequence and out
 *     (ld 16, sb 36) starting in that gap: no element shared, but no single
 *     period separates them, so the rule refuses it (documented as refused).
 *     Backward: dK one element past dQ (refused); dQ, dK, dV side by side in
 *     one fused buffer (accepted); dK two columns into dQ's (refused); dV
 *     in the free block of the fused input buffer (accepted); dQ on Q's
 *     columns (refused). An array of one entry (a decode step's single K
 *     row) in the gap of another's period: accepted, results as the
 *     reference's; on Q's elements: refused.
 *  4. The accepted interleavings at every address: the fused buffers above
 *     placed at each element offset within their row's period (the rule
 *     reads addresses modulo strides), each accepted and giving the bytes of
 *     the aligned placement.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "reference/sdpa_reference.h"
#include "support/sdpa_calls.h"
#include "support/test_common.h"

enum { EB = 2, EH = 2, ET = 3, EW = 2, EN = EB * EH * ET * EW, EL = EB * EH * ET };
enum { A_Q, A_K, A_V, A_O }; /* the arrays whose strides a case sets */
/* arena slots (elements); F and G are fused buffers, at multiples of 48 (rows of 12, 16) */
enum { S_Q = 0, S_K = 128, S_V = 256, S_O = 384, S_L = 512, S_DO = 640, S_DQ = 768,
       S_DK = 896, S_DV = 1024, S_F = 1152, S_G = 1344, S_END = 1472 };
enum { FWD = 1, BWD = 2, ONE = 4, ALL = 7 };
#define LARGE ((size_t)1 << 31) /* INT_MAX + 1 */

static const attn_sdpa_shape shape = {EB, EH, EH, ET, ET, EW, EW};

typedef struct ecase {
    sdpa_io io;
    const void *dout;
    void *dQ, *dK, *dV;
} ecase;

typedef struct arena {
    const test_prec *p;
    unsigned char *base;
    attn_plan *plan; /* a training plan, causal */
} arena;

static void *at(const arena *a, size_t i)
{
    return a->base + i * a->p->size;
}

static arena arena_make(const test_prec *p, size_t residue)
{
    arena a = {p, sdpa_talloc_at(S_END * p->size, 48 * p->size, residue * p->size), NULL};
    attn_status st = attn_sdpa_plan_create(&a.plan, p->dtype, &shape, 0.0, ATTN_CAUSAL, 0);
    check_true(st == ATTN_OK, "%s: the plan: %s", p->name, attn_status_string(st));
    sdpa_keep_plan(a.plan);
    return a;
}

/* dense arrays in their slots */
static ecase base_case(const arena *a)
{
    ecase e;
    memset(&e, 0, sizeof e);
    e.io.Q = at(a, S_Q), e.io.K = at(a, S_K), e.io.V = at(a, S_V);
    e.io.out = at(a, S_O), e.io.lse = at(a, S_L);
    e.dout = at(a, S_DO), e.dQ = at(a, S_DQ), e.dK = at(a, S_DK), e.dV = at(a, S_DV);
    return e;
}

static void set_strides(ecase *e, int array, size_t sb, size_t sh, size_t ld)
{
    size_t *s[4][3] = {{&e->io.sbq, &e->io.shq, &e->io.ldq}, {&e->io.sbk, &e->io.shk, &e->io.ldk},
                       {&e->io.sbv, &e->io.shv, &e->io.ldv}, {&e->io.sbo, &e->io.sho, &e->io.ldo}};
    *s[array][0] = sb, *s[array][1] = sh, *s[array][2] = ld;
}

/* an array of the error shape with these strides (0: attn.h's dense default) */
static sdpa_view view_of(size_t at_, size_t sb, size_t sh, size_t ld)
{
    const size_t l = ld ? ld : EH * EW;
    const sdpa_view v = {EB, EH, ET, EW, at_, sb ? sb : ET * l, sh ? sh : EW, l};
    return v;
}

/* Runs the calls of `calls` on the sentinel-filled arena; each must return
 * `want`, and on error leave every byte of the arena. */
static void expect(const arena *a, const ecase *e, int calls, attn_status want, const char *what)
{
    const size_t bytes = S_END * a->p->size;
    for (int k = 0; k < 3; k++) {
        if (!(calls & (1 << k)))
            continue;
        sentinel_fill(a->base, bytes);
        const attn_status st =
            k == 0   ? sdpa_forward(a->p, a->plan, &e->io)
            : k == 1 ? sdpa_backward(a->p, a->plan, &e->io, e->dout, e->dQ, e->dK, e->dV)
                     : sdpa_one_shot(a->p, &shape, 0.0, ATTN_CAUSAL, 0, &e->io);
        static const char *const fn[3] = {"forward", "backward", "one-shot"};
        expect_true(st == want, "%s %s, %s: got %s, want %s", a->p->name, fn[k], what,
                    attn_status_string(st), attn_status_string(want));
        if (want != ATTN_OK)
            expect_true(sentinel_intact(a->base, bytes), "%s %s, %s: the arena was written",
                        a->p->name, fn[k], what);
    }
}

/* ---- 1. BAD_STRIDE ------------------------------------------------------------------ */

static void bad_strides(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const arena a = arena_make(p, 0);
    static const char *const names[4] = {"Q", "K", "V", "out"};
    static const struct {
        const char *what;
        size_t sb, sh, ld;
        int repeats; /* whether two elements share a place */
    } cases[] = {
        {"heads overlap (sh = hs - 1, ld 2*NH*hs)", 0, EW - 1, 2 * EH * EW, 1},
        {"rows overlap ((B,NH,T,hs), ld = hs - 1)", EH * ET * EW, ET * EW, EW - 1, 1},
        {"sequences overlap ((B,NH,T,hs), sb one short)", EH * ET * EW - 1, ET * EW, EW, 1},
        {"(B,NH,T,hs) with sb 0 (dense default Tq*ld: one head)", 0, ET * EW, EW, 1},
        {"ld = NH*hs - 1 with dense heads", 0, 0, EH * EW - 1, 1},
        {"no element repeats, but rows (ld 4, span 10) interleave with heads (sh 6)", 16, 6, 4,
         0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const sdpa_view v = view_of(0, cases[c].sb, cases[c].sh, cases[c].ld);
        check_true(sdpa_view_repeats(&v) == cases[c].repeats, "the layout of \"%s\"",
                   cases[c].what);
        for (int x = A_Q; x <= A_O; x++) {
            ecase e = base_case(&a);
            set_strides(&e, x, cases[c].sb, cases[c].sh, cases[c].ld);
            char what[160];
            snprintf(what, sizeof what, "%s: %s", names[x], cases[c].what);
            expect(&a, &e, ALL, ATTN_ERR_BAD_STRIDE, what);
        }
    }
    ecase e = base_case(&a);
    set_strides(&e, A_Q, 0, 1, 0);
    set_strides(&e, A_K, SIZE_MAX - 1, 0, 0);
    expect(&a, &e, ALL, ATTN_ERR_BAD_STRIDE, "BAD_STRIDE (Q) before SIZE_OVERFLOW (K)");
    e = base_case(&a);
    set_strides(&e, A_Q, ET * EH * EW, EW, EH * EW); /* the dense strides, given */
    set_strides(&e, A_O, EH * ET * EW, ET * EW, EW); /* out (B,NH,T,hs) */
    expect(&a, &e, ALL, ATTN_OK, "dense strides given, out (B,NH,T,hs)");
    test_leave("bad strides");
}

/* B 1, Tq 1, NH_kv 1: the strides of those dimensions do not matter */
static void size_one_dimensions(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    enum { TK = 3, NH = 2 };
    const attn_sdpa_shape s = {1, NH, 1, 1, TK, EW, EW};
    attn_plan *plan = NULL;
    check_true(attn_sdpa_plan_create(&plan, p->dtype, &s, 0.0, 0u, 0) == ATTN_OK, "the plan");
    sdpa_keep_plan(plan);
    const sdpa_view q = {1, NH, 1, EW, 0, 1, EW, 1}, k = {1, 1, TK, EW, 8, SIZE_MAX, 1, EW};
    const sdpa_view v = {1, 1, TK, EW, 16, 1, SIZE_MAX, EW}, o = {1, NH, 1, EW, 0, 1, EW, 1};
    test_rng rng;
    rng_seed(&rng, 2401);
    double values[24];
    rng_fill_normal(&rng, values, 24, 1.0);
    prec_round_array(p, values, 24);
    void *in = prec_typed(p, values, 24), *out = talloc(4 * p->size), *lse = talloc(NH * p->size);
    sdpa_io io;
    memset(&io, 0, sizeof io);
    io.Q = in, io.sbq = q.sb, io.shq = q.sh, io.ldq = q.ld;
    io.K = prec_at(p, in, k.at), io.sbk = k.sb, io.shk = k.sh, io.ldk = k.ld;
    io.V = prec_at(p, in, v.at), io.sbv = v.sb, io.shv = v.sh, io.ldv = v.ld;
    io.out = out, io.sbo = o.sb, io.sho = o.sh, io.ldo = o.ld, io.lse = lse;
    const attn_status st = sdpa_forward(p, plan, &io);
    expect_true(st == ATTN_OK, "%s: B 1 (sb 1), Tq 1 (ld 1), NH_kv 1 (sh SIZE_MAX): %s", p->name,
                attn_status_string(st));
    const sdpa_view k0 = {1, 1, TK, EW, 0, 0, 0, EW}, v0 = k0;
    const sdpa_ref r = {1, NH, 1, 1, TK, EW, EW, sdpa_ref_scale(0.0, EW), 0, 0,
                        sdpa_view_gather(p, in, &q), sdpa_view_gather(p, prec_at(p, in, k.at), &k0),
                        sdpa_view_gather(p, prec_at(p, in, v.at), &v0), NH * EW, EW, EW,
                        NULL, 0, 0, 0, NULL};
    double ref[4], ref_lse[NH];
    sdpa_ref_forward(&r, ref, ref_lse);
    if (st == ATTN_OK) {
        expect_within(NULL, residual_scaled(sdpa_view_gather(p, out, &o), ref, 4,
                                            max_abs(r.V, TK * EW)),
                      p->tol, "%s: out of the size-1 strides", p->name);
        expect_within(NULL, sdpa_residual_lse(prec_doubles(p, lse, NH), ref_lse, NH), p->tol,
                      "%s: lse of the size-1 strides", p->name);
    }
    test_leave("size-1 dimensions");
}

/* ---- 2. SIZE_OVERFLOW, BLAS_RANGE, huge head and batch strides ---------------------------- */

static void overflow_and_blas_range(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const arena a = arena_make(p, 0);
    static const char *const names[4] = {"Q", "K", "V", "out"};
    static const struct {
        const char *what;
        size_t sb, sh, ld;
        attn_status want;
    } cases[] = {
        {"sb SIZE_MAX/2 (bytes overflow)", SIZE_MAX / 2, 0, 0, ATTN_ERR_SIZE_OVERFLOW},
        {"sb SIZE_MAX - 4 (elements overflow)", SIZE_MAX - 4, 0, 0, ATTN_ERR_SIZE_OVERFLOW},
        {"sh SIZE_MAX/4, sb SIZE_MAX/2 (bytes overflow)", SIZE_MAX / 2, SIZE_MAX / 4, 0,
         ATTN_ERR_SIZE_OVERFLOW},
        {"ld INT_MAX + 1, dense heads, sb 0 (extent fits)", 0, 0, LARGE, ATTN_ERR_BLAS_RANGE},
        {"(B,NH,T,hs) with ld INT_MAX + 1 (extent fits)", EH * ET * LARGE, ET * LARGE, LARGE,
         ATTN_ERR_BLAS_RANGE},
        {"ld INT_MAX + 1, sb SIZE_MAX/2: SIZE_OVERFLOW first", SIZE_MAX / 2, 0, LARGE,
         ATTN_ERR_SIZE_OVERFLOW},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int x = A_Q; x <= A_O; x++) {
            ecase e = base_case(&a);
            set_strides(&e, x, cases[c].sb, cases[c].sh, cases[c].ld);
            char what[160];
            snprintf(what, sizeof what, "%s: %s", names[x], cases[c].what);
            expect(&a, &e, ALL, cases[c].want, what);
        }
    test_leave("size overflow and BLAS range");
}

/* `bytes` of address space reserved, not backed until touched; NULL if refused */
static void *reserve(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

static void huge_head_and_batch_strides(void **state)
{
    const test_prec *p = TEST_PREC(state);
    if (sdpa_short_run()) {
        print_message("  skipped under valgrind / ATTN_SDPA_SHORT (address space)\n");
        skip();
    }
    test_enter();
    /* Q (sb 2^31 + 6) and K (sh 2^31 + 2, at 64) in reservation 0, dQ in 1 and
     * dK in 2 at the same places; V, out, dout, dV, lse dense */
    const sdpa_view q = {EB, EH, ET, EW, 0, LARGE + 6, EW, EH * EW};
    const sdpa_view k = {EB, EH, ET, EW, 64, ET * EW, LARGE + 2, EW};
    const size_t bytes = (sdpa_view_end(&k) + 64) * p->size;
    unsigned char *m[3];
    int reserved = 0;
    for (int i = 0; i < 3; i++)
        reserved += (m[i] = reserve(bytes)) != NULL;
    if (reserved < 3) {
        for (int i = 0; i < 3; i++)
            if (m[i] != NULL)
                munmap(m[i], bytes);
        print_message("  skipped: the system refused to reserve 3 x %zu bytes\n", bytes);
        skip();
    }
    test_rng rng;
    rng_seed(&rng, 2402);
    double vals[EN];
    void *dense = talloc(5 * EN * p->size); /* Q K V out dout, dense */
    for (size_t i = 0; i < 5; i++) {
        rng_fill_normal(&rng, vals, EN, 1.0);
        p->from_double(prec_at(p, dense, i * EN), vals, EN);
    }
    const sdpa_view d = {EB, EH, ET, EW, 0, ET * EH * EW, EW, EH * EW};
    for (size_t b = 0; b < EB; b++) /* Q and K into their places, row by row */
        for (size_t h = 0; h < EH; h++)
            for (size_t t = 0; t < ET; t++) {
                memcpy(m[0] + sdpa_view_index(&q, b, h, t) * p->size,
                       prec_at(p, dense, sdpa_view_index(&d, b, h, t)), EW * p->size);
                memcpy(m[0] + sdpa_view_index(&k, b, h, t) * p->size,
                       prec_at(p, dense, EN + sdpa_view_index(&d, b, h, t)), EW * p->size);
            }
    static const unsigned engines[2] = {0, 2};
    for (int e = 0; e < 2; e++) {
        attn_plan *plan = NULL;
        check_true(attn_sdpa_plan_create(&plan, p->dtype, &shape, 0.0, ATTN_CAUSAL, 0) ==
                           ATTN_OK &&
                       attn_plan_set_threads(sdpa_keep_plan(plan), engines[e]) == ATTN_OK,
                   "the plan");
        /* outs: out, lse of the huge-stride call, then of the dense one; grads:
         * dV of the huge-stride call, then dQ, dK, dV of the dense one */
        void *outs = talloc(2 * (EN + EL) * p->size), *grads = talloc(4 * EN * p->size);
        sdpa_io io[2]; /* 0 the huge strides, 1 dense */
        memset(io, 0, sizeof io);
        for (int i = 0; i < 2; i++) {
            io[i].Q = i ? dense : m[0];
            io[i].K = i ? prec_at(p, dense, EN) : m[0] + k.at * p->size;
            io[i].V = prec_at(p, dense, 2 * EN);
            io[i].out = prec_at(p, outs, (size_t)i * (EN + EL));
            io[i].lse = prec_at(p, outs, (size_t)i * (EN + EL) + EN);
        }
        io[0].sbq = q.sb, io[0].shq = q.sh, io[0].ldq = q.ld;
        io[0].sbk = k.sb, io[0].shk = k.sh, io[0].ldk = k.ld;
        const void *dout = prec_at(p, dense, 4 * EN);
        const attn_status st[4] = {
            sdpa_forward(p, plan, &io[0]), sdpa_forward(p, plan, &io[1]),
            sdpa_backward(p, plan, &io[0], dout, m[1], m[2] + k.at * p->size, grads),
            sdpa_backward(p, plan, &io[1], dout, prec_at(p, grads, EN), prec_at(p, grads, 2 * EN),
                          prec_at(p, grads, 3 * EN))};
        expect_true(st[0] == ATTN_OK && st[1] == ATTN_OK && st[2] == ATTN_OK && st[3] == ATTN_OK,
                    "%s threads %u: sb, sh > INT_MAX: %s %s %s %s", p->name, engines[e],
                    attn_status_string(st[0]), attn_status_string(st[1]),
                    attn_status_string(st[2]), attn_status_string(st[3]));
        int same = memcmp(outs, prec_at(p, outs, EN + EL), (EN + EL) * p->size) == 0;
        same &= memcmp(grads, prec_at(p, grads, 3 * EN), EN * p->size) == 0; /* dV */
        for (size_t b = 0; b < EB; b++)
            for (size_t h = 0; h < EH; h++)
                for (size_t t = 0; t < ET; t++) {
                    const size_t i = sdpa_view_index(&d, b, h, t);
                    same &= memcmp(m[1] + sdpa_view_index(&q, b, h, t) * p->size,
                                   prec_at(p, grads, EN + i), EW * p->size) == 0;
                    same &= memcmp(m[2] + sdpa_view_index(&k, b, h, t) * p->size,
                                   prec_at(p, grads, 2 * EN + i), EW * p->size) == 0;
                }
        expect_true(same, "%s threads %u: sb, sh > INT_MAX give other bytes than dense", p->name,
                    engines[e]);
    }
    for (int i = 0; i < 3; i++)
        munmap(m[i], bytes);
    test_leave("huge head and batch strides");
}

/* ---- 3. ALIASING ------------------------------------------------------------------------- */

/* Q, K, V at F in (B,T,blocks,NH,hs) rows */
static void fused_inputs(ecase *e, const arena *a, size_t f, size_t blocks)
{
    const size_t row = blocks * EH * EW;
    e->io.Q = at(a, f), e->io.K = at(a, f + EH * EW), e->io.V = at(a, f + 2 * EH * EW);
    for (int x = A_Q; x <= A_V; x++)
        set_strides(e, x, ET * row, EW, row);
}

static void aliasing(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const arena a = arena_make(p, 0);
    const size_t row3 = 3 * EH * EW, row4 = 4 * EH * EW;
    const sdpa_view fq3 = view_of(0, ET * row3, EW, row3), fq4 = view_of(0, ET * row4, EW, row4);
    sdpa_view x;
    ecase e = base_case(&a);
    e.io.out = at(&a, S_Q);
    expect(&a, &e, FWD | ONE, ATTN_ERR_ALIASING, "out == Q");
    e = base_case(&a);
    fused_inputs(&e, &a, S_F, 3);
    expect(&a, &e, ALL, ATTN_OK, "Q, K, V in one (B,T,3,NH,hs) buffer");
    e.io.out = at(&a, S_F + 1);
    set_strides(&e, A_O, ET * row3, EW, row3);
    x = fq3, x.at = 1;
    check_true(sdpa_views_share(&fq3, &x), "out at Q + 1 shares Q's elements");
    expect(&a, &e, FWD | ONE, ATTN_ERR_ALIASING, "out at Q + 1 with Q's strides");
    e.io.out = (void *)e.io.K;
    expect(&a, &e, FWD | ONE, ATTN_ERR_ALIASING, "out on K's columns");
    e = base_case(&a);
    fused_inputs(&e, &a, S_F, 4);
    e.io.out = at(&a, S_F + 3 * EH * EW);
    set_strides(&e, A_O, ET * row4, EW, row4);
    x = fq4, x.at = 3 * EH * EW;
    check_true(!sdpa_views_share(&fq4, &x), "out in the fourth block shares nothing with Q");
    expect(&a, &e, ALL, ATTN_OK, "out in the free block of a (B,T,4,NH,hs) buffer");
    e = base_case(&a);
    set_strides(&e, A_Q, 0, 0, EH * EW + EL); /* a gap of EL after each row of Q */
    e.io.lse = at(&a, S_Q + 2);
    expect(&a, &e, FWD | ONE, ATTN_ERR_ALIASING, "lse on Q's elements 2, 3 and the gap after");
    e.io.lse = at(&a, S_Q + EH * EW);
    expect(&a, &e, FWD | ONE, ATTN_ERR_ALIASING, "lse in the gap after Q's first row");
    e = base_case(&a);
    set_strides(&e, A_O, 0, 0, 2 * EH * EW); /* a gap of 4 after each row of out */
    e.io.mask = at(&a, S_O + EH * EW); /* one row of Tk (every mask stride 0) */
    expect(&a, &e, FWD | ONE, ATTN_ERR_ALIASING,
           "a one-row mask in the gap after out's first row");
    /* Q (B,T,NH,hs) rows with a row's gap after each sequence (sb 16); out
     * (ld 16, sb 36) from that gap on: no shared element, but no period
     * separates them (16: out's sb 36 is no multiple of it and spans 40 > 16;
     * 36: out's own rows fill the period; 4 and 2: both fill it) */
    e = base_case(&a);
    set_strides(&e, A_Q, 16, 0, 0);
    set_strides(&e, A_O, 36, EW, 16);
    e.io.out = at(&a, S_Q + 12);
    const sdpa_view q16 = view_of(0, 16, 0, 0), o36 = view_of(12, 36, EW, 16);
    check_true(!sdpa_views_share(&q16, &o36), "the undecided pair shares no element");
    expect(&a, &e, FWD | ONE, ATTN_ERR_ALIASING, "out disjoint from Q, undecided by the rule");
    /* the backward's gradients */
    e = base_case(&a);
    e.dK = at(&a, S_DQ + 1);
    expect(&a, &e, BWD, ATTN_ERR_ALIASING, "dK one element past dQ");
    e = base_case(&a);
    e.dQ = at(&a, S_G), e.dK = at(&a, S_G + EH * EW), e.dV = at(&a, S_G + 2 * EH * EW);
    for (int y = A_Q; y <= A_V; y++)
        set_strides(&e, y, ET * row3, EW, row3);
    expect(&a, &e, BWD, ATTN_OK, "dQ, dK, dV in one (B,T,3,NH,hs) buffer");
    e.dK = at(&a, S_G + 2);
    expect(&a, &e, BWD, ATTN_ERR_ALIASING, "dK two columns into dQ's");
    e = base_case(&a);
    fused_inputs(&e, &a, S_F, 4);
    e.dV = at(&a, S_F + 3 * EH * EW);
    expect(&a, &e, BWD, ATTN_OK, "dV in the free block of the fused input buffer");
    e.dQ = at(&a, S_F);
    expect(&a, &e, BWD, ATTN_ERR_ALIASING, "dQ on Q's columns");
    test_leave("aliasing");
}

/* An array of one entry is still laid out by strides (attn.h): it may sit
 * in the gap of another's period. Decode with one key of one kv head:
 * B 1, NH 2, NH_kv 1, Tq = Tk = 1. In one buffer F, Q's heads at 0 and 4w
 * (sh 4w), out's at w and 5w, K at 2w, and the backward's dK at 3w (in
 * both their gaps); in G, dQ's heads at 0 and 4w and dV at w; dout has
 * out's strides. Accepted,
 * with results equal to the reference's and the inputs' bytes intact; dK
 * on Q's second head is refused. */
static void one_entry_in_a_gap(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    enum { NH = 2, W = EW, SH = 4 * EW, NF = 6 * EW, NG = 5 * EW };
    const attn_sdpa_shape s = {1, NH, 1, 1, 1, W, W};
    attn_plan *plan = NULL;
    check_true(attn_sdpa_plan_create(&plan, p->dtype, &s, 0.0, 0u, 0) == ATTN_OK, "the plan");
    sdpa_keep_plan(plan);
    test_rng rng;
    rng_seed(&rng, 2404);
    double vals[NF + W + NG];
    rng_fill_normal(&rng, vals, NF + W + NG, 1.0);
    prec_round_array(p, vals, NF + W + NG);
    void *F = prec_typed(p, vals, NF), *G = talloc(NG * p->size);
    void *V = prec_typed(p, vals + NF, W), *dout = prec_typed(p, vals + NF + W, NG);
    void *lse = talloc(NH * p->size);
    const sdpa_view q = {1, NH, 1, W, 0, SH * NH, SH, W}, o = {1, NH, 1, W, W, SH * NH, SH, W};
    const sdpa_view k = {1, 1, 1, W, 2 * W, W, W, W};
    sdpa_io io;
    memset(&io, 0, sizeof io);
    io.Q = F, io.shq = SH, io.K = prec_at(p, F, k.at), io.V = V, io.lse = lse;
    io.out = prec_at(p, F, o.at), io.sho = SH;
    const attn_status fw = sdpa_forward(p, plan, &io);
    expect_true(fw == ATTN_OK, "%s: out (sh 4w) around K of one entry: %s", p->name,
                attn_status_string(fw));
    const double *dv = sdpa_view_gather(p, dout, &q); /* dout takes out's strides */
    const sdpa_ref r = {1, NH, 1, 1, 1, W, W, sdpa_ref_scale(0.0, W), 0, 0,
                        sdpa_view_gather(p, F, &q), sdpa_view_gather(p, F, &k), vals + NF,
                        NH * W, W, W, NULL, 0, 0, 0, NULL};
    double ref[NH * W], ref_lse[NH], rdQ[NH * W], rdK[W], rdV[W];
    sdpa_ref_forward(&r, ref, ref_lse);
    sdpa_ref_backward(&r, dv, rdQ, rdK, rdV);
    const double tol = sdpa_forward_tol(p, 1, W), gtol = sdpa_grad_tol(p, 1, 1, NH, W);
    if (fw == ATTN_OK) {
        expect_within(NULL, residual_scaled(sdpa_view_gather(p, F, &o), ref, NH * W, max_abs(r.V, W)),
                      tol, "%s: out between Q's heads", p->name);
        expect_within(NULL, sdpa_residual_lse(prec_doubles(p, lse, NH), ref_lse, NH), tol,
                      "%s: lse", p->name);
        expect_true(residual_scaled(sdpa_view_gather(p, F, &q), r.Q, NH * W, 1.0) == 0 &&
                        residual_scaled(sdpa_view_gather(p, F, &k), r.K, W, 1.0) == 0,
                    "%s: Q and K intact after the forward", p->name);
    }
    void *dK = prec_at(p, F, 3 * W), *dV = prec_at(p, G, W);
    const attn_status bw = sdpa_backward(p, plan, &io, dout, G, dK, dV);
    expect_true(bw == ATTN_OK, "%s: dK of one entry in Q's and out's gap, dV in dQ's: %s",
                p->name, attn_status_string(bw));
    if (bw == ATTN_OK) {
        const sdpa_view dk = {1, 1, 1, W, 3 * W, W, W, W}, dvv = {1, 1, 1, W, W, W, W, W};
        const double largest = fmax(max_abs(rdQ, NH * W), fmax(max_abs(rdK, W), max_abs(rdV, W)));
        expect_within(NULL, sdpa_grad_residual(sdpa_view_gather(p, G, &q), rdQ, NH * W, largest),
                      gtol, "%s: dQ", p->name);
        expect_within(NULL, sdpa_grad_residual(sdpa_view_gather(p, F, &dk), rdK, W, largest),
                      gtol, "%s: dK", p->name);
        expect_within(NULL, sdpa_grad_residual(sdpa_view_gather(p, G, &dvv), rdV, W, largest),
                      gtol, "%s: dV", p->name);
    }
    const attn_status on_q = sdpa_backward(p, plan, &io, dout, G, prec_at(p, F, SH), dV);
    expect_true(on_q == ATTN_ERR_ALIASING, "%s: dK on Q's second head: %s", p->name,
                attn_status_string(on_q));
    test_leave("one entry in a gap");
}

/* ---- 4. the accepted interleavings at every address ----------------------------------------- */

static void fused_buffers_any_address(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_enter();
    const size_t row4 = 4 * EH * EW, bytes = row4 * EB * ET * p->size;
    test_rng rng;
    rng_seed(&rng, 2403);
    double vals[S_END];
    rng_fill_normal(&rng, vals, S_END, 1.0);
    unsigned char *first = NULL; /* F and G of the first accepted offset */
    size_t refused = 0;
    for (size_t r = 0; r < row4; r++) {
        const arena a = arena_make(p, r);
        p->from_double(a.base, vals, S_END);
        /* Q, K, V, out in F's rows; dQ, dK, dV (Q's strides) in G's first blocks */
        ecase e = base_case(&a);
        fused_inputs(&e, &a, S_F, 4);
        e.io.out = at(&a, S_F + 3 * EH * EW);
        set_strides(&e, A_O, ET * row4, EW, row4);
        e.dQ = at(&a, S_G), e.dK = at(&a, S_G + EH * EW), e.dV = at(&a, S_G + 2 * EH * EW);
        const attn_status fw = sdpa_forward(p, a.plan, &e.io);
        const attn_status bw =
            fw == ATTN_OK ? sdpa_backward(p, a.plan, &e.io, e.dout, e.dQ, e.dK, e.dV) : fw;
        expect_true(fw == ATTN_OK && bw == ATTN_OK,
                    "%s: Q, K, V, out in one (B,T,4,NH,hs) buffer, dQ, dK, dV in another, "
                    "%zu element(s) past a multiple of the row: forward %s, backward %s",
                    p->name, r, attn_status_string(fw), attn_status_string(bw));
        if (fw != ATTN_OK || bw != ATTN_OK) {
            refused++;
            continue;
        }
        if (first == NULL) {
            first = talloc(2 * bytes);
            memcpy(first, at(&a, S_F), bytes);
            memcpy(first + bytes, at(&a, S_G), bytes);
        }
        expect_true(memcmp(first, at(&a, S_F), bytes) == 0 &&
                        memcmp(first + bytes, at(&a, S_G), bytes) == 0,
                    "%s: offset %zu: other bytes than at the first accepted offset", p->name, r);
    }
    print_message("  %s: %zu of %zu offsets refused\n", p->name, refused, row4);
    test_leave("fused buffers at any address");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        SDPA_PREC_CASES(bad_strides),
        SDPA_PREC_CASES(size_one_dimensions),
        SDPA_PREC_CASES(overflow_and_blas_range),
        SDPA_PREC_CASES(huge_head_and_batch_strides),
        SDPA_PREC_CASES(aliasing),
        SDPA_PREC_CASES(one_entry_in_a_gap),
        SDPA_PREC_CASES(fused_buffers_any_address),
    };
    return cmocka_run_group_tests_name("sdpa_strides", tests, NULL, NULL);
}
