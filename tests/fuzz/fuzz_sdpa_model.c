/*
 * fuzz_api's status model of attn_sdpa_plan_create (oracle 2): the
 * decode split, the sizes a plan needs, its flags, and the saturating
 * arithmetic and strides (take_layout) of the sdpa calls' arrays.
 */
#include "fuzz_sdpa.h"

/* ---- attention on given Q, K, V (sdpa) ------------------------------------------------------ */

/* The own kernel's scratch bound of a worker, attn_gemm_pack_bound for
 * dimensions >= the key tile (lib/kernels/kernels.h: KC 256, NC 512, NR_MAX 64,
 * MC 144, MR_MAX 16), rounded as the plan rounds it: "about 150k elements
 * for the matrix-product kernel" (attn.h). */
#define SDPA_PACK_ELEMENTS ((size_t)(256 * (512 + 64) + (144 + 16) * 256 + 16))

#define SDPA_QUERY_BLOCK ((size_t)128) /* lib/engine/tiling.h */

#define SDPA_TILE_KEYS ((size_t)512)

#define SDPA_BACKWARD_KEYS ((size_t)256) /* lib/engine/sdpa_layout.h: a backward key block */

static size_t ceil_div(size_t n, size_t d)
{
    return n / d + (n % d != 0);
}

/* The work split of lib/engine/sdpa_layout.h (attn.h: "for shapes of fewer than
 * 8 (sequence, key/value head) pairs, partial results of key blocks"): the
 * forward's key splits and the backward's key block groups. Called only
 * once B*NH*Tq*hs is known to fit. */
static void sdpa_splits(sdpa_dims s, size_t *splits, size_t *groups)
{
    const size_t group = s.NH / s.NH_kv;
    const size_t queries = s.Tq < SDPA_QUERY_BLOCK ? s.Tq : SDPA_QUERY_BLOCK;
    /* the most heads of the group (a divisor) whose rows fit a query block */
    size_t heads = 1;
    const size_t most = SDPA_QUERY_BLOCK / queries < group ? SDPA_QUERY_BLOCK / queries : group;
    for (size_t h = most; h >= 1; h--)
        if (group % h == 0) {
            heads = h;
            break;
        }
    const size_t items = s.B * s.NH_kv * (group / heads) * ceil_div(s.Tq, queries);
    const size_t key_tiles = ceil_div(s.Tk, SDPA_TILE_KEYS);
    *splits = 1;
    if (items < 8) {
        *splits = ceil_div(8, items);
        if (*splits > key_tiles)
            *splits = key_tiles;
    }
    const size_t pairs = s.B * s.NH_kv, key_blocks = ceil_div(s.Tk, SDPA_BACKWARD_KEYS);
    *groups = 1;
    if (pairs < 4) {
        *groups = ceil_div(8, pairs);
        if (*groups > key_blocks)
            *groups = key_blocks;
    }
}

/* attn_sdpa_plan_create's SIZE_OVERFLOW: the dense arrays' byte counts, the
 * arena (row sums, partial results, dQ parts; for a 16-bit plan (half) the
 * float copies of Q, K, V, out, in training also of dout, dQ, dK, dV
 * (attn.h, "half precision"); each padded to 64 bytes) and a worker's tile
 * (128*512 scores, 128 rows of hs_v, 3*128 statistics, a row of Tk,
 * rounding); es the arithmetic's element size. */
