/* The arena of the sdpa error calls (sdpa_error_arena.h). */
#include "support/sdpa_error_arena.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/check.h"
#include "support/talloc.h"

const attn_sdpa_shape error_shape = {E_B, E_NH, E_NHKV, E_TQ, E_TK, E_HS, E_HSV};

err_call err_default(const arena *a, attn_plan *plan)
{
    err_call c;
    memset(&c, 0, sizeof c);
    c.via = a->p;
    c.plan = plan;
    c.io.Q = at(a, S_Q, 0);
    c.io.K = at(a, S_K, 0);
    c.io.V = at(a, S_V, 0);
    c.io.mask = at(a, S_MASK, 0);
    c.io.mask_ld = E_TK;
    c.io.mask_sh = E_TQ * E_TK;
    c.io.mask_sb = E_NH * E_TQ * E_TK;
    c.io.key_lengths = a->lengths;
    c.io.out = at(a, S_OUT, 0);
    c.io.lse = at(a, S_LSE, 0);
    c.dout = at(a, S_DOUT, 0);
    c.dQ = at(a, S_DQ, 0);
    c.dK = at(a, S_DK, 0);
    c.dV = at(a, S_DV, 0);
    return c;
}

/* Fills the arena with the sentinel (and the lengths with valid ones unless
 * the case set them), runs the call and checks status and bytes. */
void expect_call(const arena *a, const err_call *c, int backward, attn_status want,
                 const char *what, const size_t lengths[2])
{
    sentinel_fill(a->base, a->bytes);
    a->lengths[0] = lengths[0];
    a->lengths[1] = lengths[1];
    const attn_status st = backward
                               ? sdpa_backward(c->via, c->plan, c->null_args ? NULL : &c->io,
                                               c->dout, c->dQ, c->dK, c->dV)
                               : sdpa_forward(c->via, c->plan, c->null_args ? NULL : &c->io);
    const char *fn = backward ? "attn_sdpa_backward" : "attn_sdpa_forward";
    expect_true(st == want, "%s %s, %s: got %s (%d), want %s (%d)", a->p->name, fn, what,
                attn_status_string(st), (int)st, attn_status_string(want), (int)want);
    if (want != ATTN_OK) {
        expect_true(sentinel_intact(a->base, a->bytes), "%s %s, %s: a buffer was modified",
                    a->p->name, fn, what);
        expect_true(a->lengths[0] == lengths[0] && a->lengths[1] == lengths[1],
                    "%s %s, %s: key_lengths modified", a->p->name, fn, what);
    }
}

const size_t valid_lengths[2] = {5, 3};
