/*
 * Where the heads of an sdpa configuration's arrays are (--layout), as the
 * strides of attn_sdpa_args_*: element i of row t of head h of sequence b of
 * an array A is A[b*sb + h*sh + t*ld + i] (attn.h), for
 *   Q, dQ       (B, Tq, NH,    hs)     as bshd, (B, NH,    Tq, hs)   as bhsd
 *   K, dK       (B, T,  NH_kv, hs)             (B, NH_kv, T,  hs)
 *   V, dV       (B, T,  NH_kv, hs_v)           (B, NH_kv, T,  hs_v)
 *   out, dout   (B, Tq, NH,    hs_v)           (B, NH,    Tq, hs_v)
 * with T the slots the K and V arrays hold (bench_sdpa_capacity: Tk, plus
 * the steps of a decode loop, whose cache is (B, NH_kv, Tk + steps, hs) in
 * PyTorch's layout). A decode loop's Q and out are those of one step
 * (Tq = 1), its steps' arrays one after the other.
 */
#ifndef ATTN_BENCH_SDPA_LAYOUT_H
#define ATTN_BENCH_SDPA_LAYOUT_H

#include <stddef.h>

#include "measure/sdpa_config.h"

typedef struct bench_sdpa_strides {
    size_t sb, sh, ld; /* batch, head and row strides, elements */
} bench_sdpa_strides;

typedef struct bench_sdpa_layout_strides {
    bench_sdpa_strides q, k, v, o;
} bench_sdpa_layout_strides;

/* The strides of the four arrays of the shape in its layout. */
bench_sdpa_layout_strides bench_sdpa_layout_of(const bench_sdpa_shape *shape);

/* The offset of row t of head h of sequence b. */
static inline size_t bench_sdpa_at(const bench_sdpa_strides *s, size_t b, size_t h, size_t t)
{
    return b * s->sb + h * s->sh + t * s->ld;
}

#endif /* ATTN_BENCH_SDPA_LAYOUT_H */
