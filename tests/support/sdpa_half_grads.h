/*
 * The half-precision backward's float64 reference and its check (used by
 * test_sdpa_half and test_sdpa_half_inf): the gradients of sum(out o dout)
 * recomputed in float64 from the widened half inputs of a problem
 * (support/sdpa_half.h), each element's magnitude A (the sum of the
 * absolute values of its terms) and the tolerance
 *   |grad - ref| <= u |ref| + eta + eps A
 * whose terms test_sdpa_half.c's header derives (eps from attn_half.h's
 * bound; the caller adds what its path rounds more: bf16 products).
 */
#ifndef ATTN_TEST_SDPA_HALF_GRADS_H
#define ATTN_TEST_SDPA_HALF_GRADS_H

#include "support/check.h"
#include "support/sdpa_half.h"

/* Dense (B,T,heads,width) arrays, as half_gather gives attn's. */
typedef struct hgrads {
    double *dQ, *dK, *dV; /* reference */
    double *aQ, *aK, *aV; /* magnitudes */
    double eps_q, eps_kv;
} hgrads;

hgrads half_reference_backward(const hproblem *pr);

/* Every element of attn's dQ, dK, dV (dense) within the tolerance; the
 * worst error/tolerance into worst. */
void half_check_backward(const hproblem *pr, const hgrads *g, const double *dQ,
                         const double *dK, const double *dV, check_worst *worst,
                         const char *what);

#endif /* ATTN_TEST_SDPA_HALF_GRADS_H */
