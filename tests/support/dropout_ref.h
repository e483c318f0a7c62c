/*
 * The independent reference of attention dropout (attn.h,
 * attn_plan_set_dropout): the mask built from the header's mapping with
 * the Philox-4x32-10 of lib/core/philox.h (checked against Random123's
 * known answers in test_dropout), and the dropped sdpa forward and
 * backward in double with naive loops over sdpa_reference.h's undropped
 * weights, sharing no code with the engines:
 *   out_t = sum_j P_tj Md_tj V_j,   Md = keep / (1 - p)
 *   D_t = <dout_t, out_t>;  for visible j:  dV_j += P_j Md_j dout_t,
 *   dP_j = Md_j <dout_t, V_j>,  dS_j = P_j (dP_j - D_t),
 *   dQ_t += scale dS_j K_j,  dK_j += scale dS_j Q_t.
 */
#ifndef ATTN_TEST_DROPOUT_REF_H
#define ATTN_TEST_DROPOUT_REF_H

#include <stddef.h>
#include <stdint.h>

#include "reference/sdpa_reference.h"

typedef struct dropout_ref {
    double p;
    uint64_t seed, offset;
} dropout_ref;

/* whether weight (b, h, t, j) is kept */
int dropout_ref_keep(const dropout_ref *d, size_t b, size_t h, size_t t, size_t j);

/* keep / (1 - p) of weight (b, h, t, j) (1 when p = 0) */
double dropout_ref_factor(const dropout_ref *d, size_t b, size_t h, size_t t, size_t j);

/* out dense (B,Tq,NH,hs_v); lse (B,NH,Tq) or NULL (the undropped one) */
void dropout_ref_forward(const sdpa_ref *r, const dropout_ref *d, double *out, double *lse);

/* as sdpa_ref_backward, for the dropped forward */
void dropout_ref_backward(const sdpa_ref *r, const dropout_ref *d, const double *dout,
                          double *dQ, double *dK, double *dV);

#endif /* ATTN_TEST_DROPOUT_REF_H */
