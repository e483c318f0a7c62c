/*
 * The check of an sdpa configuration before it is timed: a naive reference
 * in double (plain loops over the visible keys of each query, sdpa_config.h)
 * on the call's own inputs, compared with what attn wrote.
 *
 * Every array is read through its layout's strides (sdpa_layout.h), so a
 * stride attn got wrong fails the check. Per (sequence b, query head h,
 * query t), g = h / (NH/NH_kv):
 *   s_j = <Q[b,t,h], K[b,j,g]> / sqrt(hs) + mask(b,h,t,j)   (visible j)
 *   lse = log sum_j exp(s_j),  out = sum_j exp(s_j - lse) V[b,j,g]
 *   (no visible key, or all s_j = -inf: out = 0, lse = -inf)
 * Backward of sum(out * dout), D_t = <dout_t, out_t>:
 *   P_tj = exp(s_tj - lse_t), dS_tj = P_tj (<dout_t, V_j> - D_t)
 *   dQ_t = sum_j dS_tj K_j / sqrt(hs)
 *   dK_j = sum_{h in g} sum_t dS_tj Q_t / sqrt(hs),  dV_j = sum_{h in g} sum_t P_tj dout_t
 *   (0 for keys no query sees, the slots beyond key_lengths included)
 *
 * What is compared. Small configurations (the reference's multiply-adds at
 * most BENCH_SDPA_FULL_CHECK_MACS) or --check-rows 0: everything: every
 * row of out (and lse, dQ) and every key row of dK, dV, the backward's lse_t
 * and D_t computed by the reference. Larger ones: the first and the last
 * sequence; the query heads of the first and the last key/value head; in
 * each, --check-rows query rows spread evenly over [0, Tq) (both ends) for
 * out, lse and dQ, and --check-rows key rows spread over [0, Tk) plus the
 * keys L_b - 1 and L_b for dK and dV; those key rows take lse_t and D_t of
 * every query from attn's own forward (its lse and out), which is what
 * attn_sdpa_backward differentiates from (attn.h), the rows compared above
 * vouching for them.
 *
 * Error per array: max |attn - ref| / max |ref| over the compared entries
 * (an lse of -inf must be -inf exactly; a NaN anywhere fails); the largest
 * over the arrays is compared with the run command's tolerances: forward
 * 1e-4 (f32) / 1e-10 (f64), backward rows 1e-3 / 1e-9.
 *
 * Half types (bf16, f16). The reference runs on the inputs as attn got
 * them, widened to float exactly (Q, K, V, dout; the mask and lse are
 * float), and attn's outputs are widened the same way. Each array has its
 * own tolerance, and the worst array is the one with the largest share
 * error / tolerance. out and lse follow attn.h's bound: with u = 2^-8
 * (bf16) or 2^-11 (f16), u_P = u (bf16) or 0 (f16), n a row's visible
 * keys, d = hs and g = 2^-24 (n + d + 16) + 2^-23 d scale max_j sum_i
 * |Q_i K_ji| (scale 1/sqrt(hs)), every entry may be off by
 *   out: u |x| + (u_P + 4 g) max_j max_i |V_ji|      lse: 4 g + 2^-23 |lse|
 * (x the reference), and the tolerance is the largest of these bounds over
 * the compared entries divided by max |ref| (the error's own
 * normalization): a row within its bound never fails. The backward, attn.h
 * says, computes in float from the half inputs and dout, out recomputed in
 * float (the row sums D_t = <dout_t, out_t> carry no rounding of out;
 * where its products are bf16, out read as given and P, dS rounded), and
 * rounds each gradient once: dQ, dK and dV get BENCH_GRAD_TOLERANCE_F32
 * (the f32 backward's arithmetic) plus their largest u |x| over max |ref|
 * (the rounding: u in effect). A sampled check takes the D_t of dK, dV from
 * attn's rounded out (above), off by at most d_t = u (1 + 2u) sum_i
 * |dout_ti out_ti|; each compared dK_j entry's bound then also has the
 * reference's own error scale sum_t P_tj d_t |Q_ti| (dV does not use D).
 */
#ifndef ATTN_BENCH_SDPA_REFERENCE_H
#define ATTN_BENCH_SDPA_REFERENCE_H

#include <stddef.h>

#include "measure/reference.h"
#include "measure/sdpa_problem.h"

#define BENCH_SDPA_FULL_CHECK_MACS 1.5e8

/* Checks what the last call wrote into the problem's outputs (lse too when
 * lse_written), into every member of check (measure/reference.h). Returns
 * 0, or -1 when memory for the reference runs out. */
int bench_sdpa_check_problem(const bench_sdpa_problem *problem, size_t check_rows,
                             int lse_written, bench_check *check);

#endif /* ATTN_BENCH_SDPA_REFERENCE_H */
