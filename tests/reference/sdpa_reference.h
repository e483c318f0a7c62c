/*
 * The naive double-precision reference of the sdpa calls (attn.h, "attention
 * on given Q, K, V"), written from the header's formulas alone, with loops
 * and nothing clever: O(Tq * Tk * hs) per (sequence, query head).
 *
 * For sequence b, query head h, query t, with L_b = key_lengths[b] (Tk when
 * key_lengths is NULL) and g = h / (NH / NH_kv):
 *   p = L_b - Tq + t (may be negative: then no key is causally visible)
 *   key j is visible when j < L_b, and when causal j <= p, and when
 *     window > 0 j > p - window
 *   s_j = scale * <Q[b,t,h], K[b,j,g]> + mask(b,h,t,j)   (visible j only)
 *   P = softmax(s) in double with the maximum subtracted,
 *   out[b,t,h] = sum_j P_j V[b,j,g],  lse[b,h,t] = log sum_j exp(s_j).
 * Special rows (attn.h): no visible key, or every visible s_j = -inf: P = 0,
 * out = 0, lse = -inf. A NaN s_j: P, out and lse all NaN. Entries +inf share
 * the weight equally (the others get 0) and lse = +inf.
 * Keys that are not visible are never read (K, V and the mask entry), so a
 * NaN there cannot reach the reference.
 *
 * The backward differentiates L = sum(out * dout) with the weights
 * recomputed from scratch (not from the library's lse):
 *   D_t = <dout_t, out_t>;  for visible j:  dV_j += P_j dout_t,
 *   dP_j = <dout_t, V_j>,  dS_j = P_j (dP_j - D_t),
 *   dQ_t += scale dS_j K_j,  dK_j += scale dS_j Q_t,
 * dK and dV summed over the NH / NH_kv query heads of a group; rows of dK
 * and dV that no query sees (keys j >= L_b included) are 0.
 */
#ifndef ATTN_TEST_SDPA_REFERENCE_H
#define ATTN_TEST_SDPA_REFERENCE_H

#include <stddef.h>

typedef struct sdpa_ref {
    size_t B, NH, NH_kv, Tq, Tk, hs, hs_v; /* every one > 0; NH % NH_kv == 0 */
    double scale;                          /* the scale itself (> 0) */
    int causal;
    size_t window; /* 0: none */
    /* element i of head h of row (b, t): Q[(b*Tq + t)*ldq + h*hs + i];
     * K[(b*Tk + j)*ldk + g*hs + i], V[(b*Tk + j)*ldv + g*hs_v + i] */
    const double *Q, *K, *V;
    size_t ldq, ldk, ldv; /* the actual row strides (> 0) */
    /* entry (t, j) of (b, h): mask[b*mask_sb + h*mask_sh + t*mask_ld + j], or NULL */
    const double *mask;
    size_t mask_ld, mask_sb, mask_sh;
    const size_t *key_lengths; /* (B), each <= Tk; NULL: all Tk */
} sdpa_ref;

/* 1/sqrt(hs) for scale <= 0, else scale (the header's rule) */
double sdpa_ref_scale(double scale, size_t hs);

/* L_b */
size_t sdpa_ref_length(const sdpa_ref *r, size_t b);

/* whether key j is visible to query t of sequence b */
int sdpa_ref_visible(const sdpa_ref *r, size_t b, size_t t, size_t j);

/* P (Tk entries, 0 for keys not visible) of row (b, h, t) and its lse */
void sdpa_ref_weights(const sdpa_ref *r, size_t b, size_t h, size_t t, double *P, double *lse);

/* out dense (B,Tq,NH,hs_v); lse (B,NH,Tq) or NULL */
void sdpa_ref_forward(const sdpa_ref *r, double *out, double *lse);

/* dout dense (B,Tq,NH,hs_v); dQ dense (B,Tq,NH,hs), dK (B,Tk,NH_kv,hs),
 * dV (B,Tk,NH_kv,hs_v), all overwritten */
void sdpa_ref_backward(const sdpa_ref *r, const double *dout, double *dQ, double *dK,
                       double *dV);

#endif /* ATTN_TEST_SDPA_REFERENCE_H */