static int sdpa_sizes_fit(sdpa_dims s, size_t es, unsigned flags, int half)
{
    int ok = 1;
    const size_t q_rows = PRODUCT(&ok, s.B, s.Tq), k_rows = PRODUCT(&ok, s.B, s.Tk);
    const size_t q_width = PRODUCT(&ok, s.NH, s.hs), o_width = PRODUCT(&ok, s.NH, s.hs_v);
    const size_t k_width = PRODUCT(&ok, s.NH_kv, s.hs > s.hs_v ? s.hs : s.hs_v);
    if (!ok)
        return 0;
    PRODUCT(&ok, q_rows, q_width > o_width ? q_width : o_width, es);
    PRODUCT(&ok, k_rows, k_width, es);
    if (!ok)
        return 0;
    size_t splits, groups;
    sdpa_splits(s, &splits, &groups);
    size_t partial_row;
    if (__builtin_add_overflow(s.hs_v, (size_t)2, &partial_row))
        return 0;
    const size_t rows = PRODUCT(&ok, s.B, s.NH, s.Tq);
    const size_t partials = PRODUCT(&ok, rows, splits, partial_row);
    const size_t parts = PRODUCT(&ok, rows, groups, s.hs);
    if (!ok)
        return 0;
    const int inference = (flags & ATTN_INFERENCE) != 0;
    size_t counts[11] = {splits > 1 ? partials : 0, inference ? 0 : rows,
                         !inference && groups > 1 ? parts : 0};
    if (half) {
        const size_t q = PRODUCT(&ok, s.B, s.Tq, s.NH, s.hs);
        const size_t o = PRODUCT(&ok, s.B, s.Tq, s.NH, s.hs_v);
        const size_t k = PRODUCT(&ok, s.B, s.Tk, s.NH_kv, s.hs);
        const size_t v = PRODUCT(&ok, s.B, s.Tk, s.NH_kv, s.hs_v);
        if (!ok)
            return 0;
        const size_t stage[8] = {q, k, v, o, o, q, k, v};
        for (int i = 0; i < (inference ? 4 : 8); i++)
            counts[3 + i] = stage[i];
    }
    size_t at;
    if (!blocks_fit(counts, 11, es, &at))
        return 0;
    size_t tile, head_rows;
    const size_t fixed = SDPA_QUERY_BLOCK * SDPA_TILE_KEYS + 3 * SDPA_QUERY_BLOCK + 32;
    if (__builtin_mul_overflow(SDPA_QUERY_BLOCK, s.hs_v, &head_rows) ||
        __builtin_add_overflow(head_rows, s.Tk, &tile) ||
        __builtin_add_overflow(tile, fixed, &tile) ||
        __builtin_add_overflow(SDPA_PACK_ELEMENTS, tile / 16 * 16, &tile))
        return 0;
    return 1;
}

/* attn_sdpa_plan_create's checks after NULL, dtype and flags; a 16-bit plan
 * computes in float (its sizes and scale are a float plan's, with its float
 * copies) */
attn_status model_sdpa_create(sdpa_dims s, const prec *p, double scale, unsigned flags)
{
    const prec *cp = p->half ? &prec_f32 : p;
    const size_t dims[6] = {s.B, s.NH, s.NH_kv, s.Tq, s.Tk, s.hs};
    if (any_zero(6, dims))
        return ATTN_ERR_ZERO_DIMENSION;
    if (s.NH % s.NH_kv != 0)
        return ATTN_ERR_BAD_SHAPE;
    if (!sdpa_sizes_fit(s, cp->es, flags, p->half != 0))
        return ATTN_ERR_SIZE_OVERFLOW;
    /* the dimensions a product of the engines gets (fit: checked above) */
    const size_t blas[6] = {s.Tk, s.hs, s.hs_v, s.NH * s.hs,
                            s.NH_kv * (s.hs > s.hs_v ? s.hs : s.hs_v), s.NH * s.hs_v};
    if (over_int(6, blas))
        return ATTN_ERR_BLAS_RANGE;
    if (scale_bad(scale, cp->max))
        return ATTN_ERR_BAD_SCALE;
    return ATTN_OK;
}

attn_status model_sdpa_flags(unsigned flags)
{
    return (flags & ~(unsigned)(ATTN_CAUSAL | ATTN_INFERENCE)) != 0 ? ATTN_ERR_BAD_FLAGS : ATTN_OK;
}

/* whether the arrays and the reference of a plan fit the harness's budget */
int sdpa_small(sdpa_dims s)
{
    const double B = (double)s.B, NH = (double)s.NH, NHkv = (double)s.NH_kv, Tq = (double)s.Tq;
    const double Tk = (double)s.Tk, hs = (double)s.hs, hv = (double)s.hs_v;
    const double elements = 3.0 * B * Tq * NH * (hs + hv) + 3.0 * B * Tk * NHkv * (hs + hv) +
                            B * NH * Tq * Tk + 4.0 * B * NH * Tq;
    const double work = B * NH * Tq * Tk * (hs + hv + 2.0);
    const double arena = B * NH * Tq * (8.0 * (hv + 2.0) + 8.0 * hs + 1.0);
    return elements <= (double)CAP_ELEMENTS && work <= (double)CAP_WORK &&
           arena <= 8.0 * (double)CAP_ELEMENTS;
}

