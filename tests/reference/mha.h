/*
 * Multi-head problems for the suites of the multi-head one-shots, plans and
 * the backward pass (test_mha, test_backward, test_plan, test_threads):
 * shapes, random inputs rounded to the element type, typed copies, plans
 * destroyed by the teardown, library calls, and their checks against the
 * double reference (ref_mha, ref_mha_backward).
 *
 * Shapes follow attn.h: D = NH*hs; X (B,T,C); Wq, Wk, Wv (C,D); Wo (D,C) or
 * none; out and dout (B,T,C) with Wo, else (B,T,D); weights (B,NH,T,T).
 *
 * Residuals (all in double; tolerances are the caller's):
 *   out       max|out - ref| / s_out, s_out = max|V| * (with Wo:
 *             max_c sum_k |Wo[k][c]|, else 1), V = X Wv (B*T,D). The suite's
 *             output residual (check.h: out = P V is a convex combination of
 *             rows of V, so its error lives on max|V|) carried through the
 *             output projection: |(Y Wo)[r][c]| <= max|Y| sum_k |Wo[k][c]|,
 *             and an error dY in the heads reaches out the same way.
 *   weights   residual_rows (check.h), per (b, h, t) row.
 *   gradient  per gradient array G (dX, dWq, dWk, dWv, dWo):
 *             max_i |G_i - ref_i| / max(max_i |ref_i|, 0.01 * M), M the
 *             largest max|ref| of the five arrays: the error relative to
 *             the array's own magnitude, so a wrong small array is not
 *             hidden by a large one. The floor 0.01 M is there because the
 *             errors being measured are absolute on the scale of the whole
 *             problem, not of one array (f32 roundoff in products shared by
 *             all gradients; the u S / h rounding noise of finite
 *             differences, S the size of the loss): an array that is small
 *             by cancellation (C = hs = 1 makes dWq and dWk single numbers
 *             summed over all positions; seen at 1e-3 M) or exactly zero
 *             (dWq and dWk when T = 1: every softmax row has one key) would
 *             otherwise turn that noise into a large relative error. A wrong
 *             formula still shows: it is off by a sizeable part of the
 *             array, >= 1e-3 M even for the smallest arrays seen.
 */
#ifndef ATTN_TEST_MHA_H
#define ATTN_TEST_MHA_H

#include <stddef.h>

#include <attn/attn.h>

#include "support/precision.h"
#include "support/rng.h"

typedef struct mha_shape {
    size_t B, T, C, NH, hs;
    double scale; /* the plan's scale argument: <= 0 means 1/sqrt(hs) */
    int causal;
    int with_Wo;
} mha_shape;

/* The dimensions and scale of a problem, without mask and Wo choice */
typedef struct mha_dims {
    size_t B, T, C, NH, hs;
    double scale;
} mha_dims;
mha_shape mha_shape_of(mha_dims dims, int causal, int with_Wo);

size_t mha_D(const mha_shape *s);             /* NH*hs */
size_t mha_x_elems(const mha_shape *s);       /* B*T*C */
size_t mha_w_elems(const mha_shape *s);       /* C*D (Wq, Wk, Wv, Wo alike) */
size_t mha_out_elems(const mha_shape *s);     /* B*T*C with Wo, else B*T*D */
size_t mha_weights_elems(const mha_shape *s); /* B*NH*T*T */
/* the plan flags of s (ATTN_CAUSAL when causal) with `extra` added */
unsigned mha_flags(const mha_shape *s, unsigned extra);

/* The inputs of one problem, rounded to the element type; Wo is NULL
 * without with_Wo; dout has the shape of out. */
typedef struct mha_data {
    mha_shape s;
    double *X, *Wq, *Wk, *Wv, *Wo, *dout;
} mha_data;

/* X, dout ~ N(0,1); Wq, Wk, Wv ~ N(0, w_gain^2/C), so Q, K, V are
 * O(w_gain) and the scores O(w_gain^2); Wo ~ N(0, 1/D). */
mha_data mha_random(const test_prec *p, test_rng *rng, mha_shape s, double w_gain);
/* the gain of the suites: scores of a few units, rows neither flat nor
 * one-hot */
#define MHA_W_GAIN 1.5

/* Typed copies of the inputs, the pointers the library is called with
 * (Wo NULL without with_Wo). */
typedef struct mha_typed {
    void *X, *Wq, *Wk, *Wv, *Wo, *dout;
} mha_typed;
mha_typed mha_typed_copy(const test_prec *p, const mha_data *d);

/* The five gradient arrays, typed or double depending on use; g[MHA_DWO]
 * is NULL without Wo. */
