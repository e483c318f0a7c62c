/*
 * The packs of bf16_pack.c, written once for their two sources; the
 * including file defines
 *   PACK_SOURCE     the element type of X: float (holding bf16 values) or
 *                   uint16_t (bf16 bits)
 *   PACK_BITS(x)    an element's bf16 bits, as uint32_t
 *   PACK_NAME(name) the functions' names
 * and has defined NR, not_finite and padded_k.
 */
/* Pair row w[j] = (lo[j], hi[j]) for j < n, 0 up to NR; a NULL row is 0.
 * Returns whether a value is not finite. */
static uint32_t PACK_NAME(pair_row)(const PACK_SOURCE *lo, const PACK_SOURCE *hi, size_t n,
                                    uint32_t w[NR])
{
    uint32_t bad = 0;
    size_t j = 0;
    if (lo != NULL && hi != NULL)
        for (; j < n; j++) {
            w[j] = PACK_BITS(lo[j]) | PACK_BITS(hi[j]) << 16;
            bad |= not_finite(w[j]);
        }
    else if (lo != NULL)
        for (; j < n; j++) {
            w[j] = PACK_BITS(lo[j]);
            bad |= not_finite(w[j]);
        }
    for (; j < NR; j++)
        w[j] = 0;
    return bad;
}

int PACK_NAME(attn_bf16_pack)(size_t K, size_t N, const PACK_SOURCE *X, size_t ldx, uint16_t *B)
{
    const size_t Kp = padded_k(K);
    uint32_t bad = 0;
    for (size_t p = 0; p * NR < N; p++) {
        const size_t cols = N - p * NR < NR ? N - p * NR : NR;
        uint16_t *panel = B + p * Kp * NR;
        for (size_t k = 0; k < Kp; k += 2) {
            uint32_t w[NR];
            bad |= PACK_NAME(pair_row)(k < K ? X + k * ldx + p * NR : NULL,
                            k + 1 < K ? X + (k + 1) * ldx + p * NR : NULL, cols, w);
            memcpy(panel + k * NR, w, sizeof w);
        }
    }
    return !bad;
}

/* B = X^T: each row of X read once, in order, its pairs stored down the
 * panel's column (the panel, Kp / 2 rows of NR words, stays in L1). */
int PACK_NAME(attn_bf16_pack_transposed)(size_t N, size_t K, const PACK_SOURCE *X, size_t ldx,
                                         uint16_t *B)
{
    const size_t Kp = padded_k(K), pairs = K / 2;
    uint32_t bad = 0;
    for (size_t p = 0; p * NR < N; p++) {
        const size_t cols = N - p * NR < NR ? N - p * NR : NR;
        uint32_t *panel = (uint32_t *)(void *)(B + p * Kp * NR);
        for (size_t j = 0; j < cols; j++) {
            const PACK_SOURCE *x = X + (p * NR + j) * ldx;
            for (size_t k2 = 0; k2 < pairs; k2++) {
                const uint32_t w = PACK_BITS(x[2 * k2]) | PACK_BITS(x[2 * k2 + 1]) << 16;
                bad |= not_finite(w);
                panel[k2 * NR + j] = w;
            }
            for (size_t k2 = pairs; k2 < Kp / 2; k2++) { /* K odd: the last alone */
                const uint32_t w = 2 * k2 < K ? PACK_BITS(x[2 * k2]) : 0;
                bad |= not_finite(w);
                panel[k2 * NR + j] = w;
            }
        }
        for (size_t k2 = 0; k2 < Kp / 2; k2++) /* columns past N */
            memset(panel + k2 * NR + cols, 0, (NR - cols) * sizeof(uint32_t));
    }
    return !bad;
}

#undef PACK_SOURCE
#undef PACK_BITS
#undef PACK_NAME
