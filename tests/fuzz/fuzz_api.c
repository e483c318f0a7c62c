/*
 * fuzz_api: a libFuzzer harness over attn's public API (built with clang,
 * -fsanitize=fuzzer,address,undefined, against the static library compiled
 * with the same sanitizers; see CMakeLists.txt here and .ci/reliability).
 *
 * Each input is decoded into one call sequence:
 *   attn_softmax_rows, attn_lookup, attn_self_attention, attn_mha_forward,
 *   attn_mha_backward (_f32 or _f64), or a plan: attn_plan_create with any
 *   dtype, flags (unknown bits too) and scale, attn_plan_set_threads (BLAS
 *   threads, 1 to 3 threads of its own, or more than ATTN_MAX_THREADS), then
 *   up to 6 forwards and backwards in either precision (DTYPE_MISMATCH),
 *   with or without Wo and weights, then attn_plan_destroy.
 * Dimensions are mostly 1..8, sometimes 9..512, 0, or huge (2^31, 2^32,
 * 2^62, SIZE_MAX/2, SIZE_MAX, ...). Arrays get exactly the bytes their shape
 * documents (so ASan sees a read or write one element past an array) when
 * every array of the call holds at most CAP_ELEMENTS elements; larger shapes
 * get 64-byte dummies and are called only when the status model (below) says
 * the call must fail before touching memory -- a library that touched them
 * anyway is an ASan finding. Pointers may be NULL (required or optional),
 * outputs may point into another argument (ALIASING), inputs may share one
 * buffer (allowed). Values come from a palette (0, -0, +-1, +-1e4, +-1e30,
 * +-FLT_MAX, +-DBL_MAX, +-inf, NaN, subnormals, exp's overflow and underflow
 * thresholds), from N(0, gain^2) for gains 1e-3..1e4, constants, or a mix.
 *
 * Oracles (each violated one aborts: a libFuzzer crash with the input saved):
 *   1. no crash, no sanitizer report, no leak (libFuzzer's leak check);
 *   2. the status is the one attn.h documents: the first failing check in
 *      the documented order (NULL pointers, zero dimensions, C % NH, size
 *      overflow of every array and of the workspace (the plan's arena as
 *      attn.h's "Memory:" paragraph lays it out), BLAS range, stride, scale,
 *      aliasing, and for plans dtype, flags, mismatch, inference, no
 *      forward, Wo presence), predicted by an independent model here;
 *      attn_status_string never returns NULL;
 *   3. nonzero status: every byte of every buffer the call received (inputs
 *      and outputs) is unchanged, and *plan is untouched;
 *   4. status OK: inputs unchanged; the same call again gives the same bytes;
 *      a one-shot equals its plan (attn.h: they are plan create + execute +
 *      destroy) bit for bit;
 *   5. weights rows (when requested): causal entries above the diagonal are
 *      exactly 0, and each row is all NaN, or all 0, or has entries in
 *      [0, 1 + tol] summing to 1 within sum_tol(n) (below);
 *   6. softmax_rows: the documented semantics exactly -- a NaN row is all
 *      NaN, +inf entries share the row (others 0), an all -inf row is 0 --
 *      and otherwise the double reference within a per-entry bound; the
 *      entries between cols and ld are unchanged;
 *   7. finiteness: when every input is finite and the magnitude bounds
 *      below stay under REAL_MAX/4, the outputs are finite, no weight is
 *      NaN and (unless scale * |S| may overflow) no row is all 0. Bounds,
 *      computed in double from the largest input magnitudes (mx = max|X|,
 *      mw = max|Wq|,|Wk|,|Wv|, mo = max|Wo|, md = max|dout|):
 *        q = C mx mw (|Q|,|K|,|V|),  s = hs q^2 (|S| and its partial sums),
 *        with Wo: D q mo (|out|);
 *        backward: dy = Wo ? C md mo : md, rows q md (dWo), T dy (dV),
 *        2 hs dy q (dP, dS), dq = max(1, scale) T 2 hs dy q^2 (dQ, dK),
 *        rows mx max(dq, T dy) (dW*), 3 D max(dq, T dy) mw (dX);
 *      for lookup q, k, v: s = d max|q| max|k|, and max|v|. A +-inf scaled
 *      score is then only the documented +inf / masked rule, never a NaN;
 *   8. accuracy: for each weights row whose scaled scores have a bounded
 *      rounding error dz (from the exact double scores of the rounded inputs:
 *      |dS| <= u (2C+2 + hs+2) sum_c |X||Wq| |X||Wk| for heads, u (d+2)
 *      sum |q||k| for lookup, plus 2u |z| + 2u |z - max|) the weights are
 *      within w_ref (expm1(2 dz) + sum_tol(n) + ...) of the double softmax,
 *      and out is within the matching bound of the double reference output
 *      (propagated through V's and Wo's rounding).
 * sum_tol(n) = 2 exp_err + (min(n, 1024) + 8) u, with u the unit roundoff
 * and exp_err the kernels' exp accuracy (2e-7 f32, 1e-14 f64, kernels.h):
 * each weight carries a few exp and rounding errors, the normalizing sum
 * is summed in chunks (float lanes, merged in double) or, on the tiled
 * path, block by block.
 *
 * BLAS: fuzz_cblas.c (linked ahead of OpenBLAS) computes the library's
 * cblas_?gemm and cblas_?trmm calls in instrumented loops and checks their
 * arguments, so ASan sees every element BLAS touches for the library.
 *
 * Input format (bytes; reading past the end gives 0): byte 0 the call (value
 * % 6: softmax_rows, lookup, self_attention, mha_forward, mha_backward,
 * plan); byte 1 bit 0 the precision (1: f64), bytes 1-3 the seed of the
 * value generator; then the call's fields in the order the fuzz_* functions
 * below read them (take_dim: a dimension; take_scale; take_null; take_alias;
 * fill_values: one array). corpus/ holds hand-made seeds, written by
 * gen_corpus.py. FUZZ_API_VERBOSE=1 prints the calls an input decodes to and
 * their statuses.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <attn/attn.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP_ELEMENTS ((size_t)1 << 18) /* real buffers only up to this many elements */
#define CAP_WORK ((size_t)1 << 21)     /* and B*NH*T*T*(hs+1) up to this */
#define DUMMY_BYTES 64
#define MAX_ARGS 24
#define MAX_ALLOCS 4096

/* ---- failure ------------------------------------------------------------- */

static const char *current_op = "?";

#define ORACLE(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_api: oracle failed in %s (line %d): %s\n  ", current_op,         \
                    __LINE__, #cond);                                                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* FUZZ_API_VERBOSE=1 prints each decoded call (to reproduce a finding). */
static int verbose = -1;

#define TRACE(...)                                                                                 \
    do {                                                                                           \
        if (verbose < 0)                                                                           \
            verbose = getenv("FUZZ_API_VERBOSE") != NULL;                                          \
        if (verbose)                                                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
    } while (0)

/* ---- input --------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *data;
    size_t size, at;
    uint64_t rng;
} reader;

static uint8_t take(reader *r)
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
static size_t take_dim(reader *r)
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
static double take_scale(reader *r)
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

typedef struct prec {
    int f64;
    size_t es;      /* element size */
    double max;     /* largest finite value */
    double min;     /* smallest normal */
    double u;       /* unit roundoff */
    double exp_err; /* the kernels' exp accuracy (kernels.h) */
} prec;

static const prec prec_f32 = {
    0, sizeof(float), (double)FLT_MAX, (double)FLT_MIN, (double)FLT_EPSILON / 2, 2e-7};
static const prec prec_f64 = {1, sizeof(double), DBL_MAX, DBL_MIN, DBL_EPSILON / 2, 1e-14};


static double get(const prec *p, const void *b, size_t i)
{
    return p->f64 ? ((const double *)b)[i] : (double)((const float *)b)[i];
}

static void set(const prec *p, void *b, size_t i, double v)
{
    if (p->f64)
        ((double *)b)[i] = v;
    else
        ((float *)b)[i] = (float)v; /* out of range gives +-inf (IEEE) */
}

/* Neumaier's compensated sum: the references sum in double with an error
 * of a few ulps whatever n, below the library's own (whose f64 sums are
 * double too); a plain loop over 65536 equal terms erred by 1e-13. */
typedef struct exact_sum {
    double sum, carry;
} exact_sum;

static void exact_add(exact_sum *e, double x)
{
    const double t = e->sum + x;
    e->carry += fabs(e->sum) >= fabs(x) ? (e->sum - t) + x : (x - t) + e->sum;
    e->sum = t;
}

static double exact_value(const exact_sum *e)
{
    return e->sum + e->carry;
}

static double sum_tol(const prec *p, size_t n)
{
    return 2.0 * p->exp_err + (double)((n < 1024 ? n : 1024) + 8) * p->u;
}

