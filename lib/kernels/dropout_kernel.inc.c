/*
 * Attention dropout's draws on a row segment (attn.h, attn_plan_set_dropout;
 * the mapping of core/dropout.h), written in one vector vocabulary
 * (<isa>/<isa>.h: uvec holds ULEN 32-bit lanes, vec VLEN lanes of `real`);
 * the including kernels_<isa>.c defines the name:
 *   DROPOUT_MASK_NAME  for i < n, with f_i = keep(b, h, t, j0 + i) ?
 *                      (real)(1 / (1 - p)) : 0:
 *                      x (n) [i] *= f_i       (x NULL: none)
 *                      factors (n) [i] = f_i  (factors NULL: none)
 * ULEN Philox-4x32-10 calls at once, one per counter (g, t, h, b) for the
 * ULEN consecutive g = j / 4 of 4 * ULEN consecutive keys j, each round on
 * whole registers (32 x 32 -> 64-bit products by u_mulhilo), the four
 * output words then stored in the keys' order (u_store4: word j % 4 of
 * counter j / 4) and compared with the threshold VLEN at a time (v_keep).
 * The same bits as core/dropout.h's lane-wise attn_dropout_words on every
 * kernel set: integer arithmetic, and x times exactly 1/(1-p) or 0 (a NaN
 * x stays NaN).
 */
#include "core/dropout.h"
#include "kernels/kernels.h"

/* words[4*i + k] = word k of Philox((g0 + i, t, h, b), key), i < ULEN
 * (each index modulo 2^32, as core/dropout.h). */
static inline void dropout_words(const uint32_t key[2], uint32_t g0, uint32_t t, uint32_t h,
                                 uint32_t b, uint32_t *words)
{
    uvec c0 = u_iota(g0), c1 = u_set1(t), c2 = u_set1(h), c3 = u_set1(b);
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < ATTN_PHILOX_ROUNDS; round++) {
        if (round > 0) {
            k0 += ATTN_PHILOX_W0;
            k1 += ATTN_PHILOX_W1;
        }
        uvec hi0, lo0, hi1, lo1;
        u_mulhilo(c0, ATTN_PHILOX_M0, &hi0, &lo0);
        u_mulhilo(c2, ATTN_PHILOX_M1, &hi1, &lo1);
        c0 = u_xor(u_xor(hi1, c1), u_set1(k0));
        c2 = u_xor(u_xor(hi0, c3), u_set1(k1));
        c1 = lo1;
        c3 = lo0;
    }
    u_store4(words, c0, c1, c2, c3);
}

void DROPOUT_MASK_NAME(const attn_dropout *d, size_t b, size_t h, size_t t, size_t j0, size_t n,
                       real *x, real *factors);
void DROPOUT_MASK_NAME(const attn_dropout *d, size_t b, size_t h, size_t t, size_t j0, size_t n,
                       real *x, real *factors)
{
    enum { BATCH = 4 * ULEN }; /* keys per batch of Philox calls */
    /* VLEN words of padding: v_keep reads VLEN from any key of a batch */
    uint32_t words[BATCH + VLEN] = {0};
    const vec keep = v_set1((real)d->keep_scale);
    const size_t end = j0 + n;
    size_t j = j0;
    while (j < end) {
        const size_t first = j / 4 * 4; /* the batch's keys: [first, first + BATCH) */
        dropout_words(d->key, (uint32_t)(first / 4), (uint32_t)t, (uint32_t)h, (uint32_t)b,
                      words);
        const size_t stop = end - first < BATCH ? end : first + BATCH;
        for (size_t k = j; k < stop; k += VLEN) {
            const size_t m = stop - k < VLEN ? stop - k : VLEN, i = k - j0;
            const vec f = v_keep(words + (k - first), d->threshold, keep);
            if (x != NULL && m == VLEN)
                v_store(x + i, v_mul(v_load(x + i), f));
            else if (x != NULL)
                v_store_part(x + i, v_mul(v_load_part(x + i, m, REAL_C(0.0)), f), m);
            if (factors != NULL)
                v_store_part(factors + i, f, m);
        }
        j = stop;
    }
}
