/*
 * fuzz_api's ALIASING model of the sdpa calls (attn.h, attn_sdpa_forward_f32):
 * arrays laid out by strides, whether two may share an element, and the
 * checks that accepted outputs share no byte (oracle 9).
 */
#include "fuzz_sdpa.h"

/* ---- ALIASING (attn.h, attn_sdpa_forward_f32) ---------------------------------------------- */

/* An array in bytes: count[d] entries stride[d] apart in each of three
 * dimensions, each `width` contiguous bytes; a run (the mask, lse,
 * key_lengths) is one entry, and attn.h judges it by its span. */
typedef struct strided {
    const unsigned char *base;
    size_t width, count[3], stride[3];
    int run;
} strided;

/* array i of a call whose extents fit (so do its strides of more than one entry) */
static strided sdpa_strided(sdpa_dims s, const sdpa_call *a, int i, const void *base, size_t es)
{
    size_t H, T, w;
    sdpa_call_dims(s, a, i, &H, &T, &w);
    const strided x = {base, w * es, {s.B, H, T},
                       {a->rs[i][0] * es, a->rs[i][1] * es, a->rs[i][2] * es}, 0};
    return x;
}

static strided run_of(const void *p, size_t bytes)
{
    const strided x = {p, bytes, {1, 1, 1}, {0, 0, 0}, 1};
    return x;
}

static size_t strided_span(const strided *x)
{
    size_t span = x->width;
    for (int d = 0; d < 3; d++)
        if (x->count[d] > 1)
            span = sat_add(span, sat_mul(x->count[d] - 1, x->stride[d]));
    return span;
}

/* The inner span of x for period P: the entry and the dimensions (of more
 * than one entry) whose strides are not multiples of P; modulo P, x's bytes
 * lie in [base, base + inner) when that is at most P (else 0: undecided). */
static int strided_inner(const strided *x, size_t P, size_t *inner)
{
    *inner = x->width;
    for (int d = 0; d < 3; d++)
        if (x->count[d] > 1 && x->stride[d] % P != 0)
            *inner = sat_add(*inner, sat_mul(x->count[d] - 1, x->stride[d]));
    return *inner <= P;
}

/* attn.h's rule: x and y may share a byte unless their spans are disjoint
 * or, both laid out by strides, some stride P of either (of a dimension of
 * more than one entry) has both inner spans at most P and disjoint modulo P,
 * wherever the arrays start (as arcs of the circle of residues). */
static int strided_may_share(const strided *x, const strided *y)
{
    if (x->base == NULL || y->base == NULL || x->width == 0 || y->width == 0 ||
        !overlap(x->base, strided_span(x), y->base, strided_span(y)))
        return 0;
    if (x->run || y->run)
        return 1;
    const strided *both[2] = {x, y};
    for (int which = 0; which < 2; which++)
        for (int d = 0; d < 3; d++) {
            const size_t P = both[which]->stride[d];
            size_t ix, iy;
            if (both[which]->count[d] <= 1 || P == 0 || !strided_inner(x, P, &ix) ||
                !strided_inner(y, P, &iy))
                continue;
            /* y's arc from x's start: [shift, shift + iy) against x's [0, ix) */
            const size_t rx = (size_t)((uintptr_t)x->base % P);
            const size_t ry = (size_t)((uintptr_t)y->base % P);
            const size_t shift = ry >= rx ? ry - rx : P - (rx - ry);
            if (shift >= ix && iy <= P - shift)
                return 0;
        }
    return 1;
}

/* Whether x and y (real arrays, spans overlapping) share a byte, by
 * enumeration: the oracle that the rule never accepts a shared byte. */
static int strided_share(const strided *x, const strided *y)
{
    const unsigned char *lo = x->base < y->base ? x->base : y->base;
    const unsigned char *hi_x = x->base + strided_span(x), *hi_y = y->base + strided_span(y);
    const size_t n = (size_t)((hi_x > hi_y ? hi_x : hi_y) - lo);
    unsigned char *marks = alloc(n);
    memset(marks, 0, n);
    const strided *both[2] = {x, y};
    for (int which = 0; which < 2; which++) {
        const strided *z = both[which];
        for (size_t b = 0; b < z->count[0]; b++)
            for (size_t h = 0; h < z->count[1]; h++)
                for (size_t t = 0; t < z->count[2]; t++) {
                    const size_t at = (size_t)(z->base - lo) + b * z->stride[0] +
                                      h * z->stride[1] + t * z->stride[2];
                    for (size_t i = 0; i < z->width; i++) {
                        if (which == 1 && marks[at + i])
                            return 1;
                        marks[at + i] = 1;
                    }
                }
    }
    return 0;
}

/* The arrays of a call in bytes: in[] the inputs (forward: Q K V mask
 * key_lengths; backward also out lse dout), out[] the outputs (forward: out
 * lse; backward: dQ dK dV); returns the count of outputs. */