/* ---- allocations and call arguments ------------------------------------------- */

static void *allocs[MAX_ALLOCS];
static int n_allocs;

static void *alloc(size_t bytes)
{
    ORACLE(n_allocs < MAX_ALLOCS, "harness: too many allocations");
    void *b = malloc(bytes > 0 ? bytes : 1);
    ORACLE(b != NULL, "harness: out of memory for %zu bytes", bytes);
    allocs[n_allocs++] = b;
    return b;
}

static void free_all(void)
{
    while (n_allocs > 0)
        free(allocs[--n_allocs]);
}

/* One argument of a call: the buffer it points to (NULL, an allocation of
 * exactly `bytes`, a dummy, or a place inside another argument). */
typedef struct arg {
    void *ptr;
    size_t bytes; /* the documented region; 0 for NULL */
    size_t alloc_bytes;
    unsigned char *snapshot;
    int output;
} arg;

typedef struct call {
    const prec *p;
    arg a[MAX_ARGS];
    int n;
    int huge; /* dummies instead of real arrays */
} call;

/* sentinel bytes of outputs */
static void fill_sentinel(void *b, size_t bytes)
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
static void *add_array(call *c, reader *r, size_t elements, int output, int present)
{
    ORACLE(c->n < MAX_ARGS, "harness: too many arguments");
    arg *a = &c->a[c->n++];
    memset(a, 0, sizeof *a);
    a->output = output;
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

static void snapshot(call *c)
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

/* ---- the status model ------------------------------------------------------------ */

/* product of n dimensions; 0 (with *ok = 0) when it overflows size_t */
static size_t product(int *ok, size_t n, const size_t *dims)
{
    size_t p = 1;
    for (size_t i = 0; i < n; i++)
        if (__builtin_mul_overflow(p, dims[i], &p)) {
            *ok = 0;
            return 0;
        }
    return p;
}

#define PRODUCT(ok, ...)                                                                           \
    product((ok), sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t), (size_t[]){__VA_ARGS__})

static int overlap(const void *a, size_t abytes, const void *b, size_t bbytes)
{
    if (a == NULL || b == NULL || abytes == 0 || bbytes == 0)
        return 0;
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x >= y ? x - y < bbytes : y - x < abytes;
}

typedef struct region {
    const void *p;
    size_t bytes;
} region;

static int outputs_alias(const region *out, int n_out, const region *in, int n_in)
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

static int any_zero(size_t n, const size_t *d)
{
    for (size_t i = 0; i < n; i++)
        if (d[i] == 0)
            return 1;
    return 0;
}

static int over_int(size_t n, const size_t *d)
{
    for (size_t i = 0; i < n; i++)
        if (d[i] > (size_t)INT_MAX)
            return 1;
    return 0;
}

static int scale_bad(double scale, double largest)
{
    return !(scale > -(double)INFINITY && scale <= largest);
}

/* The head shape of a plan or one-shot; every dimension nonzero. */
typedef struct shape {
    size_t B, T, C, NH, hs;
} shape;

/* attn.h "Memory:" of a plan, each buffer padded to 64 bytes: whether the
 * arena's byte count fits size_t. The arena holds Q, K, V and the heads,
 * and for training (B,NH,T,2) and (B,NH,T) row statistics, the partial query
 * gradients of a plan of fewer than 4 heads (B*T*D per key block group:
 * ceil(8 / (B*NH)) groups, at most one per block of 128 keys) and four
 * gradient buffers; T*T and B*NH*T*T (the weights a forward may be asked
 * for) are checked whatever the flags. The per-thread scratch (a block of
 * 128*T scores, or the tiled path's tile) cannot overflow once T*T does
 * not. */
static int arena_fits(shape s, size_t es, unsigned flags)
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
    return 1;
}

/* attn_plan_create's checks after NULL, dtype and flags */
static attn_status model_plan_shape(shape s, size_t es, double scale, double largest,
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
    if (!ok || !arena_fits(s, es, flags))
        return ATTN_ERR_SIZE_OVERFLOW;
    const size_t blas[4] = {rows, s.T, s.C, D};
    if (over_int(4, blas))
        return ATTN_ERR_BLAS_RANGE;
    if (scale_bad(scale, largest))
        return ATTN_ERR_BAD_SCALE;
    return ATTN_OK;
}

/* byte counts of a forward's arrays (validate_extent); 0 on overflow */
typedef struct extents {
    size_t x, w, out, weights;
} extents;

static int forward_extents(shape s, size_t es, int with_Wo, extents *e)
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
static void add_head_inputs(call *c, reader *r, const extents *e, int null_at, int with_Wo,
                            void *in[5])
{
    for (int i = 0; i < 5; i++)
        in[i] =
            add_array(c, r, (i == 0 ? e->x : e->w) / c->p->es, 0, i < 4 ? null_at != i : with_Wo);
}

/* ---- numeric oracles -------------------------------------------------------------- */

static int all_finite(const prec *p, const void *b, size_t n, double *maxabs)
{
    double m = 0.0;
    int finite = 1;
    for (size_t i = 0; i < n; i++) {
        double v = get(p, b, i);
        finite &= isfinite(v) != 0;
        if (fabs(v) > m)
            m = fabs(v);
    }
    if (maxabs != NULL)
        *maxabs = m;
    return finite;
}

static void expect_finite(const prec *p, const void *b, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        ORACLE(isfinite(get(p, b, i)), "%s[%zu] = %g is not finite", what, i, get(p, b, i));
}

/* The structure of one weights row of `valid` visible entries out of n
 * (entries from `valid` on must be exactly 0): all NaN, all 0, or a
 * probability vector. Returns 0 for NaN, 1 for zeros, 2 for a distribution. */
static int check_weights_row(const prec *p, const void *w, size_t at, size_t valid, size_t n,
                             const char *what)
{
    for (size_t j = valid; j < n; j++)
        ORACLE(get(p, w, at + j) == 0.0, "%s: masked weight %zu of %zu = %g", what, j, n,
               get(p, w, at + j));
    size_t nans = 0, zeros = 0;
    exact_sum total = {0.0, 0.0};
    for (size_t j = 0; j < valid; j++) {
        double v = get(p, w, at + j);
        nans += isnan(v) != 0;
        zeros += v == 0.0;
        if (!isnan(v)) {
            ORACLE(v >= 0.0 && v <= 1.0 + sum_tol(p, valid), "%s: weight %g outside [0, 1]", what,
                   v);
            exact_add(&total, v);
        }
    }
    const double sum = exact_value(&total);
    if (nans > 0) {
        ORACLE(nans == valid, "%s: %zu of %zu weights NaN (a NaN row is all NaN)", what, nans,
               valid);
        return 0;
    }
    if (zeros == valid)
        return 1;
    ORACLE(fabs(sum - 1.0) <= sum_tol(p, valid), "%s: row of %zu sums to 1 %+.3e", what, valid,
           sum - 1.0);
    return 2;
}

/* attn_softmax_rows' documented semantics on one row of n inputs x (double)
 * with result y (typed, at offset) */
static void check_softmax_row(const prec *p, const double *x, const void *y, size_t at, size_t n)
{
    size_t nans = 0, pos_inf = 0;
    double m = -(double)INFINITY;
    for (size_t j = 0; j < n; j++) {
        nans += isnan(x[j]) != 0;
        pos_inf += x[j] == (double)INFINITY;
        if (x[j] > m)
            m = x[j];
    }
    for (size_t j = 0; j < n; j++) {
        const double v = get(p, y, at + j);
        if (nans > 0) {
            ORACLE(isnan(v), "softmax_rows: row with a NaN gives %g at %zu", v, j);
        } else if (pos_inf > 0) {
            const double share = 1.0 / (double)pos_inf;
            ORACLE(x[j] == (double)INFINITY ? fabs(v - share) <= 2.0 * p->u * share : v == 0.0,
                   "softmax_rows: +inf row (%zu of %zu +inf): %g at %zu (x = %g)", pos_inf, n, v, j,
                   x[j]);
        } else if (m == -(double)INFINITY) {
            ORACLE(v == 0.0, "softmax_rows: all -inf row gives %g at %zu", v, j);
        }
    }
    if (nans > 0 || pos_inf > 0 || m == -(double)INFINITY)
        return;
    /* finite maximum: the double reference, per entry; the kernel's x - max
     * rounds (u |x - max|), exp and the normalization add sum_tol */
    exact_sum total = {0.0, 0.0};
    for (size_t j = 0; j < n; j++)
        exact_add(&total, exp(x[j] - m));
    const double sum = exact_value(&total);
    for (size_t j = 0; j < n; j++) {
        const double ref = exp(x[j] - m) / sum, v = get(p, y, at + j);
        const double rel = 2.0 * p->u * fabs(x[j] - m) + 4.0 * p->exp_err + sum_tol(p, n);
        const double tol = (ref > 0.0 ? ref * rel : 0.0) + 4.0 * p->min;
        ORACLE(fabs(v - ref) <= tol,
               "softmax_rows: entry %zu of %zu = %.9g (x %.9g, row max %.9g), reference %.9g", j, n,
               v, x[j], m, ref);
    }
    check_weights_row(p, y, at, n, n, "softmax_rows");
}

