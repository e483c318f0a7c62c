/*
 * test_bf16_products: the bf16 matrix products of the avx512-bf16 and amx
 * sets (kernels.h, attn_bf16_gemm_fn: vdpbf16ps and AMX-BF16 tiles) and the
 * packing of their B operand (attn_bf16_pack, attn_bf16_pack_transposed,
 * and their twins from bf16 bits, and each set's own packs from floats and
 * from bf16 bits, which must pack the same bytes; the products read the
 * set's),
 * against a double reference of the same bf16 numbers computed here.
 *
 *   C (M, N) = A (M, K) B (K, N), and C += A B, for B given as X^T (X (N,
 *   K): the scores' K^T) and as X (X (K, N): the values), shapes with every
 *   tail (M, N, K not multiples of the tiles, one row, one column, K up to
 *   256, N across several panels), A and X of bf16 numbers drawn over
 *   2^-20 .. 2^20 in magnitude with both signs and zeros; B = X also
 *   packed with more rows than the product reads (kb > K: a causal
 *   diagonal's keys inside a K block of V), which must not reach C.
 *   round_transposed: (scale X)^T rounded, for row and column counts that
 *   are and are not multiples of the tiles, scale 1 and 1/sqrt(hs): each
 *   element against the reference narrowing, the padding zero.
 *   The packs' finiteness result (pack_finite).
 *   dot: the backward's row sums of bf16 rows in double (its tolerance at
 *   the test).
 *   softmax_online: the forward's online block with bf16 weights (its
 *   tolerances at the test).
 *   round (and round_scaled, of float products scale x): float -> bf16
 *   against the tests' reference narrowing
 *   (support/sdpa_half.c) on random floats of every class and on ties,
 *   counts not multiples of the vector; subnormal inputs give a zero of
 *   their sign (the instruction's documented behaviour), a NaN a NaN.
 * Tolerance per element: the products of bf16 numbers are exact in float;
 * the float sums add at most 2^-24 relative per addition, K + 1 of them
 * along any order of summation (pairs, tiles), so
 *   |C - ref| <= (K + 2) 2^-24 (sum_k |a_ik b_kj| + |C0_ij|) + (K + 2) 2^-126
 * (the last term: both instruction families treat subnormal inputs and
 * results as zero; none are drawn here, so it only covers flushed sums).
 * Elements of C outside (M, N) keep their sentinel; rows past M of A are
 * garbage (NaN) to show they reach no stored element. A set the CPU lacks
 * is skipped (its name printed).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernels.h"
#include "support/rng.h"
#include "support/sdpa_half.h"
#include "support/test_common.h"

static float bf16_value(test_rng *rng)
{
    if (rng_below(rng, 16) == 0)
        return 0.0f;
    const double mag = ldexp(1.0 + rng_uniform(rng), (int)rng_below(rng, 41) - 20);
    float f = (float)(rng_below(rng, 2) ? -mag : mag);
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u &= 0xffff0000u; /* a bf16 number */
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t bits16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

