/*
 * What the files of fuzz_api (fuzz_api.c, the entry point; fuzz_input.c,
 * fuzz_model.c, fuzz_oracles.c, fuzz_calls.c, fuzz_mha.c, fuzz_plan.c, and
 * the sdpa files of fuzz_sdpa.h) share: the harness's limits, the oracle
 * and trace macros, the input reader, the element types, a call's
 * arguments, the status model's shapes and the numeric oracles' types, and
 * each file's functions used by the others. fuzz_api.c says what the
 * harness does and how an input is read.
 */
#ifndef ATTN_FUZZ_COMMON_H
#define ATTN_FUZZ_COMMON_H

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

#define TRACE(...)                                                                                 \
    do {                                                                                           \
        if (verbose < 0)                                                                           \
            verbose = getenv("FUZZ_API_VERBOSE") != NULL;                                          \
        if (verbose)                                                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
    } while (0)

typedef struct reader {
    const uint8_t *data;
    size_t size, at;
    uint64_t rng;
} reader;

typedef struct prec {
    int f64;
    size_t es;      /* element size */
    double max;     /* largest finite value */
    double min;     /* smallest normal */
    double u;       /* unit roundoff */
    double exp_err; /* the kernels' exp accuracy (kernels.h) */
    int half;       /* 0, or ATTN_BF16 / ATTN_F16: the sdpa calls' 16-bit types (es 2;
                     * arithmetic, the mask and lse float: stat_prec) */
} prec;

/* Neumaier's compensated sum: the references sum in double with an error
 * of a few ulps whatever n, below the library's own (whose f64 sums are
 * double too); a plain loop over 65536 equal terms erred by 1e-13. */
typedef struct exact_sum {
    double sum, carry;
} exact_sum;

/* One argument of a call: the buffer it points to (NULL, an allocation of
 * exactly `bytes`, a dummy, or a place inside another argument). */
typedef struct arg {
    void *ptr;
    size_t bytes; /* the documented region; 0 for NULL */
    size_t alloc_bytes;
    unsigned char *snapshot;
    int output;
    size_t es; /* its element size (0: not an array of elements), for its alignment */
} arg;

typedef struct call {
    const prec *p;
    arg a[MAX_ARGS];
    int n;
    int huge; /* dummies instead of real arrays */
} call;

#define PRODUCT(ok, ...)                                                                           \
    product((ok), sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t), (size_t[]){__VA_ARGS__})

typedef struct region {
    const void *p;
    size_t bytes;
} region;

/* The head shape of a plan or one-shot; every dimension nonzero. */
typedef struct shape {
    size_t B, T, C, NH, hs;
} shape;

/* byte counts of a forward's arrays (validate_extent); 0 on overflow */
typedef struct extents {
    size_t x, w, out, weights;
} extents;

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

/* The aliasing choice (3 bytes b, t, o): b = 0xE0 + i redirects output
 * i % n_outputs into argument t % n_args, o elements in; for sdpa calls,
 * bit 0x10 of b (grow) also makes the target long enough to hold the
 * output o elements in, so that the two may interleave (a fused buffer). */
typedef struct alias {
    int output, target;
    size_t offset;
    int grow;
} alias;

/* ---- fuzz_input.c ---- */

extern const char *current_op;
extern int verbose;
uint8_t take(reader *r);
size_t take_dim(reader *r);
double take_scale(reader *r);
extern const prec prec_f32;
extern const prec prec_f64;
double get(const prec *p, const void *b, size_t i);
void set(const prec *p, void *b, size_t i, double v);
void exact_add(exact_sum *e, double x);
double exact_value(const exact_sum *e);
double sum_tol(const prec *p, size_t n);
void *alloc(size_t bytes);
void free_all(void);
void fill_sentinel(void *b, size_t bytes);
void *add_array(call *c, reader *r, size_t elements, int output, int present);
void snapshot(call *c);
int take_null(reader *r, int n);
alias take_alias(reader *r, int n_outputs, int n_args);
void apply_alias(call *c, alias al, int first_output);
void expect_status(attn_status got, attn_status want, const char *fn);
int settle(const call *c, attn_status got, attn_status want);

/* ---- fuzz_model.c ---- */