/* ---- the accuracy oracle (8) ------------------------------------------------------ */

static double *doubles(size_t n)
{
    double *d = alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        d[i] = 0.0;
    return d;
}

/* One attention core in double: queries Q (Tq, hs), keys K (Tk, hs), values
 * V (Tk, dv), with row strides; aQ, aK, aV bound the magnitudes whose
 * rounding the library's computed Q, K, V carry (projections) and kq, kv the
 * rounding coefficients (oracle 8). */
typedef struct core {
    size_t Tq, Tk, hs, dv, ldq, ldk, ldv;
    const double *Q, *K, *V, *aQ, *aK, *aV;
    double kq, kv, scale;
    int causal;
} core;

/*
 * Reference weights of each query row, compared with `weights` (typed, row t
 * at w_at + t*Tk) when not NULL; the reference output Y (Tq, dv) and its
 * error bound errY (same layout, stride ldy). row_ok[t] is cleared for the
 * rows that are not comparable: a scaled score not finite or within 16x of
 * the overflow threshold, or a rounding bound dz > 0.5.
 */
static void core_check(const prec *p, const core *k, const void *weights, size_t w_at, double *Y,
                       double *errY, size_t ldy, unsigned char *row_ok, double *scratch)
{
    const double u = p->u;
    double *z = scratch, *w = scratch + k->Tk; /* 2 Tk doubles */
    for (size_t t = 0; t < k->Tq; t++) {
        const size_t keys = k->causal ? t + 1 : k->Tk;
        const double *q = k->Q + t * k->ldq, *aq = k->aQ + t * k->ldq;
        double m = -(double)INFINITY, dz = 0.0;
        int usable = 1;
        for (size_t j = 0; j < keys; j++) {
            const double *kk = k->K + j * k->ldk, *ak = k->aK + j * k->ldk;
            double sc = 0.0, bound = 0.0;
            for (size_t c = 0; c < k->hs; c++) {
                sc += q[c] * kk[c];
                bound += aq[c] * ak[c];
            }
            z[j] = k->scale * sc;
            dz = fmax(dz, k->scale * u * k->kq * bound);
            usable &= bound <= p->max / 16 && k->scale * bound <= p->max / 16;
            m = fmax(m, z[j]);
        }
        exact_sum total = {0.0, 0.0};
        for (size_t j = 0; j < keys; j++) {
            dz = fmax(dz, 2.0 * u * (fabs(z[j]) + fabs(z[j] - m)));
            w[j] = exp(z[j] - m);
            exact_add(&total, w[j]);
        }
        const double sum = exact_value(&total);
        if (!usable || dz > 0.5 || !(sum > 0.0)) {
            row_ok[t] = 0;
            continue;
        }
        const double tol = expm1(2.0 * dz) + 8.0 * p->exp_err + sum_tol(p, keys) +
                           (double)(keys / 64 + 4) * 4.0 * u;
        for (size_t j = 0; j < keys; j++)
            w[j] /= sum;
        if (weights != NULL)
            for (size_t j = 0; j < keys; j++) {
                const double got = get(p, weights, w_at + t * k->Tk + j);
                ORACLE(fabs(got - w[j]) <= w[j] * tol + 4.0 * p->min,
                       "weights (row %zu, key %zu) = %.9g, reference %.9g, tolerance %.3g "
                       "(dz %.3g)",
                       t, j, got, w[j], w[j] * tol, dz);
            }
        for (size_t c = 0; c < k->dv; c++) {
            double y = 0.0, ay = 0.0, aav = 0.0, vmax = 0.0;
            for (size_t j = 0; j < keys; j++) {
                const double vv = k->V[j * k->ldv + c];
                y += w[j] * vv;
                ay += w[j] * fabs(vv);
                aav += w[j] * k->aV[j * k->ldv + c];
                vmax = fmax(vmax, fabs(vv));
            }
            Y[t * ldy + c] = y;
            errY[t * ldy + c] =
                2.0 * ((tol + (double)(keys + 2) * u) * (1.0 + tol) * ay +
                       k->kv * u * (1.0 + tol) * aav + (double)keys * 4.0 * p->min * (1.0 + vmax));
        }
    }
}

/* out (rows, C) typed against Y Wo, Wo (D, C) typed; rows with !row_ok skipped */
static void check_projected(const prec *p, const double *Y, const double *errY, size_t rows,
                            size_t D, size_t C, const void *Wo, const void *out,
                            const unsigned char *row_ok, const char *what)
{
    for (size_t r = 0; r < rows; r++) {
        if (!row_ok[r])
            continue;
        for (size_t c = 0; c < C; c++) {
            double ref, err;
            if (Wo == NULL) { /* out = Y, C = D */
                ref = Y[r * D + c];
                err = errY[r * D + c];
            } else {
                double a = 0.0;
                ref = err = 0.0;
                for (size_t kk = 0; kk < D; kk++) {
                    const double wo = get(p, Wo, kk * C + c);
                    ref += Y[r * D + kk] * wo;
                    err += errY[r * D + kk] * fabs(wo);
                    a += fabs(Y[r * D + kk] * wo);
                }
                err = 2.0 * (err + (double)(D + 2) * p->u * a) + 4.0 * p->min;
            }
            const double got = get(p, out, r * C + c);
            ORACLE(fabs(got - ref) <= err, "%s[%zu][%zu] = %.9g, reference %.9g, tolerance %.3g",
                   what, r, c, got, ref, err);
        }
    }
}

/* ---- a forward's inputs in double (oracles 7 and 8) ---------------------------------- */

typedef struct head_ref {
    const prec *p;
    shape s;
    size_t D, rows;
    double scale; /* as the library uses it */
    int causal;
    double *Q, *K, *V, *aQ, *aK, *aV; /* (rows, D) */
    double mx, mw, mo;
    int finite_inputs;
} head_ref;

/* Q = X W and aQ = |X| |W| (rows, D) */
static void project(const prec *p, const void *X, const void *W, size_t rows, size_t C, size_t D,
                    double *Q, double *aQ)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < D; c++) {
            double s = 0.0, a = 0.0;
            for (size_t kk = 0; kk < C; kk++) {
                const double x = get(p, X, r * C + kk), w = get(p, W, kk * D + c);
                s += x * w;
                a += fabs(x * w);
            }
            Q[r * D + c] = s;
            aQ[r * D + c] = a;
        }
}

static double used_scale(const prec *p, double scale, size_t d)
{
    double s = scale > 0.0 ? scale : 1.0 / sqrt((double)d);
    return p->f64 ? s : (double)(float)s;
}

static head_ref head_ref_make(const prec *p, shape s, double scale, int causal, const void *X,
                              const void *Wq, const void *Wk, const void *Wv, const void *Wo)
{
    head_ref h;
    memset(&h, 0, sizeof h);
    h.p = p;
    h.s = s;
    h.D = s.NH * s.hs;
    h.rows = s.B * s.T;
    h.scale = used_scale(p, scale, s.hs);
    h.causal = causal;
    double m1, m2, m3;
    h.finite_inputs = all_finite(p, X, h.rows * s.C, &h.mx) & all_finite(p, Wq, s.C * h.D, &m1) &
                      all_finite(p, Wk, s.C * h.D, &m2) & all_finite(p, Wv, s.C * h.D, &m3);
    h.mw = fmax(m1, fmax(m2, m3));
    if (Wo != NULL)
        h.finite_inputs &= all_finite(p, Wo, h.D * s.C, &h.mo);
    return h;
}

/* oracle 7's forward bounds */
static double bound_q(const head_ref *h)
{
    return (double)h->s.C * h->mx * h->mw;
}

static int forward_bounded(const head_ref *h, int with_Wo)
{
    const double L = h->p->max / 4, q = bound_q(h);
    return h->finite_inputs && q <= L && (double)h->s.hs * q * q <= L &&
           (!with_Wo || (double)h->D * q * h->mo <= L);
}

/* whether scale * |S| stays well below the overflow threshold (no row of
 * finite scores can then become all -inf) */
static int scaled_bounded(const head_ref *h)
{
    const double q = bound_q(h);
    return h->scale * (double)h->s.hs * q * q <= h->p->max / 4;
}

