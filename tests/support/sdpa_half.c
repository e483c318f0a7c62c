/* The half-precision sdpa suites' types, calls, problems and checks (sdpa_half.h). */
#include "support/sdpa_half.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "support/talloc.h"

_Static_assert(sizeof(attn_bf16) == 2 && sizeof(attn_f16) == 2, "16-bit element types");

/* ---- the reference conversions (sdpa_half.h) --------------------------------------- */

static double bf16_decode(uint16_t bits)
{
    const uint32_t u = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

static double f16_decode(uint16_t bits)
{
    const unsigned e = (bits >> 10) & 31u, f = bits & 1023u;
    double v;
    if (e == 31)
        v = f != 0 ? (double)NAN : HUGE_VAL;
    else if (e == 0)
        v = ldexp((double)f, -24);
    else
        v = ldexp((double)(1024u + f), (int)e - 25);
    return copysign(v, (bits & 0x8000u) ? -1.0 : 1.0);
}

/* the magnitude of bf16 bits m <= 0x7F80, 0x7F80 standing for 2^128 */
static double bf16_magnitude(uint32_t m)
{
    const uint32_t e = m >> 7, f = m & 127u;
    return e == 0 ? ldexp((double)f, -133) : ldexp((double)(128u + f), (int)e - 134);
}

/* lo or lo + 1, whichever is nearer a (dl, dh its distances); a tie to the even one */
static uint32_t nearest_even(uint32_t lo, double dl, double dh)
{
    if (dl < dh)
        return lo;
    if (dh < dl)
        return lo + 1;
    return (lo & 1u) ? lo + 1 : lo;
}

static uint16_t bf16_encode(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    const uint32_t sign = (u >> 16) & 0x8000u;
    if (isnan(x))
        return (uint16_t)(sign | 0x7FC0u);
    if (isinf(x))
        return (uint16_t)(sign | 0x7F80u);
    const uint32_t lo = (u & 0x7FFFFFFFu) >> 16;
    const double a = fabs((double)x);
    /* both distances are exact in double: a has 24 significant bits, the
     * candidates 8, all within a factor 2 of a */
    const double dl = a - bf16_magnitude(lo), dh = bf16_magnitude(lo + 1) - a;
    return (uint16_t)(sign | nearest_even(lo, dl, dh));
}

/* every positive finite f16 (0x0000 to 0x7BFF), increasing */
static double f16_table[0x7C00];
static int f16_table_ready;

static uint16_t f16_encode(float x)
{
    if (!f16_table_ready) {
        for (uint32_t i = 0; i < 0x7C00u; i++)
            f16_table[i] = f16_decode((uint16_t)i);
        f16_table_ready = 1;
    }
    const double d = (double)x;
    const uint32_t sign = signbit(d) ? 0x8000u : 0u;
    if (isnan(d))
        return (uint16_t)(sign | 0x7E00u);
    const double a = fabs(d);
    if (a >= 65520.0)
        return (uint16_t)(sign | 0x7C00u);
    uint32_t lo = 0, hi = 0x7BFF;
    while (lo < hi) { /* the largest entry <= a */
        const uint32_t mid = (lo + hi + 1) / 2;
        if (f16_table[mid] <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == 0x7BFF)
        return (uint16_t)(sign | lo);
    const double dl = a - f16_table[lo], dh = f16_table[lo + 1] - a;
    return (uint16_t)(sign | nearest_even(lo, dl, dh));
}

static void bf16_narrow(const float *src, void *dst, size_t n)
{
    attn_bf16_from_f32(src, dst, n);
}

static void bf16_widen(const void *src, float *dst, size_t n)
{
    attn_bf16_to_f32(src, dst, n);
}

static void f16_narrow(const float *src, void *dst, size_t n)
{
    attn_f16_from_f32(src, dst, n);
}

static void f16_widen(const void *src, float *dst, size_t n)
{
    attn_f16_to_f32(src, dst, n);
}

const half_type half_bf16 = {"bf16",      ATTN_BF16,   0x1p-8,      0x1p-8,
                             0x1.fep127,  0x1p-134,    0x0040,      0x7F80,
                             bf16_decode, bf16_encode, bf16_narrow, bf16_widen};
const half_type half_f16 = {"f16",      ATTN_F16,   0x1p-11,    0.0,
                            65504.0,    0x1p-25,    0x0200,     0x7C00,
                            f16_decode, f16_encode, f16_narrow, f16_widen};

const half_type *half_other(const half_type *ht)
{
    return ht == &half_bf16 ? &half_f16 : &half_bf16;
}

int half_is_nan(const half_type *ht, uint16_t bits)
{
    return (bits & ht->inf) == ht->inf && (bits & (0x7FFFu & ~ht->inf)) != 0;
}

uint16_t half_get_bits(const void *buf, size_t i)
{
    uint16_t b;
    memcpy(&b, (const unsigned char *)buf + 2 * i, 2);
    return b;
}

void half_set_bits(void *buf, size_t i, uint16_t bits)
{
    memcpy((unsigned char *)buf + 2 * i, &bits, 2);
}

double half_round(const half_type *ht, double x)
{
    return ht->decode(ht->encode((float)x));
}

/* ---- typed calls ------------------------------------------------------------------- */

#define HALF_ARGS(type, elem)                                                              \
    static type args_##elem(const sdpa_io *io)                                             \
    {                                                                                      \
        type a;                                                                            \
        memset(&a, 0, sizeof a);                                                           \
        a.Q = io->Q, a.ldq = io->ldq, a.K = io->K, a.ldk = io->ldk;                        \
        a.V = io->V, a.ldv = io->ldv, a.mask = io->mask;                                   \
        a.mask_ld = io->mask_ld, a.mask_sb = io->mask_sb, a.mask_sh = io->mask_sh;         \
        a.key_lengths = io->key_lengths, a.out = io->out, a.ldo = io->ldo;                 \
        a.lse = io->lse, a.sbq = io->sbq, a.shq = io->shq, a.sbk = io->sbk;                \
        a.shk = io->shk, a.sbv = io->sbv, a.shv = io->shv, a.sbo = io->sbo;                \
        a.sho = io->sho;                                                                   \
        return a;                                                                          \
    }
HALF_ARGS(attn_sdpa_args_bf16, bf16)
HALF_ARGS(attn_sdpa_args_f16, f16)
#undef HALF_ARGS

attn_status half_forward(const half_type *ht, attn_plan *plan, const sdpa_io *io)
{
    if (ht->dtype == ATTN_BF16) {
        const attn_sdpa_args_bf16 a = io != NULL ? args_bf16(io) : (attn_sdpa_args_bf16){0};
        return attn_sdpa_forward_bf16(plan, io != NULL ? &a : NULL);
    }
    const attn_sdpa_args_f16 a = io != NULL ? args_f16(io) : (attn_sdpa_args_f16){0};
    return attn_sdpa_forward_f16(plan, io != NULL ? &a : NULL);
}

attn_status half_backward(const half_type *ht, attn_plan *plan, const sdpa_io *io,
                          const void *dout, void *dQ, void *dK, void *dV)
{
    if (ht->dtype == ATTN_BF16) {
        const attn_sdpa_args_bf16 a = io != NULL ? args_bf16(io) : (attn_sdpa_args_bf16){0};
        return attn_sdpa_backward_bf16(plan, io != NULL ? &a : NULL, dout, dQ, dK, dV);
    }
    const attn_sdpa_args_f16 a = io != NULL ? args_f16(io) : (attn_sdpa_args_f16){0};
    return attn_sdpa_backward_f16(plan, io != NULL ? &a : NULL, dout, dQ, dK, dV);
}

attn_status half_one_shot(const half_type *ht, const attn_sdpa_shape *shape, double scale,
                          unsigned flags, size_t window, const sdpa_io *io)
{
    if (ht->dtype == ATTN_BF16) {
        const attn_sdpa_args_bf16 a = io != NULL ? args_bf16(io) : (attn_sdpa_args_bf16){0};
        return attn_sdpa_bf16(shape, scale, flags, window, io != NULL ? &a : NULL);
    }
    const attn_sdpa_args_f16 a = io != NULL ? args_f16(io) : (attn_sdpa_args_f16){0};
    return attn_sdpa_f16(shape, scale, flags, window, io != NULL ? &a : NULL);
}

/* ---- problems ----------------------------------------------------------------------- */

static void dims_of(const hproblem *pr, int a, size_t *H, size_t *T, size_t *w)
{
    const hcase *c = &pr->c;
    *H = a == 0 || a == 3 ? c->NH : c->NH_kv;
    *T = a == 0 || a == 3 ? c->Tq : c->Tk;
    *w = a == 0 || a == 1 ? c->hs : pr->hs_v;
}

static sdpa_view view_make(half_layout l, size_t B, size_t H, size_t T, size_t w)
{
    sdpa_view v = {B, H, T, w, 0, 0, 0, 0};
    if (l == HL_BHSD)
        v.ld = w, v.sh = T * w, v.sb = H * v.sh;
    else if (l == HL_CACHE)
        v.ld = w, v.sh = (T + 5 + T / 8) * w, v.sb = H * v.sh;
    else if (l == HL_PADDED)
        v.ld = H * w + 3, v.sh = w, v.sb = T * v.ld + 5;
    else
        v.ld = H * w, v.sh = w, v.sb = T * v.ld;
    return v;
}

size_t hproblem_extent(const hproblem *pr, int a)
{
    return sdpa_view_end(&pr->view[a]);
}

size_t half_dense_index(const hproblem *pr, int a, size_t b, size_t h, size_t t)
{
    size_t H, T, w;
    dims_of(pr, a, &H, &T, &w);
    return ((b * T + t) * H + h) * w;
}

/* the dense array a (0 Q, 1 K, 2 V, 3 dout) and its buffer */
static double *dense_of(hproblem *pr, int a)
{
    double *d[4] = {pr->Q, pr->K, pr->V, pr->dout};
    return d[a];
}

static void *buffer_of(hproblem *pr, int a)
{
    void *d[4] = {pr->q, pr->k, pr->v, pr->dout_h};
    return d[a];
}

void half_poke(hproblem *pr, int a, size_t b, size_t h, size_t t, size_t i, double x)
{
    const uint16_t bits = pr->ht->encode((float)x);
    dense_of(pr, a)[half_dense_index(pr, a, b, h, t) + i] = pr->ht->decode(bits);
    half_set_bits(buffer_of(pr, a), sdpa_view_index(&pr->view[a], b, h, t) + i, bits);
}

static double normal_half(const half_type *ht, test_rng *rng, double gain)
{
    return half_round(ht, gain * rng_normal(rng));
}

static void mask_make(hproblem *pr, test_rng *rng)
{
    const hcase *c = &pr->c;
    const size_t head = c->Tq * c->Tk;
    switch (c->mask) {
    case HM_FULL:
        pr->mask_ld = c->Tk, pr->mask_sh = head, pr->mask_sb = c->NH * head;
        pr->n_mask = c->B * c->NH * head;
        break;
    case HM_KEYPAD:
        pr->mask_sb = c->Tk, pr->n_mask = c->B * c->Tk;
        break;
    case HM_HEADS:
        pr->mask_ld = c->Tk, pr->mask_sb = head, pr->n_mask = c->B * head;
        break;
    case HM_BATCH:
        pr->mask_ld = c->Tk, pr->mask_sh = head, pr->n_mask = c->NH * head;
        break;
    case HM_ROW:
        pr->n_mask = c->Tk;
        break;
    default:
        return;
    }
    pr->mask = talloc_doubles(pr->n_mask);
    pr->mask_f = talloc(pr->n_mask * sizeof(float));
    for (size_t i = 0; i < pr->n_mask; i++) {
        pr->mask[i] = (double)(float)rng_normal(rng);
        if (rng_uniform(rng) < 0.15)
            pr->mask[i] = -HUGE_VAL;
        if (c->masked_rows && c->mask == HM_FULL && (i / c->Tk) % 5 == 2)
            pr->mask[i] = -HUGE_VAL;
        pr->mask_f[i] = (float)pr->mask[i];
    }
}

hproblem hproblem_make(const half_type *ht, const hcase *c, test_rng *rng)
{
    hproblem pr;
    memset(&pr, 0, sizeof pr);
    pr.ht = ht;
    pr.c = *c;
    pr.hs_v = c->hs_v ? c->hs_v : c->hs;
    pr.zero_strides = c->layout == HL_DENSE;
    const double gains[4] = {c->gain > 0.0 ? c->gain : 1.0, c->gain > 0.0 ? c->gain : 1.0, 1.0,
                             1.0};
    for (int a = 0; a < 4; a++) {
        size_t H, T, w;
        dims_of(&pr, a, &H, &T, &w);
        pr.view[a] = view_make(c->layout, c->B, H, T, w);
        double *d = talloc_doubles(c->B * T * H * w);
        for (size_t i = 0; i < c->B * T * H * w; i++)
            d[i] = normal_half(ht, rng, gains[a]);
        if (a == 0)
            pr.Q = d;
        else if (a == 1)
            pr.K = d;
        else if (a == 2)
            pr.V = d;
        else
            pr.dout = d;
    }
    /* keys j >= L_b do not exist: NaN, never read */
    for (size_t b = 0; c->lengths != NULL && b < c->B; b++)
        for (size_t j = c->lengths[b]; j < c->Tk; j++) {
            for (size_t i = 0; i < c->NH_kv * c->hs; i++)
                pr.K[(b * c->Tk + j) * c->NH_kv * c->hs + i] = (double)NAN;
            for (size_t i = 0; i < c->NH_kv * pr.hs_v; i++)
                pr.V[(b * c->Tk + j) * c->NH_kv * pr.hs_v + i] = (double)NAN;
        }
    /* the buffers: NaN wherever the layout has no element */
    const uint16_t nan_bits = (uint16_t)(ht->inf | ht->quiet);
    for (int a = 0; a < 4; a++) {
        size_t H, T, w;
        dims_of(&pr, a, &H, &T, &w);
        const size_t n = hproblem_extent(&pr, a);
        void *buf = talloc(2 * n);
        for (size_t i = 0; i < n; i++)
            half_set_bits(buf, i, nan_bits);
        const double *d = dense_of(&pr, a);
        for (size_t b = 0; b < c->B; b++)
            for (size_t h = 0; h < H; h++)
                for (size_t t = 0; t < T; t++)
                    for (size_t i = 0; i < w; i++)
                        half_set_bits(buf, sdpa_view_index(&pr.view[a], b, h, t) + i,
                                      ht->encode((float)d[half_dense_index(&pr, a, b, h, t) + i]));
        if (a == 0)
            pr.q = buf;
        else if (a == 1)
            pr.k = buf;
        else if (a == 2)
            pr.v = buf;
        else
            pr.dout_h = buf;
    }
    mask_make(&pr, rng);
    pr.scale = sdpa_ref_scale(0.0, c->hs);
    const sdpa_ref r = {c->B, c->NH, c->NH_kv, c->Tq, c->Tk, c->hs, pr.hs_v, pr.scale,
                        c->causal != 0, c->window, pr.Q, pr.K, pr.V, c->NH * c->hs,
                        c->NH_kv * c->hs, c->NH_kv * pr.hs_v, pr.mask, pr.mask_ld, pr.mask_sb,
                        pr.mask_sh, c->lengths};
    pr.ref = r;
    pr.out = talloc_doubles(c->B * c->Tq * c->NH * pr.hs_v);
    pr.lse = talloc_doubles(c->B * c->NH * c->Tq);
    sdpa_ref_forward(&pr.ref, pr.out, pr.lse);
    return pr;
}

void hproblem_refresh(hproblem *pr)
{
    sdpa_ref_forward(&pr->ref, pr->out, pr->lse);
}

attn_sdpa_shape hproblem_shape(const hproblem *pr)
{
    const hcase *c = &pr->c;
    const attn_sdpa_shape s = {c->B, c->NH, c->NH_kv, c->Tq, c->Tk, c->hs, c->hs_v};
    return s;
}

sdpa_io hproblem_io(const hproblem *pr, void *out, float *lse)
{
    sdpa_io io;
    memset(&io, 0, sizeof io);
    io.Q = pr->q, io.K = pr->k, io.V = pr->v, io.out = out, io.lse = lse;
    io.mask = pr->mask_f;
    io.mask_ld = pr->mask_ld, io.mask_sb = pr->mask_sb, io.mask_sh = pr->mask_sh;
    io.key_lengths = pr->c.lengths;
    if (!pr->zero_strides) {
        const sdpa_view *v = pr->view;
        io.sbq = v[0].sb, io.shq = v[0].sh, io.ldq = v[0].ld;
        io.sbk = v[1].sb, io.shk = v[1].sh, io.ldk = v[1].ld;
        io.sbv = v[2].sb, io.shv = v[2].sh, io.ldv = v[2].ld;
        io.sbo = v[3].sb, io.sho = v[3].sh, io.ldo = v[3].ld;
    }
    return io;
}

double *half_gather(const hproblem *pr, int a, const void *buf)
{
    size_t H, T, w;
    dims_of(pr, a, &H, &T, &w);
    double *d = talloc_doubles(pr->c.B * T * H * w);
    for (size_t b = 0; b < pr->c.B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t t = 0; t < T; t++)
                for (size_t i = 0; i < w; i++)
                    d[half_dense_index(pr, a, b, h, t) + i] = pr->ht->decode(
                        half_get_bits(buf, sdpa_view_index(&pr->view[a], b, h, t) + i));
    return d;
}

int half_unaddressed_intact(const hproblem *pr, int a, const void *buf, const void *before,
                            size_t elements)
{
    unsigned char *marks = talloc(elements);
    memset(marks, 0, elements);
    sdpa_view_mark(&pr->view[a], marks);
    for (size_t i = 0; i < elements; i++)
        if (!marks[i] && half_get_bits(buf, i) != half_get_bits(before, i))
            return 0;
    return 1;
}

void *half_sentinel_buffer(size_t elements, void **before)
{
    void *b = talloc(2 * elements);
    sentinel_fill(b, 2 * elements);
    *before = talloc(2 * elements);
    memcpy(*before, b, 2 * elements);
    return b;
}

/* ---- the forward's bound (attn.h, "half precision") -------------------------------------- */

size_t half_row_terms(const hproblem *pr, size_t b, size_t h, size_t t, double *S)
{
    const hcase *c = &pr->c;
    const size_t g = h / (c->NH / c->NH_kv);
    const double *q = pr->Q + half_dense_index(pr, 0, b, h, t);
    size_t n = 0;
    *S = 0.0;
    for (size_t j = 0; j < c->Tk; j++) {
        if (!sdpa_ref_visible(&pr->ref, b, t, j))
            continue;
        const double *k = pr->K + half_dense_index(pr, 1, b, g, j);
        double s = 0.0;
        for (size_t i = 0; i < c->hs; i++)
            s += fabs(q[i] * k[i]);
        *S = fmax(*S, s);
        n++;
    }
    return n;
}

void half_check_forward(const hproblem *pr, const double *out, const float *lse,
                        check_worst *worst, size_t *nonzero, const char *what)
{
    const hcase *c = &pr->c;
    const half_type *ht = pr->ht;
    const size_t hv = pr->hs_v, group = c->NH / c->NH_kv;
    double ratio = 0.0, lratio = 0.0, loose = 0.0, *vmaxes = talloc_doubles(hv);
    char where[256] = "", lwhere[256] = "";
    size_t special_bad = 0, nz = 0;
    char special[256] = "";
    for (size_t b = 0; b < c->B; b++)
        for (size_t h = 0; h < c->NH; h++)
            for (size_t t = 0; t < c->Tq; t++) {
                const size_t g = h / group, li = (b * c->NH + h) * c->Tq + t;
                const double rl = pr->lse[li], l = (double)lse[li];
                const double *x = pr->out + half_dense_index(pr, 3, b, h, t);
                const double *o = out + half_dense_index(pr, 3, b, h, t);
                if (rl == HUGE_VAL) { /* +inf scores: their keys' mean, lse +inf */
                    int ok = l == HUGE_VAL;
                    for (size_t i = 0; i < hv; i++) /* 2^-19: sdpa_half.h */
                        ok &= fabs(o[i] - x[i]) <= ht->u * fabs(x[i]) + 0x1p-19;
                    if (!ok && special_bad++ == 0)
                        snprintf(special, sizeof special,
                                 "+inf row (b %zu, h %zu, t %zu): lse %g, out[0] %g, reference "
                                 "%g", b, h, t, l, o[0], x[0]);
                    continue;
                }
                if (isnan(rl) || rl == -HUGE_VAL) { /* NaN rows; rows without weight */
                    int ok = isnan(rl) ? isnan(l) : l == -HUGE_VAL;
                    for (size_t i = 0; i < hv; i++)
                        ok &= isnan(rl) ? isnan(o[i]) : o[i] == 0.0;
                    if (!ok && special_bad++ == 0)
                        snprintf(special, sizeof special,
                                 "row (b %zu, h %zu, t %zu): reference lse %g, got lse %g, "
                                 "out[0] %g", b, h, t, rl, l, o[0]);
                    continue;
                }
                double S;
                const size_t n = half_row_terms(pr, b, h, t, &S);
                /* attn_half.h: bf16 products add 2^-24 (n + 16) (the exp) */
                const double gb = 0x1p-24 * (double)(n + c->hs + 16) +
                                  0x1p-23 * (double)c->hs * pr->scale * S +
                                  (ht->dtype == ATTN_BF16 ? 0x1p-24 * (double)(n + 16) : 0.0);
                const double lb = 4.0 * gb + 0x1p-23 * fabs(rl), le = fabs(l - rl);
                if (!(le <= lratio * lb) || isnan(le)) {
                    lratio = isnan(le) ? HUGE_VAL : le / lb;
                    snprintf(lwhere, sizeof lwhere,
                             "lse (b %zu, h %zu, t %zu) = %.9g, reference %.9g, bound %.3g", b, h,
                             t, l, rl, lb);
                }
                for (size_t i = 0; i < hv; i++)
                    vmaxes[i] = 0.0;
                for (size_t j = 0; j < c->Tk; j++)
                    if (sdpa_ref_visible(&pr->ref, b, t, j)) {
                        const double *v = pr->V + half_dense_index(pr, 2, b, g, j);
                        for (size_t i = 0; i < hv; i++)
                            vmaxes[i] = fmax(vmaxes[i], fabs(v[i]));
                    }
                /* attn_half.h: bf16 products flush subnormals (its g term
                 * of 2^-126 d scale (...) is below any double difference
                 * here and left out: a tighter bound) */
                const double flush = ht->dtype == ATTN_BF16 ? 0x1p-126 * (double)(n + 1) : 0.0;
                for (size_t i = 0; i < hv; i++) {
                    const double vmax = vmaxes[i];
                    const double bound = ht->u * fabs(x[i]) + (ht->u_P + 4.0 * gb) * vmax +
                                         ht->tiny + flush * (1.0 + vmax);
                    const double e = fabs(o[i] - x[i]);
                    nz += e != 0.0;
                    if (vmax > 0.0)
                        loose = fmax(loose, bound / vmax);
                    if (!(e <= ratio * bound) || isnan(e)) {
                        ratio = isnan(e) ? HUGE_VAL : e / bound;
                        snprintf(where, sizeof where,
                                 "out (b %zu, h %zu, t %zu)[%zu] = %.9g, reference %.9g, bound "
                                 "%.3g (n %zu, g %.3g, max|V| %.3g)",
                                 b, h, t, i, o[i], x[i], bound, n, gb, vmax);
                    }
                }
            }
    expect_true(special_bad == 0, "%s: %zu NaN, weightless or +inf rows wrong, first %s", what,
                special_bad, special);
    expect_within(worst, ratio, 1.0, "%s: error/bound of out, worst %s", what, where);
    expect_within(worst, lratio, 1.0, "%s: error/bound of lse, worst %s", what, lwhere);
    /* the bound is informative: under 1/16 of the values it averages, so a
     * wrong key, scale or mask that moves an output that far fails */
    expect_true(loose <= 1.0 / 16, "%s: the bound reaches %.3g of max|V|", what, loose);
    if (nonzero != NULL)
        *nonzero += nz;
}
