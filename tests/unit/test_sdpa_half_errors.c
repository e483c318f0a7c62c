/*
 * test_sdpa_half_errors: every status of attn_sdpa_forward_bf16/_f16,
 * attn_sdpa_backward_bf16/_f16 and the one-shots attn_sdpa_bf16/_f16, case
 * by case and, where two coincide, in the header's order (NULL pointers,
 * PLAN_KIND, DTYPE_MISMATCH, INFERENCE_PLAN (backward), BAD_STRIDE,
 * SIZE_OVERFLOW, BLAS_RANGE, BAD_LENGTH, ALIASING; the one-shots first
 * attn_sdpa_plan_create's), and the dtypes of the plan creators:
 * attn_sdpa_plan_create takes ATTN_BF16 and ATTN_F16, attn_plan_create
 * refuses them (BAD_DTYPE, *plan untouched).
 *
 * DTYPE_MISMATCH every way: a _bf16 call on an ATTN_F16 plan and the
 * reverse, _f32 and _f64 calls on a half plan, half calls on ATTN_F32 and
 * ATTN_F64 plans. Extents in bytes count 2 per element of Q, K, V, out,
 * dout, dQ, dK, dV and 4 per float of the mask and lse (attn.h: "strides
 * in elements of the half type"; the mask and lse stay float): a stride
 * whose extent fits in 16-bit elements and would not in floats is not
 * SIZE_OVERFLOW, and aliasing is judged on those byte spans.
 *
 * Every buffer of a call (Q, K, V, mask, out, lse, dout, dQ, dK, dV) lives
 * in one arena of slots filled with the sentinel pattern before the call
 * and compared byte for byte after a failing one, the key lengths in an
 * array of their own compared too: on every error nothing is written.
 * Shape (support/sdpa_error_arena.h): B 2, NH 4, NH_kv 2, Tq 3, Tk 5, hs 2,
 * hs_v 3.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support/sdpa_error_arena.h"
#include "support/sdpa_half.h"
#include "support/test_common.h"

enum { SLOT_BYTES = 192 * 8 };

static const attn_sdpa_shape shape_e = {E_B, E_NH, E_NHKV, E_TQ, E_TK, E_HS, E_HSV};

typedef struct harena {
    unsigned char *base;
    size_t bytes;
    size_t *lengths;
} harena;

/* byte `bytes` of slot id */
static void *slot(const harena *a, int id, size_t bytes)
{
    return a->base + (size_t)id * SLOT_BYTES + bytes;
}

/* element i of a 16-bit slot, of a float slot */
static void *h_at(const harena *a, int id, size_t i)
{
    return slot(a, id, 2 * i);
}

static void *f_at(const harena *a, int id, size_t i)
{
    return slot(a, id, 4 * i);
}

/* the call's type: one of the half types, or a float precision */
typedef struct hcall {
    const half_type *ht;  /* the half call, or NULL */
    const test_prec *fp;  /* the float call when ht is NULL */
    attn_plan *plan;
    int null_args;
    sdpa_io io;
    const void *dout;
    void *dQ, *dK, *dV;
} hcall;

static hcall call_default(const harena *a, const half_type *ht, attn_plan *plan)
{
    hcall c;
    memset(&c, 0, sizeof c);
    c.ht = ht;
    c.plan = plan;
    c.io.Q = h_at(a, S_Q, 0), c.io.K = h_at(a, S_K, 0), c.io.V = h_at(a, S_V, 0);
    c.io.mask = f_at(a, S_MASK, 0);
    c.io.mask_ld = E_TK, c.io.mask_sh = E_TQ * E_TK, c.io.mask_sb = E_NH * E_TQ * E_TK;
    c.io.key_lengths = a->lengths;
    c.io.out = h_at(a, S_OUT, 0), c.io.lse = f_at(a, S_LSE, 0);
    c.dout = h_at(a, S_DOUT, 0);
    c.dQ = h_at(a, S_DQ, 0), c.dK = h_at(a, S_DK, 0), c.dV = h_at(a, S_DV, 0);
    return c;
}

static const size_t lengths_ok[2] = {5, 3};

