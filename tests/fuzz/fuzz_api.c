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
 *   with or without Wo and weights, then attn_plan_destroy; or an sdpa
 *   plan (attention on given Q, K, V): attn_sdpa_plan_create with any dtype,
 *   shape (B, NH, NH_kv, Tq, Tk, hs, hs_v), flags (the projected plans'
 *   ATTN_MATERIALIZED and ATTN_TILED and unknown bits too), scale and window,
 *   its threads, then up to 6 attn_sdpa_forward and attn_sdpa_backward calls
 *   in either precision with any batch, head and row strides of Q, K, V, out
 *   (take_layout: dense, padded, too small or huge rows; (B,NH,T,hs), with
 *   gaps, a cache longer than T, overlapping sequences or heads, heads among
 *   the rows, any three dimensions), key lengths (NULL, any up to Tk, above
 *   it; the unfilled slots of K and V NaN), masks (NULL, every broadcast layout, any strides, -inf
 *   entries) and lse or not, and PLAN_KIND calls both ways; or the one-shot
 *   attn_sdpa_f32/f64 on the same choices.
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
 *      forward, the forward's inputs (their pointers); for sdpa calls
 *      attn.h's order: NULL, plan kind, dtype, inference, strides (an
 *      array placing two elements at one place by attn.h's rule:
 *      strides_repeat; a nonzero mask stride below what it steps over,
 *      however large), extents, BLAS range of the row strides, key lengths,
 *      aliasing (attn.h's rule, strided_may_share: spans, or residues
 *      modulo a stride for arrays laid out by strides; the mask, lse and
 *      key_lengths by their spans; key_lengths an input too)), predicted by
 *      an independent model here;
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
 *   9. sdpa (check_sdpa_forward, check_sdpa_backward): a row that sees no
 *      key, or whose visible scores are all -inf, is lse -inf and (V finite
 *      on the keys only the mask or window hides) out 0 exactly; a NaN
 *      among a row's visible inputs makes its out and lse NaN; a +inf score
 *      makes lse +inf; otherwise out and lse within oracle 8's bounds (Q, K,
 *      V given exactly); the bytes of an output's allocation that no
 *      output's layout addresses are unchanged (settle_sdpa_outputs), and
 *      an output the aliasing rule accepted shares no byte with an input or
 *      another output (enumerated: check_sdpa_disjoint); dK, dV of keys
 *      j >= L_b and dQ of queries without keys are exactly 0; gradients
 *      finite under stated magnitude bounds; a one-shot equals its
 *      ATTN_INFERENCE plan bit for bit and a call made twice gives the same
 *      bytes.
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
 * % 7: softmax_rows, lookup, self_attention, mha_forward, mha_backward,
 * plan, sdpa); byte 1 bit 0 the precision (1: f64), bytes 1-3 the seed of the
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
                bound += aq[c] * ak[c] + p->min; /* + min: as in project() */
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
                /* + min: a product below the normal range rounds with an
                 * absolute error up to u min (gradual underflow), which the
                 * relative model kq u aQ then covers */
                a += fabs(x * w) + p->min;
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
 * i % n_outputs into argument t % n_args, o elements in; for sdpa calls,
 * bit 0x10 of b (grow) also makes the target long enough to hold the
 * output o elements in, so that the two may interleave (a fused buffer). */
typedef struct alias {
    int output, target;
    size_t offset;
    int grow;
} alias;