static size_t round_up(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

/* One product of shape (M, N, K), B from X^T (transposed) or X of `extra`
 * more rows (not multiplied). */
static void one(const attn_bf16_products *set, const char *name, size_t M, size_t N, size_t K,
                size_t extra, int transposed, int accumulate, test_rng *rng)
{
    const size_t Kp = round_up(K, ATTN_BF16_K_STEP), Mp = round_up(M, ATTN_BF16_M_STEP);
    const size_t Kx = extra > 0 ? Kp + extra : K, kb = round_up(Kx, ATTN_BF16_K_STEP);
    const size_t lda = Kp + 8, ldx = (transposed ? Kx : N) + 3, ldc = N + 5;
    float *A = talloc(M * K * sizeof(float));
    uint16_t *A16 = talloc(Mp * lda * sizeof(uint16_t));
    const size_t xrows = transposed ? N : Kx;
    float *X = talloc(xrows * ldx * sizeof(float));
    uint16_t *B = talloc(round_up(N, ATTN_BF16_NR) * kb * sizeof(uint16_t));
    float *C = talloc((M + 1) * ldc * sizeof(float));
    double *want = talloc_doubles(M * N), *mag = talloc_doubles(M * N);
    for (size_t i = 0; i < M * K; i++)
        A[i] = bf16_value(rng);
    for (size_t i = 0; i < xrows * ldx; i++)
        X[i] = bf16_value(rng);
    for (size_t i = 0; i < Mp * lda; i++) /* garbage rows past M: quiet NaN */
        A16[i] = 0x7fc1;
    for (size_t i = 0; i < M; i++)
        for (size_t k = 0; k < lda; k++)
            A16[i * lda + k] = k < K ? bits16(A[i * K + k]) : 0;
    for (size_t i = 0; i < (M + 1) * ldc; i++)
        C[i] = -1234.5f; /* sentinel outside (M, N) */
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++)
            C[i * ldc + j] = accumulate ? bf16_value(rng) : NAN; /* beta 0 never reads C */
    if (transposed)
        attn_bf16_pack_transposed(N, Kx, X, ldx, B);
    else
        attn_bf16_pack(Kx, N, X, ldx, B);
    /* the twin from bf16 bits packs the same bytes */
    const size_t nb = round_up(N, ATTN_BF16_NR) * kb;
    uint16_t *X16 = talloc(xrows * ldx * sizeof(uint16_t)), *B16 = talloc(nb * sizeof(uint16_t));
    for (size_t i = 0; i < xrows * ldx; i++)
        X16[i] = bits16(X[i]);
    if (transposed)
        attn_bf16_pack_transposed_bf16(N, Kx, X16, ldx, B16);
    else
        attn_bf16_pack_bf16(Kx, N, X16, ldx, B16);
    check_true(memcmp(B, B16, nb * sizeof(uint16_t)) == 0,
               "%s: M %zu N %zu K %zu: the pack from bf16 bits differs", name, M, N, K);
    if (!transposed) { /* the set's own pack of X: the same bytes, and the product's B */
        uint16_t *Bs = talloc(nb * sizeof(uint16_t));
        memset(Bs, 0xff, nb * sizeof(uint16_t));
        const int finite = set->pack(Kx, N, X, ldx, Bs);
        check_true(finite && memcmp(B, Bs, nb * sizeof(uint16_t)) == 0,
                   "%s: M %zu N %zu K %zu: the set's pack differs (finite %d)", name, M, N, K,
                   finite);
        uint16_t *Bs16 = talloc(nb * sizeof(uint16_t));
        memset(Bs16, 0xff, nb * sizeof(uint16_t));
        const int finite16 = set->pack16(Kx, N, X16, ldx, Bs16);
        check_true(finite16 && memcmp(B, Bs16, nb * sizeof(uint16_t)) == 0,
                   "%s: M %zu N %zu K %zu: the set's pack from bf16 bits differs (finite %d)",
                   name, M, N, K, finite16);
        B = accumulate ? Bs16 : Bs; /* the products read both */
    }
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = accumulate ? (double)C[i * ldc + j] : 0.0, m = fabs(s);
            for (size_t k = 0; k < K; k++) {
                const double x = (double)(transposed ? X[j * ldx + k] : X[k * ldx + j]);
                s += (double)A[i * K + k] * x;
                m += fabs((double)A[i * K + k] * x);
            }
            want[i * N + j] = s;
            mag[i * N + j] = m;
        }
    set->gemm(M, N, Kp, A16, lda, B, kb, accumulate, C, ldc);
    double worst = 0.0;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            const double tol = (double)(K + 2) * (0x1p-24 * mag[i * N + j] + 0x1p-126);
            const double e = fabs((double)C[i * ldc + j] - want[i * N + j]);
            const double r = isnan(e) ? HUGE_VAL : e / tol;
            worst = r > worst ? r : worst;
        }
    check_true(worst <= 1.0,
               "%s: M %zu N %zu K %zu (packed %zu) %s %s: largest error/tolerance %.3g", name, M,
               N, K, Kx, transposed ? "X^T" : "X", accumulate ? "C +=" : "C =", worst);
    for (size_t i = 0; i <= M; i++)
        for (size_t j = i < M ? N : 0; j < ldc; j++)
            check_true(C[i * ldc + j] == -1234.5f, "%s: M %zu N %zu K %zu: C[%zu][%zu] written",
                       name, M, N, K, i, j);
}