static void expect_hcall(const harena *a, const hcall *c, int bw, attn_status want,
                        const char *what, const size_t lengths[2])
{
    sentinel_fill(a->base, a->bytes);
    a->lengths[0] = lengths[0], a->lengths[1] = lengths[1];
    const sdpa_io *io = c->null_args ? NULL : &c->io;
    attn_status st;
    if (c->ht != NULL)
        st = bw ? half_backward(c->ht, c->plan, io, c->dout, c->dQ, c->dK, c->dV)
                : half_forward(c->ht, c->plan, io);
    else
        st = bw ? sdpa_backward(c->fp, c->plan, io, c->dout, c->dQ, c->dK, c->dV)
                : sdpa_forward(c->fp, c->plan, io);
    const char *type = c->ht != NULL ? c->ht->name : c->fp->name;
    const char *fn = bw ? "attn_sdpa_backward" : "attn_sdpa_forward";
    expect_true(st == want, "%s_%s, %s: got %s (%d), want %s (%d)", fn, type, what,
                attn_status_string(st), (int)st, attn_status_string(want), (int)want);
    if (want != ATTN_OK) {
        expect_true(sentinel_intact(a->base, a->bytes), "%s_%s, %s: a buffer was modified", fn,
                    type, what);
        expect_true(a->lengths[0] == lengths[0] && a->lengths[1] == lengths[1],
                    "%s_%s, %s: key_lengths modified", fn, type, what);
    }
}

/* the default call of type ht on plan_ changed by the statements after `what` */
#define CASE(bw, ht_, plan_, want, what, ...)                     \
    do {                                                          \
        hcall c_ = call_default(&a, ht_, plan_);                  \
        const size_t *len_ = lengths_ok;                          \
        __VA_ARGS__;                                              \
        expect_hcall(&a, &c_, bw, want, what, len_);               \
    } while (0)

static attn_plan *sdpa_plan(attn_dtype dtype, unsigned flags)
{
    attn_plan *plan = NULL;
    const attn_status st = attn_sdpa_plan_create(&plan, dtype, &shape_e, 0.0, flags, 0);
    check_true(st == ATTN_OK, "an sdpa plan of dtype %d: %s", (int)dtype, attn_status_string(st));
    return sdpa_keep_plan(plan);
}

static harena arena_new(void)
{
    harena a = {NULL, SLOTS * (size_t)SLOT_BYTES, NULL};
    a.base = talloc(a.bytes);
    a.lengths = talloc(4 * sizeof(size_t));
    return a;
}

