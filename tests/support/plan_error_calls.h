/*
 * The error calls of the plan suites (test_plan_create,
 * test_plan_allocations, test_plan_forward_errors, test_plan_backward_errors):
 * every buffer of a call is a slot of one arena, filled with the sentinel
 * pattern before the call and compared byte for byte afterwards, so a
 * failing call that wrote anything is caught; the plan shape of the error
 * calls, and the forward call on the arena's slots (FORWARD_CASE).
 */
#ifndef ATTN_TEST_PLAN_ERROR_CALLS_H
#define ATTN_TEST_PLAN_ERROR_CALLS_H

#include <stddef.h>
#include <string.h>

#include <attn/attn.h>

#include "reference/mha.h"
#include "support/precision.h"
#include "support/talloc.h"

/* Every buffer of an error call is a slot of one arena. */
enum slot_id {
    S_X, S_WQ, S_WK, S_WV, S_WO, S_OUT, S_WEIGHTS, S_DOUT,
    S_DX, S_DWQ, S_DWK, S_DWV, S_DWO, SLOTS
};
#define SLOT_ELEMENTS 64

/* The plan shape of the error calls: D = NH*hs = 6 differs from C = 4, so
 * (B,T,C) arrays (24 elements) and (B,T,D) arrays (36) differ in size. */
extern const mha_shape plan_shape;
enum { N_BTC = 24, N_BTD = 36, N_W = 24, N_WEIGHTS = 36 };

typedef struct arena {
    const test_prec *p;
    unsigned char *base;
    size_t bytes;
} arena;

static inline arena arena_make(const test_prec *p)
{
    arena a = {p, NULL, SLOTS * SLOT_ELEMENTS * p->size};
    a.base = talloc(a.bytes);
    memset(a.base, 0, a.bytes);
    return a;
}

/* element `offset` of slot `id` */
static inline void *at(const arena *a, int id, size_t offset)
{
    return a->base + ((size_t)id * SLOT_ELEMENTS + offset) * a->p->size;
}

/* got == want; unless want is ATTN_OK, the arena as it was before the call */
void expect(const arena *a, attn_status got, attn_status want, const char *fn, const char *what);

typedef struct forward_call {
    const test_prec *via; /* whose attn_forward is called */
    attn_plan *plan;
    void *X, *Wq, *Wk, *Wv, *Wo, *out, *weights;
} forward_call;

/* the pointer arguments of a forward by position, and their names */
extern const char *const forward_args[7];
void **forward_arg(forward_call *c, size_t i);
/* the valid forward on the arena's slots */
forward_call forward_default(const arena *a, attn_plan *plan);
attn_status forward_run(forward_call c);

/* One error call on plan_ in arena `a`: the default call of `type` (made
 * by make), changed by the statements after `what`, run on a sentinel-
 * filled arena by run, its status and the arena checked by expect. */
#define ARENA_CASE(type, make, run, fn, plan_, want, what, ...) \
    do {                                                        \
        type c_ = make(&a, plan_);                              \
        __VA_ARGS__;                                            \
        sentinel_fill(a.base, a.bytes);                         \
        expect(&a, run(c_), want, fn, what);                    \
    } while (0)
#define FORWARD_CASE(...) \
    ARENA_CASE(forward_call, forward_default, forward_run, "forward", __VA_ARGS__)

#endif /* ATTN_TEST_PLAN_ERROR_CALLS_H */