/* oracle 7's backward bounds (md = max|dout|) */
static int backward_bounded(const head_ref *h, double md, int with_Wo)
{
    const double L = h->p->max / 4, q = bound_q(h), T = (double)h->s.T, hs = (double)h->s.hs;
    const double rows = (double)h->rows, D = (double)h->D;
    const double dy = with_Wo ? (double)h->s.C * md * h->mo : md;
    const double dq = fmax(1.0, h->scale) * T * 2.0 * hs * dy * q * q;
    const double g = fmax(dq, T * dy);
    return forward_bounded(h, with_Wo) && (!with_Wo || rows * q * md <= L) && T * dy <= L &&
           2.0 * hs * dy * q <= L && dq <= L && rows * h->mx * g <= L && 3.0 * D * g * h->mw <= L;
}

/* oracles 5, 7 and 8 on a successful forward: weights (B,NH,T,T) or NULL, out */
static void check_forward(head_ref *h, const void *X, const void *Wq, const void *Wk,
                          const void *Wv, const void *Wo, const void *weights, const void *out)
{
    const prec *p = h->p;
    const shape s = h->s;
    const int bounded = forward_bounded(h, Wo != NULL);
    if (weights != NULL)
        for (size_t row = 0; row < s.B * s.NH * s.T; row++) {
            const size_t t = row % s.T, valid = h->causal ? t + 1 : s.T;
            const int kind = check_weights_row(p, weights, row * s.T, valid, s.T, "weights");
            if (bounded) {
                ORACLE(kind != 0, "weights row %zu NaN from finite, bounded inputs", row);
                ORACLE(kind != 1 || !scaled_bounded(h), "weights row %zu all 0 from bounded scores",
                       row);
            }
        }
    const size_t out_cols = Wo != NULL ? s.C : h->D;
    if (bounded)
        expect_finite(p, out, h->rows * out_cols, "out");
    if (!bounded) /* Q, K, V or S may overflow: no reference to compare with */
        return;
    const size_t n = h->rows * h->D;
    h->Q = doubles(n), h->K = doubles(n), h->V = doubles(n);
    h->aQ = doubles(n), h->aK = doubles(n), h->aV = doubles(n);
    project(p, X, Wq, h->rows, s.C, h->D, h->Q, h->aQ);
    project(p, X, Wk, h->rows, s.C, h->D, h->K, h->aK);
    project(p, X, Wv, h->rows, s.C, h->D, h->V, h->aV);
    double *Y = doubles(n), *errY = doubles(n);
    unsigned char *row_ok = alloc(h->rows);
    memset(row_ok, 1, h->rows);
    double *scratch = doubles(2 * s.T);
    for (size_t b = 0; b < s.B; b++)
        for (size_t hd = 0; hd < s.NH; hd++) {
            const size_t at = b * s.T * h->D + hd * s.hs;
            const core k = {s.T,
                            s.T,
                            s.hs,
                            s.hs,
                            h->D,
                            h->D,
                            h->D,
                            h->Q + at,
                            h->K + at,
                            h->V + at,
                            h->aQ + at,
                            h->aK + at,
                            h->aV + at,
                            (double)(2 * s.C + s.hs + 4),
                            (double)(s.C + 1),
                            h->scale,
                            h->causal};
            core_check(p, &k, weights, (b * s.NH + hd) * s.T * s.T, Y + at, errY + at, h->D,
                       row_ok + b * s.T, scratch);
        }
    check_projected(p, Y, errY, h->rows, h->D, out_cols, Wo, out, row_ok, "out");
}

/* ---- choices ------------------------------------------------------------------------ */

/* The NULL choice: bytes 0xF0 + i make pointer i % n NULL; -1 for none. */
static int take_null(reader *r, int n)
{
    uint8_t b = take(r);
    return b >= 0xF0 ? (int)((b & 15u) % (unsigned)n) : -1;
}

/* The aliasing choice (3 bytes b, t, o): b = 0xE0 + i redirects output
 * i % n_outputs into argument t % n_args, o elements in. */
typedef struct alias {
    int output, target;
    size_t offset;
} alias;

static alias take_alias(reader *r, int n_outputs, int n_args)
{
    alias a = {-1, -1, 0};
    const uint8_t b = take(r), t = take(r), o = take(r);
    if (b < 0xE0)
        return a;
    a.output = (int)((b & 31u) % (unsigned)n_outputs);
    a.target = (int)(t % (unsigned)n_args);
    a.offset = o;
    return a;
}

/* Points output argument `first_output + al.output` into argument al.target
 * (present, owned, another one), on real (not dummy) arrays. */
static void apply_alias(call *c, alias al, int first_output)
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
    const size_t room = (t->alloc_bytes - o->bytes) / c->p->es + 1;
    const size_t off = al.offset % room * c->p->es;
    o->ptr = (unsigned char *)t->ptr + off;
    o->alloc_bytes = 0; /* not owned: its bytes are the target's */
    o->snapshot = NULL;
}

static void expect_status(attn_status got, attn_status want, const char *fn)
{
    TRACE("%s: %s\n", fn, attn_status_string(got));
    ORACLE(attn_status_string(got) != NULL, "attn_status_string(%d) is NULL", (int)got);
    ORACLE(got == want, "%s returned %d (%s), the documented status is %d (%s)", fn, (int)got,
           attn_status_string(got), (int)want, attn_status_string(want));
}

/* after a call: oracle 3 on error, inputs unchanged on success */
static int settle(const call *c, attn_status got, attn_status want)
{
    expect_status(got, want, current_op);
    expect_unchanged(c, got != ATTN_OK, current_op);
    return got == ATTN_OK;
}

/* ---- attn_softmax_rows ---------------------------------------------------------------- */

static void fuzz_softmax_rows(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_softmax_rows_f64" : "attn_softmax_rows_f32";
    const size_t rows = take_dim(r), cols = take_dim(r);
    const uint8_t ldb = take(r);
    size_t ld = cols;
    if (ldb >= 0x80 && ldb < 0xC0)
        ld = cols + (ldb & 7);
    else if (ldb >= 0xC0 && ldb < 0xE0)
        ld = cols - 1 - (ldb & 3); /* below cols, or a wrapped huge value */
    else if (ldb >= 0xE0)
        ld = take_dim(r);
    const int null_x = take_null(r, 1) == 0;

    attn_status want = ATTN_OK;
    int ok = 1;
    size_t elements = 0;
    if (null_x) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (rows == 0 || cols == 0) {
        want = ATTN_ERR_ZERO_DIMENSION;
    } else {
        const size_t span = PRODUCT(&ok, rows - 1, ld);
        if (ok && __builtin_add_overflow(span, cols, &elements))
            ok = 0;
        if (ok)
            PRODUCT(&ok, elements, p->es);
        if (!ok)
            want = ATTN_ERR_SIZE_OVERFLOW;
        else if (ld < cols)
            want = ATTN_ERR_BAD_STRIDE;
    }
    TRACE("%s(x %s, rows %zu, cols %zu, ld %zu)\n", current_op, null_x ? "NULL" : "set", rows, cols,
          ld);
    call c = {p, {{0}}, 0, !(ok && elements <= CAP_ELEMENTS)};
    if (c.huge && want == ATTN_OK)
        return; /* a legitimate call on more memory than the harness gives */
    void *x = add_array(&c, r, elements, 0, !null_x); /* an input: it gets values */
    c.a[0].output = 1;
    snapshot(&c);
    const attn_status st = p->f64 ? attn_softmax_rows_f64(x, rows, cols, ld)
                                  : attn_softmax_rows_f32(x, rows, cols, ld);
    if (!settle(&c, st, want))
        return;
    const unsigned char *before = c.a[0].snapshot;
    double *row = doubles(cols);
    for (size_t rr = 0; rr < rows; rr++) {
        for (size_t j = 0; j < cols; j++)
            row[j] = get(p, before, rr * ld + j);
        check_softmax_row(p, row, x, rr * ld, cols);
        if (rr + 1 < rows)
            ORACLE(memcmp((unsigned char *)x + (rr * ld + cols) * p->es,
                          before + (rr * ld + cols) * p->es, (ld - cols) * p->es) == 0,
                   "bytes between cols %zu and ld %zu after row %zu changed", cols, ld, rr);
    }
}

/* ---- attn_lookup -------------------------------------------------------------------- */

static attn_status call_lookup(const prec *p, size_t Tq, size_t Tk, size_t d, size_t dv,
                               double scale, const void *q, const void *k, const void *v, void *out,
                               void *weights)
{
    return p->f64 ? attn_lookup_f64(Tq, Tk, d, dv, scale, q, k, v, out, weights)
                  : attn_lookup_f32(Tq, Tk, d, dv, scale, q, k, v, out, weights);
}