/* the cases both calls share (bw 0 forward, 1 backward) */
static void shared_errors(const harena *arena_ptr, const half_type *ht, int bw)
{
    const harena a = *arena_ptr;
    attn_plan *plan = sdpa_plan(ht->dtype, ATTN_CAUSAL);
    attn_plan *other = sdpa_plan(half_other(ht)->dtype, ATTN_CAUSAL);
    attn_plan *f32 = sdpa_plan(ATTN_F32, ATTN_CAUSAL), *f64 = sdpa_plan(ATTN_F64, ATTN_CAUSAL);
    attn_plan *proj = NULL;
    check_true(attn_plan_create(&proj, ATTN_F32, 2, 3, 4, 2, 3, 0.0, 0u) == ATTN_OK,
               "a projected plan");
    sdpa_keep_plan(proj);
    static const size_t zero[2] = {0, 0}, over[2] = {5, 6}, huge[2] = {SIZE_MAX, 1};
    CASE(bw, ht, plan, ATTN_OK, "valid", (void)0);
    CASE(bw, ht, plan, ATTN_OK, "mask NULL", c_.io.mask = NULL);
    CASE(bw, ht, plan, ATTN_OK, "key_lengths NULL", c_.io.key_lengths = NULL);
    CASE(bw, ht, plan, ATTN_OK, "lengths 0 and 0", len_ = zero);
    CASE(bw, ht, plan, ATTN_OK, "strides given, dense", c_.io.ldq = E_NH * E_HS;
         c_.io.ldk = E_NHKV * E_HS; c_.io.ldv = E_NHKV * E_HSV; c_.io.ldo = E_NH * E_HSV);
    /* NULL pointers */
    CASE(bw, ht, plan, ATTN_ERR_NULL_POINTER, "plan NULL", c_.plan = NULL);
    CASE(bw, ht, plan, ATTN_ERR_NULL_POINTER, "args NULL", c_.null_args = 1);
    CASE(bw, ht, plan, ATTN_ERR_NULL_POINTER, "Q NULL", c_.io.Q = NULL);
    CASE(bw, ht, plan, ATTN_ERR_NULL_POINTER, "K NULL", c_.io.K = NULL);
    CASE(bw, ht, plan, ATTN_ERR_NULL_POINTER, "V NULL", c_.io.V = NULL);
    CASE(bw, ht, plan, ATTN_ERR_NULL_POINTER, "out NULL", c_.io.out = NULL);
    /* plan kind, then dtype */
    CASE(bw, ht, proj, ATTN_ERR_PLAN_KIND, "a projected plan", (void)0);
    CASE(bw, ht, proj, ATTN_ERR_NULL_POINTER, "NULL before PLAN_KIND", c_.io.V = NULL);
    CASE(bw, ht, other, ATTN_ERR_DTYPE_MISMATCH, "on a plan of the other 16-bit type", (void)0);
    CASE(bw, ht, f32, ATTN_ERR_DTYPE_MISMATCH, "on an ATTN_F32 plan", (void)0);
    CASE(bw, ht, f64, ATTN_ERR_DTYPE_MISMATCH, "on an ATTN_F64 plan", (void)0);
    CASE(bw, NULL, plan, ATTN_ERR_DTYPE_MISMATCH, "an _f32 call on the half plan",
         c_.fp = &test_prec_f32);
    CASE(bw, NULL, plan, ATTN_ERR_DTYPE_MISMATCH, "an _f64 call on the half plan",
         c_.fp = &test_prec_f64);
    CASE(bw, half_other(ht), plan, ATTN_ERR_DTYPE_MISMATCH, "the other 16-bit type's call",
         (void)0);
    CASE(bw, ht, other, ATTN_ERR_NULL_POINTER, "NULL before DTYPE_MISMATCH", c_.io.K = NULL);
    CASE(bw, ht, other, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before BAD_STRIDE",
         c_.io.ldq = 1);
    CASE(bw, ht, other, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before BAD_LENGTH",
         len_ = over);
    CASE(bw, ht, other, ATTN_ERR_DTYPE_MISMATCH, "DTYPE_MISMATCH before ALIASING",
         c_.io.out = h_at(&a, S_Q, 0); c_.dQ = h_at(&a, S_Q, 0));
    /* strides (in elements of the half type) */
    CASE(bw, ht, plan, ATTN_ERR_BAD_STRIDE, "ldq < NH*hs", c_.io.ldq = E_NH * E_HS - 1);
    CASE(bw, ht, plan, ATTN_ERR_BAD_STRIDE, "ldk < NH_kv*hs", c_.io.ldk = E_NHKV * E_HS - 1);
    CASE(bw, ht, plan, ATTN_ERR_BAD_STRIDE, "ldv = NH_kv*hs < NH_kv*hs_v",
         c_.io.ldv = E_NHKV * E_HS);
    CASE(bw, ht, plan, ATTN_ERR_BAD_STRIDE, "ldo < NH*hs_v", c_.io.ldo = E_NH * E_HSV - 1);
    CASE(bw, ht, plan, ATTN_ERR_BAD_STRIDE, "heads of Q overlapping (shq 1 < hs)",
         c_.io.shq = 1);
    CASE(bw, ht, plan, ATTN_ERR_BAD_STRIDE, "sequences of K overlapping (sbk < Tk*ldk)",
         c_.io.sbk = E_TK * E_NHKV * E_HS - 1);
    CASE(bw, ht, plan, ATTN_OK, "(B,NH,T,hs) strides", c_.io.ldq = E_HS;
         c_.io.shq = E_TQ * E_HS; c_.io.sbq = E_NH * E_TQ * E_HS);
    CASE(bw, ht, plan, ATTN_ERR_BAD_STRIDE, "mask_ld < Tk", c_.io.mask_ld = E_TK - 1);
    CASE(bw, ht, plan, ATTN_OK, "every mask stride 0", c_.io.mask_ld = 0; c_.io.mask_sh = 0;
         c_.io.mask_sb = 0);
    /* extents: 2 bytes per element of Q, K, V, out; 4 per mask entry */
    CASE(bw, ht, plan, ATTN_ERR_BAD_STRIDE, "BAD_STRIDE before SIZE_OVERFLOW", c_.io.ldq = 1;
         c_.io.ldk = SIZE_MAX / 2);
    CASE(bw, ht, plan, ATTN_ERR_SIZE_OVERFLOW, "Q's extent (elements)", c_.io.ldq = SIZE_MAX / 4);
    CASE(bw, ht, plan, ATTN_ERR_SIZE_OVERFLOW, "K's extent (bytes: 9/16 SIZE_MAX elements)",
         c_.io.ldk = SIZE_MAX / 16);
    CASE(bw, ht, plan, ATTN_ERR_SIZE_OVERFLOW, "V's extent (bytes)", c_.io.ldv = SIZE_MAX / 12);
    CASE(bw, ht, plan, ATTN_ERR_SIZE_OVERFLOW, "out's extent (bytes)", c_.io.ldo = SIZE_MAX / 8);
    CASE(bw, ht, plan, ATTN_ERR_SIZE_OVERFLOW,
         "the float mask's extent (bytes: 1/3 SIZE_MAX entries of 4)",
         c_.io.mask_sb = SIZE_MAX / 3);
    CASE(bw, ht, plan, ATTN_ERR_BLAS_RANGE,
         "K's extent fits in 16-bit elements (not in floats): BLAS_RANGE, not SIZE_OVERFLOW",
         c_.io.ldk = SIZE_MAX / 24);
    CASE(bw, ht, plan, ATTN_ERR_BLAS_RANGE, "ldq > INT_MAX", c_.io.ldq = (size_t)INT_MAX + 1);
    CASE(bw, ht, plan, ATTN_ERR_BLAS_RANGE, "ldv > INT_MAX", c_.io.ldv = (size_t)INT_MAX + 1);
    CASE(bw, ht, plan, ATTN_ERR_SIZE_OVERFLOW, "SIZE_OVERFLOW before BLAS_RANGE",
         c_.io.ldq = (size_t)INT_MAX + 1; c_.io.ldk = SIZE_MAX / 4);
    CASE(bw, ht, plan, ATTN_ERR_BLAS_RANGE, "BLAS_RANGE before BAD_LENGTH",
         c_.io.ldo = (size_t)INT_MAX + 1; len_ = over);
    /* key lengths */
    CASE(bw, ht, plan, ATTN_ERR_BAD_LENGTH, "a length Tk + 1", len_ = over);
    CASE(bw, ht, plan, ATTN_ERR_BAD_LENGTH, "a length SIZE_MAX", len_ = huge);
    CASE(bw, ht, plan, ATTN_ERR_BAD_STRIDE, "BAD_STRIDE before BAD_LENGTH", c_.io.mask_ld = 1;
         len_ = over);
    CASE(bw, ht, plan, ATTN_ERR_BAD_LENGTH, "BAD_LENGTH before ALIASING",
         c_.io.out = h_at(&a, S_Q, 0); c_.dQ = h_at(&a, S_Q, 0); len_ = over);
    CASE(bw, ht, plan, ATTN_OK, "inputs shared (Q == K == V)", c_.io.K = c_.io.Q;
         c_.io.V = c_.io.Q);
}

