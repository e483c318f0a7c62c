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
static inline void attn_sdpa_widths(const attn_sdpa_shape *s, size_t width[4])
{
    width[0] = s->NH * s->hs;      /* Q */
    width[1] = s->NH_kv * s->hs;   /* K */
    width[2] = s->NH_kv * s->hs_v; /* V */
    width[3] = s->NH * s->hs_v;    /* out */
}

static inline int attn_sdpa_resolve_strides(const attn_sdpa_shape *s, const size_t given[4],
                                            size_t ld[4])
{
    size_t width[4];
    attn_sdpa_widths(s, width);
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        ld[i] = given[i] != 0 ? given[i] : width[i];
        ok &= ld[i] >= width[i];
    }
    return ok;
}

/* extent[0..3] = the elements Q, K, V, out span with strides ld (B*Tq rows
 * of Q and out, B*Tk of K and V); false (ATTN_ERR_SIZE_OVERFLOW) when one,
 * or its bytes at element_size, does not fit in size_t. */
static inline int attn_sdpa_extents(const attn_sdpa_shape *s, const size_t ld[4],
                                    size_t element_size, size_t extent[4])
{
    size_t width[4], bytes;
    attn_sdpa_widths(s, width);
    const size_t rows[4] = {s->B * s->Tq, s->B * s->Tk, s->B * s->Tk, s->B * s->Tq};
    for (int i = 0; i < 4; i++)
        if (!attn_rows_extent(rows[i], ld[i], width[i], &extent[i]) ||
            !attn_mul(extent[i], element_size, &bytes))
            return 0;
    return 1;
}

#endif /* ATTN_SDPA_STRIDES_H */