size_t product(int *ok, size_t n, const size_t *dims);
int overlap(const void *a, size_t abytes, const void *b, size_t bbytes);
int outputs_alias(const region *out, int n_out, const region *in, int n_in);
int any_zero(size_t n, const size_t *d);
int over_int(size_t n, const size_t *d);
int scale_bad(double scale, double largest);
int blocks_fit(const size_t *counts, int n, size_t es, size_t *total);
int arena_fits(shape s, size_t es, unsigned flags);
attn_status model_plan_shape(shape s, size_t es, double scale, double largest,
                             unsigned flags);
int forward_extents(shape s, size_t es, int with_Wo, extents *e);
void add_head_inputs(call *c, reader *r, const extents *e, int null_at, int with_Wo,
                     void *in[5]);

/* ---- fuzz_oracles.c ---- */

int all_finite(const prec *p, const void *b, size_t n, double *maxabs);
void expect_finite(const prec *p, const void *b, size_t n, const char *what);
int check_weights_row(const prec *p, const void *w, size_t at, size_t valid, size_t n,
                      const char *what);
void check_softmax_row(const prec *p, const double *x, const void *y, size_t at, size_t n);
double *doubles(size_t n);
void core_check(const prec *p, const core *k, const void *weights, size_t w_at, double *Y,
                double *errY, size_t ldy, unsigned char *row_ok, double *scratch);
void check_projected(const prec *p, const double *Y, const double *errY, size_t rows,
                     size_t D, size_t C, const void *Wo, const void *out,
                     const unsigned char *row_ok, const char *what);
double used_scale(const prec *p, double scale, size_t d);
head_ref head_ref_make(const prec *p, shape s, double scale, int causal, const void *X,
                       const void *Wq, const void *Wk, const void *Wv, const void *Wo);
int backward_bounded(const head_ref *h, double md, int with_Wo);
void check_forward(head_ref *h, const void *X, const void *Wq, const void *Wk,
                   const void *Wv, const void *Wo, const void *weights, const void *out);

/* ---- fuzz_calls.c ---- */

void fuzz_softmax_rows(const prec *p, reader *r);
void fuzz_lookup(const prec *p, reader *r);
attn_status call_forward(int f64, attn_plan *plan, const void *X, const void *Wq,
                         const void *Wk, const void *Wv, const void *Wo, void *out,
                         void *weights);
attn_status call_backward(int f64, attn_plan *plan, const void *X, const void *Wq,
                          const void *Wk, const void *Wv, const void *Wo, const void *dout,
                          void *const g[5]);
attn_plan *plan_for(const prec *p, shape s, unsigned flags);
int head_small(shape s, const extents *e, size_t es, int training, int with_weights);
int causal_arg(uint8_t opt);
void fuzz_self_attention(const prec *p, reader *r);

/* ---- fuzz_mha.c ---- */

void fuzz_mha_forward(const prec *p, reader *r);
void check_gradients(const head_ref *h, double md, int with_Wo, void *const g[5]);
void fuzz_mha_backward(const prec *p, reader *r);

/* ---- fuzz_plan.c ---- */

/* A plan's dropout setting (fuzz_dropout.c): on when p > 0 was accepted. */
typedef struct dropout_setting {
    int on;
    double p;
    uint64_t seed, offset;
} dropout_setting;

attn_dtype take_dtype(reader *r);
int plan_created(reader *r, attn_status st, attn_status want, attn_plan *plan,
                 const attn_plan *sentinel, const char *fn, int inference,
                 dropout_setting *dropout);
void fuzz_plan(reader *r);

/* ---- fuzz_dropout.c ---- */

dropout_setting take_dropout(reader *r, attn_plan *plan, int inference);
void dropout_twin_projected(const prec *p, attn_plan *plan, const dropout_setting *d,
                            const void *const in[5], const void *out, const void *weights,
                            size_t out_bytes, size_t weights_bytes, void **out0, void **weights0);

/* ---- fuzz_sdpa_half.c ---- */

extern const prec prec_bf16;
extern const prec prec_f16;
/* the element type of the mask and lse of p's sdpa calls: float for the 16-bit types */
const prec *stat_prec(const prec *p);
/* a 16-bit value of p (half) widened, and a double rounded to p (nearest even) */
double half_get(const prec *p, uint16_t bits);
uint16_t half_set(const prec *p, double v);

#endif /* ATTN_FUZZ_COMMON_H */