static void forward_errors(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    const harena a = arena_new();
    shared_errors(&a, ht, 0);
    attn_plan *plan = sdpa_plan(ht->dtype, ATTN_CAUSAL);
    attn_plan *inference = sdpa_plan(ht->dtype, ATTN_INFERENCE);
    /* ALIASING, on byte spans: out 2 bytes an element, lse and the mask 4 */
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "out == Q", c_.io.out = h_at(&a, S_Q, 0));
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "out overlapping Q's second half",
         c_.io.out = h_at(&a, S_Q, N_Q / 2));
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "out starts at K's last element",
         c_.io.out = h_at(&a, S_K, N_K - 1));
    CASE(0, ht, plan, ATTN_OK, "out right after K", c_.io.out = h_at(&a, S_K, N_K));
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "V ends on out's first element",
         c_.io.V = h_at(&a, S_OUT, 0); c_.io.out = h_at(&a, S_OUT, N_V - 1));
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "out on the float mask's last byte pair",
         c_.io.out = slot(&a, S_MASK, 4 * N_M - 2));
    CASE(0, ht, plan, ATTN_OK, "out right after the float mask",
         c_.io.out = slot(&a, S_MASK, 4 * N_M));
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "lse == out", c_.io.lse = slot(&a, S_OUT, 0));
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "lse's first float on out's last two elements",
         c_.io.lse = slot(&a, S_OUT, 2 * N_O - 4));
    CASE(0, ht, plan, ATTN_OK, "lse right after out", c_.io.lse = slot(&a, S_OUT, 2 * N_O));
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "out on lse's last float",
         c_.io.out = slot(&a, S_LSE, 4 * N_L - 4));
    CASE(0, ht, plan, ATTN_OK, "out right after lse", c_.io.out = slot(&a, S_LSE, 4 * N_L));
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "lse inside V", c_.io.lse = slot(&a, S_V, 20));
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "out on key_lengths", c_.io.out = (void *)a.lengths);
    CASE(0, ht, plan, ATTN_ERR_ALIASING, "lse on key_lengths", c_.io.lse = (void *)a.lengths);
    CASE(0, ht, plan, ATTN_OK, "lse NULL", c_.io.lse = NULL);
    CASE(0, ht, inference, ATTN_OK, "an inference plan", (void)0);
    CASE(0, ht, inference, ATTN_ERR_ALIASING, "an inference plan, out == V",
         c_.io.out = h_at(&a, S_V, 0));
    CASE(0, ht, plan, ATTN_OK, "the plan still works after its errors", (void)0);
    /* the projected calls on a half sdpa plan: PLAN_KIND */
    sentinel_fill(a.base, a.bytes);
    attn_status st = test_prec_f32.forward(plan, h_at(&a, S_Q, 0), h_at(&a, S_K, 0),
                                           h_at(&a, S_V, 0), f_at(&a, S_MASK, 0), NULL,
                                           h_at(&a, S_OUT, 0), NULL);
    expect_true(st == ATTN_ERR_PLAN_KIND && sentinel_intact(a.base, a.bytes),
                "%s: attn_forward_f32 on a half sdpa plan: %s", ht->name, attn_status_string(st));
    test_leave("forward errors");
}