static void products(void **state)
{
    const attn_isa isa = *(const attn_isa *)*state;
    const attn_bf16_products set = attn_bf16_products_of(isa);
    const attn_bf16_gemm_fn gemm = set.gemm;
#if defined(__x86_64__)
    check_true(gemm != NULL, "%s: no bf16 products", attn_isa_name(isa));
#endif
    if (gemm == NULL || !attn_isa_supported(isa)) {
        print_message("  skipped: this CPU (or OS) does not run the %s set\n", attn_isa_name(isa));
        skip();
    }
    static const size_t shapes[][3] = {{1, 1, 1},    {1, 64, 32},    {5, 70, 32},
                                       {37, 130, 64}, {33, 100, 50}, {128, 512, 128},
                                       {64, 64, 256}, {6, 129, 2},   {31, 33, 96}};
    test_rng rng;
    rng_seed(&rng, 2501);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int transposed = 0; transposed < 2; transposed++)
            for (int accumulate = 0; accumulate < 2; accumulate++)
                for (size_t extra = 0; extra <= (transposed ? 0 : 40); extra += 40)
                    one(&set, attn_isa_name(isa), shapes[s][0], shapes[s][1], shapes[s][2],
                        extra, transposed, accumulate, &rng);
    print_message("  %s: %zu shapes within (K + 2) 2^-24 of the double reference\n",
                  attn_isa_name(isa), sizeof shapes / sizeof shapes[0]);
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* dot: sum x_i y_i in double against the sum made here, for lengths
 * around the vectors (tails masked): every product of two bf16 numbers
 * and every partial sum here (magnitudes 2^-40..2^42, n <= 300) is exact
 * in double but for the adds' 2^-53 each, so |dot - ref| <= n 2^-52
 * sum |x_i y_i|. */
static void dot(void **state)
{
    const attn_isa isa = *(const attn_isa *)*state;
    const attn_bf16_dot_fn d = attn_bf16_products_of(isa).dot;
    if (d == NULL || !attn_isa_supported(isa)) {
        print_message("  skipped: this CPU (or OS) does not run the %s set\n", attn_isa_name(isa));
        skip();
    }
    test_rng rng;
    rng_seed(&rng, 2507);
    uint16_t *x = talloc(301 * sizeof(uint16_t)), *y = talloc(301 * sizeof(uint16_t));
    static const size_t lengths[] = {0, 1, 7, 8, 9, 15, 16, 17, 128, 300};
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        const size_t n = lengths[l];
        double want = 0.0, mag = 0.0;
        for (size_t i = 0; i < 301; i++) { /* past n: NaN, never read */
            const float a = bf16_value(&rng), b = bf16_value(&rng);
            x[i] = i < n ? bits16(a) : 0x7fc1;
            y[i] = i < n ? bits16(b) : 0x7fc1;
            if (i < n)
                want += (double)a * (double)b, mag += fabs((double)a * (double)b);
        }
        const double got = d(x, y, n);
        check_true(fabs(got - want) <= (double)n * 0x1p-52 * mag,
                   "%s: dot of %zu: %.17g, reference %.17g", attn_isa_name(isa), n, got, want);
    }
}

