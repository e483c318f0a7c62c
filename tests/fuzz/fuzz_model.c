/*
 * fuzz_api's status model of the projected calls and plans (oracle 2):
 * products that may overflow, aliasing of regions, the plan's arena and
 * its own threads' buffers as attn.h's "Memory:" paragraph lays them out,
 * and the extents of a forward's arguments.
 */
#include "fuzz_common.h"

/* ---- the status model ------------------------------------------------------------ */

/* product of n dimensions; 0 (with *ok = 0) when it overflows size_t */
size_t product(int *ok, size_t n, const size_t *dims)
{
    size_t p = 1;
    for (size_t i = 0; i < n; i++)
        if (__builtin_mul_overflow(p, dims[i], &p)) {
            *ok = 0;
            return 0;
        }
    return p;
}

int overlap(const void *a, size_t abytes, const void *b, size_t bbytes)
{
    if (a == NULL || b == NULL || abytes == 0 || bbytes == 0)
        return 0;
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x >= y ? x - y < bbytes : y - x < abytes;
}

int outputs_alias(const region *out, int n_out, const region *in, int n_in)
{
    for (int o = 0; o < n_out; o++) {
        for (int i = 0; i < n_in; i++)
            if (overlap(out[o].p, out[o].bytes, in[i].p, in[i].bytes))
                return 1;
        for (int q = o + 1; q < n_out; q++)
            if (overlap(out[o].p, out[o].bytes, out[q].p, out[q].bytes))
                return 1;
    }
    return 0;
}

int any_zero(size_t n, const size_t *d)
{
    for (size_t i = 0; i < n; i++)
        if (d[i] == 0)
            return 1;
    return 0;
}

int over_int(size_t n, const size_t *d)
{
    for (size_t i = 0; i < n; i++)
        if (d[i] > (size_t)INT_MAX)
            return 1;
    return 0;
}

int scale_bad(double scale, double largest)
{
    return !(scale > -(double)INFINITY && scale <= largest);
}

/* Whether blocks of counts[0..n) elements of es bytes each (a count of 0:
 * no block), each rounded up to 64 bytes as the plans' arenas lay them out,
 * fit in size_t; *total their bytes. */
int blocks_fit(const size_t *counts, int n, size_t es, size_t *total)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t bytes, padded;
        if (counts[i] == 0)
            continue;
        if (__builtin_mul_overflow(counts[i], es, &bytes) ||
            __builtin_add_overflow(bytes, (size_t)63, &padded) ||
            __builtin_add_overflow(at, padded / 64 * 64, &at))
            return 0;
    }
    *total = at;
    return 1;
}

/* attn.h "Memory:" of a plan, each buffer padded to 64 bytes: whether the
 * arena's byte count fits size_t. The arena holds Q, K, V and the heads,
 * and for training (B,NH,T,2) and (B,NH,T) row statistics, the partial query
 * gradients of a plan of fewer than 4 heads (B*T*D per key block group:
 * ceil(8 / (B*NH)) groups, at most one per block of 128 keys) and four
 * gradient buffers; T*T and B*NH*T*T (the weights a forward may be asked
 * for) are checked whatever the flags. The per-thread scratch (a block of
 * 128*T scores, or the tiled path's tile) cannot overflow once T*T does
 * not. */
int arena_fits(shape s, size_t es, unsigned flags)
{
    int ok = 1;
    PRODUCT(&ok, s.NH, s.hs); /* D */
    const size_t rbd = PRODUCT(&ok, s.B, s.T, s.NH, s.hs);
    const size_t rows_by_heads = PRODUCT(&ok, s.B, s.NH, s.T);
    PRODUCT(&ok, s.T, s.T);
    PRODUCT(&ok, s.B, s.NH, s.T, s.T);
    const size_t heads = ok ? s.B * s.NH : 0, key_blocks = s.T / 128 + (s.T % 128 != 0);
    size_t groups = heads >= 4 ? 1 : (8 + heads - 1) / (heads > 0 ? heads : 1);
    groups = groups < key_blocks ? groups : key_blocks;
    const size_t parts = PRODUCT(&ok, rbd, groups);
    if (!ok)
        return 0;
    const int inference = (flags & ATTN_INFERENCE) != 0;
    size_t counts[12] = {rbd, rbd, rbd, rbd, 0};
    int n = 4;
    if (!inference) {
        counts[n++] = PRODUCT(&ok, rows_by_heads, 2); /* each row's max and log-sum */
        counts[n++] = rows_by_heads;
        counts[n++] = groups > 1 ? parts : 0;
        for (int i = 0; i < 4; i++)
            counts[n++] = rbd;
        if (!ok)
            return 0;
    }
    size_t total;
    return blocks_fit(counts, n, es, &total);
}

