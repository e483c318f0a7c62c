/*
 * fuzz_api's input and call arguments: the failure and trace macros' state,
 * reading the input (dimensions, scales, values of a palette or normal),
 * the element types, exact sums and sum_tol, the harness's allocations,
 * the arguments of a call with their snapshots (oracle 3), and the choices
 * of NULL pointers and aliasing outputs with the status they settle on.
 */
#include "fuzz_common.h"

/* ---- failure ------------------------------------------------------------- */

const char *current_op = "?";

/* FUZZ_API_VERBOSE=1 prints each decoded call (to reproduce a finding). */
int verbose = -1;

/* ---- input --------------------------------------------------------------- */

uint8_t take(reader *r)
{
    return r->at < r->size ? r->data[r->at++] : 0;
}

static uint16_t take16(reader *r)
{
    uint16_t lo = take(r);
    return (uint16_t)(lo | (uint16_t)take(r) << 8);
}

static uint64_t rng_next(reader *r)
{
    uint64_t z = (r->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_normal(reader *r)
{
    double u1 = ((double)(rng_next(r) >> 11) + 0.5) * 0x1p-53;
    double u2 = (double)(rng_next(r) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* clang-format off */
static const size_t medium_dims[16] = {0, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 128, 129, 257,
                                       511, 512}; /* vector widths, blocks, ATTN_TILED_MIN_T */

static const size_t huge_dims[16] = {
    0, 2048, 65536, (size_t)1 << 20, (size_t)INT_MAX, (size_t)INT_MAX + 1, (size_t)1 << 32,
    ((size_t)1 << 32) + 1, (size_t)1 << 62, SIZE_MAX / 2, SIZE_MAX / 2 + 1, SIZE_MAX / 4,
    SIZE_MAX / 8 + 1, SIZE_MAX - 1, SIZE_MAX, (size_t)3037000500u /* ~sqrt(2^63) */};

/* clang-format on */

/* 1..8 (3/4 of the byte values), else a medium or a huge size */
size_t take_dim(reader *r)
{
    uint8_t b = take(r);
    if (b < 0xC0)
        return 1 + (size_t)(b % 8);
    return b < 0xE0 ? medium_dims[b & 15] : huge_dims[b & 15];
}

/* clang-format off */
static const double palette[32] = {
    0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e4, -1e4,
    1e30, -1e30, (double)FLT_MAX, -(double)FLT_MAX, DBL_MAX, -DBL_MAX,
    (double)INFINITY, -(double)INFINITY, (double)NAN,
    (double)FLT_TRUE_MIN, -(double)FLT_TRUE_MIN, (double)FLT_MIN, DBL_TRUE_MIN, DBL_MIN, 1e-30,
    88.7, 89.0, 104.0, -104.0, 709.8, 710.0, -745.2, /* around exp's overflow and underflow */
    3.0, -3.0};

static const double gains[8] = {1.0, 1.0, 0.1, 10.0, 100.0, 1e4, 1e-3, 3.0};

/* clang-format on */

/* the scale argument: mostly 0 (the default), else a palette of edge values */
double take_scale(reader *r)
{
    /* clang-format off */
    static const double scales[16] = {
        -1.0, 1.0, 0.5, 1e-30, 1e30, (double)FLT_MAX,
        0x1.fffffe0000001p127 /* just above FLT_MAX */, DBL_MAX,
        (double)NAN, (double)INFINITY, -(double)INFINITY, -0.0, DBL_TRUE_MIN, 1e4, 0.125, -1e300};
    /* clang-format on */
    uint8_t b = take(r);
    return b < 0x80 ? 0.0 : scales[b & 15];
}

/* ---- element types --------------------------------------------------------- */

const prec prec_f32 = {
    0, sizeof(float), (double)FLT_MAX, (double)FLT_MIN, (double)FLT_EPSILON / 2, 2e-7, 0};

const prec prec_f64 = {1, sizeof(double), DBL_MAX, DBL_MIN, DBL_EPSILON / 2, 1e-14, 0};

double get(const prec *p, const void *b, size_t i)
{
    if (p->half) {
        uint16_t h;
        memcpy(&h, (const unsigned char *)b + 2 * i, sizeof h);
        return half_get(p, h);
    }
    return p->f64 ? ((const double *)b)[i] : (double)((const float *)b)[i];
}

void set(const prec *p, void *b, size_t i, double v)
{
    if (p->half) {
        const uint16_t h = half_set(p, v);
        memcpy((unsigned char *)b + 2 * i, &h, sizeof h);
    } else if (p->f64)
        ((double *)b)[i] = v;
    else
        ((float *)b)[i] = (float)v; /* out of range gives +-inf (IEEE) */
}

void exact_add(exact_sum *e, double x)
{
    const double t = e->sum + x;
    e->carry += fabs(e->sum) >= fabs(x) ? (e->sum - t) + x : (x - t) + e->sum;
    e->sum = t;
}

double exact_value(const exact_sum *e)
{
    return e->sum + e->carry;
}

double sum_tol(const prec *p, size_t n)
{
    return 2.0 * p->exp_err + (double)((n < 1024 ? n : 1024) + 8) * p->u;
}

/* ---- allocations and call arguments ------------------------------------------- */

static void *allocs[MAX_ALLOCS];

static int n_allocs;

void *alloc(size_t bytes)
{
    ORACLE(n_allocs < MAX_ALLOCS, "harness: too many allocations");
    void *b = malloc(bytes > 0 ? bytes : 1);
    ORACLE(b != NULL, "harness: out of memory for %zu bytes", bytes);
    allocs[n_allocs++] = b;
    return b;
}

void free_all(void)
{
    while (n_allocs > 0)
        free(allocs[--n_allocs]);
}

/* sentinel bytes of outputs */
void fill_sentinel(void *b, size_t bytes)
{
    unsigned char *c = b;
    for (size_t i = 0; i < bytes; i++)
        c[i] = (unsigned char)(0xA5u ^ (i * 29u));
}

/* values of an input array, decoded from the input (see the header) */
static void fill_values(const prec *p, reader *r, void *b, size_t n)
{
    uint8_t m = take(r);
    double gain = gains[(m >> 2) & 7];
    switch (m & 3) {
    case 0:
    case 1:
        for (size_t i = 0; i < n; i++)
            set(p, b, i, gain * rng_normal(r));
        if ((m & 3) == 1 && n > 0)
            for (int k = 0; k <= ((m >> 5) & 3); k++) {
                size_t at = take16(r) % n;
                set(p, b, at, palette[take(r) & 31]);
            }
        break;
    case 2:
        for (size_t i = 0; i < n; i++)
            set(p, b, i, palette[take(r) & 31]);
        break;
    default: {
        double v = (m & 0x80) ? palette[take(r) & 31] : gain * rng_normal(r);
        for (size_t i = 0; i < n; i++)
            set(p, b, i, v);
    }
    }
}

/* A new argument of `elements` elements (element count known to fit when
 * !c->huge); inputs get values, outputs the sentinel. */
void *add_array(call *c, reader *r, size_t elements, int output, int present)
{
    ORACLE(c->n < MAX_ARGS, "harness: too many arguments");
    arg *a = &c->a[c->n++];
    memset(a, 0, sizeof *a);
    a->output = output;
    a->es = c->p->es;
    if (!present)
        return NULL;
    if (c->huge) {
        a->alloc_bytes = DUMMY_BYTES;
        a->ptr = alloc(DUMMY_BYTES);
        fill_sentinel(a->ptr, DUMMY_BYTES);
    } else {
        a->alloc_bytes = elements * c->p->es;
        a->ptr = alloc(a->alloc_bytes);
        if (output)
            fill_sentinel(a->ptr, a->alloc_bytes);
        else
            fill_values(c->p, r, a->ptr, elements);
    }
    if (!output && !c->huge) {
        TRACE("  argument %d (%zu elements):", c->n - 1, elements);
        for (size_t i = 0; i < elements && i < 12; i++)
            TRACE(" %.9g", get(c->p, a->ptr, i));
        TRACE("%s\n", elements > 12 ? " ..." : "");
    }
    a->bytes = elements * c->p->es; /* wraps only for huge calls, unused there */
    return a->ptr;
}

void snapshot(call *c)
{
    for (int i = 0; i < c->n; i++) {
        arg *a = &c->a[i];
        a->snapshot = NULL;
        if (a->ptr != NULL && a->alloc_bytes > 0) {
            a->snapshot = alloc(a->alloc_bytes);
            memcpy(a->snapshot, a->ptr, a->alloc_bytes);
        }
    }
}

/* every owned buffer (outputs too when `all`) unchanged since the snapshot */
static void expect_unchanged(const call *c, int all, const char *what)
{
    for (int i = 0; i < c->n; i++) {
        const arg *a = &c->a[i];
        if (a->snapshot == NULL || (a->output && !all))
            continue;
        ORACLE(memcmp(a->ptr, a->snapshot, a->alloc_bytes) == 0,
               "%s: argument %d (%s, %zu bytes) was modified", what, i,
               a->output ? "output" : "input", a->alloc_bytes);
    }
}

/* ---- choices ------------------------------------------------------------------------ */

/* The NULL choice: bytes 0xF0 + i make pointer i % n NULL; -1 for none. */
int take_null(reader *r, int n)
{
    uint8_t b = take(r);
    return b >= 0xF0 ? (int)((b & 15u) % (unsigned)n) : -1;
}

alias take_alias(reader *r, int n_outputs, int n_args)
{
    alias a = {-1, -1, 0, 0};
    const uint8_t b = take(r), t = take(r), o = take(r);
    if (b < 0xE0)
        return a;
    a.output = (int)((b & 31u) % (unsigned)n_outputs);
    a.target = (int)(t % (unsigned)n_args);
    a.offset = o;
    a.grow = (b & 0x10) != 0;
    return a;
}

/* Points output argument `first_output + al.output` into argument al.target
 * (present, owned, another one), on real (not dummy) arrays. */
void apply_alias(call *c, alias al, int first_output)
{
    if (al.output < 0 || c->huge)
        return;
    const int oi = first_output + al.output;
    if (oi >= c->n || al.target >= c->n || al.target == oi)
        return;
    arg *o = &c->a[oi], *t = &c->a[al.target];
    /* the whole documented region inside the target: when the library has
     * no reason to refuse (an ignored dWo), it may write all of it */
    if (o->ptr == NULL || t->ptr == NULL || t->snapshot == NULL || o->bytes == 0 ||
        o->bytes > t->alloc_bytes)
        return;
    /* at a multiple of the output's element size: aligned (a half call's
     * float lse too) */
    const size_t es = o->es ? o->es : c->p->es;
    const size_t room = (t->alloc_bytes - o->bytes) / es + 1;
    const size_t off = al.offset % room * es;
    o->ptr = (unsigned char *)t->ptr + off;
    TRACE("  argument %d placed in argument %d, %zu bytes in\n", oi, al.target, off);
    o->alloc_bytes = 0; /* not owned: its bytes are the target's */
    o->snapshot = NULL;
}

void expect_status(attn_status got, attn_status want, const char *fn)
{
    TRACE("%s: %s\n", fn, attn_status_string(got));
    ORACLE(attn_status_string(got) != NULL, "attn_status_string(%d) is NULL", (int)got);
    ORACLE(got == want, "%s returned %d (%s), the documented status is %d (%s)", fn, (int)got,
           attn_status_string(got), (int)want, attn_status_string(want));
}

/* after a call: oracle 3 on error, inputs unchanged on success */
int settle(const call *c, attn_status got, attn_status want)
{
    expect_status(got, want, current_op);
    expect_unchanged(c, got != ATTN_OK, current_op);
    return got == ATTN_OK;
}