static void backward_errors(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    const harena a = arena_new();
    shared_errors(&a, ht, 1);
    attn_plan *plan = sdpa_plan(ht->dtype, ATTN_CAUSAL);
    attn_plan *inference = sdpa_plan(ht->dtype, ATTN_INFERENCE | ATTN_CAUSAL);
    attn_plan *other_inf = sdpa_plan(half_other(ht)->dtype, ATTN_INFERENCE);
    CASE(1, ht, plan, ATTN_ERR_NULL_POINTER, "lse NULL", c_.io.lse = NULL);
    CASE(1, ht, plan, ATTN_ERR_NULL_POINTER, "dout NULL", c_.dout = NULL);
    CASE(1, ht, plan, ATTN_ERR_NULL_POINTER, "dQ NULL", c_.dQ = NULL);
    CASE(1, ht, plan, ATTN_ERR_NULL_POINTER, "dK NULL", c_.dK = NULL);
    CASE(1, ht, plan, ATTN_ERR_NULL_POINTER, "dV NULL", c_.dV = NULL);
    /* INFERENCE_PLAN: after DTYPE_MISMATCH, before the strides */
    CASE(1, ht, inference, ATTN_ERR_INFERENCE_PLAN, "an inference plan", (void)0);
    CASE(1, ht, inference, ATTN_ERR_NULL_POINTER, "NULL before INFERENCE_PLAN",
         c_.dV = NULL);
    CASE(1, ht, other_inf, ATTN_ERR_DTYPE_MISMATCH,
         "DTYPE_MISMATCH before INFERENCE_PLAN (an inference plan of the other type)",
         (void)0);
    CASE(1, NULL, inference, ATTN_ERR_DTYPE_MISMATCH,
         "DTYPE_MISMATCH before INFERENCE_PLAN (an _f32 call)", c_.fp = &test_prec_f32);
    CASE(1, ht, inference, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before BAD_STRIDE",
         c_.io.ldq = 1);
    CASE(1, ht, inference, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before BAD_LENGTH",
         len_ = (const size_t[]){6, 6});
    CASE(1, ht, inference, ATTN_ERR_INFERENCE_PLAN, "INFERENCE_PLAN before ALIASING",
         c_.dQ = h_at(&a, S_Q, 0));
    /* ALIASING of the gradients, with every input (out, lse, dout included) and each other */
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dQ == Q", c_.dQ = h_at(&a, S_Q, 0));
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dK overlapping K's end",
         c_.dK = h_at(&a, S_K, N_K - 1));
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dV == V", c_.dV = h_at(&a, S_V, 0));
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dQ == out", c_.dQ = h_at(&a, S_OUT, 0));
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dV == dout", c_.dV = h_at(&a, S_DOUT, 0));
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dK on lse's last float",
         c_.dK = slot(&a, S_LSE, 4 * N_L - 2));
    CASE(1, ht, plan, ATTN_OK, "dK right after lse", c_.dK = slot(&a, S_LSE, 4 * N_L));
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dQ inside the mask", c_.dQ = f_at(&a, S_MASK, 70));
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dV on key_lengths", c_.dV = (void *)a.lengths);
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dQ == dK", c_.dK = c_.dQ);
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dK starts at dQ's last element",
         c_.dK = h_at(&a, S_DQ, N_Q - 1));
    CASE(1, ht, plan, ATTN_OK, "dK right after dQ", c_.dK = h_at(&a, S_DQ, N_Q));
    CASE(1, ht, plan, ATTN_ERR_ALIASING, "dQ on dV's last element",
         c_.dQ = h_at(&a, S_DV, N_V - 1));
    CASE(1, ht, plan, ATTN_OK, "dout == Q (inputs may share)", c_.dout = h_at(&a, S_Q, 0));
    CASE(1, ht, plan, ATTN_OK, "the plan still works after its errors", (void)0);
    test_leave("backward errors");
}