/* attn.h's "the workspace" of attn_plan_create: the own threads' buffers a
 * plan sizes before any allocation (lib/plan/plan.c): K^T (and V^T in
 * training) of B*T*D elements and 4 slots of packed weights of
 * max(C*(D+64), D*(C+64)) elements (panels of up to 64 columns), each
 * rounded up to 16 elements, in bytes. 0 on overflow. */
static int own_buffers_fit(shape s, size_t es, int inference)
{
    enum { ROUND = 16, NR_MAX = 64 };
    int ok = 1;
    const size_t D = PRODUCT(&ok, s.NH, s.hs);
    const size_t kt = PRODUCT(&ok, s.B, s.T, D);
    size_t a, b, total;
    if (!ok || __builtin_add_overflow(kt, (size_t)ROUND - 1, &total) ||
        __builtin_mul_overflow(total / ROUND * ROUND, (size_t)(inference ? 1 : 2), &total) ||
        __builtin_add_overflow(D, (size_t)NR_MAX, &a) || __builtin_mul_overflow(a, s.C, &a) ||
        __builtin_add_overflow(s.C, (size_t)NR_MAX, &b) || __builtin_mul_overflow(b, D, &b) ||
        __builtin_add_overflow(a > b ? a : b, (size_t)ROUND - 1, &a) ||
        __builtin_mul_overflow(a / ROUND * ROUND, (size_t)4, &a) ||
        __builtin_add_overflow(total, a, &total) ||
        __builtin_add_overflow(total, (size_t)ROUND - 1, &total) ||
        __builtin_mul_overflow(total / ROUND * ROUND, es, &total))
        return 0;
    return 1;
}

/* attn_plan_create's checks after NULL, dtype and flags */
attn_status model_plan_shape(shape s, size_t es, double scale, double largest,
                             unsigned flags)
{
    const size_t dims[5] = {s.B, s.T, s.C, s.NH, s.hs};
    if (any_zero(5, dims))
        return ATTN_ERR_ZERO_DIMENSION;
    int ok = 1;
    const size_t D = PRODUCT(&ok, s.NH, s.hs), rows = PRODUCT(&ok, s.B, s.T);
    if (ok) {
        PRODUCT(&ok, rows, s.C, es);
        PRODUCT(&ok, s.C, D, es);
        PRODUCT(&ok, rows, s.C > D ? s.C : D, es);
    }
    if (!ok || !arena_fits(s, es, flags) ||
        !own_buffers_fit(s, es, (flags & ATTN_INFERENCE) != 0))
        return ATTN_ERR_SIZE_OVERFLOW;
    const size_t blas[4] = {rows, s.T, s.C, D};
    if (over_int(4, blas))
        return ATTN_ERR_BLAS_RANGE;
    if (scale_bad(scale, largest))
        return ATTN_ERR_BAD_SCALE;
    return ATTN_OK;
}

int forward_extents(shape s, size_t es, int with_Wo, extents *e)
{
    int ok = 1;
    const size_t D = PRODUCT(&ok, s.NH, s.hs), rows = PRODUCT(&ok, s.B, s.T);
    if (!ok)
        return 0;
    e->x = PRODUCT(&ok, rows, s.C, es);
    e->w = PRODUCT(&ok, s.C, D, es);
    e->out = PRODUCT(&ok, rows, with_Wo ? s.C : D, es);
    e->weights = PRODUCT(&ok, s.B, s.NH, s.T, s.T, es);
    return ok;
}

/* Arguments 0..4: X (B,T,C), Wq, Wk, Wv (C,D) and Wo (D,C) when with_Wo;
 * null_at 0..3 leaves that one of X, Wq, Wk, Wv NULL. */
void add_head_inputs(call *c, reader *r, const extents *e, int null_at, int with_Wo,
                     void *in[5])
{
    for (int i = 0; i < 5; i++)
        in[i] =
            add_array(c, r, (i == 0 ? e->x : e->w) / c->p->es, 0, i < 4 ? null_at != i : with_Wo);
}
