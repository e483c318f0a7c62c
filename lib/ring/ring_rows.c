/*
 * Row operations of the ring (templated over `real`): copies and sums
 * between strided layouts, and the log-sum-exp merge of a block's
 * attention result into the running one (ring_exec.h).
 *
 * The merge differentiates nothing; it is the split-K combination of
 * attention (as attn's decode split, sdpa_forward.c): for the keys split
 * into sets a and b with row results (out_a, lse_a) and (out_b, lse_b),
 *   m = max(lse_a, lse_b),  lse = m + log1p(e^(min - m)),
 *   out = e^(lse_a - lse) out_a + e^(lse_b - lse) out_b,
 * in double. Special rows follow attn.h's rules as far as two partial rows
 * can: a part with lse = -inf (no weight, out 0) adds nothing; a NaN in a
 * part's out reaches the row even at a weight that underflows to 0 (as a
 * NaN in V does in attn's products); NaN in either lse
 * makes the row NaN; a part with lse = +inf takes the row (out its out,
 * lse +inf), and two such parts share it equally (attn shares it equally
 * among the +inf scores, whose counts the parts do not carry).
 */
#include <math.h>

#include "ring/ring_exec.h"

void FN(ring_copy)(ring_box n, const real *src, attn_sdpa_strides from, real *dst,
                   attn_sdpa_strides to, int add)
{
    for (size_t b = 0; b < n.B; b++)
        for (size_t h = 0; h < n.heads; h++)
            for (size_t t = 0; t < n.rows; t++) {
                const real *s = src + ring_at(from, b, h, t);
                real *d = dst + ring_at(to, b, h, t);
                if (add)
                    for (size_t i = 0; i < n.width; i++)
                        d[i] += s[i];
                else
                    for (size_t i = 0; i < n.width; i++)
                        d[i] = s[i];
            }
}

void FN(ring_pack_kv)(const attn_ring *ring, const FN(ring_args) *a, const ring_strides *x,
                      real *block)
{
    const attn_sdpa_shape s = ring->shape;
    const ring_box k = {s.B, s.NH_kv, s.Tk, s.hs}, v = {s.B, s.NH_kv, s.Tk, s.hs_v};
    FN(ring_copy)(k, a->K, x->st[ATTN_SDPA_K], block, ring_dense(s.Tk, s.NH_kv, s.hs), 0);
    FN(ring_copy)(v, a->V, x->st[ATTN_SDPA_V], block + ring->k_elements,
                  ring_dense(s.Tk, s.NH_kv, s.hs_v), 0);
}

/* The weights of parts a and b and the merged lse. */
static void FN(weights)(double a, double b, double *wa, double *wb, double *lse)
{
    if (isnan(a) || isnan(b)) {
        *wa = *wb = *lse = (double)NAN;
    } else if (b == -(double)INFINITY) {
        *wa = 1.0, *wb = 0.0, *lse = a;
    } else if (a == -(double)INFINITY) {
        *wa = 0.0, *wb = 1.0, *lse = b;
    } else if (a == (double)INFINITY || b == (double)INFINITY) {
        *wa = a == (double)INFINITY ? (b == (double)INFINITY ? 0.5 : 1.0) : 0.0;
        *wb = 1.0 - *wa;
        *lse = (double)INFINITY;
    } else {
        const double m = a > b ? a : b, low = a > b ? b : a;
        *lse = m + log1p(exp(low - m));
        *wa = exp(a - *lse);
        *wb = exp(b - *lse);
    }
}

void FN(ring_merge)(size_t Tq, size_t NH, size_t hs_v, const real *block_out,
                    const real *block_lse, real *out, attn_sdpa_strides o, real *lse,
                    size_t lse_ld)
{
    for (size_t t = 0; t < Tq; t++)
        for (size_t h = 0; h < NH; h++) {
            real *row = out + ring_at(o, 0, h, t);
            const real *part = block_out + (t * NH + h) * hs_v;
            const double b = (double)block_lse[h * Tq + t];
            double wa, wb, merged;
            FN(weights)((double)lse[h * lse_ld + t], b, &wa, &wb, &merged);
            lse[h * lse_ld + t] = (real)merged;
            if (b == -(double)INFINITY) /* no weight in b: its out is 0 (attn.h) */
                continue;
            for (size_t i = 0; i < hs_v; i++)
                row[i] = (real)(wa * (double)row[i] + wb * (double)part[i]);
        }
}
