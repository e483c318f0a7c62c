/*
 * The cases of the sdpa suites built on them (test_sdpa, test_sdpa_gradients,
 * test_sdpa_extremes, test_sdpa_one_shots): a spec (shape, scale, causal,
 * window, row strides, fused QKV, mask, key lengths), the problem made of it,
 * its reference results in double (sdpa_reference.h), the library's typed
 * inputs and sentinel-filled outputs of one precision, and the tolerances of
 * a case (sdpa_calls.h).
 *
 * Inputs: Q, K, V, dout ~ N(0,1), the mask's finite entries ~ N(0,1), all
 * rounded to float, so that one reference (in double, on those values)
 * serves both precisions (as in test_engines); the scores are O(1). Every
 * gap between rows and every unfilled cache slot (keys j >= L_b) holds NaN.
 */
#ifndef ATTN_TEST_SDPA_PROBLEM_H
#define ATTN_TEST_SDPA_PROBLEM_H

#include <stddef.h>

#include <attn/attn.h>

#include "reference/sdpa_reference.h"
#include "support/precision.h"
#include "support/rng.h"
#include "support/sdpa_calls.h"

typedef enum mask_kind {
    MASK_NONE,
    MASK_FULL,   /* (B,NH,Tq,Tk), row stride Tk + 2 (NaN in the padding) */
    MASK_KEYPAD, /* mask_ld = mask_sh = 0, mask_sb = Tk: one row per sequence */
    MASK_HEADS,  /* mask_sh = 0: (B,Tq,Tk) shared by the heads */
    MASK_BATCH,  /* mask_sb = 0: (NH,Tq,Tk) shared by the sequences */
    MASK_ROW     /* every stride 0: one row of Tk for every (b, h, t) */
} mask_kind;

typedef struct spec {
    const char *name;
    size_t B, NH, NH_kv, Tq, Tk, hs, hs_v; /* hs_v 0: hs (passed as 0) */
    double scale;                          /* the argument: <= 0 the default */
    unsigned causal;                       /* 0 or ATTN_CAUSAL */
    size_t window;
    size_t pad; /* every row stride is its row's width + pad; 0: the strides are passed as 0 */
    int fused;  /* Q, K, V in one (B,T,...) buffer (Tq == Tk) */
    mask_kind mask;
    const size_t *lengths; /* B entries, or NULL */
    int backward;
    int finite_slots; /* keys j >= L_b hold numbers, not NaN */
} spec;

typedef struct problem {
    spec c;
    size_t hs_v, wq, wk, wv, wo;         /* row widths NH*hs, NH_kv*hs, NH_kv*hs_v, NH*hs_v */
    size_t ldq, ldk, ldv, ldo;           /* the actual strides */
    size_t ldq_arg, ldk_arg, ldv_arg, ldo_arg; /* as passed (0: dense) */
    size_t q_at, k_at, v_at, n_in;       /* Q, K, V in one input array `in` */
    size_t nq, nk, nv, no, nl;           /* extents of Q, K, V, out (and dout), lse */
    double *in, *mask, *dout;
    size_t n_mask, mask_ld, mask_sb, mask_sh;
    size_t *lengths;
    sdpa_ref ref;
} problem;

/* rng_normal rounded to float */
double rounded_normal(test_rng *rng);
/* the length of sequence b: its key length, or Tk */
size_t length_of(const problem *pr, size_t b);
problem problem_make(const spec *c, test_rng *rng);
attn_sdpa_shape shape_of(const problem *pr);
/* dense (rows, width) doubles of a typed (rows, ld) array */
double *dense_of(const test_prec *p, const void *data, size_t rows, size_t ld, size_t width);

/* ---- the reference results ---------------------------------------------------- */

typedef struct expected {
    double *out, *lse, *dQ, *dK, *dV; /* dense */
    size_t n_out, n_dq, n_dk, n_dv;
    double v_scale; /* max |V| over its finite entries */
} expected;

expected expected_make(const problem *pr, int backward);

/* ---- the library's inputs and outputs of one precision ---------------------------- */

typedef struct typed {
    const test_prec *p;
    void *in, *mask, *dout;
} typed;

typed typed_make(const test_prec *p, const problem *pr);

/* typed outputs, sentinel-filled, with a copy of their initial bytes */
typedef struct outputs {
    void *out, *lse, *dQ, *dK, *dV;
    void *out0, *dQ0, *dK0, *dV0; /* the bytes before the call (gap checks) */
} outputs;

outputs outputs_make(const test_prec *p, const problem *pr, int backward);
/* the gradient buffers back to their initial sentinel bytes */
void outputs_refill_grads(const test_prec *p, const problem *pr, outputs *o);
/* the call's arguments (lse NULL unless with_lse) */
sdpa_io io_of(const problem *pr, const typed *t, const outputs *o, int with_lse);
/* whether the bytes between the rows of a strided array are as before */
int gaps_intact(const test_prec *p, const void *now, const void *before, size_t rows, size_t ld,
                size_t width);

/* sdpa_calls.h: the residuals and tolerances, for a case */
double forward_tol(const test_prec *p, const spec *c);
double grad_tol(const test_prec *p, const spec *c);

#endif /* ATTN_TEST_SDPA_PROBLEM_H */
