/*
 * What the half-precision sdpa suites (test_sdpa_half, test_sdpa_half_convert,
 * test_sdpa_half_errors) share: the two 16-bit types seen from the tests,
 * with references of their conversions written independently of the
 * library's; the typed calls attn_sdpa_*_bf16 / _f16 on untyped pointers;
 * and the problems of the numeric suites with their float64 reference
 * (sdpa_reference.c, run on the widened half inputs) and the checks of
 * attn.h's "half precision" bound.
 *
 * The reference conversions (half_type.decode, half_type.encode):
 *   bf16 widening   the bits shifted into the top half of a float's bits;
 *   f16 widening    sign, exponent and fraction decoded in double by hand
 *                   (subnormals (fraction * 2^-24), infinities, NaN);
 *   bf16 narrowing  by bit reasoning in double: the two bf16 values around
 *                   |x| are the float's top 16 bits and the next bf16 (the
 *                   one past the largest finite standing for 2^128, which
 *                   rounds to infinity); the nearer in double (where the
 *                   distances are exact) wins, a tie goes to the even one;
 *   f16 narrowing   by search: the largest finite f16 at most |x| is found
 *                   by bisection in the table of every positive finite
 *                   f16 decoded in double, then nearest and ties to even
 *                   as above; |x| >= 65520 (the largest finite plus half
 *                   its ulp, a tie that rounds to even 2^16) is infinity.
 * NaN is encoded as the type's quiet NaN with x's sign.
 */
#ifndef ATTN_TEST_SDPA_HALF_H
#define ATTN_TEST_SDPA_HALF_H

#include <stddef.h>
#include <stdint.h>

#include <attn/attn.h>

#include "reference/sdpa_reference.h"
#include "support/check.h"
#include "support/rng.h"
#include "support/sdpa_calls.h"

typedef struct half_type {
    const char *name; /* "bf16" or "f16" */
    attn_dtype dtype;
    double u;         /* the unit roundoff attn.h names: 2^-8 or 2^-11 */
    double u_P;       /* attn.h's u_P: u (bf16), 0 (f16) */
    double max;       /* the largest finite value */
    double tiny;      /* half the smallest subnormal: 2^-134, 2^-25 (the absolute
                       * error of rounding a result below the normal range) */
    uint16_t quiet;   /* a NaN's quiet bit: 0x0040, 0x0200 */
    uint16_t inf;     /* +infinity: 0x7F80, 0x7C00 */
    /* the independent references (above) */
    double (*decode)(uint16_t bits);
    uint16_t (*encode)(float x);
    /* the library's conversions */
    void (*lib_narrow)(const float *src, void *dst, size_t n);
    void (*lib_widen)(const void *src, float *dst, size_t n);
} half_type;

extern const half_type half_bf16;
extern const half_type half_f16;

/* the other 16-bit type (DTYPE_MISMATCH) */
const half_type *half_other(const half_type *ht);

#define HALF_TYPE(state) ((const half_type *)*(state))
#define HALF_CASES(fn) SDPA_CASE("bf16/" #fn, fn, &half_bf16), SDPA_CASE("f16/" #fn, fn, &half_f16)

/* whether bits encode a NaN of the type */
int half_is_nan(const half_type *ht, uint16_t bits);
/* element i of a 16-bit buffer */
uint16_t half_get_bits(const void *buf, size_t i);
void half_set_bits(void *buf, size_t i, uint16_t bits);
/* x rounded to the type by the reference (through float) and widened back */
double half_round(const half_type *ht, double x);

/* attn_sdpa_forward_*, attn_sdpa_backward_*, attn_sdpa_* of the type; io
 * NULL passes a NULL args pointer (io's lse is float) */
attn_status half_forward(const half_type *ht, attn_plan *plan, const sdpa_io *io);
attn_status half_backward(const half_type *ht, attn_plan *plan, const sdpa_io *io,
                          const void *dout, void *dQ, void *dK, void *dV);
attn_status half_one_shot(const half_type *ht, const attn_sdpa_shape *shape, double scale,
                          unsigned flags, size_t window, const sdpa_io *io);

/* ---- the problems of the numeric suites ------------------------------------------ */

/* where the library's arrays lie (every one in its own buffer):
 *   HL_DENSE   (B,T,H,w), every stride passed as 0
 *   HL_BHSD    (B,H,T,w), PyTorch's: ld w, sh T*w, sb H*T*w
 *   HL_PADDED  (B,T,H,w) rows with a gap: ld H*w + 3, sh w, sb T*ld + 5
 *   HL_CACHE   a (B,H,S_max,w) cache of S_max = T + 5 + T/8 slots, T of them
 *              used: ld w, sh S_max*w, sb H*sh */
