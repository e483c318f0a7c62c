/*
 * The strides of an sdpa call (attn.h, "The arrays of one call": batch,
 * head and row strides of Q, K, V and out, 0 meaning dense): resolved,
 * checked (BAD_STRIDE, SIZE_OVERFLOW, BLAS_RANGE) and described as strided
 * arrays for the aliasing checks, shared by the sdpa calls (sdpa_exec.c)
 * and the ring's (ring/ring_checks.c). Not templated: sizes only.
 */
#ifndef ATTN_SDPA_STRIDES_H
#define ATTN_SDPA_STRIDES_H

#include <stddef.h>

#include <attn/attn.h>

#include "core/check.h"
#include "core/strided.h"

/* Elements from the first to past the last of `rows` rows (rows >= 1) of
 * `width`, ld apart; false on overflow. */
static inline int attn_rows_extent(size_t rows, size_t ld, size_t width, size_t *extent)
{
    size_t span;
    return attn_mul(rows - 1, ld, &span) && attn_add(span, width, extent);
}

/* The four arrays of a call, in this order everywhere below. */
enum { ATTN_SDPA_Q, ATTN_SDPA_K, ATTN_SDPA_V, ATTN_SDPA_OUT, ATTN_SDPA_ARRAYS };

/* One array's strides in elements: sequence, head, row. */
typedef struct attn_sdpa_strides {
    size_t sb, sh, ld;
} attn_sdpa_strides;

/* Sequences, heads and rows of each array, and its head size (the row's
 * contiguous run). The shape is a plan's: its products are known to fit. */
static inline void attn_sdpa_dims(const attn_sdpa_shape *s, int array, size_t *heads,
                                  size_t *rows, size_t *head_size)
{
    const int query_side = array == ATTN_SDPA_Q || array == ATTN_SDPA_OUT;
    *heads = query_side ? s->NH : s->NH_kv;
    *rows = query_side ? s->Tq : s->Tk;
    *head_size = array == ATTN_SDPA_Q || array == ATTN_SDPA_K ? s->hs : s->hs_v;
}

/* The array's layout in `unit`s of memory (1: elements; sizeof(real):
 * bytes) at base. */
static inline attn_strided attn_sdpa_strided(const attn_sdpa_shape *s, int array,
                                             const attn_sdpa_strides *st, const void *base,
                                             size_t unit)
{
    size_t heads, rows, head_size;
    attn_sdpa_dims(s, array, &heads, &rows, &head_size);
    const attn_strided x = {base,
                            head_size * unit,
                            {s->B, heads, rows},
                            {s->B > 1 ? st->sb * unit : 0, heads > 1 ? st->sh * unit : 0,
                             rows > 1 ? st->ld * unit : 0},
                            false};
    return x;
}

/* st[i] = given[i] with each 0 resolved to the dense stride of shape s
 * (a dense sequence stride that overflows: SIZE_MAX, whose extent then
 * overflows). */
static inline void attn_sdpa_dense_strides(const attn_sdpa_shape *s,
                                           const attn_sdpa_strides given[ATTN_SDPA_ARRAYS],
                                           attn_sdpa_strides st[ATTN_SDPA_ARRAYS])
{
    for (int i = 0; i < ATTN_SDPA_ARRAYS; i++) {
        size_t heads, rows, head_size;
        attn_sdpa_dims(s, i, &heads, &rows, &head_size);
        st[i].ld = given[i].ld != 0 ? given[i].ld : heads * head_size;
        st[i].sh = given[i].sh != 0 ? given[i].sh : head_size;
        st[i].sb = given[i].sb;
        if (st[i].sb == 0 && !attn_mul(rows, st[i].ld, &st[i].sb))
            st[i].sb = SIZE_MAX;
    }
}

/* Whether each array, with the dimensions of shape `judged` and strides
 * st, places its elements at distinct addresses (false: ATTN_ERR_BAD_STRIDE;
 * strided.h). */
static inline int attn_sdpa_strides_distinct(const attn_sdpa_shape *judged,
                                             const attn_sdpa_strides st[ATTN_SDPA_ARRAYS])
{
    int ok = 1;
    for (int i = 0; i < ATTN_SDPA_ARRAYS; i++) {
        const attn_strided x = attn_sdpa_strided(judged, i, &st[i], NULL, 1);
        ok &= attn_strided_distinct(&x);
    }
    return ok;
}

/* Both of the above on one shape: false when an array's strides place two
 * of its elements at one address. */
static inline int attn_sdpa_resolve_strides(const attn_sdpa_shape *s,
                                            const attn_sdpa_strides given[ATTN_SDPA_ARRAYS],
                                            attn_sdpa_strides st[ATTN_SDPA_ARRAYS])
{
    attn_sdpa_dense_strides(s, given, st);
    return attn_sdpa_strides_distinct(s, st);
}

/* extent[i] = the elements array i spans with strides st[i]; false
 * (ATTN_ERR_SIZE_OVERFLOW) when one, or its bytes at element_size, does
 * not fit in size_t. */
static inline int attn_sdpa_extents(const attn_sdpa_shape *s,
                                    const attn_sdpa_strides st[ATTN_SDPA_ARRAYS],
                                    size_t element_size, size_t extent[ATTN_SDPA_ARRAYS])
{
    size_t bytes;
    for (int i = 0; i < ATTN_SDPA_ARRAYS; i++) {
        const attn_strided x = attn_sdpa_strided(s, i, &st[i], NULL, 1);
        if (!attn_strided_span(&x, &extent[i]) || !attn_mul(extent[i], element_size, &bytes))
            return 0;
    }
    return 1;
}

/* Whether every row stride fits BLAS's integer (ATTN_ERR_BLAS_RANGE). */
static inline int attn_sdpa_rows_in_blas_range(const attn_sdpa_strides st[ATTN_SDPA_ARRAYS])
{
    for (int i = 0; i < ATTN_SDPA_ARRAYS; i++)
        if (st[i].ld > ATTN_BLAS_INT_MAX)
            return 0;
    return 1;
}

#endif /* ATTN_SDPA_STRIDES_H */