static void fuzz_lookup(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_lookup_f64" : "attn_lookup_f32";
    const size_t Tq = take_dim(r), Tk = take_dim(r), d = take_dim(r), dv = take_dim(r);
    const double scale = take_scale(r);
    const uint8_t opt = take(r);
    const int with_weights = opt & 1, share_k = (opt >> 1) & 1, share_v = (opt >> 2) & 1;
    const int null_at = take_null(r, 4);
    const alias al = take_alias(r, 2, 5);

    const size_t dims[4] = {Tq, Tk, d, dv};
    int ok = 1;
    const size_t nq = PRODUCT(&ok, Tq, d, p->es) / p->es, nk = PRODUCT(&ok, Tk, d, p->es) / p->es;
    const size_t nv = PRODUCT(&ok, Tk, dv, p->es) / p->es, no = PRODUCT(&ok, Tq, dv, p->es) / p->es;
    const size_t nw = PRODUCT(&ok, Tq, Tk, p->es) / p->es;
    call c = {p, {{0}}, 0, 0};
    c.huge =
        !(ok &&
          (double)nq + (double)nk + (double)nv + (double)no + (double)nw <= (double)CAP_ELEMENTS &&
          (double)Tq * (double)Tk * ((double)d + (double)dv) <= (double)CAP_WORK);
    /* arguments: 0 q, 1 k, 2 v, 3 out, 4 weights */
    void *q = add_array(&c, r, nq, 0, null_at != 0);
    void *k = add_array(&c, r, nk, 0, null_at != 1);
    void *v = add_array(&c, r, nv, 0, null_at != 2);
    add_array(&c, r, no, 1, null_at != 3);
    add_array(&c, r, nw, 1, with_weights);
    if (!c.huge && share_k && Tk == Tq && q != NULL && k != NULL)
        k = c.a[1].ptr = q; /* one buffer passed twice as an input is allowed */
    if (!c.huge && share_v && dv == d && k != NULL && v != NULL)
        v = c.a[2].ptr = k;
    snapshot(&c);
    apply_alias(&c, al, 3);
    void *out = c.a[3].ptr, *weights = c.a[4].ptr;

    attn_status want = ATTN_OK;
    if (q == NULL || k == NULL || v == NULL || out == NULL) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (any_zero(4, dims)) {
        want = ATTN_ERR_ZERO_DIMENSION;
    } else if (!ok) {
        want = ATTN_ERR_SIZE_OVERFLOW;
    } else if (over_int(4, dims)) {
        want = ATTN_ERR_BLAS_RANGE;
    } else if (scale_bad(scale, p->max)) {
        want = ATTN_ERR_BAD_SCALE;
    } else {
        const region in[3] = {{q, nq * p->es}, {k, nk * p->es}, {v, nv * p->es}};
        const region outs[2] = {{out, no * p->es}, {weights, nw * p->es}};
        if (outputs_alias(outs, 2, in, 3))
            want = ATTN_ERR_ALIASING;
    }
    if (c.huge && want == ATTN_OK)
        return;
    TRACE("%s(Tq %zu, Tk %zu, d %zu, dv %zu, scale %g, q %p, k %p, v %p, out %p, weights %p)"
          " expecting %d\n",
          current_op, Tq, Tk, d, dv, scale, q, k, v, out, weights, (int)want);
    if (!settle(&c, call_lookup(p, Tq, Tk, d, dv, scale, q, k, v, out, weights), want))
        return;

    void *out2 = alloc(no * p->es), *w2 = with_weights ? alloc(nw * p->es) : NULL;
    ORACLE(call_lookup(p, Tq, Tk, d, dv, scale, q, k, v, out2, w2) == ATTN_OK &&
               memcmp(out, out2, no * p->es) == 0 &&
               (w2 == NULL || memcmp(weights, w2, nw * p->es) == 0),
           "a second identical call gave other bytes");

    double mq, mk, mv;
    const int finite =
        all_finite(p, q, nq, &mq) & all_finite(p, k, nk, &mk) & all_finite(p, v, nv, &mv);
    const double L = p->max / 4, sb = (double)d * mq * mk, sc = used_scale(p, scale, d);
    const int bounded = finite && sb <= L && mv <= L;
    if (weights != NULL)
        for (size_t t = 0; t < Tq; t++) {
            const int kind = check_weights_row(p, weights, t * Tk, Tk, Tk, "weights");
            if (bounded) {
                ORACLE(kind != 0, "weights row %zu NaN from finite, bounded inputs", t);
                ORACLE(kind != 1 || !(sc * sb <= L), "weights row %zu all 0", t);
            }
        }
    if (bounded)
        expect_finite(p, out, no, "out");
    if (!bounded)
        return;
    /* accuracy: one core, q, k, v given exactly (no projection rounding) */
    double *Q = doubles(nq), *K = doubles(nk), *V = doubles(nv), *aQ = doubles(nq),
           *aK = doubles(nk), *aV = doubles(nv);
    for (size_t i = 0; i < nq; i++)
        Q[i] = get(p, q, i), aQ[i] = fabs(Q[i]);
    for (size_t i = 0; i < nk; i++)
        K[i] = get(p, k, i), aK[i] = fabs(K[i]);
    for (size_t i = 0; i < nv; i++)
        V[i] = get(p, v, i);
    const core kc = {Tq, Tk, d, dv, d, d, dv, Q, K, V, aQ, aK, aV, (double)(d + 2), 0.0, sc, 0};
    double *Y = doubles(no), *errY = doubles(no);
    unsigned char *row_ok = alloc(Tq);
    memset(row_ok, 1, Tq);
    core_check(p, &kc, weights, 0, Y, errY, dv, row_ok, doubles(2 * Tk));
    check_projected(p, Y, errY, Tq, dv, dv, NULL, out, row_ok, "out");
}

/* ---- typed calls ------------------------------------------------------------------- */

static attn_status call_forward(int f64, attn_plan *plan, const void *X, const void *Wq,
                                const void *Wk, const void *Wv, const void *Wo, void *out,
                                void *weights)
{
    return f64 ? attn_forward_f64(plan, X, Wq, Wk, Wv, Wo, out, weights)
               : attn_forward_f32(plan, X, Wq, Wk, Wv, Wo, out, weights);
}

static attn_status call_backward(int f64, attn_plan *plan, const void *X, const void *Wq,
                                 const void *Wk, const void *Wv, const void *Wo, const void *dout,
                                 void *const g[5])
{
    return f64 ? attn_backward_f64(plan, X, Wq, Wk, Wv, Wo, dout, g[0], g[1], g[2], g[3], g[4])
               : attn_backward_f32(plan, X, Wq, Wk, Wv, Wo, dout, g[0], g[1], g[2], g[3], g[4]);
}

/* A plan the one-shot equivalence oracle runs (small shapes: it must work). */
static attn_plan *plan_for(const prec *p, shape s, unsigned flags)
{
    attn_plan *plan = NULL;
    const attn_status st = attn_plan_create(&plan, p->f64 ? ATTN_F64 : ATTN_F32, s.B, s.T, s.C,
                                            s.NH, s.hs, 0.0, flags);
    ORACLE(st == ATTN_OK, "the plan of a successful one-shot: %s", attn_status_string(st));
    return plan;
}

/* whether the arrays of a head call fit the harness's budget */
static int head_small(shape s, const extents *e, size_t es, int training, int with_weights)
{
    /* in double: the sizes may be anything up to SIZE_MAX */
    const double B = (double)s.B, T = (double)s.T, NH = (double)s.NH, hs = (double)s.hs;
    const double elements = ((double)e->x + 4.0 * (double)e->w + 2.0 * (double)e->out +
                             (with_weights ? (double)e->weights : 0.0)) /
                            (double)es;
    const double work = B * NH * T * T * (hs + 1.0) + B * T * (double)s.C * NH * hs;
    const double arena = 8.0 * B * T * NH * hs + (training ? 8.0 * T * hs : 0.0) + B * NH * T * T;
    return elements <= (double)CAP_ELEMENTS && work <= (double)CAP_WORK &&
           arena <= 8.0 * (double)CAP_ELEMENTS;
}

/* causal as the one-shots take it: 0 or any nonzero int */
static int causal_arg(uint8_t opt)
{
    return (opt & 1) ? ((opt & 0x40) ? -7 : 1) : 0;
}

/* ---- attn_self_attention ------------------------------------------------------------ */

