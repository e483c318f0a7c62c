/*
 * The error calls of the sdpa statuses suites (test_sdpa_call_errors,
 * test_sdpa_create_errors): every buffer of a call lives in one arena of
 * slots, filled with the sentinel pattern before the call and compared byte
 * for byte afterwards, and the key lengths in another array, so a failing
 * call that wrote anything is caught; the default (valid) call on the shape
 * B 2, NH 4, NH_kv 2, Tq 3, Tk 5, hs 2, hs_v 3, and CALL_CASE to change it.
 */
#ifndef ATTN_TEST_SDPA_ERROR_ARENA_H
#define ATTN_TEST_SDPA_ERROR_ARENA_H

#include <stddef.h>

#include <attn/attn.h>

#include "support/precision.h"
#include "support/sdpa_calls.h"
#include "support/talloc.h"

/* The shape of the error calls: B 2, NH 4, NH_kv 2, Tq 3, Tk 5, hs 2, hs_v 3. */
enum { E_B = 2, E_NH = 4, E_NHKV = 2, E_TQ = 3, E_TK = 5, E_HS = 2, E_HSV = 3 };
enum {
    N_Q = E_B * E_TQ * E_NH * E_HS,      /* 48 */
    N_K = E_B * E_TK * E_NHKV * E_HS,    /* 40 */
    N_V = E_B * E_TK * E_NHKV * E_HSV,   /* 60 */
    N_O = E_B * E_TQ * E_NH * E_HSV,     /* 72 */
    N_L = E_B * E_NH * E_TQ,             /* 24 */
    N_M = E_B * E_NH * E_TQ * E_TK       /* 120 */
};
enum slot_id { S_Q, S_K, S_V, S_MASK, S_OUT, S_LSE, S_DOUT, S_DQ, S_DK, S_DV, SLOTS };
#define SLOT_ELEMENTS 192

typedef struct arena {
    const test_prec *p;
    unsigned char *base;
    size_t bytes;
    size_t *lengths; /* [0, 1] the call's, [2..] spare */
} arena;

static inline arena arena_make(const test_prec *p)
{
    arena a = {p, NULL, SLOTS * SLOT_ELEMENTS * p->size, NULL};
    a.base = talloc(a.bytes);
    a.lengths = talloc(8 * sizeof(size_t));
    return a;
}

/* element `offset` of slot `id` */
static inline void *at(const arena *a, int id, size_t offset)
{
    return a->base + ((size_t)id * SLOT_ELEMENTS + offset) * a->p->size;
}

extern const attn_sdpa_shape error_shape;

/* every input and output of an error call */
typedef struct err_call {
    const test_prec *via;
    attn_plan *plan;
    int null_args;
    sdpa_io io;
    const void *dout;
    void *dQ, *dK, *dV;
} err_call;

/* the valid call on the arena's slots (lengths: a->lengths) */
err_call err_default(const arena *a, attn_plan *plan);
/* Fills the arena with the sentinel (and the lengths with valid ones unless
 * the case set them), runs the call and checks status and bytes. */
void expect_call(const arena *a, const err_call *c, int backward, attn_status want,
                 const char *what, const size_t lengths[2]);

/* {5, 3} */
extern const size_t valid_lengths[2];

/* One call on plan_ (backward when bw), in an arena `a` in scope: the
 * default call changed by the statements after `what` (c_ the call, len_
 * its key lengths), its status and the arena checked by expect_call. */
#define CALL_CASE(bw, plan_, want, what, ...)                      \
    do {                                                           \
        err_call c_ = err_default(&a, plan_);                      \
        const size_t *len_ = valid_lengths;                        \
        __VA_ARGS__;                                               \
        expect_call(&a, &c_, bw, want, what, len_);                \
    } while (0)
#define FORWARD_CASE(...) CALL_CASE(0, __VA_ARGS__)
#define BACKWARD_CASE(...) CALL_CASE(1, __VA_ARGS__)

#endif /* ATTN_TEST_SDPA_ERROR_ARENA_H */