/* The products' rounding of P against the reference narrowing. */
static void rounding(void **state)
{
    const attn_isa isa = *(const attn_isa *)*state;
    const attn_half_narrow_fn round = attn_bf16_products_of(isa).round;
    const attn_half_narrow_scaled_fn round_scaled = attn_bf16_products_of(isa).round_scaled;
    if (round == NULL || !attn_isa_supported(isa)) {
        print_message("  skipped: this CPU (or build) does not run the %s set\n",
                      attn_isa_name(isa));
        skip();
    }
    enum { N = 4099 };
    float *x = talloc(N * sizeof(float)), *y = talloc(N * sizeof(float));
    uint16_t *got = talloc((N + 1) * sizeof(uint16_t));
    test_rng rng;
    rng_seed(&rng, 2502);
    /* passes 0..63: round; 64..127: round_scaled of y by 1/sqrt(128),
     * against the rounding of the float products x = scale y */
    const float scale = 1.0f / sqrtf(128.0f);
    for (int pass = 0; pass < 128; pass++) {
        for (size_t i = 0; i < N; i++) {
            const uint32_t u = (uint32_t)rng_u64(&rng);
            /* every class, and ties: the low 16 bits 0x8000 */
            x[i] = float_of(i % 3 == 0 ? (u & 0xffff0000u) | 0x8000u : u);
        }
        const size_t n = N - (size_t)(pass % 64); /* tails of every length */
        got[n] = 0xabcd;
        if (pass < 64) {
            round(x, got, n);
        } else { /* x becomes the float product the kernel must round */
            for (size_t i = 0; i < N; i++)
                y[i] = x[i], x[i] = y[i] * scale;
            round_scaled(y, scale, got, n);
        }
        check_true(got[n] == 0xabcd, "%s: round wrote past n", attn_isa_name(isa));
        for (size_t i = 0; i < n; i++) {
            const uint32_t bits = (uint32_t)got[i] << 16;
            if (isnan(x[i])) {
                check_true(isnan(float_of(bits)), "%s: round%s(NaN) = 0x%04x", attn_isa_name(isa),
                           pass < 64 ? "" : "_scaled", got[i]);
                continue;
            }
            const int sub = fpclassify(x[i]) == FP_SUBNORMAL;
            const uint16_t want = sub ? (uint16_t)(signbit(x[i]) ? 0x8000 : 0)
                                      : half_bf16.encode(x[i]);
            check_true(got[i] == want, "%s: round%s(%a) = 0x%04x, want 0x%04x",
                       attn_isa_name(isa), pass < 64 ? "" : "_scaled", (double)x[i], got[i], want);
        }
    }
}

/* The backward's transposed rounding against the reference. */
static void rounding_transposed(void **state)
{
    const attn_isa isa = *(const attn_isa *)*state;
    const attn_bf16_round_transposed_fn rt = attn_bf16_products_of(isa).round_transposed;
    if (rt == NULL || !attn_isa_supported(isa)) {
        print_message("  skipped: this CPU (or build) does not run the %s set\n",
                      attn_isa_name(isa));
        skip();
    }
    static const size_t shapes[][2] = {{1, 1}, {128, 256}, {37, 200}, {64, 31}, {100, 129}};
    const size_t ldx = 272; /* the backward's tile row */
    float *X = talloc(128 * ldx * sizeof(float));
    uint16_t *dst = talloc(256 * 128 * sizeof(uint16_t));
    test_rng rng;
    rng_seed(&rng, 2503);
    for (size_t i = 0; i < 128 * ldx; i++)
        X[i] = (float)(rng_normal(&rng) * ldexp(1.0, (int)rng_below(&rng, 20) - 10));
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int scaled = 0; scaled < 2; scaled++) {
            const size_t rows = shapes[s][0], kc = shapes[s][1];
            const size_t np = round_up(rows, ATTN_BF16_K_STEP), kp = round_up(kc, ATTN_BF16_M_STEP);
            const float scale = scaled ? 0.08838834764831845f : 1.0f;
            memset(dst, 0xab, 256 * 128 * sizeof(uint16_t)); /* garbage: the padding is written */
            rt(rows, kc, X, ldx, scale, dst);
            size_t bad = 0;
            for (size_t j = 0; j < kp; j++)
                for (size_t q = 0; q < np; q++) {
                    const uint16_t want =
                        q < rows && j < kc ? half_bf16.encode(scale * X[q * ldx + j]) : 0;
                    bad += dst[j * np + q] != want;
                }
            check_true(bad == 0, "%s: round_transposed rows %zu kc %zu scale %g: %zu wrong",
                       attn_isa_name(isa), rows, kc, (double)scale, bad);
        }
}