static alias take_alias(reader *r, int n_outputs, int n_args)
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
    TRACE("  argument %d placed in argument %d, %zu bytes in\n", oi, al.target, off);
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
    int has_forward;
    kept k; /* the last forward's inputs: its backward must be given them */
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
    } else if (X != ps->k.X || in[1] != ps->k.Wq || in[2] != ps->k.Wk || in[3] != ps->k.Wv ||
               Wo != ps->k.Wo) {
        want = ATTN_ERR_FORWARD_MISMATCH; /* not the forward's arrays (Wo's presence too) */
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

/* A plan's dtype from the input: byte & 3 is 0 f32, 1 f64, 2 either (bit 4),
 * 3 any value (the next byte, signed: bad dtypes too). */
static attn_dtype take_dtype(reader *r)
{
    const uint8_t db = take(r);
    switch (db & 3) {
    case 0:
        return ATTN_F32;
    case 1:
        return ATTN_F64;
    case 2:
        return (db & 4) ? ATTN_F64 : ATTN_F32;
    default:
        return (attn_dtype)(int)(int8_t)take(r);
    }
}

static void fuzz_plan(reader *r)
{
    current_op = "attn_plan_create";
    const attn_dtype dtype = take_dtype(r);
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

/* ---- attention on given Q, K, V (sdpa) ------------------------------------------------------ */

/* The shape of an sdpa plan; hs_v resolved (hs when given as 0). */
typedef struct sdpa_dims {
    size_t B, NH, NH_kv, Tq, Tk, hs, hs_v;
} sdpa_dims;

/* The own kernel's scratch bound of a worker, attn_gemm_pack_bound for
 * dimensions >= the key tile (lib/kernels/kernels.h: KC 256, NC 512, NR_MAX 64,
 * MC 144, MR_MAX 16), rounded as the plan rounds it: "about 150k elements
 * for the matrix-product kernel" (attn.h). */
#define SDPA_PACK_ELEMENTS ((size_t)(256 * (512 + 64) + (144 + 16) * 256 + 16))
#define SDPA_QUERY_BLOCK ((size_t)128) /* lib/engine/tiling.h */
#define SDPA_TILE_KEYS ((size_t)512)

static size_t ceil_div(size_t n, size_t d)
{
    return n / d + (n % d != 0);
}

/* The work split of lib/engine/sdpa_layout.h (attn.h: "for shapes of fewer than
 * 8 (sequence, key/value head) pairs, partial results of key blocks"): the
 * forward's key splits and the backward's key block groups. Called only
 * once B*NH*Tq*hs is known to fit. */
static void sdpa_splits(sdpa_dims s, size_t *splits, size_t *groups)
{
    const size_t group = s.NH / s.NH_kv;
    const size_t queries = s.Tq < SDPA_QUERY_BLOCK ? s.Tq : SDPA_QUERY_BLOCK;
    /* the most heads of the group (a divisor) whose rows fit a query block */
    size_t heads = 1;
    const size_t most = SDPA_QUERY_BLOCK / queries < group ? SDPA_QUERY_BLOCK / queries : group;
    for (size_t h = most; h >= 1; h--)
        if (group % h == 0) {
            heads = h;
            break;
        }
    const size_t items = s.B * s.NH_kv * (group / heads) * ceil_div(s.Tq, queries);
    const size_t key_tiles = ceil_div(s.Tk, SDPA_TILE_KEYS);
    *splits = 1;
    if (items < 8) {
        *splits = ceil_div(8, items);
        if (*splits > key_tiles)
            *splits = key_tiles;
    }
    const size_t pairs = s.B * s.NH_kv, key_blocks = ceil_div(s.Tk, SDPA_QUERY_BLOCK);
    *groups = 1;
    if (pairs < 4) {
        *groups = ceil_div(8, pairs);
        if (*groups > key_blocks)
            *groups = key_blocks;
    }
}

/* attn_sdpa_plan_create's SIZE_OVERFLOW: the dense arrays' byte counts, the
 * arena (row sums, partial results, dQ parts; each padded to 64 bytes) and a
 * worker's tile (128*512 scores, 128 rows of hs_v, 3*128 statistics, a row
 * of Tk, rounding). */
static int sdpa_sizes_fit(sdpa_dims s, size_t es, unsigned flags)
{
    int ok = 1;
    const size_t q_rows = PRODUCT(&ok, s.B, s.Tq), k_rows = PRODUCT(&ok, s.B, s.Tk);
    const size_t q_width = PRODUCT(&ok, s.NH, s.hs), o_width = PRODUCT(&ok, s.NH, s.hs_v);
    const size_t k_width = PRODUCT(&ok, s.NH_kv, s.hs > s.hs_v ? s.hs : s.hs_v);
    if (!ok)
        return 0;
    PRODUCT(&ok, q_rows, q_width > o_width ? q_width : o_width, es);
    PRODUCT(&ok, k_rows, k_width, es);
    if (!ok)
        return 0;
    size_t splits, groups;
    sdpa_splits(s, &splits, &groups);
    size_t partial_row;
    if (__builtin_add_overflow(s.hs_v, (size_t)2, &partial_row))
        return 0;
    const size_t rows = PRODUCT(&ok, s.B, s.NH, s.Tq);
    const size_t partials = PRODUCT(&ok, rows, splits, partial_row);
    const size_t parts = PRODUCT(&ok, rows, groups, s.hs);
    if (!ok)
        return 0;
    const int inference = (flags & ATTN_INFERENCE) != 0;
    const size_t counts[3] = {splits > 1 ? partials : 0, inference ? 0 : rows,
                              !inference && groups > 1 ? parts : 0};
    size_t at = 0;
    for (int i = 0; i < 3; i++) {
        size_t bytes, padded;
        if (counts[i] == 0)
            continue;
        if (__builtin_mul_overflow(counts[i], es, &bytes) ||
            __builtin_add_overflow(bytes, (size_t)63, &padded) ||
            __builtin_add_overflow(at, padded / 64 * 64, &at))
            return 0;
    }
    size_t tile, head_rows;
    const size_t fixed = SDPA_QUERY_BLOCK * SDPA_TILE_KEYS + 3 * SDPA_QUERY_BLOCK + 32;
    if (__builtin_mul_overflow(SDPA_QUERY_BLOCK, s.hs_v, &head_rows) ||
        __builtin_add_overflow(head_rows, s.Tk, &tile) ||
        __builtin_add_overflow(tile, fixed, &tile) ||
        __builtin_add_overflow(SDPA_PACK_ELEMENTS, tile / 16 * 16, &tile))
        return 0;
    return 1;
}

/* attn_sdpa_plan_create's checks after NULL, dtype and flags */
static attn_status model_sdpa_create(sdpa_dims s, size_t es, double scale, double largest,
                                     unsigned flags)
{
    const size_t dims[6] = {s.B, s.NH, s.NH_kv, s.Tq, s.Tk, s.hs};
    if (any_zero(6, dims))
        return ATTN_ERR_ZERO_DIMENSION;
    if (s.NH % s.NH_kv != 0)
        return ATTN_ERR_BAD_SHAPE;
    if (!sdpa_sizes_fit(s, es, flags))
        return ATTN_ERR_SIZE_OVERFLOW;
    /* the dimensions a product of the engines gets (fit: checked above) */
    const size_t blas[6] = {s.Tk, s.hs, s.hs_v, s.NH * s.hs,
                            s.NH_kv * (s.hs > s.hs_v ? s.hs : s.hs_v), s.NH * s.hs_v};
    if (over_int(6, blas))
        return ATTN_ERR_BLAS_RANGE;
    if (scale_bad(scale, largest))
        return ATTN_ERR_BAD_SCALE;
    return ATTN_OK;
}

static attn_status model_sdpa_flags(unsigned flags)
{
    return (flags & ~(unsigned)(ATTN_CAUSAL | ATTN_INFERENCE)) != 0 ? ATTN_ERR_BAD_FLAGS : ATTN_OK;
}

/* whether the arrays and the reference of a plan fit the harness's budget */
static int sdpa_small(sdpa_dims s)
{
    const double B = (double)s.B, NH = (double)s.NH, NHkv = (double)s.NH_kv, Tq = (double)s.Tq;
    const double Tk = (double)s.Tk, hs = (double)s.hs, hv = (double)s.hs_v;
    const double elements = 3.0 * B * Tq * NH * (hs + hv) + 3.0 * B * Tk * NHkv * (hs + hv) +
                            B * NH * Tq * Tk + 4.0 * B * NH * Tq;
    const double work = B * NH * Tq * Tk * (hs + hv + 2.0);
    const double arena = B * NH * Tq * (8.0 * (hv + 2.0) + 8.0 * hs + 1.0);
    return elements <= (double)CAP_ELEMENTS && work <= (double)CAP_WORK &&
           arena <= 8.0 * (double)CAP_ELEMENTS;
}

/* ---- one call's arguments -------------------------------------------------------------- */

/* a*b and a + b, saturated at SIZE_MAX; (rows-1)*ld + width likewise */
static size_t sat_mul(size_t a, size_t b)
{
    size_t p;
    return __builtin_mul_overflow(a, b, &p) ? SIZE_MAX : p;
}

static size_t sat_add(size_t a, size_t b)
{
    size_t s;
    return __builtin_add_overflow(a, b, &s) ? SIZE_MAX : s;
}

static size_t sat_extent(size_t rows, size_t ld, size_t width)
{
    size_t span;
    return __builtin_mul_overflow(rows - 1, ld, &span) ? SIZE_MAX : sat_add(span, width);
}

/* The strides (sequence, head, row; 0 the dense default) of an array of H
 * heads of w elements in T rows, from a byte b:
 *   0x00-0x3F  all 0: (B,T,H,w) dense
 *   0x40-0x7F  a layout picked by (b >> 3) & 7, tuned by k = b & 7:
 *     0 (B,H,T,w), PyTorch's   ld w, sh T*w, sb H*T*w
 *     1 (B,H,T,w) with gaps    ld w + (k & 3), sh the rows' span + 3 (k >> 2),
 *                              sb the heads' span + 1
 *     2 a cache of T + 1 + k   ld w, sh (T + 1 + k)*w, sb H*sh
 *     3 (B,H,T,w) with sb 0    the dense default T*ld: one head's rows
 *     4 (B,H,T,w), sb - 1      sequences overlapping by an element
 *     5 (B,T,H,w), sb + k      sequences k elements apart (sb given)
 *     6 heads among the rows   ld w + 2, sh w + 1 + k (interleaving rows
 *                              and heads), sb beyond both
 *     7 any                    sb, sh, ld: three dimensions (take_dim)
 *   0x80-0xBF  ld H*w + (b & 7): padded rows
 *   0xC0-0xDF  ld H*w - 1 - (b & 3): too small, or wrapped around to huge
 *   0xE0-0xFF  ld a dimension
 * The strides of a dimension of one entry do not matter (attn.h). */
static void take_layout(reader *r, size_t H, size_t T, size_t w, size_t st[3])
{
    const uint8_t b = take(r);
    const size_t k = b & 7, width = sat_mul(H, w);
    st[0] = st[1] = st[2] = 0;
    if (b >= 0xE0) {
        st[2] = take_dim(r);
    } else if (b >= 0xC0) {
        st[2] = width - 1 - (b & 3);
    } else if (b >= 0x80) {
        st[2] = width + k;
    } else if (b >= 0x40) {
        const size_t rows = sat_mul(T, w);
        switch ((b >> 3) & 7) {
        case 0:
            st[2] = w, st[1] = rows, st[0] = sat_mul(H, rows);
            break;
        case 1:
            st[2] = w + (k & 3);
            st[1] = sat_add(sat_extent(T, st[2], w), 3 * (k >> 2));
            st[0] = sat_add(sat_extent(H, st[1], sat_extent(T, st[2], w)), 1);
            break;
        case 2:
            st[2] = w, st[1] = sat_mul(sat_add(T, 1 + k), w), st[0] = sat_mul(H, st[1]);
            break;
        case 3:
            st[2] = w, st[1] = rows;
            break;
        case 4:
            st[2] = w, st[1] = rows, st[0] = sat_mul(H, rows) - 1;
            break;
        case 5:
            st[2] = width, st[1] = w, st[0] = sat_add(sat_mul(T, width), k);
            break;
        case 6:
            st[2] = w + 2, st[1] = w + 1 + k;
            st[0] = sat_add(sat_add(sat_mul(T, st[2]), sat_mul(H, st[1])), w);
            break;
        default:
            st[0] = take_dim(r), st[1] = take_dim(r), st[2] = take_dim(r);
        }
    }
}

/* A mask stride for `exact` (what it steps over): 0, exact, a little more,
 * one less, or any dimension. */
static size_t take_mask_stride(reader *r, size_t exact)
{
    const uint8_t b = take(r);
    if (b < 0x40)
        return 0;
    if (b < 0x80)
        return exact;
    if (b < 0xC0)
        return exact + (b & 7);
    if (b < 0xE0)
        return exact - 1;
    return take_dim(r);
}

/* The decoded arguments of one sdpa forward or backward. */
enum { SQ, SK, SV, SO, SDPA_ARRAYS }; /* Q, K, V, out */

typedef struct sdpa_call {
    size_t st[SDPA_ARRAYS][3];  /* sb, sh, ld of Q, K, V, out as passed */
    size_t rs[SDPA_ARRAYS][3];  /* resolved (0: the dense default, SIZE_MAX if it overflows) */
    int repeats[SDPA_ARRAYS];   /* two elements at one place by attn.h's rule (BAD_STRIDE) */
    int has_mask;
    size_t mask_ld, mask_sb, mask_sh;
    uint8_t mask_fill;                     /* how many entries are -inf */
    int has_lengths, nan_slots;
    size_t lengths[8];
    int null_at;
    alias al;
    /* extents in elements (SIZE_MAX: beyond size_t), mask 0 without one */
    size_t nQ, nK, nV, nO, nM, nL;
} sdpa_call;

static void sdpa_call_resolve(sdpa_call *c, sdpa_dims s);

/* heads, rows and head size of array i (SQ, SK, SV, SO) of shape s */
static void sdpa_array_dims(sdpa_dims s, int i, size_t *H, size_t *T, size_t *w)
{
    *H = i == SQ || i == SO ? s.NH : s.NH_kv;
    *T = i == SQ || i == SO ? s.Tq : s.Tk;
    *w = i == SQ || i == SK ? s.hs : s.hs_v;
}

/* element 0 of row t of head h of sequence b of array i (attn.h: b*sb +
 * h*sh + t*ld; the indices of a dimension of one entry are 0) */
static size_t sdpa_at(const sdpa_call *a, int i, size_t b, size_t h, size_t t)
{
    return b * a->rs[i][0] + h * a->rs[i][1] + t * a->rs[i][2];
}

/* The mask strides, lengths and row strides of a call on plan shape s. */
static sdpa_call take_sdpa_call(reader *r, sdpa_dims s, int n_null, int n_outputs, int n_args)
{
    sdpa_call a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < SDPA_ARRAYS; i++) {
        size_t H, T, w;
        sdpa_array_dims(s, i, &H, &T, &w);
        take_layout(r, H, T, w, a.st[i]);
    }
    const uint8_t mb = take(r);
    a.has_mask = mb >= 0x80;
    if (a.has_mask) {
        const size_t head = (s.Tq - 1) * s.Tk + s.Tk, seq = s.NH * head;
        a.mask_fill = (uint8_t)((mb >> 4) & 3);
        switch (mb & 7) {
        case 0: /* (B,NH,Tq,Tk) */
            a.mask_ld = s.Tk, a.mask_sh = head, a.mask_sb = seq;
            break;
        case 1: /* key padding */
            a.mask_ld = 0, a.mask_sh = 0, a.mask_sb = s.Tk;
            break;
        case 2: /* shared by the heads */
            a.mask_ld = s.Tk, a.mask_sh = 0, a.mask_sb = head;
            break;
        case 3: /* shared by the batch */
            a.mask_ld = s.Tk, a.mask_sh = head, a.mask_sb = 0;
            break;
        case 4: /* one row */
            a.mask_ld = a.mask_sh = a.mask_sb = 0;
            break;
        default: { /* each stride chosen */
            a.mask_ld = take_mask_stride(r, s.Tk);
            const size_t h = a.mask_ld ? sat_extent(s.Tq, a.mask_ld, s.Tk) : s.Tk;
            a.mask_sh = take_mask_stride(r, h);
            const size_t q = a.mask_sh ? sat_extent(s.NH, a.mask_sh, h) : h;
            a.mask_sb = take_mask_stride(r, q);
        }
        }
    }
    const uint8_t lb = take(r);
    a.has_lengths = lb >= 0x80 && s.B <= 8;
    a.nan_slots = (lb >> 6) & 1;
    for (size_t b = 0; a.has_lengths && b < s.B; b++) {
        const uint8_t v = take(r);
        a.lengths[b] = v >= 0xF0 ? s.Tk + 1 + (v & 3) : v >= 0xE8 ? SIZE_MAX : v % (s.Tk + 1);
    }
    a.null_at = take_null(r, n_null);
    a.al = take_alias(r, n_outputs, n_args);
    sdpa_call_resolve(&a, s);
    for (int i = 0; i < SDPA_ARRAYS; i++)
        TRACE("  %c: sb %zu sh %zu ld %zu\n", "QKVo"[i], a.st[i][0], a.st[i][1], a.st[i][2]);
    TRACE("  mask %d (ld %zu sh %zu sb %zu, -inf %d), lengths %d "
          "(NaN slots %d), null %d, alias %d\n",
          a.has_mask, a.mask_ld, a.mask_sh, a.mask_sb, a.mask_fill,
          a.has_lengths, a.nan_slots, a.null_at, a.al.output);
    return a;
}

/* attn.h's rule: the dimensions of more than one entry, by increasing
 * stride, each step over the span of the row and the dimensions below.
 * Whether an array breaks it (BAD_STRIDE); once the span below overflows,
 * the array's extent does too (SIZE_OVERFLOW, checked after). */
static int strides_repeat(const size_t count[3], const size_t stride[3], size_t width)
{
    int order[3], n = 0;
    for (int d = 0; d < 3; d++)
        if (count[d] > 1)
            order[n++] = d;
    for (int i = 1; i < n; i++) /* by stride */
        for (int j = i; j > 0 && stride[order[j - 1]] > stride[order[j]]; j--) {
            const int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    size_t below = width, step;
    for (int i = 0; i < n; i++) {
        if (stride[order[i]] < below)
            return 1;
        if (__builtin_mul_overflow(count[order[i]] - 1, stride[order[i]], &step) ||
            __builtin_add_overflow(below, step, &below))
            return 0;
    }
    return 0;
}

/* the strides with 0 resolved (attn.h: ld H*w, sh w, sb T*ld, SIZE_MAX when
 * that overflows), the rule, and the extents of a call on shape s (valid) */
static void sdpa_call_resolve(sdpa_call *c, sdpa_dims s)
{
    sdpa_call a = *c;
    size_t *extent[SDPA_ARRAYS] = {&a.nQ, &a.nK, &a.nV, &a.nO};
    for (int i = 0; i < SDPA_ARRAYS; i++) {
        size_t H, T, w;
        sdpa_array_dims(s, i, &H, &T, &w);
        size_t *r = a.rs[i];
        r[2] = a.st[i][2] ? a.st[i][2] : H * w;
        r[1] = a.st[i][1] ? a.st[i][1] : w;
        r[0] = a.st[i][0] ? a.st[i][0] : sat_mul(T, r[2]);
        const size_t count[3] = {s.B, H, T};
        a.repeats[i] = strides_repeat(count, r, w);
        size_t e = w;
        for (int d = 0; d < 3; d++)
            if (count[d] > 1)
                e = sat_add(e, sat_mul(count[d] - 1, r[d]));
        *extent[i] = e;
    }
    a.nL = s.B * s.NH * s.Tq;
    a.nM = 0;
    if (a.has_mask) {
        const size_t h = a.mask_ld ? sat_extent(s.Tq, a.mask_ld, s.Tk) : s.Tk;
        const size_t q = a.mask_sh ? sat_extent(s.NH, a.mask_sh, h) : h;
        a.nM = a.mask_sb ? sat_extent(s.B, a.mask_sb, q) : q;
    }
    *c = a;
}

/* The documented checks of a call after its NULL pointers, PLAN_KIND and
 * DTYPE_MISMATCH (and INFERENCE_PLAN): BAD_STRIDE (Q, K, V or out placing
 * two elements at one place by attn.h's rule; a nonzero mask stride below
 * what it steps over, however large that is), SIZE_OVERFLOW (an extent, in
 * elements or bytes), BLAS_RANGE (a row stride above INT_MAX, whatever the
 * rows), BAD_LENGTH. */
static attn_status model_sdpa_args(sdpa_dims s, size_t es, const sdpa_call *a)
{
    if (a->repeats[SQ] || a->repeats[SK] || a->repeats[SV] || a->repeats[SO])
        return ATTN_ERR_BAD_STRIDE;
    if (a->has_mask) {
        /* an extent beyond size_t is above every stride */
        int over = 0;
        size_t head = s.Tk, seq, span;
        if (a->mask_ld && a->mask_ld < s.Tk)
            return ATTN_ERR_BAD_STRIDE;
        if (a->mask_ld)
            over |= __builtin_mul_overflow(s.Tq - 1, a->mask_ld, &span) ||
                    __builtin_add_overflow(span, s.Tk, &head);
        if (a->mask_sh && (over || a->mask_sh < head))
            return ATTN_ERR_BAD_STRIDE;
        seq = head;
        if (a->mask_sh)
            over |= __builtin_mul_overflow(s.NH - 1, a->mask_sh, &span) ||
                    __builtin_add_overflow(span, head, &seq);
        if (a->mask_sb && (over || a->mask_sb < seq))
            return ATTN_ERR_BAD_STRIDE;
    }
    const size_t extents[5] = {a->nQ, a->nK, a->nV, a->nO, a->nM};
    for (int i = 0; i < 5; i++) {
        size_t bytes;
        if (extents[i] == SIZE_MAX || __builtin_mul_overflow(extents[i], es, &bytes))
            return ATTN_ERR_SIZE_OVERFLOW;
    }
    const size_t lds[4] = {a->rs[SQ][2], a->rs[SK][2], a->rs[SV][2], a->rs[SO][2]};
    if (over_int(4, lds))
        return ATTN_ERR_BLAS_RANGE;
    for (size_t b = 0; a->has_lengths && b < s.B; b++)
        if (a->lengths[b] > s.Tk)
            return ATTN_ERR_BAD_LENGTH;
    return ATTN_OK;
}

/* a raw input argument of `bytes` (the key lengths) */
static void *add_raw(call *c, const void *src, size_t bytes, int present)
{
    ORACLE(c->n < MAX_ARGS, "harness: too many arguments");
    arg *a = &c->a[c->n++];
    memset(a, 0, sizeof *a);
    if (!present)
        return NULL;
    a->ptr = alloc(bytes);
    memcpy(a->ptr, src, bytes);
    a->alloc_bytes = a->bytes = bytes;
    return a->ptr;
}

/* The arrays of one call, in the harness's argument list:
 *   0 Q, 1 K, 2 V, 3 mask, 4 key_lengths, 5 out, 6 lse,
 *   backward: 7 dout, 8 dQ, 9 dK, 10 dV. */
typedef struct sdpa_arrays {
    void *Q, *K, *V, *mask, *out, *lse, *dout, *dQ, *dK, *dV;
    size_t *lengths;
} sdpa_arrays;

/* NaN in the rows of K and V of keys j >= L_b (never read, attn.h) */
static void nan_fill_slots(const prec *p, sdpa_dims s, const sdpa_call *a, void *K, void *V)
{
    for (size_t b = 0; b < s.B; b++)
        for (size_t j = a->lengths[b]; j < s.Tk; j++)
            for (size_t g = 0; g < s.NH_kv; g++) {
                for (size_t i = 0; i < s.hs; i++)
                    set(p, K, sdpa_at(a, SK, b, g, j) + i, (double)NAN);
                for (size_t i = 0; i < s.hs_v; i++)
                    set(p, V, sdpa_at(a, SV, b, g, j) + i, (double)NAN);
            }
}

/* -inf in the mask: mode 1 every third entry, 2 every entry of the first
 * (sequence, head, query) row, 3 every entry */
static void mask_fill_inf(const prec *p, void *mask, size_t n, size_t Tk, uint8_t mode)
{
    for (size_t i = 0; i < n; i++)
        if ((mode == 1 && i % 3 == 0) || (mode == 2 && i < Tk) || mode == 3)
            set(p, mask, i, -(double)INFINITY);
}

static sdpa_arrays add_sdpa_arrays(call *c, reader *r, sdpa_dims s, const sdpa_call *a,
                                   int backward, int out_is_input, int with_lse)
{
    const int nu = a->null_at;
    sdpa_arrays x;
    memset(&x, 0, sizeof x);
    /* an aliasing choice with grow: the target's allocation holds the output too */
    size_t n[11] = {a->nQ, a->nK, a->nV, a->nM, 0, a->nO, a->nL, a->nO, a->nQ, a->nK, a->nV};
    if (a->al.output >= 0 && a->al.grow && !c->huge && a->al.target != 4) {
        const size_t outs[2][3] = {{a->nO, a->nL, 0}, {a->nQ, a->nK, a->nV}};
        const size_t need = sat_add(a->al.offset, outs[backward][a->al.output]);
        n[a->al.target] = need > n[a->al.target] ? need : n[a->al.target];
    }
    x.Q = add_array(c, r, n[0], 0, nu != 0);
    x.K = add_array(c, r, n[1], 0, nu != 1);
    x.V = add_array(c, r, n[2], 0, nu != 2);
    x.mask = add_array(c, r, n[3], 0, a->has_mask);
    if (x.mask != NULL && !c->huge)
        mask_fill_inf(c->p, x.mask, a->nM, s.Tk, a->mask_fill);
    x.lengths = add_raw(c, a->lengths, s.B * sizeof(size_t), a->has_lengths);
    if (a->has_lengths && a->nan_slots && !c->huge && x.K != NULL && x.V != NULL &&
        model_sdpa_args(s, c->p->es, a) == ATTN_OK)
        nan_fill_slots(c->p, s, a, x.K, x.V);
    x.out = add_array(c, r, n[5], !out_is_input, nu != 3);
    x.lse = add_array(c, r, n[6], !out_is_input, backward ? nu != 4 : with_lse);
    if (backward) {
        x.dout = add_array(c, r, n[7], 0, nu != 5);
        x.dQ = add_array(c, r, n[8], 1, nu != 6);
        x.dK = add_array(c, r, n[9], 1, nu != 7);
        x.dV = add_array(c, r, n[10], 1, nu != 8);
    }
    return x;
}

typedef struct sdpa_io {
    const void *Q, *K, *V, *mask, *dout;
    const size_t *lengths;
    void *out, *lse, *dQ, *dK, *dV;
} sdpa_io;

/* the arguments of one precision (one body for both) */
#define SDPA_ARGS(a, x)                                                                     \
    {(x)->Q,         (a)->st[SQ][2], (x)->K,         (a)->st[SK][2], (x)->V,                    \
     (a)->st[SV][2], (x)->mask,      (a)->mask_ld,   (a)->mask_sb,   (a)->mask_sh,              \
     (x)->lengths,   (x)->out,       (a)->st[SO][2], (x)->lse,       (a)->st[SQ][0],            \
     (a)->st[SQ][1], (a)->st[SK][0], (a)->st[SK][1], (a)->st[SV][0], (a)->st[SV][1],            \
     (a)->st[SO][0], (a)->st[SO][1]}

static attn_sdpa_args_f32 sdpa_args32(const sdpa_call *a, const sdpa_io *x)
{
    const attn_sdpa_args_f32 g = SDPA_ARGS(a, x);
    return g;
}

static attn_sdpa_args_f64 sdpa_args64(const sdpa_call *a, const sdpa_io *x)
{
    const attn_sdpa_args_f64 g = SDPA_ARGS(a, x);
    return g;
}

/* kind 0 forward, 1 backward, 2 one-shot (shape, scale, flags, window) */
static attn_status call_sdpa(int f64, int kind, attn_plan *plan, int null_args, const sdpa_call *a,
                             const sdpa_io *x, const attn_sdpa_shape *shape, double scale,
                             unsigned flags, size_t window)
{
    if (f64) {
        const attn_sdpa_args_f64 g = sdpa_args64(a, x);
        const attn_sdpa_args_f64 *gp = null_args ? NULL : &g;
        return kind == 0   ? attn_sdpa_forward_f64(plan, gp)
               : kind == 1 ? attn_sdpa_backward_f64(plan, gp, x->dout, x->dQ, x->dK, x->dV)
                           : attn_sdpa_f64(shape, scale, flags, window, gp);
    }
    const attn_sdpa_args_f32 g = sdpa_args32(a, x);
    const attn_sdpa_args_f32 *gp = null_args ? NULL : &g;
    return kind == 0   ? attn_sdpa_forward_f32(plan, gp)
           : kind == 1 ? attn_sdpa_backward_f32(plan, gp, x->dout, x->dQ, x->dK, x->dV)
                       : attn_sdpa_f32(shape, scale, flags, window, gp);
}

static sdpa_io io_from(const call *c, const sdpa_arrays *x, int backward)
{
    sdpa_io io = {x->Q, x->K, x->V, x->mask, NULL, x->lengths, c->a[5].ptr, c->a[6].ptr,
                  NULL, NULL, NULL};
    if (backward) {
        io.dout = x->dout;
        io.dQ = c->a[8].ptr;
        io.dK = c->a[9].ptr;
        io.dV = c->a[10].ptr;
    }
    return io;
}

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
    sdpa_array_dims(s, i, &H, &T, &w);
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
    const size_t es = p->es;
    in[0] = sdpa_strided(s, a, SQ, x->Q, es);
    in[1] = sdpa_strided(s, a, SK, x->K, es);
    in[2] = sdpa_strided(s, a, SV, x->V, es);
    in[3] = run_of(x->mask, a->nM * es);
    in[4] = run_of(x->lengths, x->lengths ? s.B * sizeof(size_t) : 0);
    *n_in = 5;
    if (!backward) {
        out[0] = sdpa_strided(s, a, SO, x->out, es);
        out[1] = run_of(x->lse, a->nL * es);
        return 2;
    }
    in[5] = sdpa_strided(s, a, SO, x->out, es);
    in[6] = run_of(x->lse, a->nL * es);
    in[7] = sdpa_strided(s, a, SO, x->dout, es);
    *n_in = 8;
    out[0] = sdpa_strided(s, a, SQ, x->dQ, es);
    out[1] = sdpa_strided(s, a, SK, x->dK, es);
    out[2] = sdpa_strided(s, a, SV, x->dV, es);
    return 3;
}

/* ALIASING: an output that may share a byte with an input or another output */
static int sdpa_aliases(const prec *p, sdpa_dims s, const sdpa_call *a, const sdpa_io *x,
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
static void check_sdpa_disjoint(const prec *p, sdpa_dims s, const sdpa_call *a,
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
static void settle_sdpa_outputs(call *c, const prec *p, sdpa_dims s, const sdpa_call *a,
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

/* ---- numeric oracles of a successful call ------------------------------------------------ */

/* keys [*lo, *hi) that query t of sequence b sees */
static void sdpa_visible(sdpa_dims s, int causal, size_t window, const size_t *lengths, size_t b,
                         size_t t, size_t *lo, size_t *hi)
{
    const size_t L = lengths != NULL ? lengths[b] : s.Tk;
    const long long p = (long long)L - (long long)s.Tq + (long long)t; /* small shapes */
    *hi = L;
    if (causal)
        *hi = p < 0 ? 0 : (size_t)p + 1 < L ? (size_t)p + 1 : L;
    *lo = 0;
    if (window > 0 && p >= 0 && (size_t)p + 1 > window)
        *lo = (size_t)p + 1 - window;
}

/* The forward's outputs against the double reference, row by row (oracles
 * 5, 7 and 8 of the header, for sdpa):
 *   - a row without a visible key, or whose visible scores are all -inf
 *     (bounded scores, a -inf mask), is lse -inf exactly, and out 0 exactly
 *     when V is finite on the keys it may multiply by 0 (below);
 *   - a NaN among a row's visible inputs (its query, a visible key, a
 *     visible mask entry) makes out and lse of the row NaN;
 *   - a visible mask entry +inf (bounded scores, no NaN) gives lse +inf;
 *   - otherwise, with every visible input finite and the scores' partial
 *     sums below REAL_MAX/16: out within core_check's bound (the values V
 *     given exactly: kv = 0; scores rounded with kq = hs + 4, the mask added
 *     and the scale applied) and lse within dz + the weights' tolerance +
 *     4u(|max| + |log sum| + 1).
 * (settle_sdpa_outputs checks the bytes out's layout does not address.) */
static void check_sdpa_forward(const prec *p, sdpa_dims s, double scale, int causal,
                               size_t window, const sdpa_call *a, const sdpa_io *x)
{
    const double u = p->u;
    const size_t group = s.NH / s.NH_kv;
    double *z = doubles(s.Tk), *bound = doubles(s.Tk), *w = doubles(s.Tk);
    for (size_t b = 0; b < s.B; b++)
        for (size_t h = 0; h < s.NH; h++)
            for (size_t t = 0; t < s.Tq; t++) {
                const size_t g = h / group;
                const size_t o_at = sdpa_at(a, SO, b, h, t), l_at = (b * s.NH + h) * s.Tq + t;
                size_t lo, hi;
                sdpa_visible(s, causal, window, x->lengths, b, t, &lo, &hi);
                /* attn.h: keys that only the mask or the window hides may be
                 * multiplied by a weight of 0, so a NaN (or inf) in their V may
                 * reach the row: out is claimed only when V is finite on every
                 * key the row may multiply ([0, hi)) */
                int v_finite = 1;
                for (size_t j = 0; j < hi; j++)
                    for (size_t c = 0; c < s.hs_v; c++)
                        v_finite &= isfinite(get(p, x->V, sdpa_at(a, SV, b, g, j) + c)) != 0;
                if (hi <= lo) {
                    for (size_t c = 0; c < s.hs_v && v_finite; c++)
                        ORACLE(get(p, x->out, o_at + c) == 0.0,
                               "row (b %zu, h %zu, t %zu) sees no key: out[%zu] = %g", b, h, t, c,
                               get(p, x->out, o_at + c));
                    ORACLE(x->lse == NULL || get(p, x->lse, l_at) == -(double)INFINITY,
                           "row (b %zu, h %zu, t %zu) sees no key: lse %g", b, h, t,
                           get(p, x->lse, l_at));
                    continue;
                }
                const size_t q_at = sdpa_at(a, SQ, b, h, t);
                int has_nan = 0, finite = 1, plus_inf = 0, bounded = 1, v_ok = 1;
                for (size_t i = 0; i < s.hs; i++) {
                    has_nan |= isnan(get(p, x->Q, q_at + i)) != 0;
                    finite &= isfinite(get(p, x->Q, q_at + i)) != 0;
                }
                double m = -(double)INFINITY, vmax = 0.0;
                for (size_t j = lo; j < hi; j++) {
                    const size_t k_at = sdpa_at(a, SK, b, g, j);
                    double dot = 0.0, bd = 0.0;
                    for (size_t i = 0; i < s.hs; i++) {
                        const double q = get(p, x->Q, q_at + i), k = get(p, x->K, k_at + i);
                        has_nan |= isnan(k) != 0;
                        finite &= isfinite(k) != 0;
                        dot += q * k;
                        bd += fabs(q * k);
                    }
                    const double mk = x->mask != NULL
                                          ? get(p, x->mask,
                                                b * a->mask_sb + h * a->mask_sh + t * a->mask_ld + j)
                                          : 0.0;
                    has_nan |= isnan(mk) != 0;
                    plus_inf |= mk == (double)INFINITY;
                    bounded &= bd <= p->max / 16 && scale * bd <= p->max / 16;
                    z[j] = scale * dot + mk;
                    bound[j] = bd;
                    if (z[j] > m)
                        m = z[j];
                    for (size_t c = 0; c < s.hs_v; c++) {
                        const double v = get(p, x->V, sdpa_at(a, SV, b, g, j) + c);
                        v_ok &= isfinite(v) && fabs(v) <= p->max / 4;
                        vmax = fmax(vmax, fabs(v));
                    }
                }
                if (has_nan) {
                    for (size_t c = 0; c < s.hs_v; c++)
                        ORACLE(isnan(get(p, x->out, o_at + c)),
                               "row (b %zu, h %zu, t %zu) has a NaN input: out[%zu] = %g", b, h,
                               t, c, get(p, x->out, o_at + c));
                    ORACLE(x->lse == NULL || isnan(get(p, x->lse, l_at)),
                           "row (b %zu, h %zu, t %zu) has a NaN input: lse %g", b, h, t,
                           get(p, x->lse, l_at));
                    continue;
                }
                if (!finite || !bounded)
                    continue;
                if (plus_inf) {
                    ORACLE(x->lse == NULL || get(p, x->lse, l_at) == (double)INFINITY,
                           "row (b %zu, h %zu, t %zu) has a +inf score: lse %g", b, h, t,
                           get(p, x->lse, l_at));
                    continue;
                }
                if (m == -(double)INFINITY) {
                    for (size_t c = 0; c < s.hs_v && v_finite; c++)
                        ORACLE(get(p, x->out, o_at + c) == 0.0,
                               "row (b %zu, h %zu, t %zu) fully masked: out[%zu] = %g", b, h, t,
                               c, get(p, x->out, o_at + c));
                    ORACLE(x->lse == NULL || get(p, x->lse, l_at) == -(double)INFINITY,
                           "row (b %zu, h %zu, t %zu) fully masked: lse %g", b, h, t,
                           get(p, x->lse, l_at));
                    continue;
                }
                if (!v_ok || !v_finite)
                    continue;
                /* the accuracy bound (core_check's, for given Q, K, V) */
                const size_t n = hi - lo;
                double dz = 0.0;
                exact_sum total = {0.0, 0.0};
                for (size_t j = lo; j < hi; j++) {
                    if (z[j] == -(double)INFINITY) {
                        w[j] = 0.0;
                        continue;
                    }
                    dz = fmax(dz, scale * u * (double)(s.hs + 4) * bound[j] +
                                      2.0 * u * (fabs(z[j]) + fabs(z[j] - m)));
                    w[j] = exp(z[j] - m);
                    exact_add(&total, w[j]);
                }
                const double sum = exact_value(&total);
                if (dz > 0.5 || !(sum > 0.0))
                    continue;
                const double tol = expm1(2.0 * dz) + 8.0 * p->exp_err + sum_tol(p, n) +
                                   (double)(n / 64 + 4) * 4.0 * u;
                for (size_t c = 0; c < s.hs_v; c++) {
                    double y = 0.0, ay = 0.0;
                    for (size_t j = lo; j < hi; j++) {
                        const double v = get(p, x->V, sdpa_at(a, SV, b, g, j) + c);
                        y += w[j] / sum * v;
                        ay += w[j] / sum * fabs(v);
                    }
                    const double err = 2.0 * ((tol + (double)(n + 2) * u) * (1.0 + tol) * ay +
                                              (double)n * 4.0 * p->min * (1.0 + vmax));
                    const double got = get(p, x->out, o_at + c);
                    ORACLE(fabs(got - y) <= err,
                           "out (b %zu, h %zu, t %zu)[%zu] = %.9g, reference %.9g, tolerance "
                           "%.3g (dz %.3g, %zu keys)",
                           b, h, t, c, got, y, err, dz, n);
                }
                if (x->lse != NULL) {
                    const double ref = m + log(sum), got = get(p, x->lse, l_at);
                    const double err = dz + tol + 4.0 * u * (fabs(m) + fabs(log(sum)) + 1.0);
                    ORACLE(fabs(got - ref) <= err,
                           "lse (b %zu, h %zu, t %zu) = %.9g, reference %.9g, tolerance %.3g", b,
                           h, t, got, ref, err);
                }
            }
}

/* Row t of sequence b of array i of x, every head: whether each element
 * is finite (and, with want_zero, exactly 0); *m (or NULL) gets the
 * largest magnitude. */
static int sdpa_row_scan(const prec *p, sdpa_dims s, const sdpa_call *a, int i, const void *x,
                         size_t b, size_t t, int want_zero, double *m)
{
    size_t H, T, w;
    sdpa_array_dims(s, i, &H, &T, &w);
    int ok = 1;
    for (size_t h = 0; h < H; h++)
        for (size_t k = 0; k < w; k++) {
            const double v = get(p, x, sdpa_at(a, i, b, h, t) + k);
            ok &= want_zero ? v == 0.0 : isfinite(v) != 0;
            if (m != NULL)
                *m = fmax(*m, fabs(v));
        }
    return ok;
}

/* whether x and y hold the same bytes at every element of array i's layout */
static int sdpa_same(const prec *p, sdpa_dims s, const sdpa_call *a, int i, const void *x,
                     const void *y)
{
    size_t H, T, w;
    sdpa_array_dims(s, i, &H, &T, &w);
    for (size_t b = 0; b < s.B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t t = 0; t < T; t++) {
                const size_t at = sdpa_at(a, i, b, h, t) * p->es;
                if (memcmp((const unsigned char *)x + at, (const unsigned char *)y + at,
                           w * p->es) != 0)
                    return 0;
            }
    return 1;
}

/* The backward's structure and finiteness: rows of dK, dV of keys j >= L_b
 * and dQ rows of queries without a visible key (below) are exactly 0; with every
 * input finite (the mask finite or -inf), the forward's out and lse, and the
 * bounds below REAL_MAX/4, every gradient is finite:
 *   |s| <= scale hs mq mk, |dP| <= hs_v md mv (= |D|), |dS| <= 2 |dP|,
 *   |dV| <= Tq G md, |dQ| <= scale Tk |dS| mk, |dK| <= scale Tq G |dS| mq,
 * G = NH / NH_kv. (settle_sdpa_outputs checks the bytes their layouts do
 * not address.) */
static void check_sdpa_backward(const prec *p, sdpa_dims s, double scale, int causal,
                                size_t window, const sdpa_call *a, const sdpa_io *x,
                                int from_forward)
{
    for (size_t b = 0; b < s.B; b++)
        for (size_t j = x->lengths != NULL ? x->lengths[b] : s.Tk; j < s.Tk; j++) {
            ORACLE(sdpa_row_scan(p, s, a, SK, x->dK, b, j, 1, NULL),
                   "dK of key %zu >= L_%zu is not 0", j, b);
            ORACLE(sdpa_row_scan(p, s, a, SV, x->dV, b, j, 1, NULL),
                   "dV of key %zu >= L_%zu is not 0", j, b);
        }
    /* a query that sees no key has dQ 0, when nothing it could multiply by a
     * weight of 0 is NaN or infinite: K and V of its sequence's keys, its
     * out and dout rows (attn.h promises no more for the backward) */
    for (size_t b = 0; b < s.B; b++)
        for (size_t t = 0; t < s.Tq; t++) {
            size_t lo, hi;
            sdpa_visible(s, causal, window, x->lengths, b, t, &lo, &hi);
            if (hi > lo)
                continue;
            int clean = 1;
            const size_t L = x->lengths != NULL ? x->lengths[b] : s.Tk;
            for (size_t j = 0; j < L; j++)
                clean &= sdpa_row_scan(p, s, a, SK, x->K, b, j, 0, NULL) &&
                         sdpa_row_scan(p, s, a, SV, x->V, b, j, 0, NULL);
            clean &= sdpa_row_scan(p, s, a, SO, x->out, b, t, 0, NULL) &&
                     sdpa_row_scan(p, s, a, SO, x->dout, b, t, 0, NULL);
            ORACLE(!clean || sdpa_row_scan(p, s, a, SQ, x->dQ, b, t, 1, NULL),
                   "dQ of query %zu of sequence %zu (no key) is not 0", t, b);
        }
    if (!from_forward)
        return;
    double mq = 0.0, mk = 0.0, mv = 0.0, md = 0.0;
    int finite = 1;
    for (size_t b = 0; b < s.B; b++) {
        for (size_t t = 0; t < s.Tq; t++)
            finite &= sdpa_row_scan(p, s, a, SQ, x->Q, b, t, 0, &mq) &
                      sdpa_row_scan(p, s, a, SO, x->dout, b, t, 0, &md);
        for (size_t j = 0; j < (x->lengths != NULL ? x->lengths[b] : s.Tk); j++)
            finite &= sdpa_row_scan(p, s, a, SK, x->K, b, j, 0, &mk) &
                      sdpa_row_scan(p, s, a, SV, x->V, b, j, 0, &mv);
    }
    for (size_t i = 0; x->mask != NULL && i < a->nM; i++) {
        const double v = get(p, x->mask, i);
        finite &= isfinite(v) || v == -(double)INFINITY;
    }
    /* the products Q K^T, dS K and dS^T Q are accumulated unscaled (the
     * scale is the GEMMs' alpha, as in PyTorch's flash backward): a scale
     * below 1 does not shrink their partial sums */
    const double L = p->max / 4, G = (double)(s.NH / s.NH_kv), sc = fmax(scale, 1.0);
    const double dP = (double)s.hs_v * md * mv, dS = 2.0 * dP;
    if (!finite || !(sc * (double)s.hs * mq * mk <= L) || !(mq <= L && mk <= L && mv <= L) ||
        !(dS <= L) || !((double)s.Tq * G * md <= L) ||
        !(sc * (double)s.Tk * dS * mk <= L) || !(sc * (double)s.Tq * G * dS * mq <= L))
        return;
    const void *g[3] = {x->dQ, x->dK, x->dV};
    for (int i = SQ; i <= SV; i++) {
        size_t H, T, w;
        sdpa_array_dims(s, i, &H, &T, &w);
        for (size_t b = 0; b < s.B; b++)
            for (size_t t = 0; t < T; t++)
                ORACLE(sdpa_row_scan(p, s, a, i, g[i], b, t, 0, NULL),
                       "%s row %zu of sequence %zu not finite from finite, bounded inputs",
                       i == SQ ? "dQ" : i == SK ? "dK" : "dV", t, b);
    }
}

/* ---- plans and steps -------------------------------------------------------------------- */

typedef struct sdpa_plan_state {
    attn_plan *plan;
    const prec *p;
    sdpa_dims s;
    attn_sdpa_shape shape; /* as given (hs_v maybe 0) */
    double scale;          /* as given */
    unsigned flags;
    size_t window;
} sdpa_plan_state;

/* attn_forward / attn_backward on an sdpa plan, or attn_sdpa_forward /
 * attn_sdpa_backward on a projected plan: PLAN_KIND (every pointer set, so
 * no NULL_POINTER; the arrays are dummies that must not be touched) */
static void sdpa_kind_step(const sdpa_plan_state *ps, const prec *cp, uint8_t sb)
{
    call c = {cp, {{0}}, 0, 1};
    void *d[12];
    for (int i = 0; i < 12; i++)
        d[i] = add_array(&c, NULL, 0, i >= 5, 1);
    snapshot(&c);
    attn_status st;
    if (sb & 0x08) {
        current_op = cp->f64 ? "attn_sdpa_forward_f64 on a projected plan"
                             : "attn_sdpa_forward_f32 on a projected plan";
        attn_plan *proj = NULL;
        ORACLE(attn_plan_create(&proj, cp->f64 ? ATTN_F64 : ATTN_F32, 1, 2, 2, 1, 2, 0.0, 0u) ==
                   ATTN_OK,
               "a projected plan");
        sdpa_call a;
        memset(&a, 0, sizeof a);
        const sdpa_io x = {d[0], d[1], d[2], NULL, d[3], NULL, d[5], d[6], d[7], d[8], d[9]};
        st = call_sdpa(cp->f64, (sb & 4) ? 1 : 0, proj, 0, &a, &x, NULL, 0.0, 0u, 0);
        attn_plan_destroy(proj);
    } else if (sb & 4) {
        current_op = cp->f64 ? "attn_backward_f64 on an sdpa plan" : "attn_backward_f32 on an sdpa plan";
        void *g[5] = {d[6], d[7], d[8], d[9], d[10]};
        st = call_backward(cp->f64, ps->plan, d[0], d[1], d[2], d[3], d[4], d[5], g);
    } else {
        current_op = cp->f64 ? "attn_forward_f64 on an sdpa plan" : "attn_forward_f32 on an sdpa plan";
        st = call_forward(cp->f64, ps->plan, d[0], d[1], d[2], d[3], d[4], d[5], d[6]);
    }
    TRACE("%s\n", current_op);
    settle(&c, st, ATTN_ERR_PLAN_KIND);
}

/* One forward (backward: 0) or backward (1) on the plan, in precision cp. */
static void sdpa_step(const sdpa_plan_state *ps, reader *r, const prec *cp, uint8_t sb,
                      int backward)
{
    current_op = backward ? (cp->f64 ? "attn_sdpa_backward_f64" : "attn_sdpa_backward_f32")
                          : (cp->f64 ? "attn_sdpa_forward_f64" : "attn_sdpa_forward_f32");
    const sdpa_dims s = ps->s;
    /* the backward's out and lse: from a forward of the same inputs (0x80 clear), or values */
    const int from_forward = backward && !(sb & 0x80);
    TRACE("%s(from forward %d)\n", current_op, from_forward);
    const sdpa_call a = backward ? take_sdpa_call(r, s, 11, 3, 11) : take_sdpa_call(r, s, 6, 2, 7);
    const double elements = (double)a.nQ + (double)a.nK + (double)a.nV + 3.0 * (double)a.nO +
                            (double)a.nM + (double)a.nL;
    call c = {cp, {{0}}, 0, !(elements <= (double)CAP_ELEMENTS)};
    sdpa_arrays arr = add_sdpa_arrays(&c, r, s, &a, backward, backward, !(sb & 4));
    const int null_plan = a.null_at == (backward ? 9 : 4), null_args = a.null_at == (backward ? 10 : 5);
    attn_plan *plan = null_plan ? NULL : ps->plan;

    /* the status model */
    attn_status want = ATTN_OK;
    sdpa_io x = io_from(&c, &arr, backward);
    const int any_null = !arr.Q || !arr.K || !arr.V || !x.out ||
                         (backward && (!x.lse || !arr.dout || !x.dQ || !x.dK || !x.dV));
    if (null_plan || null_args || any_null)
        want = ATTN_ERR_NULL_POINTER;
    else if (cp->f64 != ps->p->f64)
        want = ATTN_ERR_DTYPE_MISMATCH;
    else if (backward && (ps->flags & ATTN_INFERENCE))
        want = ATTN_ERR_INFERENCE_PLAN;
    else
        want = model_sdpa_args(s, cp->es, &a);
    if (c.huge && want == ATTN_OK)
        return;
    const double scale = used_scale(cp, ps->scale, s.hs);
    const int causal = (ps->flags & ATTN_CAUSAL) != 0;
    if (from_forward && want == ATTN_OK) {
        /* out and lse of the forward of these inputs (the same plan) */
        const char *op = current_op;
        current_op = "the forward before a backward";
        sdpa_io f = x;
        ORACLE(call_sdpa(cp->f64, 0, plan, 0, &a, &f, NULL, 0.0, 0u, 0) == ATTN_OK,
               "the forward of a valid backward's inputs failed");
        current_op = op;
    }
    snapshot(&c);
    apply_alias(&c, a.al, backward ? 8 : 5);
    x = io_from(&c, &arr, backward);
    if (want == ATTN_OK)
        want = sdpa_aliases(cp, s, &a, &x, backward) ? ATTN_ERR_ALIASING : ATTN_OK;
    const attn_status st = call_sdpa(cp->f64, backward, plan, null_args, &a, &x, NULL, 0.0, 0u, 0);
    if (st == ATTN_OK && want == ATTN_OK) {
        settle_sdpa_outputs(&c, cp, s, &a, &x, backward);
        check_sdpa_disjoint(cp, s, &a, &x, backward);
    }
    if (!settle(&c, st, want))
        return;
    /* the same call again, into new outputs: the same bytes */
    sdpa_io y = x;
    const size_t es = cp->es;
    if (backward) {
        y.dQ = alloc(a.nQ * es), y.dK = alloc(a.nK * es), y.dV = alloc(a.nV * es);
        fill_sentinel(y.dQ, a.nQ * es), fill_sentinel(y.dK, a.nK * es);
        fill_sentinel(y.dV, a.nV * es);
    } else {
        y.out = alloc(a.nO * es);
        fill_sentinel(y.out, a.nO * es);
        y.lse = x.lse != NULL ? alloc(a.nL * es) : NULL;
    }
    ORACLE(call_sdpa(cp->f64, backward, plan, 0, &a, &y, NULL, 0.0, 0u, 0) == ATTN_OK,
           "the same call again failed");
    if (backward)
        ORACLE(sdpa_same(cp, s, &a, SQ, x.dQ, y.dQ) && sdpa_same(cp, s, &a, SK, x.dK, y.dK) &&
                   sdpa_same(cp, s, &a, SV, x.dV, y.dV),
               "the same backward again gave other bytes");
    else
        ORACLE(sdpa_same(cp, s, &a, SO, x.out, y.out) &&
                   (x.lse == NULL || memcmp(x.lse, y.lse, a.nL * es) == 0),
               "the same forward again gave other bytes");
    if (backward)
        check_sdpa_backward(cp, s, scale, causal, ps->window, &a, &x, from_forward);
    else
        check_sdpa_forward(cp, s, scale, causal, ps->window, &a, &x);
}

/* dtype byte, B NH NH_kv Tq Tk hs, hs_v byte (>= 0x80: a dimension follows),
 * scale, flags byte (bits 0-1 ATTN_CAUSAL/ATTN_INFERENCE, 4 ATTN_MATERIALIZED,
 * 8 ATTN_TILED, 0x20 the one-shot instead of a plan, 0x80 an unknown bit
 * follows), window byte (>= 0x80: a dimension follows), NULL choice (plan,
 * shape); then the one-shot's call, or the threads byte and up to 6 steps
 * (step byte: 1 backward, 0x42 the other precision, 0x30 a PLAN_KIND call
 * (0x08 on a projected plan, 4 backward), 0x80 a backward's out and lse not
 * from a forward, then the call's fields: take_sdpa_call, the arrays). */
static void fuzz_sdpa(reader *r)
{
    current_op = "attn_sdpa_plan_create";
    const attn_dtype dtype = take_dtype(r);
    const prec *p = dtype == ATTN_F64 ? &prec_f64 : &prec_f32;
    attn_sdpa_shape shape;
    shape.B = take_dim(r);
    shape.NH = take_dim(r);
    shape.NH_kv = take_dim(r);
    shape.Tq = take_dim(r);
    shape.Tk = take_dim(r);
    shape.hs = take_dim(r);
    shape.hs_v = take(r) >= 0x80 ? take_dim(r) : 0;
    const double scale = take_scale(r);
    const uint8_t fb = take(r);
    unsigned flags = fb & 3u;
    if (fb & 4)
        flags |= ATTN_MATERIALIZED;
    if (fb & 8)
        flags |= ATTN_TILED;
    if (fb & 0x80)
        flags |= 1u << (4 + take(r) % 28);
    const int one_shot = (fb >> 5) & 1;
    const size_t window = take(r) >= 0x80 ? take_dim(r) : 0;
    const int null_at = take_null(r, 2);
    const int null_plan = null_at == 0, null_shape = null_at == 1;
    const int valid_dtype = dtype == ATTN_F32 || dtype == ATTN_F64;
    const sdpa_dims s = {shape.B,  shape.NH, shape.NH_kv,
                         shape.Tq, shape.Tk, shape.hs, shape.hs_v ? shape.hs_v : shape.hs};
    TRACE("attn_sdpa%s(dtype %d, B %zu, NH %zu, NH_kv %zu, Tq %zu, Tk %zu, hs %zu, hs_v %zu, "
          "scale %g, flags %#x, window %zu, null %d)\n",
          one_shot ? " one-shot" : "_plan_create", (int)dtype, s.B, s.NH, s.NH_kv, s.Tq, s.Tk,
          s.hs, shape.hs_v, scale, flags, window, null_at);

    if (one_shot) {
        /* attn_sdpa_f32/f64 (by the dtype's precision): the create's checks, then
         * the forward's */
        current_op = p->f64 ? "attn_sdpa_f64" : "attn_sdpa_f32";
        attn_status want = model_sdpa_flags(flags);
        if (want == ATTN_OK)
            want = model_sdpa_create(s, p->es, scale, p->max, flags | ATTN_INFERENCE);
        const int small = want == ATTN_OK && sdpa_small(s);
        if (want == ATTN_OK && !small)
            return; /* it would make a plan larger than the harness runs, whatever the arrays */
        sdpa_dims as = s;
        if (!small) /* the arrays' shape: anything small (dummies anyway) */
            as = (sdpa_dims){1, 1, 1, 1, 1, 1, 1};
        sdpa_call a = take_sdpa_call(r, as, 6, 2, 7);
        if (want == ATTN_OK) { /* the model's extents are those of the real shape */
            a.has_lengths &= s.B <= 8;
            sdpa_call_resolve(&a, s);
        }
        const double elements = (double)a.nQ + (double)a.nK + (double)a.nV + 3.0 * (double)a.nO +
                                (double)a.nM + (double)a.nL;
        call c = {p, {{0}}, 0, !small || !(elements <= (double)CAP_ELEMENTS)};
        sdpa_arrays arr = add_sdpa_arrays(&c, r, as, &a, 0, 0, !(fb & 0x40));
        snapshot(&c);
        apply_alias(&c, a.al, 5);
        const sdpa_io x = io_from(&c, &arr, 0);
        const int null_args = a.null_at == 5 || null_plan;
        if (null_shape || null_args)
            want = ATTN_ERR_NULL_POINTER;
        else if (want == ATTN_OK && (!arr.Q || !arr.K || !arr.V || !x.out))
            want = ATTN_ERR_NULL_POINTER;
        else if (want == ATTN_OK)
            want = model_sdpa_args(s, p->es, &a);
        if (c.huge && want == ATTN_OK)
            return;
        if (want == ATTN_OK && sdpa_aliases(p, s, &a, &x, 0))
            want = ATTN_ERR_ALIASING;
        const attn_status st = call_sdpa(p->f64, 2, NULL, null_args, &a, &x,
                                         null_shape ? NULL : &shape, scale, flags, window);
        if (st == ATTN_OK && want == ATTN_OK) {
            settle_sdpa_outputs(&c, p, s, &a, &x, 0);
            check_sdpa_disjoint(p, s, &a, &x, 0);
        }
        if (!settle(&c, st, want))
            return;
        /* the plan it is: ATTN_INFERENCE, default threads, the same bytes */
        attn_plan *plan = NULL;
        ORACLE(attn_sdpa_plan_create(&plan, p->f64 ? ATTN_F64 : ATTN_F32, &shape, scale,
                                     flags | ATTN_INFERENCE, window) == ATTN_OK,
               "the plan of a successful one-shot");
        sdpa_io y = x;
        y.out = alloc(a.nO * p->es);
        fill_sentinel(y.out, a.nO * p->es);
        y.lse = x.lse != NULL ? alloc(a.nL * p->es) : NULL;
        const attn_status st2 = call_sdpa(p->f64, 0, plan, 0, &a, &y, NULL, 0.0, 0u, 0);
        attn_plan_destroy(plan);
        ORACLE(st2 == ATTN_OK && sdpa_same(p, s, &a, SO, x.out, y.out) &&
                   (x.lse == NULL || memcmp(x.lse, y.lse, a.nL * p->es) == 0),
               "the one-shot and its plan give other bytes (%s)", attn_status_string(st2));
        check_sdpa_forward(p, s, used_scale(p, scale, s.hs), (flags & ATTN_CAUSAL) != 0, window,
                           &a, &x);
        return;
    }

    attn_status want;
    if (null_plan || null_shape)
        want = ATTN_ERR_NULL_POINTER;
    else if (!valid_dtype)
        want = ATTN_ERR_BAD_DTYPE;
    else if ((want = model_sdpa_flags(flags)) == ATTN_OK)
        want = model_sdpa_create(s, p->es, scale, p->max, flags);
    if (want == ATTN_OK && !sdpa_small(s))
        return; /* a plan larger than the harness runs */
    static int sentinel_object;
    attn_plan *const sentinel = (attn_plan *)(void *)&sentinel_object;
    attn_plan *plan = sentinel;
    const attn_status st = attn_sdpa_plan_create(null_plan ? NULL : &plan, dtype,
                                                 null_shape ? NULL : &shape, scale, flags, window);
    expect_status(st, want, current_op);
    if (st != ATTN_OK) {
        ORACLE(plan == sentinel, "*plan was written by a failing attn_sdpa_plan_create");
        return;
    }
    ORACLE(plan != NULL && plan != sentinel, "attn_sdpa_plan_create succeeded without a plan");
    const uint8_t tb = take(r);
    const unsigned threads = (tb & 0x80) && (tb & 0x40) ? ATTN_MAX_THREADS + 1u : tb % 4u;
    current_op = "attn_plan_set_threads";
    TRACE("%s(%u)\n", current_op, threads);
    expect_status(attn_plan_set_threads(plan, threads),
                  threads > ATTN_MAX_THREADS ? ATTN_ERR_BAD_THREADS : ATTN_OK, current_op);
    const sdpa_plan_state ps = {plan, p, s, shape, scale, flags, window};
    const int steps = take(r) % 7;
    for (int i = 0; i < steps; i++) {
        const uint8_t sb = take(r);
        const int other = (sb & 0x42) == 0x42;
        const prec *cp = (p->f64 ^ other) ? &prec_f64 : &prec_f32;
        if ((sb & 0x30) == 0x30)
            sdpa_kind_step(&ps, cp, sb);
        else
            sdpa_step(&ps, r, cp, sb, sb & 1);
    }
    attn_plan_destroy(plan);
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
    if (op % 7 < 5)
        calls[op % 7](p, &r);
    else if (op % 7 == 5)
        fuzz_plan(&r);
    else
        fuzz_sdpa(&r);
    free_all();
    return 0;
}