enum { MHA_DX, MHA_DWQ, MHA_DWK, MHA_DWV, MHA_DWO, MHA_GRADS };
typedef struct mha_grads {
    void *g[MHA_GRADS];
} mha_grads;
extern const char *const mha_grad_names[MHA_GRADS];
size_t mha_grad_elems(const mha_shape *s, int which);
/* sentinel-filled typed gradient buffers (talloc'd) */
mha_grads mha_grads_alloc(const test_prec *p, const mha_shape *s);
/* the typed gradients as double arrays (talloc'd) */
mha_grads mha_grads_doubles(const test_prec *p, const mha_shape *s, const mha_grads *typed);
/* whether two sets of typed gradients are identical bit for bit */
int mha_grads_identical(const test_prec *p, const mha_shape *s, const mha_grads *a,
                        const mha_grads *b);

/* Runs `fn` on new random data (mha_random, MHA_W_GAIN, one rng seeded
 * with `seed`) for each of the n dims, causal 0 and 1, and Wo absent
 * and/or present as `wo` says (MHA_WO_NONE, MHA_WO_SET or MHA_WO_BOTH). */
typedef void (*mha_case_fn)(const test_prec *p, const mha_data *d, const mha_typed *t,
                            void *context);
enum { MHA_WO_NONE = 1, MHA_WO_SET = 2, MHA_WO_BOTH = 3 };
void mha_each_case(const test_prec *p, unsigned long seed, const mha_dims *dims, size_t n,
                   int wo, mha_case_fn fn, void *context);

/* A plan for s (ATTN_CAUSAL from s, plus `extra`); fails the test unless
 * attn_plan_create succeeds. mha_teardown destroys it. */
attn_plan *mha_plan(const test_prec *p, const mha_shape *s, unsigned extra);
/* cmocka teardown of the multi-head suites: destroys the plans mha_plan
 * made, then talloc_teardown */
int mha_teardown(void **state);

/* cmocka test entries with mha_teardown: one per precision, or one with
 * the given state */
#define MHA_CASE(name, fn, state) {name, fn, NULL, mha_teardown, (void *)(state)}
#define MHA_PREC_CASES(fn)                            \
    MHA_CASE("f32/" #fn, fn, &test_prec_f32),         \
    MHA_CASE("f64/" #fn, fn, &test_prec_f64)

/* Library calls on typed inputs; each fails the test unless it returns
 * ATTN_OK, and returns new typed, sentinel-prefilled outputs. The one-shots
 * need hs = C/NH and the default scale. `weights`, when not NULL, requests
 * the weights and receives them. */
void *mha_one_shot_forward(const test_prec *p, const mha_shape *s, const mha_typed *t);
mha_grads mha_one_shot_backward(const test_prec *p, const mha_shape *s, const mha_typed *t);
void *mha_plan_forward(const test_prec *p, attn_plan *plan, const mha_shape *s,
                       const mha_typed *t, void **weights);
mha_grads mha_plan_backward(const test_prec *p, attn_plan *plan, const mha_shape *s,
                            const mha_typed *t);

/* ref_mha on d (double arrays) and the scale of the out residual above */
typedef struct mha_forward_ref {
    double *out, *weights;
    double out_scale;
} mha_forward_ref;
mha_forward_ref mha_reference_forward(const mha_data *d);
/* out (typed) and, when not NULL, weights (typed) against ref (of d), with
 * the residuals above, at tolerance p->tol */
void mha_check_forward_with(const test_prec *p, const mha_data *d, const mha_forward_ref *ref,
                            const void *out, const void *weights, const char *what);
/* the same against ref_mha on d, computed for the call */
void mha_check_forward(const test_prec *p, const mha_data *d, const void *out,
                       const void *weights, const char *what);
/* the gradient residuals of `got` (double arrays) against `ref` (double
 * arrays); returns the largest */
double mha_grads_residual(const mha_shape *s, const mha_grads *got, const mha_grads *ref,
                          double tol, const char *what);
/* The gradient tolerance against the double reference (residual above):
 * 1e-12 for f64, 1e-4 for f32, justified in test_backward.c. */
double mha_grad_tol(const test_prec *p);
/* ref_mha_backward on d, as double arrays */
mha_grads mha_reference_grads(const mha_data *d);

/* One forward (and, on a training plan, backward) run whose buffers are made
 * beforehand, so mha_job_run allocates nothing and calls no cmocka function:
 * it may run on any thread. */
typedef struct mha_job {
    const test_prec *p;
    mha_shape s;
    attn_plan *plan;
    int training; /* the plan keeps state: run the backward too */
    mha_typed in;
    void *out, *weights; /* weights NULL: not requested */
    mha_grads grads;
    attn_status status;
} mha_job;
/* buffers talloc'd (call on the test's thread); the plan is the caller's */
mha_job mha_job_make(const test_prec *p, const mha_data *d, attn_plan *plan, int training,
                     int with_weights);
void mha_job_run(mha_job *job);
/* whether two jobs of the same shape produced identical bytes */
int mha_job_identical(const mha_job *a, const mha_job *b);

#endif /* ATTN_TEST_MHA_H */