/* The online softmax block with bf16 weights against a double reference.
 * Given the kernel's m' (checked: the float max of the old max and of
 * fl(scale s_j), exactly, or, after a first block, the old max kept when
 * no weight exceeds 2^11), w_j = exp(fl(scale s_j) - m') in double; the
 * kernel's weight before rounding carries at most 2^-21 + 2^-23 |x_j|
 * relative error (its polynomial 2.2e-7, its roundings of x and of
 * x log2(e): softmax_bf16_avx512.c), so each bf16 weight is within
 *   (2^-8 + 2^-21 + 2^-23 |x_j|) w_j + 2^-126
 * (2^-8: the rounding to nearest bf16, u of attn_half.h), the sum l' within
 *   sum_j (2^-21 + 2^-23 |x_j|) w_j + (n + 2) 2^-24 l'_ref
 * (its float additions) of l alpha + sum_j w_j, alpha within
 * (2^-21 + 2^-24 |m - m'|) relative of exp(m - m') (the float kernels' exp
 * of the rounded difference; 0 below 2^-126). Masked (-inf) entries
 * give 0, the padding to n_total is 0 and nothing past it is written; a
 * +inf score returns -1 with every weight 0 and m' = +inf. */
static void softmax_online(void **state)
{
    const attn_isa isa = *(const attn_isa *)*state;
    const attn_bf16_softmax_online_fn sm = attn_bf16_products_of(isa).softmax_online;
    if (sm == NULL || !attn_isa_supported(isa)) {
        print_message("  skipped: this CPU (or build) does not run the %s set\n",
                      attn_isa_name(isa));
        skip();
    }
    enum { NMAX = 600 };
    float *s = talloc(NMAX * sizeof(float));
    uint16_t *p = talloc((NMAX + 2 * ATTN_BF16_K_STEP + 1) * sizeof(uint16_t));
    test_rng rng;
    rng_seed(&rng, 2504);
    size_t rows = 0, lazy = 0;
    for (size_t n = 1; n <= NMAX; n += n < 80 ? 1 : 37)
        for (int variant = 0; variant < 4; variant++, rows++) {
            const float scale = variant & 1 ? 0.08838834764831845f : 1.0f;
            const double spread = variant & 2 ? 30.0 : 1.0;
            for (size_t j = 0; j < n; j++)
                s[j] = rng_below(&rng, 8) == 0 ? -INFINITY : (float)(rng_normal(&rng) * spread);
            const size_t total = round_up(n, ATTN_BF16_K_STEP) + (variant == 3 ? 32 : 0);
            p[total] = 0xabcd;
            /* a first block, or one after others: m and l given */
            const float m0 = variant < 2 ? -FLT_MAX : (float)(rng_normal(&rng) * spread);
            const float l0 = variant < 2 ? 0.0f : 3.0f;
            float m = m0, l = l0;
            const float alpha = sm(s, p, n, total, scale, &m, &l);
            float top = m0;
            for (size_t j = 0; j < n; j++)
                top = scale * s[j] > top ? scale * s[j] : top;
            /* a block after the first may keep m as its shift (kernels.h)
             * only when no weight exceeds 2^11; else m' is the max */
            const int kept = m0 > -FLT_MAX && m == m0 && alpha == 1.0f;
            const float want_m = kept ? m0 : top;
            lazy += kept && top > m0;
            check_true(m == want_m && (!kept || exp((double)top - (double)m0) <= 0x1p11 * 1.0001),
                       "%s n %zu: shift %a (max %a, m %a)", attn_isa_name(isa), n, (double)m,
                       (double)top, (double)m0);
            const double want_alpha = exp((double)m0 - (double)want_m);
            const double d = (double)m0 - (double)want_m; /* fl(m - m') adds 2^-24 |d| */
            check_true(fabs((double)alpha - want_alpha) <=
                           (0x1p-21 + 0x1p-24 * fabs(d)) * want_alpha + 0x1p-126,
                       "%s n %zu: alpha %a, want %a", attn_isa_name(isa), n, (double)alpha,
                       want_alpha);
            double sum = (double)l0 * want_alpha, slack = 0.0;
            for (size_t j = 0; j < n; j++) {
                const double x = (double)(scale * s[j]) - (double)want_m;
                const double w = isinf(x) ? 0.0 : exp(x);
                const double err = isinf(x) ? 0.0 : (0x1p-21 + 0x1p-23 * fabs(x)) * w;
                const double got = (double)float_of((uint32_t)p[j] << 16);
                check_true(fabs(got - w) <= 0x1p-8 * w + err + 0x1p-126,
                           "%s n %zu: weight %zu %a, want %a", attn_isa_name(isa), n, j, got, w);
                sum += w;
                slack += err;
            }
            check_true(fabs((double)l - sum) <= slack + (double)(n + 2) * 0x1p-24 * sum,
                       "%s n %zu: sum %a, want %a", attn_isa_name(isa), n, (double)l, sum);
            size_t nonzero = 0;
            for (size_t j = n; j < total; j++)
                nonzero += p[j] != 0;
            check_true(nonzero == 0 && p[total] == 0xabcd, "%s n %zu: padding %zu, sentinel %04x",
                       attn_isa_name(isa), n, nonzero, p[total]);
        }
    /* a +inf score: -1, weights 0, m' = +inf */
    for (size_t j = 0; j < 100; j++)
        s[j] = (float)rng_normal(&rng);
    s[57] = INFINITY;
    memset(p, 0xff, 128 * sizeof(uint16_t));
    float m = -FLT_MAX, l = 0.0f;
    const float alpha = sm(s, p, 100, 128, 1.0f, &m, &l);
    size_t nonzero = 0;
    for (size_t j = 0; j < 128; j++)
        nonzero += p[j] != 0;
    check_true(alpha == -1.0f && isinf(m) && m > 0 && nonzero == 0,
               "%s: +inf score: alpha %g, max %g, %zu weights not 0", attn_isa_name(isa),
               (double)alpha, (double)m, nonzero);
    check_true(lazy > 0, "%s: no block kept its shift", attn_isa_name(isa));
    print_message("  %s: %zu rows within the bf16 rounding of the double reference, %zu "
                  "shifted by an earlier max below theirs\n",
                  attn_isa_name(isa), rows, lazy);
}