typedef enum half_layout { HL_DENSE, HL_BHSD, HL_PADDED, HL_CACHE } half_layout;

/* the mask (float, N(0,1) entries, -inf with probability 0.15):
 *   HM_FULL (B,NH,Tq,Tk); HM_KEYPAD ld = sh = 0, sb = Tk; HM_HEADS sh = 0;
 *   HM_BATCH sb = 0; HM_ROW every stride 0 */
typedef enum half_mask { HM_NONE, HM_FULL, HM_KEYPAD, HM_HEADS, HM_BATCH, HM_ROW } half_mask;

typedef struct hcase {
    const char *name;
    size_t B, NH, NH_kv, Tq, Tk, hs, hs_v; /* hs_v 0: hs (passed as 0) */
    unsigned causal;                       /* 0 or ATTN_CAUSAL */
    size_t window;
    const size_t *lengths; /* B entries or NULL */
    half_mask mask;
    int masked_rows;  /* with HM_FULL: every 5th (b, h, t) row all -inf */
    half_layout layout;
    double gain;      /* Q, K ~ N(0, gain^2) (0: 1); V, dout ~ N(0, 1) */
    int backward;
} hcase;

typedef struct hproblem {
    const half_type *ht;
    hcase c;
    size_t hs_v;
    /* dense (B,T,H,w) doubles, each a value of the type (the reference's
     * inputs); keys j >= L_b NaN (never read) */
    double *Q, *K, *V, *dout;
    double *mask; /* the float mask's values, or NULL */
    size_t n_mask, mask_ld, mask_sb, mask_sh;
    double scale;
    sdpa_ref ref;
    double *out, *lse; /* the reference's */
    /* the library's: views and buffers of Q, K, V, out (and dout, in out's view) */
    sdpa_view view[4];
    int zero_strides;
    void *q, *k, *v, *dout_h;
    float *mask_f;
} hproblem;

hproblem hproblem_make(const half_type *ht, const hcase *c, test_rng *rng);
/* the reference again after Q, K, V or the mask changed in the dense arrays
 * and the buffers (half_poke) */
void hproblem_refresh(hproblem *pr);
/* element i of row t of head h of sequence b of array a (0 Q, 1 K, 2 V, 3
 * dout) set to the type's value nearest x, in the dense array and the buffer */
void half_poke(hproblem *pr, int a, size_t b, size_t h, size_t t, size_t i, double x);
/* elements of the buffer of array a (0 Q, 1 K, 2 V, 3 out) */
size_t hproblem_extent(const hproblem *pr, int a);
attn_sdpa_shape hproblem_shape(const hproblem *pr);
/* the call's arguments: out (in view 3) and lse (or NULL) */
sdpa_io hproblem_io(const hproblem *pr, void *out, float *lse);
/* the elements of view a of a buffer as dense (B,T,H,w) doubles (the reference's widening) */
double *half_gather(const hproblem *pr, int a, const void *buf);
/* whether every element of a buffer of `elements` that view a does not address kept
 * the bytes of `before` */
int half_unaddressed_intact(const hproblem *pr, int a, const void *buf, const void *before,
                            size_t elements);
/* a sentinel-filled buffer of `elements` 16-bit elements, and a copy of its bytes */
void *half_sentinel_buffer(size_t elements, void **before);

/* The forward's results (out gathered dense, lse as the library wrote it)
 * against the reference and attn.h's bound: rows the reference makes NaN are
 * all NaN, rows without weight (lse -inf) are out 0 exactly and lse -inf,
 * rows with +inf scores lse +inf and out the mean of those keys' values
 * within u |x| + 2^-19 (half_inf_tolerance: a float mean of k <= 2 values
 * below 8 in magnitude errs by at most (k + 1) 2^-24 8 < 2^-19), every
 * other element within the bound. `worst` keeps the largest
 * error/bound ratio; *nonzero (or NULL) counts the elements whose error is
 * not 0. */
void half_check_forward(const hproblem *pr, const double *out, const float *lse,
                        check_worst *worst, size_t *nonzero, const char *what);

/* the visible keys of row (b, h, t): their count, and *S = max_j sum_i |Q_i K_ji| */
size_t half_row_terms(const hproblem *pr, size_t b, size_t h, size_t t, double *S);
/* the index of element 0 of row t of head h of sequence b in the dense array a */
size_t half_dense_index(const hproblem *pr, int a, size_t b, size_t h, size_t t);

#endif /* ATTN_TEST_SDPA_HALF_H */
