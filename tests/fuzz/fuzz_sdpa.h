/*
 * What the sdpa files of fuzz_api (fuzz_sdpa_model.c, fuzz_sdpa_call.c,
 * fuzz_sdpa_alias.c, fuzz_sdpa_oracles.c, fuzz_sdpa_steps.c,
 * fuzz_sdpa_half.c) share:
 * attention on given Q, K, V, its dimensions, one call's arguments and
 * arrays, and each file's functions used by the others.
 */
#ifndef ATTN_FUZZ_SDPA_H
#define ATTN_FUZZ_SDPA_H

#include "fuzz_common.h"

/* The shape of an sdpa plan; hs_v resolved (hs when given as 0). */
typedef struct sdpa_dims {
    size_t B, NH, NH_kv, Tq, Tk, hs, hs_v;
} sdpa_dims;

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
    int backward; /* a backward's arguments (else a forward's or a one-shot's) */
    /* rows of K and V (columns of the mask) judged by the rules and held by
     * the arrays: Tk, or in a forward with key lengths max(1, the largest,
     * at most Tk) (attn.h) */
    size_t kv_rows;
    /* extents in elements (SIZE_MAX: beyond size_t), mask 0 without one */
    size_t nQ, nK, nV, nO, nM, nL;
} sdpa_call;

/* The arrays of one call, in the harness's argument list:
 *   0 Q, 1 K, 2 V, 3 mask, 4 key_lengths, 5 out, 6 lse,
 *   backward: 7 dout, 8 dQ, 9 dK, 10 dV. */
typedef struct sdpa_arrays {
    void *Q, *K, *V, *mask, *out, *lse, *dout, *dQ, *dK, *dV;
    size_t *lengths;
} sdpa_arrays;

typedef struct sdpa_io {
    const void *Q, *K, *V, *mask, *dout;
    const size_t *lengths;
    void *out, *lse, *dQ, *dK, *dV;
} sdpa_io;

/* The attn_sdpa_args_* of a call (one initializer for every type). */
#define SDPA_ARGS(a, x)                                                                     \
    {(x)->Q,         (a)->st[SQ][2], (x)->K,         (a)->st[SK][2], (x)->V,                    \
     (a)->st[SV][2], (x)->mask,      (a)->mask_ld,   (a)->mask_sb,   (a)->mask_sh,              \
     (x)->lengths,   (x)->out,       (a)->st[SO][2], (x)->lse,       (a)->st[SQ][0],            \
     (a)->st[SQ][1], (a)->st[SK][0], (a)->st[SK][1], (a)->st[SV][0], (a)->st[SV][1],            \
     (a)->st[SO][0], (a)->st[SO][1]}

/* ---- fuzz_sdpa_model.c ---- */

attn_status model_sdpa_create(sdpa_dims s, const prec *p, double scale, unsigned flags);
attn_status model_sdpa_flags(unsigned flags);
int sdpa_small(sdpa_dims s);
size_t sat_mul(size_t a, size_t b);
size_t sat_add(size_t a, size_t b);
size_t sat_extent(size_t rows, size_t ld, size_t width);
void take_layout(reader *r, size_t H, size_t T, size_t w, size_t st[3]);
size_t take_mask_stride(reader *r, size_t exact);

/* ---- fuzz_sdpa_call.c ---- */

void sdpa_array_dims(sdpa_dims s, int i, size_t *H, size_t *T, size_t *w);
/* the same with the rows of K and V those of call a (kv_rows) */
void sdpa_call_dims(sdpa_dims s, const sdpa_call *a, int i, size_t *H, size_t *T, size_t *w);
size_t sdpa_at(const sdpa_call *a, int i, size_t b, size_t h, size_t t);
sdpa_call take_sdpa_call(reader *r, sdpa_dims s, int n_null, int n_outputs, int n_args);
void sdpa_call_resolve(sdpa_call *c, sdpa_dims s);
attn_status model_sdpa_args(sdpa_dims s, const prec *p, const sdpa_call *a);
sdpa_arrays add_sdpa_arrays(call *c, reader *r, sdpa_dims s, const sdpa_call *a,
                            int backward, int out_is_input, int with_lse);
attn_status call_sdpa(const prec *p, int kind, attn_plan *plan, int null_args,
                      const sdpa_call *a, const sdpa_io *x, const attn_sdpa_shape *shape,
                      double scale, unsigned flags, size_t window);
sdpa_io io_from(const call *c, const sdpa_arrays *x, int backward);

/* ---- fuzz_sdpa_alias.c ---- */

int sdpa_aliases(const prec *p, sdpa_dims s, const sdpa_call *a, const sdpa_io *x,
                 int backward);
void check_sdpa_disjoint(const prec *p, sdpa_dims s, const sdpa_call *a,
                         const sdpa_io *x, int backward);
void settle_sdpa_outputs(call *c, const prec *p, sdpa_dims s, const sdpa_call *a,
                         const sdpa_io *x, int backward);

/* ---- fuzz_sdpa_oracles.c ---- */

void sdpa_visible(sdpa_dims s, int causal, size_t window, const size_t *lengths, size_t b,
                  size_t t, size_t *lo, size_t *hi);
void check_sdpa_forward(const prec *p, sdpa_dims s, double scale, int causal,
                        size_t window, const sdpa_call *a, const sdpa_io *x);
int sdpa_same(const prec *p, sdpa_dims s, const sdpa_call *a, int i, const void *x,
              const void *y);
void check_sdpa_backward(const prec *p, sdpa_dims s, double scale, int causal,
                         size_t window, const sdpa_call *a, const sdpa_io *x,
                         int from_forward);

/* ---- fuzz_dropout.c ---- */

void dropout_twin_sdpa(const prec *p, sdpa_dims s, attn_plan *plan, const dropout_setting *d,
                       const sdpa_call *a, const sdpa_io *x, sdpa_io *twin);

/* ---- fuzz_sdpa_half.c ---- */

/* the prec of an sdpa plan's dtype (ATTN_F32 for any it refuses), and the dtype of a prec */
const prec *sdpa_prec_of(attn_dtype dtype);
attn_dtype sdpa_dtype_of(const prec *p);
/* call_sdpa for the 16-bit types */
attn_status call_sdpa_half(const prec *p, int kind, attn_plan *plan, int null_args,
                           const sdpa_call *a, const sdpa_io *x, const attn_sdpa_shape *shape,
                           double scale, unsigned flags, size_t window);
/* check_sdpa_forward for the 16-bit types: attn.h's bound */
void check_sdpa_half_forward(const prec *p, sdpa_dims s, double scale, int causal,
                             size_t window, const sdpa_call *a, const sdpa_io *x);

/* ---- fuzz_sdpa_steps.c ---- */

void fuzz_sdpa(reader *r);

#endif /* ATTN_FUZZ_SDPA_H */