/* the one-shot on the arena: the create's statuses, then the forward's */
static void expect_one_shot(const harena *a, const half_type *ht, const attn_sdpa_shape *shape,
                            double scale, unsigned flags, const sdpa_io *io, attn_status want,
                            const char *what)
{
    sentinel_fill(a->base, a->bytes);
    a->lengths[0] = 5, a->lengths[1] = 3;
    const attn_status st = half_one_shot(ht, shape, scale, flags, 0, io);
    expect_true(st == want, "attn_sdpa_%s, %s: got %s, want %s", ht->name, what,
                attn_status_string(st), attn_status_string(want));
    if (want != ATTN_OK)
        expect_true(sentinel_intact(a->base, a->bytes) && a->lengths[0] == 5 &&
                        a->lengths[1] == 3,
                    "attn_sdpa_%s, %s: a buffer was modified", ht->name, what);
}

static void one_shot_errors(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    const harena a = arena_new();
    const hcall d = call_default(&a, ht, NULL);
    sdpa_io bad_out = d.io, bad_len = d.io;
    bad_out.out = h_at(&a, S_K, 0);
    size_t *over = talloc(2 * sizeof(size_t));
    over[0] = 5, over[1] = 6;
    bad_len.key_lengths = over;
    attn_sdpa_shape zero = shape_e, odd = shape_e;
    zero.Tk = 0, odd.NH_kv = 3;
    expect_one_shot(&a, ht, &shape_e, 0.0, ATTN_CAUSAL, &d.io, ATTN_OK, "valid");
    expect_one_shot(&a, ht, NULL, 0.0, 0u, &d.io, ATTN_ERR_NULL_POINTER, "shape NULL");
    expect_one_shot(&a, ht, &shape_e, 0.0, 0u, NULL, ATTN_ERR_NULL_POINTER, "args NULL");
    expect_one_shot(&a, ht, &shape_e, 0.0, 1u << 7, &d.io, ATTN_ERR_BAD_FLAGS, "unknown flag");
    expect_one_shot(&a, ht, &zero, 0.0, 0u, &d.io, ATTN_ERR_ZERO_DIMENSION, "Tk 0");
    expect_one_shot(&a, ht, &odd, 0.0, 0u, &d.io, ATTN_ERR_BAD_SHAPE, "NH % NH_kv != 0");
    expect_one_shot(&a, ht, &shape_e, (double)NAN, 0u, &d.io, ATTN_ERR_BAD_SCALE, "scale NaN");
    expect_one_shot(&a, ht, &shape_e, HUGE_VAL, 0u, &d.io, ATTN_ERR_BAD_SCALE, "scale inf");
    /* above FLT_MAX and every 16-bit type's largest: refused whichever bounds it */
    expect_one_shot(&a, ht, &shape_e, 1e39, 0u, &d.io, ATTN_ERR_BAD_SCALE, "scale 1e39");
    expect_one_shot(&a, ht, &shape_e, 0.5, 0u, &d.io, ATTN_OK, "scale 0.5");
    expect_one_shot(&a, ht, &shape_e, 0.0, 0u, &bad_out, ATTN_ERR_ALIASING, "out == K");
    expect_one_shot(&a, ht, &shape_e, 0.0, 0u, &bad_len, ATTN_ERR_BAD_LENGTH, "a length Tk + 1");
    expect_one_shot(&a, ht, &odd, 0.0, 0u, &bad_out, ATTN_ERR_BAD_SHAPE,
                    "the create's BAD_SHAPE before the forward's ALIASING");
    test_leave("one-shot errors");
}