/* ---- one call's arguments -------------------------------------------------------------- */

/* a*b and a + b, saturated at SIZE_MAX; (rows-1)*ld + width likewise */
size_t sat_mul(size_t a, size_t b)
{
    size_t p;
    return __builtin_mul_overflow(a, b, &p) ? SIZE_MAX : p;
}

size_t sat_add(size_t a, size_t b)
{
    size_t s;
    return __builtin_add_overflow(a, b, &s) ? SIZE_MAX : s;
}

size_t sat_extent(size_t rows, size_t ld, size_t width)
{
    size_t span;
    return __builtin_mul_overflow(rows - 1, ld, &span) ? SIZE_MAX : sat_add(span, width);
}

/* The strides (sequence, head, row; 0 the dense default) of an array of H
 * heads of w elements in T rows, from a byte b:
 *   0x00-0x3F  all 0: (B,T,H,w) dense
 *   0x40-0x7F  a layout picked by (b >> 3) & 7, tuned by k = b & 7:
 *     0 (B,H,T,w), PyTorch's   ld w, sh T*w, sb H*T*w
 *     1 (B,H,T,w) with gaps    ld w + (k & 3), sh the rows' span + 3 (k >> 2),
 *                              sb the heads' span + 1
 *     2 a cache of T + 1 + k   ld w, sh (T + 1 + k)*w, sb H*sh
 *     3 (B,H,T,w) with sb 0    the dense default T*ld: one head's rows
 *     4 (B,H,T,w), sb - 1      sequences overlapping by an element
 *     5 (B,T,H,w), sb + k      sequences k elements apart (sb given)
 *     6 heads among the rows   ld w + 2, sh w + 1 + k (interleaving rows
 *                              and heads), sb beyond both
 *     7 any                    sb, sh, ld: three dimensions (take_dim)
 *   0x80-0xBF  ld H*w + (b & 7): padded rows
 *   0xC0-0xDF  ld H*w - 1 - (b & 3): too small, or wrapped around to huge
 *   0xE0-0xFF  ld a dimension
 * The strides of a dimension of one entry do not matter (attn.h). */
void take_layout(reader *r, size_t H, size_t T, size_t w, size_t st[3])
{
    const uint8_t b = take(r);
    const size_t k = b & 7, width = sat_mul(H, w);
    st[0] = st[1] = st[2] = 0;
    if (b >= 0xE0) {
        st[2] = take_dim(r);
    } else if (b >= 0xC0) {
        st[2] = width - 1 - (b & 3);
    } else if (b >= 0x80) {
        st[2] = width + k;
    } else if (b >= 0x40) {
        const size_t rows = sat_mul(T, w);
        switch ((b >> 3) & 7) {
        case 0:
            st[2] = w, st[1] = rows, st[0] = sat_mul(H, rows);
            break;
        case 1:
            st[2] = w + (k & 3);
            st[1] = sat_add(sat_extent(T, st[2], w), 3 * (k >> 2));
            st[0] = sat_add(sat_extent(H, st[1], sat_extent(T, st[2], w)), 1);
            break;
        case 2:
            st[2] = w, st[1] = sat_mul(sat_add(T, 1 + k), w), st[0] = sat_mul(H, st[1]);
            break;
        case 3:
            st[2] = w, st[1] = rows;
            break;
        case 4:
            st[2] = w, st[1] = rows, st[0] = sat_mul(H, rows) - 1;
            break;
        case 5:
            st[2] = width, st[1] = w, st[0] = sat_add(sat_mul(T, width), k);
            break;
        case 6:
            st[2] = w + 2, st[1] = w + 1 + k;
            st[0] = sat_add(sat_add(sat_mul(T, st[2]), sat_mul(H, st[1])), w);
            break;
        default:
            st[0] = take_dim(r), st[1] = take_dim(r), st[2] = take_dim(r);
        }
    }
}

/* A mask stride for `exact` (what it steps over): 0, exact, a little more,
 * one less, or any dimension. */
size_t take_mask_stride(reader *r, size_t exact)
{
    const uint8_t b = take(r);
    if (b < 0x40)
        return 0;
    if (b < 0x80)
        return exact;
    if (b < 0xC0)
        return exact + (b & 7);
    if (b < 0xE0)
        return exact - 1;
    return take_dim(r);
}