/* The packs' finiteness: 1 for finite values, 0 with an infinity or a NaN
 * anywhere in what is packed (every position of a few shapes, odd K
 * included), 1 again with NaN only where nothing is packed (the row gap
 * past N or K). */
static void pack_finite(void **state)
{
    (void)state;
    static const size_t shapes[][2] = {{1, 1}, {7, 3}, {70, 33}, {65, 128}};
    static const float specials[3] = {INFINITY, -INFINITY, NAN};
    static const attn_isa sets[2] = {ATTN_ISA_AVX512_BF16, ATTN_ISA_AMX};
    test_rng rng;
    rng_seed(&rng, 2505);
    size_t tried = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (int transposed = 0; transposed < 2; transposed++) {
            const size_t N = shapes[sh][0], K = shapes[sh][1], rows = transposed ? N : K;
            const size_t cols = transposed ? K : N, ldx = cols + 2;
            float *X = talloc(rows * ldx * sizeof(float));
            uint16_t *X16 = talloc(rows * ldx * sizeof(uint16_t));
            uint16_t *B = talloc(round_up(N, ATTN_BF16_NR) * round_up(K, ATTN_BF16_K_STEP) *
                                 sizeof(uint16_t));
            for (size_t i = 0; i < rows * ldx; i++) /* the gap past each row: NaN */
                X[i] = i % ldx < cols ? bf16_value(&rng) : NAN;
            for (size_t at = 0; at <= rows * cols; at++) { /* at = rows * cols: none */
                const size_t i = at < rows * cols ? at / cols * ldx + at % cols : 0;
                const float keep = X[i];
                if (at < rows * cols)
                    X[i] = specials[at % 3];
                const int got = transposed ? attn_bf16_pack_transposed(N, K, X, ldx, B)
                                           : attn_bf16_pack(K, N, X, ldx, B);
                for (size_t k = 0; k < rows * ldx; k++)
                    X16[k] = bits16(X[k]);
                const int got16 = transposed ? attn_bf16_pack_transposed_bf16(N, K, X16, ldx, B)
                                             : attn_bf16_pack_bf16(K, N, X16, ldx, B);
                int got_set = got; /* the pack of each set this CPU runs */
                for (int si = 0; si < 2 && !transposed; si++)
                    if (attn_isa_supported(sets[si]) &&
                        attn_bf16_products_of(sets[si]).pack != NULL)
                        got_set &= attn_bf16_products_of(sets[si]).pack(K, N, X, ldx, B) == got &&
                                   attn_bf16_products_of(sets[si]).pack16(K, N, X16, ldx, B) == got;
                check_true(got == (at == rows * cols) && got16 == got && got_set == got,
                           "%s N %zu K %zu, %g at %zu: %d (from bf16 bits %d, the sets' %d)",
                           transposed ? "pack_transposed" : "pack", N, K,
                           (double)specials[at % 3], at, got, got16, got_set);
                X[i] = keep;
                tried++;
            }
        }
    print_message("  %zu packs: finite exactly when nothing packed is inf or NaN\n", tried);
}