static void plan_dtypes(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    static int sentinel_object;
    attn_plan *const sentinel = (attn_plan *)(void *)&sentinel_object;
    attn_plan *plan = sentinel;
    attn_status st = attn_plan_create(&plan, ht->dtype, 2, 3, 4, 2, 2, 0.0, 0u);
    expect_true(st == ATTN_ERR_BAD_DTYPE && plan == sentinel,
                "attn_plan_create(%s): %s, plan %s", ht->name, attn_status_string(st),
                plan == sentinel ? "untouched" : "written");
    st = attn_plan_create(&plan, ht->dtype, 2, 3, 4, 2, 2, 0.0, ATTN_INFERENCE);
    expect_true(st == ATTN_ERR_BAD_DTYPE && plan == sentinel,
                "attn_plan_create(%s, ATTN_INFERENCE): %s", ht->name, attn_status_string(st));
    st = attn_plan_create(&plan, ht->dtype, 0, 3, 4, 2, 2, 0.0, 0u);
    expect_true(st == ATTN_ERR_BAD_DTYPE && plan == sentinel,
                "attn_plan_create(%s, B 0): BAD_DTYPE before ZERO_DIMENSION, got %s", ht->name,
                attn_status_string(st));
    st = attn_sdpa_plan_create(&plan, ht->dtype, &shape_e, 0.0, ATTN_CAUSAL, 2);
    expect_true(st == ATTN_OK && plan != sentinel && plan != NULL,
                "attn_sdpa_plan_create(%s): %s", ht->name, attn_status_string(st));
    if (st == ATTN_OK)
        attn_plan_destroy(plan);
    plan = sentinel;
    st = attn_sdpa_plan_create(&plan, (attn_dtype)5, &shape_e, 0.0, 0u, 0);
    expect_true(st == ATTN_ERR_BAD_DTYPE && plan == sentinel,
                "attn_sdpa_plan_create(dtype 5): %s", attn_status_string(st));
    st = attn_sdpa_plan_create(&plan, ht->dtype, NULL, 0.0, 0u, 0);
    expect_true(st == ATTN_ERR_NULL_POINTER && plan == sentinel,
                "attn_sdpa_plan_create(%s, shape NULL): %s", ht->name, attn_status_string(st));
    st = attn_sdpa_plan_create(&plan, ht->dtype, &shape_e, (double)NAN, 0u, 0);
    expect_true(st == ATTN_ERR_BAD_SCALE && plan == sentinel,
                "attn_sdpa_plan_create(%s, scale NaN): %s", ht->name, attn_status_string(st));
    test_leave("plan dtypes");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        HALF_CASES(forward_errors),
        HALF_CASES(backward_errors),
        HALF_CASES(one_shot_errors),
        HALF_CASES(plan_dtypes),
    };
    return cmocka_run_group_tests_name("sdpa_half_errors", tests, NULL, NULL);
}