static void fuzz_self_attention(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_self_attention_f64" : "attn_self_attention_f32";
    const size_t B = take_dim(r), T = take_dim(r), C = take_dim(r), hs = take_dim(r);
    const uint8_t opt = take(r);
    const int causal = causal_arg(opt), with_weights = (opt >> 1) & 1, share = (opt >> 2) & 1;
    const int null_at = take_null(r, 5);
    const alias al = take_alias(r, 2, 7);
    TRACE("%s(B %zu, T %zu, C %zu, hs %zu, causal %d, weights %d, null %d, alias %d)\n", current_op,
          B, T, C, hs, causal, with_weights, null_at, al.output);
    const shape s = {B, T, C, 1, hs};
    const size_t es = p->es, dims[4] = {B, T, C, hs};
    extents e = {0, 0, 0, 0};
    const int ok = forward_extents(s, es, 0, &e);
    call c = {p, {{0}}, 0, !(ok && head_small(s, &e, es, 0, with_weights))};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, (4 no Wo), 5 out, 6 weights */
    void *inputs[5];
    add_head_inputs(&c, r, &e, null_at, 0, inputs);
    add_array(&c, r, e.out / es, 1, null_at != 4);
    add_array(&c, r, e.weights / es, 1, with_weights);
    if (share && !c.huge && inputs[1] != NULL) {
        if (inputs[2] != NULL)
            inputs[2] = c.a[2].ptr = inputs[1];
        if (inputs[3] != NULL)
            inputs[3] = c.a[3].ptr = inputs[1];
    }
    snapshot(&c);
    apply_alias(&c, al, 5);
    void *X = inputs[0], *Wq = inputs[1], *Wk = inputs[2], *Wv = inputs[3];
    void *out = c.a[5].ptr, *weights = c.a[6].ptr;

    attn_status want = ATTN_OK;
    const size_t rows = B * T, blas[4] = {rows, T, C, hs};
    const unsigned flags = ATTN_INFERENCE | (causal ? ATTN_CAUSAL : 0u);
    if (!X || !Wq || !Wk || !Wv || !out) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (any_zero(4, dims)) {
        want = ATTN_ERR_ZERO_DIMENSION;
    } else if (!ok) {
        want = ATTN_ERR_SIZE_OVERFLOW;
    } else if (over_int(4, blas)) {
        want = ATTN_ERR_BLAS_RANGE;
    } else {
        const region in[4] = {{X, e.x}, {Wq, e.w}, {Wk, e.w}, {Wv, e.w}};
        const region outs[2] = {{out, e.out}, {weights, e.weights}};
        if (outputs_alias(outs, 2, in, 4))
            want = ATTN_ERR_ALIASING;
        else if (!arena_fits(s, es, flags)) /* the plan made for the call */
            want = ATTN_ERR_SIZE_OVERFLOW;
    }
    if (c.huge && want == ATTN_OK)
        return;
    const attn_status st =
        p->f64 ? attn_self_attention_f64(B, T, C, hs, causal, X, Wq, Wk, Wv, out, weights)
               : attn_self_attention_f32(B, T, C, hs, causal, X, Wq, Wk, Wv, out, weights);
    if (!settle(&c, st, want))
        return;

    /* the plan it is (attn.h): NH = 1, ATTN_INFERENCE, the same bytes */
    void *out2 = alloc(e.out), *w2 = with_weights ? alloc(e.weights) : NULL;
    attn_plan *plan = plan_for(p, s, flags);
    const attn_status st2 = call_forward(p->f64, plan, X, Wq, Wk, Wv, NULL, out2, w2);
    attn_plan_destroy(plan);
    ORACLE(st2 == ATTN_OK && memcmp(out, out2, e.out) == 0 &&
               (w2 == NULL || memcmp(weights, w2, e.weights) == 0),
           "self_attention and its plan give other bytes (%s)", attn_status_string(st2));
    head_ref h = head_ref_make(p, s, 0.0, causal != 0, X, Wq, Wk, Wv, NULL);
    check_forward(&h, X, Wq, Wk, Wv, NULL, weights, out);
}

/* ---- attn_mha_forward / attn_mha_backward ---------------------------------------------- */

/* The shared checks of the multi-head one-shots up to extent (documented
 * order): zero dimensions, C % NH, sizes, BLAS range. NULL is the caller's. */
static attn_status model_mha_shape(shape s, int ok)
{
    const size_t dims[4] = {s.B, s.T, s.C, s.NH};
    if (any_zero(4, dims))
        return ATTN_ERR_ZERO_DIMENSION;
    if (s.C % s.NH != 0)
        return ATTN_ERR_BAD_SHAPE;
    if (!ok)
        return ATTN_ERR_SIZE_OVERFLOW;
    const size_t blas[4] = {s.B * s.T, s.T, s.C, s.C};
    if (over_int(4, blas))
        return ATTN_ERR_BLAS_RANGE;
    return ATTN_OK;
}

/* The decoded head of a multi-head one-shot call. */
typedef struct mha_args {
    shape s; /* hs = C/NH, or 1 before NH divides C */
    extents e;
    int ok; /* no array's byte count overflows */
    uint8_t opt;
    int causal, with_Wo, null_at;
    alias al;
} mha_args;

/* dimensions B, T, C, NH, the options byte (1 causal, 2 Wo, ...), the NULL
 * choice among n_null pointers and the aliasing choice */
static mha_args take_mha_args(const prec *p, reader *r, int n_null, int n_outputs, int n_args)
{
    mha_args m;
    memset(&m, 0, sizeof m);
    const size_t B = take_dim(r), T = take_dim(r), C = take_dim(r), NH = take_dim(r);
    m.opt = take(r);
    m.causal = causal_arg(m.opt);
    m.with_Wo = (m.opt >> 1) & 1;
    m.null_at = take_null(r, n_null);
    m.al = take_alias(r, n_outputs, n_args);
    TRACE("%s(B %zu, T %zu, C %zu, NH %zu, causal %d, Wo %d, null %d, alias %d)\n", current_op, B,
          T, C, NH, m.causal, m.with_Wo, m.null_at, m.al.output);
    m.s = (shape){B, T, C, NH, (NH != 0 && C % NH == 0) ? C / NH : 1};
    m.ok = 1;
    if (!any_zero(4, (size_t[]){B, T, C, NH})) {
        m.ok = forward_extents(m.s, p->es, m.with_Wo, &m.e);
    } else { /* zero dimensions: the arrays are empty */
        int ok = 1;
        m.e.x = PRODUCT(&ok, B, T, C, p->es);
        m.e.w = PRODUCT(&ok, C, C, p->es);
        m.e.out = m.e.x;
        m.e.weights = PRODUCT(&ok, B, NH, T, T, p->es);
    }
    return m;
}

static void fuzz_mha_forward(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_mha_forward_f64" : "attn_mha_forward_f32";
    const mha_args m = take_mha_args(p, r, 5, 1, 6);
    const size_t B = m.s.B, T = m.s.T, C = m.s.C, NH = m.s.NH, es = p->es;
    const int causal = m.causal, ok = m.ok;
    const shape s = m.s;
    const extents e = m.e;
    call c = {p, {{0}}, 0, !(ok && head_small(s, &e, es, 0, 0))};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, 4 Wo, 5 out */
    void *inputs[5];
    add_head_inputs(&c, r, &e, m.null_at, m.with_Wo, inputs);
    add_array(&c, r, e.out / es, 1, m.null_at != 4);
    snapshot(&c);
    apply_alias(&c, m.al, 5);
    void *X = inputs[0], *Wq = inputs[1], *Wk = inputs[2], *Wv = inputs[3], *Wo = inputs[4];
    void *out = c.a[5].ptr;

    const unsigned flags = ATTN_INFERENCE | (causal ? ATTN_CAUSAL : 0u);
    attn_status want = ATTN_OK;
    if (!X || !Wq || !Wk || !Wv || !out)
        want = ATTN_ERR_NULL_POINTER;
    else
        want = model_mha_shape(s, ok);
    if (want == ATTN_OK) {
        const region in[5] = {{X, e.x}, {Wq, e.w}, {Wk, e.w}, {Wv, e.w}, {Wo, e.w}};
        const region outs[1] = {{out, e.out}};
        if (outputs_alias(outs, 1, in, 5))
            want = ATTN_ERR_ALIASING;
        else if (!arena_fits(s, es, flags))
            want = ATTN_ERR_SIZE_OVERFLOW;
    }
    if (c.huge && want == ATTN_OK)
        return;
    const attn_status st = p->f64
                               ? attn_mha_forward_f64(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo, out)
                               : attn_mha_forward_f32(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo, out);
    if (!settle(&c, st, want))
        return;

    void *out2 = alloc(e.out);
    attn_plan *plan = plan_for(p, s, flags);
    const attn_status st2 = call_forward(p->f64, plan, X, Wq, Wk, Wv, Wo, out2, NULL);
    attn_plan_destroy(plan);
    ORACLE(st2 == ATTN_OK && memcmp(out, out2, e.out) == 0,
           "mha_forward and its plan give other bytes (%s)", attn_status_string(st2));
    head_ref h = head_ref_make(p, s, 0.0, causal != 0, X, Wq, Wk, Wv, Wo);
    check_forward(&h, X, Wq, Wk, Wv, Wo, NULL, out);
}