static int sdpa_arrays_of(const prec *p, sdpa_dims s, const sdpa_call *a, const sdpa_io *x,
                          int backward, strided in[8], int *n_in, strided out[3])
{
    const size_t es = p->es, ms = stat_prec(p)->es; /* the mask and lse: float in half calls */
    in[0] = sdpa_strided(s, a, SQ, x->Q, es);
    in[1] = sdpa_strided(s, a, SK, x->K, es);
    in[2] = sdpa_strided(s, a, SV, x->V, es);
    in[3] = run_of(x->mask, a->nM * ms);
    in[4] = run_of(x->lengths, x->lengths ? s.B * sizeof(size_t) : 0);
    *n_in = 5;
    if (!backward) {
        out[0] = sdpa_strided(s, a, SO, x->out, es);
        out[1] = run_of(x->lse, a->nL * ms);
        return 2;
    }
    in[5] = sdpa_strided(s, a, SO, x->out, es);
    in[6] = run_of(x->lse, a->nL * ms);
    in[7] = sdpa_strided(s, a, SO, x->dout, es);
    *n_in = 8;
    out[0] = sdpa_strided(s, a, SQ, x->dQ, es);
    out[1] = sdpa_strided(s, a, SK, x->dK, es);
    out[2] = sdpa_strided(s, a, SV, x->dV, es);
    return 3;
}

/* ALIASING: an output that may share a byte with an input or another output */
int sdpa_aliases(const prec *p, sdpa_dims s, const sdpa_call *a, const sdpa_io *x,
                 int backward)
{
    strided in[8], out[3];
    int n_in;
    const int n_out = sdpa_arrays_of(p, s, a, x, backward, in, &n_in, out);
    for (int o = 0; o < n_out; o++) {
        for (int i = 0; i < n_in; i++)
            if (strided_may_share(&out[o], &in[i]))
                return 1;
        for (int q = o + 1; q < n_out; q++)
            if (strided_may_share(&out[o], &out[q]))
                return 1;
    }
    return 0;
}

/* After a call the rule accepted (real arrays): no output shares a byte with
 * an input or another output, though their spans may overlap (interleaved). */
void check_sdpa_disjoint(const prec *p, sdpa_dims s, const sdpa_call *a,
                         const sdpa_io *x, int backward)
{
    strided in[8], out[3];
    int n_in;
    const int n_out = sdpa_arrays_of(p, s, a, x, backward, in, &n_in, out);
    for (int o = 0; o < n_out; o++)
        for (int i = 0; i < n_in + n_out; i++) {
            const strided *y = i < n_in ? &in[i] : &out[i - n_in];
            if (y == &out[o] || y->base == NULL || y->width == 0 || out[o].base == NULL ||
                !overlap(out[o].base, strided_span(&out[o]), y->base, strided_span(y)))
                continue;
            ORACLE(!strided_share(&out[o], y), "output %d, accepted, shares a byte with %s %d",
                   o, i < n_in ? "input" : "output", i < n_in ? i : i - n_in);
        }
}

/* Every byte of each owned output allocation (arguments 5.. of an sdpa
 * call) that no output addresses is unchanged; and the bytes of an input
 * allocation that an accepted output (interleaved with it) addresses are
 * taken into the input's snapshot, so that expect_unchanged compares the
 * rest. */
void settle_sdpa_outputs(call *c, const prec *p, sdpa_dims s, const sdpa_call *a,
                         const sdpa_io *x, int backward)
{
    strided in[8], out[3];
    int n_in;
    const int n_out = sdpa_arrays_of(p, s, a, x, backward, in, &n_in, out);
    for (int k = 0; k < c->n; k++) {
        arg *g = &c->a[k];
        if (g->snapshot == NULL || g->alloc_bytes == 0)
            continue;
        const unsigned char *lo = (const unsigned char *)g->ptr, *hi = lo + g->alloc_bytes;
        unsigned char *marks = alloc(g->alloc_bytes);
        memset(marks, 0, g->alloc_bytes);
        int any = 0;
        for (int o = 0; o < n_out; o++) {
            const strided *z = &out[o];
            if (z->base == NULL || z->base < lo || z->base >= hi)
                continue;
            any = 1;
            for (size_t b = 0; b < z->count[0]; b++)
                for (size_t h = 0; h < z->count[1]; h++)
                    for (size_t t = 0; t < z->count[2]; t++)
                        memset(marks + (z->base - lo) + b * z->stride[0] + h * z->stride[1] +
                                   t * z->stride[2],
                               1, z->width);
        }
        if (!any)
            continue;
        for (size_t i = 0; i < g->alloc_bytes; i++) {
            const unsigned char now = ((const unsigned char *)g->ptr)[i];
            if (!marks[i] && g->output)
                ORACLE(now == g->snapshot[i],
                       "argument %d: byte %zu, which no output addresses, changed", k, i);
            if (marks[i] && !g->output) /* an output interleaved with this input */
                g->snapshot[i] = now;
        }
    }
}
