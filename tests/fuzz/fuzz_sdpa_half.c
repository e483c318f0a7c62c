/*
 * fuzz_api's 16-bit sdpa calls (attn.h, "half precision"): the element
 * types bf16 and f16 (prec_bf16, prec_f16: 2-byte elements of Q, K, V,
 * out, dout and the gradients; the mask and lse float, stat_prec), their
 * conversions for get/set, the calls attn_sdpa_forward_bf16/_f16,
 * attn_sdpa_backward_bf16/_f16 and the one-shots attn_sdpa_bf16/_f16, and
 * the forward's numeric oracle.
 *
 * They go through fuzz_sdpa (fuzz_sdpa_steps.c) as the float calls do: an
 * sdpa plan of dtype ATTN_BF16 or ATTN_F16 (take_dtype), its steps in its
 * type or another (DTYPE_MISMATCH every way: step_prec), the one-shot;
 * statuses by the same model (fuzz_sdpa_call.c: extents of 2 bytes an
 * element, 4 for the mask; fuzz_sdpa_model.c: a half plan's sizes are a
 * float plan's plus its float copies of Q, K, V, out (and in training dout
 * and the gradients), its scale bounded by FLT_MAX), untouched buffers on
 * error, the same bytes again, the one-shot equal to its plan, and the
 * backward's structural and finiteness oracles (fuzz_sdpa_oracles.c).
 *
 * The forward's oracle (check_sdpa_half_forward), row by row: the special
 * rows of check_sdpa_forward (no visible key or every visible score -inf:
 * lse -inf and out 0 when V is finite where it may be multiplied by 0; a
 * NaN among the row's visible inputs: out and lse NaN; a +inf mask entry:
 * lse +inf); otherwise, every visible input finite and the scores'
 * partial sums below FLT_MAX/16 (the arithmetic is float), attn.h's bound
 * against the double reference x, l of the same 16-bit inputs:
 *   g = 2^-24 (n + hs + 16) + 2^-23 hs scale max_j sum_i |Q_i K_ji|,
 *   |out - x| <= u |x| + (u_P + 4 g) max_j |V_jc| + eta,
 *   |lse - l| <= 4 g + 2^-23 |l|,
 * u = 2^-8 (bf16) or 2^-11 (f16), u_P = u (bf16) or 0 (f16), n the row's
 * visible keys, max over them, c the element's column (so out is finite).
 * eta is half the type's smallest subnormal (2^-134, 2^-25): rounding an
 * output below the normal range errs by up to eta whatever the arithmetic
 * (an average of 2^-24 and 0 in f16 is 2^-25, a tie that rounds to 0).
 * For bf16, attn_half.h's terms for the bf16 products (their exp, their
 * flush of subnormals): g gains 2^-24 (n + 16) + 2^-126 hs scale (1 +
 * max|Q| + max|K|) (2 max(|Q|, |K|) here; 2^-24 = 2^102 flush), the bound
 * (n + 1) 2^-126 (1 + max|V|).
 */
#include "fuzz_sdpa.h"

const prec prec_bf16 = {0, 2, 0x1.fep127, 0x1p-126, 0x1p-8, 2e-7, ATTN_BF16};

const prec prec_f16 = {0, 2, 65504.0, 0x1p-14, 0x1p-11, 2e-7, ATTN_F16};

const prec *stat_prec(const prec *p)
{
    return p->half ? &prec_f32 : p;
}

const prec *sdpa_prec_of(attn_dtype dtype)
{
    return dtype == ATTN_F64    ? &prec_f64
           : dtype == ATTN_BF16 ? &prec_bf16
           : dtype == ATTN_F16  ? &prec_f16
                                : &prec_f32;
}

attn_dtype sdpa_dtype_of(const prec *p)
{
    return p->half ? (attn_dtype)p->half : p->f64 ? ATTN_F64 : ATTN_F32;
}

/* ---- conversions: bf16 by its bits, f16 decoded by hand ----------------------------------- */

double half_get(const prec *p, uint16_t h)
{
    if (p->half == ATTN_BF16) {
        const uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return (double)f;
    }
    const unsigned e = (h >> 10) & 31u, m = h & 1023u;
    const double v = e == 31  ? (m ? (double)NAN : (double)INFINITY)
                     : e == 0 ? ldexp((double)m, -24)
                              : ldexp((double)(1024u + m), (int)e - 25);
    return (h & 0x8000u) ? -v : v;
}