/* oracle 7 on gradients g[5] (dWo only with Wo) */
static void check_gradients(const head_ref *h, double md, int with_Wo, void *const g[5])
{
    if (!backward_bounded(h, md, with_Wo))
        return;
    const size_t x = h->rows * h->s.C, w = h->s.C * h->D;
    static const char *const names[5] = {"dX", "dWq", "dWk", "dWv", "dWo"};
    for (int i = 0; i < (with_Wo ? 5 : 4); i++)
        expect_finite(h->p, g[i], i == 0 ? x : w, names[i]);
}

static void fuzz_mha_backward(const prec *p, reader *r)
{
    current_op = p->f64 ? "attn_mha_backward_f64" : "attn_mha_backward_f32";
    const mha_args m = take_mha_args(p, r, 10, 5, 11);
    const size_t B = m.s.B, T = m.s.T, C = m.s.C, NH = m.s.NH, es = p->es;
    const int causal = m.causal, ok = m.ok, null_at = m.null_at;
    const int dWo_anyway = (m.opt >> 2) & 1; /* dWo passed without Wo: ignored */
    const shape s = m.s;
    const extents e = m.e;
    call c = {p, {{0}}, 0, !(ok && head_small(s, &e, es, 1, 0))};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, 4 Wo, 5 dout, 6 dX, 7 dWq, 8 dWk, 9 dWv, 10 dWo */
    void *inputs[5];
    add_head_inputs(&c, r, &e, null_at, m.with_Wo, inputs);
    void *X = inputs[0], *Wq = inputs[1], *Wk = inputs[2], *Wv = inputs[3], *Wo = inputs[4];
    void *dout = add_array(&c, r, e.out / es, 0, null_at != 4);
    for (int i = 0; i < 5; i++)
        add_array(&c, r, (i == 0 ? e.x : e.w) / es, 1,
                  null_at != 5 + i && (i < 4 || m.with_Wo || dWo_anyway));
    snapshot(&c);
    apply_alias(&c, m.al, 6);
    void *g[5] = {c.a[6].ptr, c.a[7].ptr, c.a[8].ptr, c.a[9].ptr, c.a[10].ptr};

    attn_status want = ATTN_OK;
    if (!X || !Wq || !Wk || !Wv || !dout || !g[0] || !g[1] || !g[2] || !g[3] || (Wo && !g[4]))
        want = ATTN_ERR_NULL_POINTER;
    else
        want = model_mha_shape(s, ok);
    if (want == ATTN_OK) {
        const region in[6] = {{X, e.x}, {Wq, e.w}, {Wk, e.w}, {Wv, e.w}, {Wo, e.w}, {dout, e.out}};
        const region outs[5] = {
            {g[0], e.x}, {g[1], e.w}, {g[2], e.w}, {g[3], e.w}, {Wo != NULL ? g[4] : NULL, e.w}};
        if (outputs_alias(outs, 5, in, 6))
            want = ATTN_ERR_ALIASING;
        else if (!arena_fits(s, es, causal ? ATTN_CAUSAL : 0u))
            want = ATTN_ERR_SIZE_OVERFLOW;
    }
    if (c.huge && want == ATTN_OK)
        return;
    const attn_status st = p->f64 ? attn_mha_backward_f64(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo,
                                                          dout, g[0], g[1], g[2], g[3], g[4])
                                  : attn_mha_backward_f32(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo,
                                                          dout, g[0], g[1], g[2], g[3], g[4]);
    if (!settle(&c, st, want))
        return;

    /* the plan it is: a training plan, forward, backward; the same bytes */
    void *g2[5] = {alloc(e.x), alloc(e.w), alloc(e.w), alloc(e.w), Wo ? alloc(e.w) : NULL};
    void *out2 = alloc(e.out);
    attn_plan *plan = plan_for(p, s, causal ? ATTN_CAUSAL : 0u);
    attn_status st2 = call_forward(p->f64, plan, X, Wq, Wk, Wv, Wo, out2, NULL);
    if (st2 == ATTN_OK)
        st2 = call_backward(p->f64, plan, X, Wq, Wk, Wv, Wo, dout, g2);
    attn_plan_destroy(plan);
    ORACLE(st2 == ATTN_OK, "the plan of mha_backward: %s", attn_status_string(st2));
    for (int i = 0; i < (Wo ? 5 : 4); i++)
        ORACLE(memcmp(g[i], g2[i], i == 0 ? e.x : e.w) == 0,
               "mha_backward and its plan give other bytes in gradient %d", i);
    head_ref h = head_ref_make(p, s, 0.0, causal != 0, X, Wq, Wk, Wv, Wo);
    double md;
    h.finite_inputs &= all_finite(p, dout, e.out / es, &md);
    check_gradients(&h, md, Wo != NULL, g);
}

/* ---- plans ------------------------------------------------------------------------------ */

/* the inputs of the last successful forward, which a backward is given again */
typedef struct kept {
    const void *X, *Wq, *Wk, *Wv, *Wo;
} kept;

typedef struct plan_state {
    attn_plan *plan;
    const prec *p; /* the plan's precision */
    shape s;
    double scale;
    unsigned flags;
    int has_forward, had_Wo;
    kept k;
} plan_state;

/* registers an existing array as an input argument (snapshot, compare) */
static const void *add_existing(call *c, const void *ptr, size_t bytes)
{
    ORACLE(c->n < MAX_ARGS, "harness: too many arguments");
    arg *a = &c->a[c->n++];
    memset(a, 0, sizeof *a);
    a->ptr = (void *)(uintptr_t)ptr;
    a->alloc_bytes = bytes;
    a->bytes = bytes;
    return ptr;
}

static void plan_forward_step(plan_state *ps, reader *r, const prec *cp, uint8_t sb)
{
    current_op = cp->f64 ? "attn_forward_f64" : "attn_forward_f32";
    const int with_Wo = (sb >> 2) & 1, with_weights = (sb >> 3) & 1;
    const int null_at = take_null(r, 6); /* X Wq Wk Wv out plan */
    const alias al = take_alias(r, 2, 7);
    TRACE("%s(Wo %d, weights %d, null %d, alias %d)\n", current_op, with_Wo, with_weights, null_at,
          al.output);
    const shape s = ps->s;
    extents e;
    forward_extents(s, cp->es, with_Wo, &e);
    call c = {cp, {{0}}, 0, 0};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, 4 Wo, 5 out, 6 weights */
    void *inputs[5];
    add_head_inputs(&c, r, &e, null_at, with_Wo, inputs);
    void *X = inputs[0], *Wq = inputs[1], *Wk = inputs[2], *Wv = inputs[3], *Wo = inputs[4];
    add_array(&c, r, e.out / cp->es, 1, null_at != 4);
    add_array(&c, r, e.weights / cp->es, 1, with_weights);
    snapshot(&c);
    apply_alias(&c, al, 5);
    void *out = c.a[5].ptr, *weights = c.a[6].ptr;
    attn_plan *plan = null_at == 5 ? NULL : ps->plan;

    attn_status want = ATTN_OK;
    if (!plan || !X || !Wq || !Wk || !Wv || !out) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (cp->f64 != ps->p->f64) {
        want = ATTN_ERR_DTYPE_MISMATCH;
    } else {
        const region in[5] = {{X, e.x}, {Wq, e.w}, {Wk, e.w}, {Wv, e.w}, {Wo, e.w}};
        const region outs[2] = {{out, e.out}, {weights, e.weights}};
        if (outputs_alias(outs, 2, in, 5))
            want = ATTN_ERR_ALIASING;
    }
    if (!settle(&c, call_forward(cp->f64, plan, X, Wq, Wk, Wv, Wo, out, weights), want))
        return;
    if (!(ps->flags & ATTN_INFERENCE)) {
        ps->has_forward = 1;
        ps->had_Wo = Wo != NULL;
        ps->k = (kept){X, Wq, Wk, Wv, Wo};
    }
    void *out2 = alloc(e.out), *w2 = with_weights ? alloc(e.weights) : NULL;
    ORACLE(call_forward(cp->f64, plan, X, Wq, Wk, Wv, Wo, out2, w2) == ATTN_OK &&
               memcmp(out, out2, e.out) == 0 && (w2 == NULL || memcmp(weights, w2, e.weights) == 0),
           "the same forward again gave other bytes");
    head_ref h = head_ref_make(cp, s, ps->scale, (ps->flags & ATTN_CAUSAL) != 0, X, Wq, Wk, Wv, Wo);
    check_forward(&h, X, Wq, Wk, Wv, Wo, weights, out);
}

