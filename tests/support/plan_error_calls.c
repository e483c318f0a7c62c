/* The plan suites' error calls (plan_error_calls.h). */
#include "support/plan_error_calls.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/check.h"

const mha_shape plan_shape = {2, 3, 4, 2, 3, 0.0, 1, 1};

void expect(const arena *a, attn_status got, attn_status want, const char *fn,
            const char *what)
{
    check_true(got == want, "%s %s, %s: got %s (%d), want %s (%d)", a->p->name, fn, what,
               attn_status_string(got), (int)got, attn_status_string(want), (int)want);
    if (want != ATTN_OK)
        check_true(sentinel_intact(a->base, a->bytes), "%s %s, %s: a buffer was modified",
                   a->p->name, fn, what);
}

const char *const forward_args[7] = {"X", "Wq", "Wk", "Wv", "Wo", "out", "weights"};
void **forward_arg(forward_call *c, size_t i)
{
    void **args[] = {&c->X, &c->Wq, &c->Wk, &c->Wv, &c->Wo, &c->out, &c->weights};
    return args[i];
}

forward_call forward_default(const arena *a, attn_plan *plan)
{
    forward_call c = {a->p,           plan,           at(a, S_X, 0),   at(a, S_WQ, 0),
                      at(a, S_WK, 0), at(a, S_WV, 0), at(a, S_WO, 0),  at(a, S_OUT, 0),
                      at(a, S_WEIGHTS, 0)};
    return c;
}

attn_status forward_run(forward_call c)
{
    return c.via->forward(c.plan, c.X, c.Wq, c.Wk, c.Wv, c.Wo, c.out, c.weights);
}