/* v rounded to float, then to p to nearest even (overflow: infinity, NaN: quiet) */
uint16_t half_set(const prec *p, double v)
{
    const float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    if (p->half == ATTN_BF16) {
        if (a > 0x7F800000u)
            return (uint16_t)(sign | 0x7FC0u);
        return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    }
    if (a > 0x7F800000u)
        return (uint16_t)(sign | 0x7E00u);
    const double x = fabs((double)f);
    if (x >= 65520.0)
        return (uint16_t)(sign | 0x7C00u);
    if (x < 0x1p-14) /* the subnormals' grid of 2^-24 (1024 steps: the smallest normal) */
        return (uint16_t)(sign | (uint32_t)nearbyint(x * 0x1p24));
    int e;
    double n = nearbyint(frexp(x, &e) * 2048.0); /* x = n 2^(e-11), n in [1024, 2048] */
    if (n == 2048.0)
        n = 1024.0, e++;
    return (uint16_t)(sign | (((uint32_t)(e + 14) << 10) + ((uint32_t)n - 1024u)));
}

/* ---- the calls ------------------------------------------------------------------------------ */

attn_status call_sdpa_half(const prec *p, int kind, attn_plan *plan, int null_args,
                           const sdpa_call *a, const sdpa_io *x, const attn_sdpa_shape *shape,
                           double scale, unsigned flags, size_t window)
{
    if (p->half == ATTN_BF16) {
        const attn_sdpa_args_bf16 g = SDPA_ARGS(a, x);
        const attn_sdpa_args_bf16 *gp = null_args ? NULL : &g;
        return kind == 0   ? attn_sdpa_forward_bf16(plan, gp)
               : kind == 1 ? attn_sdpa_backward_bf16(plan, gp, x->dout, x->dQ, x->dK, x->dV)
                           : attn_sdpa_bf16(shape, scale, flags, window, gp);
    }
    const attn_sdpa_args_f16 g = SDPA_ARGS(a, x);
    const attn_sdpa_args_f16 *gp = null_args ? NULL : &g;
    return kind == 0   ? attn_sdpa_forward_f16(plan, gp)
           : kind == 1 ? attn_sdpa_backward_f16(plan, gp, x->dout, x->dQ, x->dK, x->dV)
                       : attn_sdpa_f16(shape, scale, flags, window, gp);
}

/* ---- the forward's oracle (above) ----------------------------------------------------------- */

/* out of row (b, h, t) all NaN (nan) or all 0 */
static void expect_row(const prec *p, sdpa_dims s, const sdpa_call *a, const sdpa_io *x,
                       size_t b, size_t h, size_t t, int nan, const char *why)
{
    const size_t o_at = sdpa_at(a, SO, b, h, t);
    for (size_t c = 0; c < s.hs_v; c++) {
        const double v = get(p, x->out, o_at + c);
        ORACLE(nan ? isnan(v) : v == 0.0, "row (b %zu, h %zu, t %zu) %s: out[%zu] = %g", b, h, t,
               why, c, v);
    }
}

