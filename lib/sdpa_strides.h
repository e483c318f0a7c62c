/*
 * The row strides of an sdpa call (attn.h: ld = 0 means the dense width) and
 * the extent of a strided array, shared by the sdpa calls (sdpa_exec.c) and
 * the ring's (ring/ring_checks.c). Not templated: sizes only.
 */
#ifndef ATTN_SDPA_STRIDES_H
#define ATTN_SDPA_STRIDES_H

#include <stddef.h>

#include <attn/attn.h>

#include "check.h"

/* Elements from the first to past the last of `rows` rows (rows >= 1) of
 * `width`, ld apart; false on overflow. */
static inline int attn_rows_extent(size_t rows, size_t ld, size_t width, size_t *extent)
{
    size_t span;
    return attn_mul(rows - 1, ld, &span) && attn_add(span, width, extent);
}

/* ld[0..3] = the strides of Q, K, V, out (given[i], or the dense width when
 * 0); false (ATTN_ERR_BAD_STRIDE) when one is below its width. The shape is
 * a plan's: its widths are known to fit. */
static inline int attn_sdpa_resolve_strides(const attn_sdpa_shape *s, const size_t given[4],
                                            size_t ld[4])
{
    const size_t width[4] = {s->NH * s->hs, s->NH_kv * s->hs, s->NH_kv * s->hs_v,
                             s->NH * s->hs_v};
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        ld[i] = given[i] != 0 ? given[i] : width[i];
        ok &= ld[i] >= width[i];
    }
    return ok;
}

#endif /* ATTN_SDPA_STRIDES_H */
