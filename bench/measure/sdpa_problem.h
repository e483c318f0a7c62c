/*
 * The arrays of one sdpa configuration, in its layout (sdpa_layout.h: bshd
 * is attn's dense rows, bhsd PyTorch's heads first):
 *   Q (B,Tq,NH,hs)   K (B,Tk,NH_kv,hs)   V (B,Tk,NH_kv,hs_v)   (as bshd)
 *   out, dout (B,Tq,NH,hs_v)   lse (B,NH,Tq), dense   dQ, dK, dV as Q, K, V
 *   mask: padding (B,1,1,Tk) with strides mask_sb = Tk, mask_sh = mask_ld = 0;
 *         full (B,NH,Tq,Tk), dense; none: NULL
 *   key_lengths (B): with --mask none and lengths other than full; else NULL
 * A decode loop (sdpa_config.h) has K, V of Tk + steps slots, the first Tk
 * filled; Q and out hold every step's (B,1,NH,*) one after the other, and
 * K_new, V_new (steps,B,NH_kv,*), dense, the token each step appends.
 * Inputs are deterministic from the seed and the shape, the same numbers in
 * every layout (drawn in the (b, t, head, i) order of bshd): Q, K, V, dout
 * uniform on [-sqrt(3), sqrt(3)] (unit variance, so the scaled scores have
 * variance about 1); the full mask's bias uniform on [-1, 1]. The KV cache
 * slots beyond a sequence's key_lengths (a loop's not yet appended ones)
 * hold NaN: attn.h says they are never read, and a NaN that leaked would
 * fail the check.
 * Element types: every array of the dtype, but for bf16 and f16 (attn_bf16,
 * attn_f16: Q, K, V, out, dout, dQ, dK, dV, K_new, V_new in 16 bits) the
 * mask and lse stay float, as attn.h's half calls take them; a half type's
 * inputs are the f32 problem's numbers (the same seed) rounded to it with
 * attn_bf16_from_f32 / attn_f16_from_f32.
 */
#ifndef ATTN_BENCH_SDPA_PROBLEM_H
#define ATTN_BENCH_SDPA_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "measure/sdpa_config.h"
#include "measure/sdpa_layout.h"

typedef struct bench_sdpa_problem {
    bench_sdpa_shape shape;
    bench_sdpa_layout_strides strides; /* of Q, K, V, out (sdpa_layout.h) */
    void *Q, *K, *V, *mask, *out, *lse, *dout, *dQ, *dK, *dV; /* dout..dV: backward only;
                                                                * mask, lse: float for halves */
    void *K_new, *V_new;  /* decode loop: (steps,B,NH_kv,hs), (steps,B,NH_kv,hs_v) */
    size_t *key_lengths;
    size_t mask_ld, mask_sb, mask_sh;
    size_t q_count, kv_count, v_count, out_count, lse_count, mask_count; /* elements */
    size_t steps; /* arrays of Q and out: a decode loop's steps, else 1 */
    int poisoned_slots; /* the slots beyond key_lengths hold NaN */
} bench_sdpa_problem;

/* Returns 0, or -1 with the reason in error (memory, size). */
int bench_sdpa_problem_create(bench_sdpa_problem *problem, const bench_sdpa_shape *shape,
                              uint64_t seed, char *error, size_t error_size);

/* Whether the problem's arrays serve this shape as they are (everything but
 * the engine, the cache, causal, the window and the thread count equal). */
int bench_sdpa_problem_fits(const bench_sdpa_problem *problem, const bench_sdpa_shape *shape);

/* NaN into every output (out, lse, dQ, dK, dV) before the checked call. */
void bench_sdpa_problem_poison_outputs(bench_sdpa_problem *problem);

void bench_sdpa_problem_destroy(bench_sdpa_problem *problem);

#endif /* ATTN_BENCH_SDPA_PROBLEM_H */
