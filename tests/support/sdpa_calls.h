/*
 * What the sdpa suites (test_sdpa, test_sdpa_layouts) share: the calls of
 * attn_sdpa_* with untyped element pointers, plans destroyed by the
 * teardown, the residuals and tolerances of outputs against the double
 * reference (sdpa_reference.h), and how long a run may take.
 *
 * Residuals (check.h for residual_scaled):
 *   out       residual_scaled(out, ref, n, max|V|): out is a convex
 *             combination of rows of V, so its error lives on max|V|;
 *   lse       sdpa_residual_lse: max |lse - ref| / (1 + |ref|) (the error of
 *             lse = m + log sum is u|m| plus the relative error of the sum);
 *   gradients sdpa_grad_residual, per array: max|G - ref| /
 *             max(max|ref G|, 0.01 * the largest max|ref| of dQ, dK, dV)
 *             (mha.h's gradient residual).
 * Infinities must match exactly and a NaN only where the reference has one.
 *
 * Tolerances:
 *   forward (out, lse): the suite's (precision.h: f32 1e-5, f64 1e-12,
 *     justified for sums of length <= ~130) times sqrt(K / 130) for
 *     K = max(Tk, hs) > 130: out sums P V over up to Tk keys, the scores
 *     over hs, and the rounding error of a sum of K terms of random sign
 *     grows like sqrt(K) u (test_engines.c). Tk = 5000: f32 6.2e-5, f64
 *     6.2e-12.
 *   backward: f32 1e-4, f64 1e-12 (mha_grad_tol, test_backward.c: four
 *     chained products of length <= 260 and the softmax backward's
 *     cancellation) times sqrt(K / 260) for K = max(Tk, Tq * NH / NH_kv, hs)
 *     > 260: dQ sums over Tk keys, dK and dV over Tq queries of every head
 *     of the group.
 */
#ifndef ATTN_TEST_SDPA_CALLS_H
#define ATTN_TEST_SDPA_CALLS_H

#include <stddef.h>

#include <attn/attn.h>

#include "support/precision.h"

/* a build whose code runs many times slower than Release: smaller shapes */
#if !defined(__OPTIMIZE__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SDPA_SLOW_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SDPA_SLOW_BUILD 1
#endif
#endif

/* Whether the run is to be short: under valgrind (~50x slower; detected
 * through its header, or the libraries it preloads), or asked for by
 * ATTN_SDPA_SHORT=1 in the environment (other slow hosts: CI's AArch64
 * build under qemu-aarch64). */
int sdpa_short_run(void);

/* ---- plans destroyed by the teardown ------------------------------------ */

/* Records plan (NULL passes through) for sdpa_teardown; fails the test
 * beyond 64 plans at once. */
attn_plan *sdpa_keep_plan(attn_plan *plan);
/* Destroys a plan of sdpa_keep_plan's now. */
void sdpa_drop_plan(attn_plan *plan);
/* cmocka teardown: destroys the kept plans, then talloc_teardown */
int sdpa_teardown(void **state);

#define SDPA_CASE(name, fn, state) {name, fn, NULL, sdpa_teardown, (void *)(state)}
#define SDPA_PREC_CASES(fn) \
    SDPA_CASE("f32/" #fn, fn, &test_prec_f32), SDPA_CASE("f64/" #fn, fn, &test_prec_f64)

/* ---- typed calls ---------------------------------------------------------- */

/* The arguments of one call, element pointers untyped (the fields of
 * attn_sdpa_args_*; zero strides mean the dense ones). */
typedef struct sdpa_io {
    const void *Q;
    size_t ldq;
    const void *K;
    size_t ldk;
    const void *V;
    size_t ldv;
    const void *mask;
    size_t mask_ld, mask_sb, mask_sh;
    const size_t *key_lengths;
    void *out;
    size_t ldo;
    void *lse;
    size_t sbq, shq, sbk, shk, sbv, shv, sbo, sho;
} sdpa_io;

/* attn_sdpa_forward_* / attn_sdpa_backward_* / attn_sdpa_* of `via`'s
 * precision; io NULL passes a NULL args pointer */
attn_status sdpa_forward(const test_prec *via, attn_plan *plan, const sdpa_io *io);
attn_status sdpa_backward(const test_prec *via, attn_plan *plan, const sdpa_io *io,
                          const void *dout, void *dQ, void *dK, void *dV);
attn_status sdpa_one_shot(const test_prec *via, const attn_sdpa_shape *shape, double scale,
                          unsigned flags, size_t window, const sdpa_io *io);

/* ---- residuals and tolerances (above) ------------------------------------- */

double sdpa_residual_lse(const double *got, const double *ref, size_t n);
/* `largest`: the largest max|ref| of the three gradient arrays */
double sdpa_grad_residual(const double *got, const double *ref, size_t n, double largest);
double sdpa_forward_tol(const test_prec *p, size_t Tk, size_t hs);
/* group = NH / NH_kv */
double sdpa_grad_tol(const test_prec *p, size_t Tq, size_t Tk, size_t group, size_t hs);

/* ---- arrays laid out by strides (attn.h: element i of row t of head h of
 * sequence b at b*sb + h*sh + t*ld + i) ----------------------------------------- */

typedef struct sdpa_view {
    size_t B, H, T, w; /* sequences, heads, rows; w: the contiguous run of a row */
    size_t at;         /* element (0, 0, 0, 0) in its buffer */
    size_t sb, sh, ld; /* the strides in elements (none 0 by default here) */
} sdpa_view;

/* the buffer index of element 0 of row t of head h of sequence b */
size_t sdpa_view_index(const sdpa_view *v, size_t b, size_t h, size_t t);
/* one past the view's last element */
size_t sdpa_view_end(const sdpa_view *v);
/* The view's elements of a typed buffer as dense (B,T,H,w) doubles
 * (talloc'd): attn's own layout, the one the reference reads. */
double *sdpa_view_gather(const test_prec *p, const void *buf, const sdpa_view *v);
/* marks[i] = 1 for every element i of the view */
void sdpa_view_mark(const sdpa_view *v, unsigned char *marks);
/* By enumeration (small views only): whether two views, with `at` in one
 * buffer, share an element; whether a view has two elements at one place. */
int sdpa_views_share(const sdpa_view *x, const sdpa_view *y);
int sdpa_view_repeats(const sdpa_view *v);

/* `bytes` of talloc'd memory at an address whose remainder modulo `period`
 * is `residue` (< period): the ALIASING rule looks at addresses modulo
 * strides, so the tests choose them. */
void *sdpa_talloc_at(size_t bytes, size_t period, size_t residue);

#endif /* ATTN_TEST_SDPA_CALLS_H */
