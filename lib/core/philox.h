/*
 * Philox-4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11), the counter-based generator of attention
 * dropout (attn.h, attn_plan_set_dropout), written from the paper's
 * algorithm and checked against Random123's known-answer vectors
 * (tests/unit/test_dropout.c).
 *
 * Shapes: counter (4 words of 32 bits), key (2 words) -> 4 words of 32 bits.
 * A round, on counter (c0, c1, c2, c3) with key (k0, k1):
 *   (hi0, lo0) = M0 * c0,  (hi1, lo1) = M1 * c2        (32 x 32 -> 64 bits)
 *   counter' = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
 * and between two rounds the key gets the Weyl increments (W0, W1) added.
 * Ten rounds. The output is a bijection of the counter for each key, so
 * distinct counters never repeat a block of four words.
 */
#ifndef ATTN_PHILOX_H
#define ATTN_PHILOX_H

#include <stdint.h>

#define ATTN_PHILOX_M0 0xD2511F53u
#define ATTN_PHILOX_M1 0xCD9E8D57u
#define ATTN_PHILOX_W0 0x9E3779B9u
#define ATTN_PHILOX_W1 0xBB67AE85u
#define ATTN_PHILOX_ROUNDS 10

/* out = Philox-4x32-10(counter, key); out may be counter. */
static inline void attn_philox4x32_10(const uint32_t counter[4], const uint32_t key[2],
                                      uint32_t out[4])
{
    uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < ATTN_PHILOX_ROUNDS; round++) {
        if (round > 0) {
            k0 += ATTN_PHILOX_W0;
            k1 += ATTN_PHILOX_W1;
        }
        const uint64_t p0 = (uint64_t)ATTN_PHILOX_M0 * c0;
        const uint64_t p1 = (uint64_t)ATTN_PHILOX_M1 * c2;
        const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        const uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

#endif /* ATTN_PHILOX_H */