/* Sets without products have none. */
static void others_have_none(void **state)
{
    (void)state;
    for (int i = 0; i < ATTN_ISA_COUNT; i++)
        if (i != ATTN_ISA_AVX512_BF16 && i != ATTN_ISA_AMX)
            check_true(attn_bf16_products_of((attn_isa)i).gemm == NULL &&
                           attn_bf16_products_of((attn_isa)i).round == NULL &&
                           attn_bf16_products_of((attn_isa)i).round_transposed == NULL &&
                           attn_bf16_products_of((attn_isa)i).softmax_online == NULL &&
                           attn_bf16_products_of((attn_isa)i).pack == NULL &&
                           attn_bf16_products_of((attn_isa)i).dot == NULL &&
                           attn_bf16_products_of((attn_isa)i).round_scaled == NULL &&
                           attn_bf16_products_of((attn_isa)i).pack16 == NULL,
                       "%s has bf16 products", attn_isa_name((attn_isa)i));
}

int main(void)
{
    static const attn_isa dot_set = ATTN_ISA_AVX512_BF16, amx = ATTN_ISA_AMX;
    const struct CMUnitTest tests[] = {
        CASE_WITH_STATE("avx512-bf16/products", products, &dot_set),
        CASE_WITH_STATE("amx/products", products, &amx),
        CASE_WITH_STATE("avx512-bf16/dot", dot, &dot_set),
        CASE_WITH_STATE("amx/dot", dot, &amx),
        CASE_WITH_STATE("avx512-bf16/rounding", rounding, &dot_set),
        CASE_WITH_STATE("amx/rounding", rounding, &amx),
        CASE_WITH_STATE("avx512-bf16/rounding_transposed", rounding_transposed, &dot_set),
        CASE_WITH_STATE("amx/rounding_transposed", rounding_transposed, &amx),
        CASE_WITH_STATE("avx512-bf16/softmax_online", softmax_online, &dot_set),
        CASE_WITH_STATE("amx/softmax_online", softmax_online, &amx),
        cmocka_unit_test(pack_finite),
        cmocka_unit_test(others_have_none),
    };
    return cmocka_run_group_tests_name("bf16_products", tests, NULL, NULL);
}