static void plan_backward_step(plan_state *ps, reader *r, const prec *cp, uint8_t sb)
{
    current_op = cp->f64 ? "attn_backward_f64" : "attn_backward_f32";
    const int with_Wo = (sb >> 2) & 1, dWo_anyway = (sb >> 3) & 1;
    const int use_kept = ps->has_forward && cp == ps->p && !(sb & 0x80);
    const int null_at = take_null(r, 11); /* X Wq Wk Wv dout dX dWq dWk dWv dWo plan */
    const alias al = take_alias(r, 5, 11);
    TRACE("%s(Wo %d, dWo %d, kept inputs %d, null %d, alias %d)\n", current_op, with_Wo,
          with_Wo || dWo_anyway, use_kept, null_at, al.output);
    const shape s = ps->s;
    extents e;
    forward_extents(s, cp->es, with_Wo, &e);
    call c = {cp, {{0}}, 0, 0};
    /* 0 X, 1 Wq, 2 Wk, 3 Wv, 4 Wo, 5 dout, 6 dX, 7 dWq, 8 dWk, 9 dWv, 10 dWo */
    const void *in[5];
    for (int i = 0; i < 5; i++) {
        const int present = (i < 4 ? null_at != i : with_Wo);
        const void *kept_array = (&ps->k.X)[i];
        if (use_kept && present && kept_array != NULL)
            in[i] = add_existing(&c, kept_array, i == 0 ? e.x : e.w);
        else
            in[i] = add_array(&c, r, (i == 0 ? e.x : e.w) / cp->es, 0, present);
    }
    const void *dout = add_array(&c, r, e.out / cp->es, 0, null_at != 4);
    for (int i = 0; i < 5; i++)
        add_array(&c, r, (i == 0 ? e.x : e.w) / cp->es, 1,
                  null_at != 5 + i && (i < 4 || with_Wo || dWo_anyway));
    snapshot(&c);
    apply_alias(&c, al, 6);
    void *g[5] = {c.a[6].ptr, c.a[7].ptr, c.a[8].ptr, c.a[9].ptr, c.a[10].ptr};
    attn_plan *plan = null_at == 10 ? NULL : ps->plan;
    const void *X = in[0], *Wo = in[4];

    attn_status want = ATTN_OK;
    if (!plan || !in[0] || !in[1] || !in[2] || !in[3] || !dout || !g[0] || !g[1] || !g[2] ||
        !g[3] || (Wo && !g[4])) {
        want = ATTN_ERR_NULL_POINTER;
    } else if (cp->f64 != ps->p->f64) {
        want = ATTN_ERR_DTYPE_MISMATCH;
    } else if (ps->flags & ATTN_INFERENCE) {
        want = ATTN_ERR_INFERENCE_PLAN;
    } else if (!ps->has_forward) {
        want = ATTN_ERR_NO_FORWARD;
    } else if ((Wo != NULL) != ps->had_Wo) {
        want = ATTN_ERR_FORWARD_MISMATCH;
    } else {
        const region ins[6] = {{X, e.x},     {in[1], e.w}, {in[2], e.w},
                               {in[3], e.w}, {Wo, e.w},    {dout, e.out}};
        const region outs[5] = {
            {g[0], e.x}, {g[1], e.w}, {g[2], e.w}, {g[3], e.w}, {Wo != NULL ? g[4] : NULL, e.w}};
        if (outputs_alias(outs, 5, ins, 6))
            want = ATTN_ERR_ALIASING;
    }
    const attn_status st = call_backward(cp->f64, plan, X, in[1], in[2], in[3], Wo, dout, g);
    if (!settle(&c, st, want))
        return;
    void *g2[5] = {alloc(e.x), alloc(e.w), alloc(e.w), alloc(e.w), alloc(e.w)};
    ORACLE(call_backward(cp->f64, plan, X, in[1], in[2], in[3], Wo, dout, g2) == ATTN_OK,
           "the same backward again failed");
    for (int i = 0; i < (Wo ? 5 : 4); i++)
        ORACLE(memcmp(g[i], g2[i], i == 0 ? e.x : e.w) == 0,
               "the same backward again gave other bytes in gradient %d", i);
    if (!use_kept || in[1] != ps->k.Wq)
        return; /* fresh inputs: the gradients of another forward, no bound */
    head_ref h =
        head_ref_make(cp, s, ps->scale, (ps->flags & ATTN_CAUSAL) != 0, X, in[1], in[2], in[3], Wo);
    double md;
    h.finite_inputs &= all_finite(cp, dout, e.out / cp->es, &md);
    check_gradients(&h, md, Wo != NULL, g);
}

static void fuzz_plan(reader *r)
{
    current_op = "attn_plan_create";
    const uint8_t db = take(r);
    attn_dtype dtype = ATTN_F32;
    switch (db & 3) {
    case 0:
        dtype = ATTN_F32;
        break;
    case 1:
        dtype = ATTN_F64;
        break;
    case 2:
        dtype = (db & 4) ? ATTN_F64 : ATTN_F32;
        break;
    default:
        dtype = (attn_dtype)(int)(int8_t)take(r);
        break;
    }
    const prec *p = dtype == ATTN_F64 ? &prec_f64 : &prec_f32;
    const size_t B = take_dim(r), T = take_dim(r), C = take_dim(r), NH = take_dim(r),
                 hs = take_dim(r);
    const double scale = take_scale(r);
    const uint8_t fb = take(r);
    unsigned flags = fb & 15u;
    if (fb & 0x80)
        flags |= 1u << (4 + take(r) % 28);
    const int null_plan = take_null(r, 1) == 0;
    const int valid_dtype = dtype == ATTN_F32 || dtype == ATTN_F64;
    TRACE("%s(dtype %d, B %zu, T %zu, C %zu, NH %zu, hs %zu, scale %g, flags %#x%s)\n", current_op,
          (int)dtype, B, T, C, NH, hs, scale, flags, null_plan ? ", plan NULL" : "");
    const shape s = {B, T, C, NH, hs};

    attn_status want;
    if (null_plan)
        want = ATTN_ERR_NULL_POINTER;
    else if (!valid_dtype)
        want = ATTN_ERR_BAD_DTYPE;
    else if ((flags & ~15u) != 0 || (flags & 12u) == 12u)
        want = ATTN_ERR_BAD_FLAGS;
    else
        want = model_plan_shape(s, p->es, scale, p->max, flags);
    extents e = {0, 0, 0, 0};
    if (want == ATTN_OK && !(forward_extents(s, p->es, 1, &e) && head_small(s, &e, p->es, 1, 1) &&
                             forward_extents(s, p->es, 0, &e) && head_small(s, &e, p->es, 1, 1)))
        return; /* a plan larger than the harness runs */

    static int sentinel_object;
    attn_plan *const sentinel = (attn_plan *)(void *)&sentinel_object;
    attn_plan *plan = sentinel;
    const attn_status st =
        attn_plan_create(null_plan ? NULL : &plan, dtype, B, T, C, NH, hs, scale, flags);
    expect_status(st, want, current_op);
    if (st != ATTN_OK) {
        ORACLE(plan == sentinel, "*plan was written by a failing attn_plan_create");
        return;
    }
    ORACLE(plan != NULL && plan != sentinel, "attn_plan_create succeeded without a plan");

    /* its threads: BLAS threads (0), 1-3 of its own, or too many */
    const uint8_t tb = take(r);
    const unsigned threads = (tb & 0x80) && (tb & 0x40) ? ATTN_MAX_THREADS + 1u : tb % 4u;
    current_op = "attn_plan_set_threads";
    TRACE("%s(%u)\n", current_op, threads);
    expect_status(attn_plan_set_threads(plan, threads),
                  threads > ATTN_MAX_THREADS ? ATTN_ERR_BAD_THREADS : ATTN_OK, current_op);

    plan_state ps;
    memset(&ps, 0, sizeof ps);
    ps.plan = plan;
    ps.p = p;
    ps.s = s;
    ps.scale = scale;
    ps.flags = flags;
    const int steps = take(r) % 7;
    for (int i = 0; i < steps; i++) {
        const uint8_t sb = take(r);
        /* the other precision's function on one step in four */
        const int other = (sb & 0x42) == 0x42;
        const prec *cp = (p->f64 ^ other) ? &prec_f64 : &prec_f32;
        if (sb & 1)
            plan_backward_step(&ps, r, cp, sb);
        else
            plan_forward_step(&ps, r, cp, sb);
    }
    attn_plan_destroy(plan);
    current_op = "attn_plan_destroy(NULL)";
    attn_plan_destroy(NULL);
}

/* ---- entry ------------------------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0, 0};
    const uint8_t op = take(&r), pb = take(&r);
    r.rng = (uint64_t)pb << 16 | (uint64_t)take(&r) << 8 | take(&r);
    const prec *p = (pb & 1) ? &prec_f64 : &prec_f32;
    typedef void (*one_call)(const prec *p, reader *r);
    static const one_call calls[5] = {fuzz_softmax_rows, fuzz_lookup, fuzz_self_attention,
                                      fuzz_mha_forward, fuzz_mha_backward};
    if (op % 6 < 5)
        calls[op % 6](p, &r);
    else
        fuzz_plan(&r);
    free_all();
    return 0;
}