void check_sdpa_half_forward(const prec *p, sdpa_dims s, double scale, int causal,
                             size_t window, const sdpa_call *a, const sdpa_io *x)
{
    const prec *f = &prec_f32;
    const double u = p->u, u_P = p->half == ATTN_BF16 ? u : 0.0;
    const double eta = p->half == ATTN_BF16 ? 0x1p-134 : 0x1p-25;
    const size_t group = s.NH / s.NH_kv;
    double *z = doubles(s.Tk), *w = doubles(s.Tk);
    for (size_t b = 0; b < s.B; b++)
        for (size_t h = 0; h < s.NH; h++)
            for (size_t t = 0; t < s.Tq; t++) {
                const size_t g = h / group, l_at = (b * s.NH + h) * s.Tq + t;
                const double lse = x->lse != NULL ? get(f, x->lse, l_at) : (double)NAN;
                size_t lo, hi;
                sdpa_visible(s, causal, window, x->lengths, b, t, &lo, &hi);
                int v_finite = 1; /* on every key the row may multiply by 0 ([0, hi)) */
                for (size_t j = 0; j < hi; j++)
                    for (size_t c = 0; c < s.hs_v; c++)
                        v_finite &= isfinite(get(p, x->V, sdpa_at(a, SV, b, g, j) + c)) != 0;
                if (hi <= lo) {
                    if (v_finite)
                        expect_row(p, s, a, x, b, h, t, 0, "sees no key");
                    ORACLE(x->lse == NULL || lse == -(double)INFINITY,
                           "row (b %zu, h %zu, t %zu) sees no key: lse %g", b, h, t, lse);
                    continue;
                }
                const size_t q_at = sdpa_at(a, SQ, b, h, t);
                int has_nan = 0, finite = 1, plus_inf = 0, bounded = 1;
                double m = -(double)INFINITY, S = 0.0, qk_max = 0.0;
                for (size_t i = 0; i < s.hs; i++) {
                    has_nan |= isnan(get(p, x->Q, q_at + i)) != 0;
                    finite &= isfinite(get(p, x->Q, q_at + i)) != 0;
                    qk_max = fmax(qk_max, fabs(get(p, x->Q, q_at + i)));
                }
                for (size_t j = lo; j < hi; j++) {
                    const size_t k_at = sdpa_at(a, SK, b, g, j);
                    double dot = 0.0, bd = 0.0;
                    for (size_t i = 0; i < s.hs; i++) {
                        const double q = get(p, x->Q, q_at + i), k = get(p, x->K, k_at + i);
                        has_nan |= isnan(k) != 0;
                        finite &= isfinite(k) != 0;
                        dot += q * k;
                        bd += fabs(q * k);
                        qk_max = fmax(qk_max, fabs(k));
                    }
                    const double mk =
                        x->mask != NULL
                            ? get(f, x->mask, b * a->mask_sb + h * a->mask_sh + t * a->mask_ld + j)
                            : 0.0;
                    has_nan |= isnan(mk) != 0;
                    plus_inf |= mk == (double)INFINITY;
                    bounded &= bd <= f->max / 16 && scale * bd <= f->max / 16;
                    z[j] = scale * dot + mk;
                    S = fmax(S, bd);
                    m = fmax(m, z[j]);
                }
                if (has_nan) {
                    expect_row(p, s, a, x, b, h, t, 1, "has a NaN input");
                    ORACLE(x->lse == NULL || isnan(lse),
                           "row (b %zu, h %zu, t %zu) has a NaN input: lse %g", b, h, t, lse);
                    continue;
                }
                if (!finite || !bounded)
                    continue;
                if (plus_inf) {
                    ORACLE(x->lse == NULL || lse == (double)INFINITY,
                           "row (b %zu, h %zu, t %zu) has a +inf score: lse %g", b, h, t, lse);
                    continue;
                }
                if (m == -(double)INFINITY) {
                    if (v_finite)
                        expect_row(p, s, a, x, b, h, t, 0, "fully masked");
                    ORACLE(x->lse == NULL || lse == -(double)INFINITY,
                           "row (b %zu, h %zu, t %zu) fully masked: lse %g", b, h, t, lse);
                    continue;
                }
                if (!v_finite)
                    continue;
                /* attn.h's bound (above), with eta; for bf16 the flush of
                 * subnormals by the bf16 products (attn.h) */
                const size_t n = hi - lo;
                const double flush = p->half == ATTN_BF16 ? 0x1p-126 : 0.0;
                const double gb = 0x1p-24 * (double)(n + s.hs + 16) +
                                  0x1p-23 * (double)s.hs * scale * S +
                                  flush * (0x1p+102 * (double)(n + 16) +
                                           (double)s.hs * scale * (1.0 + 2.0 * qk_max));
                exact_sum total = {0.0, 0.0};
                for (size_t j = lo; j < hi; j++) {
                    w[j] = exp(z[j] - m); /* 0 for -inf */
                    exact_add(&total, w[j]);
                }
                const double sum = exact_value(&total);
                const size_t o_at = sdpa_at(a, SO, b, h, t);
                for (size_t c = 0; c < s.hs_v; c++) {
                    exact_sum y = {0.0, 0.0};
                    double vmax = 0.0;
                    for (size_t j = lo; j < hi; j++) {
                        const double v = get(p, x->V, sdpa_at(a, SV, b, g, j) + c);
                        exact_add(&y, w[j] / sum * v);
                        vmax = fmax(vmax, fabs(v));
                    }
                    const double ref = exact_value(&y), got = get(p, x->out, o_at + c);
                    const double bound = u * fabs(ref) + (u_P + 4.0 * gb) * vmax + eta +
                                         flush * (double)(n + 1) * (1.0 + vmax);
                    ORACLE(fabs(got - ref) <= bound,
                           "out (b %zu, h %zu, t %zu)[%zu] = %.9g, reference %.9g, attn.h's "
                           "bound %.3g (g %.3g, %zu keys, max|V| %.3g)",
                           b, h, t, c, got, ref, bound, gb, n, vmax);
                }
                if (x->lse != NULL) {
                    const double ref = m + log(sum);
                    const double bound = 4.0 * gb + 0x1p-23 * fabs(ref);
                    ORACLE(fabs(lse - ref) <= bound,
                           "lse (b %zu, h %zu, t %zu) = %.9g, reference %.9g, attn.h's bound %.3g",
                           b, h, t, lse, ref, bound);
                }
            }
}
