/*
 * test_sdpa_half_convert: attn_bf16_to_f32, attn_bf16_from_f32,
 * attn_f16_to_f32 and attn_f16_from_f32 (attn.h, "half precision":
 * widening is exact; narrowing rounds to nearest even, overflows to
 * +-INFINITY and keeps NaN a NaN, quiet, sign kept), on each kernel set,
 * against the references of support/sdpa_half.c, written without the
 * library's code: bf16 widened by shifting its bits into a float's top
 * half, f16 decoded by hand in double; bf16 narrowed by comparing, in
 * double, the distances to the two bf16 values around x (the float's top
 * 16 bits and the next), f16 by bisection in the table of every finite
 * f16 value. The checks are exact (bit for bit): both conversions have
 * one correct answer.
 *
 *   widen        all 65536 bit patterns of each type, at once and one by
 *                one: the reference's value (sign of zero included); NaN
 *                patterns a NaN of the same sign (bf16: every other
 *                pattern the very bits << 16); only n elements written
 *                (n = 0 none)
 *   round trip   narrowing a widened pattern gives the pattern back (every
 *                non-NaN one: widening is exact, so the nearest is itself)
 *   known        fixed inputs whose results are known by hand (ties to
 *                even, the largest finite, the overflow threshold and
 *                just below it, subnormal results, float subnormals, -0,
 *                signalling and quiet NaN of both signs): the reference and
 *                the library both give them
 *   random       2^20 random float bit patterns (every class), 2^18 floats
 *                drawn between two neighbouring values of the type, and
 *                the midpoints of 2^16 such pairs (ties): the library
 *                against the reference
 *   scaled       the kernels' narrow_scaled (kernels.h) against the
 *                reference narrowing of the float products
 * Every narrowing runs on the whole array at once, from its second
 * element on and on each element alone, the counts no multiple of a
 * vector block: each value goes through the kernel set's vector blocks and
 * its scalar tail.
 * A NaN result must be a NaN of the type with its quiet bit set and the
 * input's sign (its payload is not specified).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernels.h"
#include "support/sdpa_half.h"
#include "support/test_common.h"

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* whether the library's narrowing `got` of x is right, `want` the reference's */
static int narrow_ok(const half_type *ht, float x, uint16_t got, uint16_t want)
{
    if (!isnan(x))
        return got == want;
    return half_is_nan(ht, got) && (got & ht->quiet) != 0 && (got >> 15) == (bits_of(x) >> 31);
}

static void widen(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    enum { N = 65536 };
    uint16_t *src = talloc(N * sizeof(uint16_t));
    float *dst = talloc((N + 1) * sizeof(float));
    for (uint32_t i = 0; i < N; i++)
        src[i] = (uint16_t)i;
    sentinel_fill(dst, (N + 1) * sizeof(float));
    ht->lib_widen(src, dst, N);
    size_t bad = 0;
    for (uint32_t i = 0; i < 2 * N; i++) {
        /* i < N the whole array at once (vector blocks), then each pattern alone (the tail) */
        const uint32_t k = i % N;
        float one = 0.0f;
        if (i >= N)
            ht->lib_widen(src + k, &one, 1);
        const float w = i < N ? dst[k] : one;
        const double ref = ht->decode((uint16_t)k), got = (double)w;
        int ok = isnan(ref) ? isnan(got) && !signbit(got) == !signbit(ref)
                            : got == ref && !signbit(got) == !signbit(ref);
        if (ht->dtype == ATTN_BF16 && !isnan(ref))
            ok &= bits_of(w) == k << 16;
        if (!ok && bad++ < 8)
            expect_true(0, "%s: widening %#06x (%s) gives %.9g (bits %#010x), reference %.9g",
                        ht->name, k, i < N ? "in bulk" : "alone", got, bits_of(w), ref);
    }
    expect_true(bad == 0, "%s: %zu of 65536 patterns widened wrong", ht->name, bad);
    /* element N of dst: the sentinel, as n = 0 leaves all of it */
    float *fresh = talloc((N + 1) * sizeof(float));
    sentinel_fill(fresh, (N + 1) * sizeof(float));
    expect_true(memcmp(dst + N, fresh + N, sizeof(float)) == 0,
                "%s: widening wrote past n elements", ht->name);
    ht->lib_widen(src, fresh, 0);
    expect_true(sentinel_intact(fresh, (N + 1) * sizeof(float)), "%s: widening n = 0 wrote",
                ht->name);
    test_leave("widen");
}

static void round_trip(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    enum { N = 65536 };
    uint16_t *src = talloc(N * sizeof(uint16_t)), *back = talloc((N + 1) * sizeof(uint16_t));
    float *wide = talloc(N * sizeof(float));
    for (uint32_t i = 0; i < N; i++)
        src[i] = (uint16_t)i;
    ht->lib_widen(src, wide, N);
    sentinel_fill(back, (N + 1) * sizeof(uint16_t));
    ht->lib_narrow(wide, back, N);
    size_t bad = 0;
    for (uint32_t i = 0; i < N; i++) {
        const int ok = half_is_nan(ht, (uint16_t)i)
                           ? narrow_ok(ht, wide[i], back[i], 0)
                           : back[i] == i;
        if (!ok && bad++ < 8)
            expect_true(0, "%s: %#06x widened and narrowed gives %#06x", ht->name, i, back[i]);
    }
    expect_true(bad == 0, "%s: %zu of 65536 patterns do not survive a round trip", ht->name,
                bad);
    uint16_t *fresh = talloc((N + 1) * sizeof(uint16_t));
    sentinel_fill(fresh, (N + 1) * sizeof(uint16_t));
    expect_true(back[N] == fresh[N], "%s: narrowing wrote past n elements", ht->name);
    ht->lib_narrow(wide, fresh, 0);
    expect_true(sentinel_intact(fresh, (N + 1) * sizeof(uint16_t)), "%s: narrowing n = 0 wrote",
                ht->name);
    test_leave("round trip");
}

/* The library's narrowing of in[0..n) against the reference: the whole
 * array at once, again from element 1 (so other elements fall in the
 * vector blocks and the tail), and each element alone. */
static void compare_narrowing(const half_type *ht, const float *in, size_t n, const char *what)
{
    static const char *const how[3] = {"in bulk", "in bulk from element 1", "alone"};
    uint16_t *out = talloc(3 * n * sizeof(uint16_t));
    ht->lib_narrow(in, out, n);
    out[n] = 0x5A5A;
    ht->lib_narrow(in + 1, out + n + 1, n - 1);
    expect_true(out[n] == 0x5A5A, "%s %s: narrowing wrote before its dst", ht->name, what);
    out[n] = out[0];
    for (size_t i = 0; i < n; i++)
        ht->lib_narrow(in + i, out + 2 * n + i, 1);
    size_t bad = 0;
    for (size_t i = 0; i < 3 * n; i++) {
        const size_t k = i % n;
        const uint16_t ref = ht->encode(in[k]);
        if (!narrow_ok(ht, in[k], out[i], ref) && bad++ < 8)
            expect_true(0, "%s %s: narrowing %#010x (%.9g, %s) gives %#06x, reference %#06x",
                        ht->name, what, bits_of(in[k]), (double)in[k], how[i / n], out[i], ref);
    }
    expect_true(bad == 0, "%s %s: %zu of 3 x %zu narrowed wrong", ht->name, what, bad, n);
}

typedef struct known {
    uint32_t in; /* float bits */
    uint16_t out;
    const char *what;
} known;

/* clang-format off */
static const known bf16_known[] = {
    {0x00000000, 0x0000, "+0"},
    {0x80000000, 0x8000, "-0"},
    {0x3F800000, 0x3F80, "1"},
    {0x3F808000, 0x3F80, "1 + 2^-8: a tie, to even 1"},
    {0x3F808001, 0x3F81, "just above the tie after 1"},
    {0x3F818000, 0x3F82, "a tie between odd 0x3F81 and even 0x3F82"},
    {0xBF818000, 0xBF82, "the same tie, negative"},
    {0x3F817FFF, 0x3F81, "just below a tie"},
    {0x7F7F0000, 0x7F7F, "the largest finite bf16"},
    {0x7F7F7FFF, 0x7F7F, "just below the overflow threshold"},
    {0x7F7F8000, 0x7F80, "the overflow threshold (a tie, to even: infinity)"},
    {0x7F7FFFFF, 0x7F80, "FLT_MAX overflows"},
    {0xFF7FFFFF, 0xFF80, "-FLT_MAX overflows to -inf"},
    {0x7F800000, 0x7F80, "+inf"},
    {0xFF800000, 0xFF80, "-inf"},
    {0x00800000, 0x0080, "FLT_MIN"},
    {0x00000001, 0x0000, "the smallest float subnormal rounds to +0"},
    {0x80000001, 0x8000, "the smallest negative float subnormal rounds to -0"},
    {0x00008000, 0x0000, "a subnormal tie, to even 0"},
    {0x00008001, 0x0001, "just above it: the smallest bf16 subnormal"},
    {0x00018000, 0x0002, "a subnormal tie between odd 1 and even 2"},
    {0x007F8000, 0x0080, "the largest subnormal tie rounds up to FLT_MIN"},
    {0x807FFFFF, 0x8080, "-(the largest float subnormal) rounds to -FLT_MIN"},
    {0x7FC00000, 0x7FC0, "quiet NaN"},
    {0xFFC00000, 0xFFC0, "negative quiet NaN"},
    {0x7F800001, 0x7FC0, "signalling NaN, payload in the low bits only (not inf)"},
    {0xFF800001, 0xFFC0, "negative signalling NaN, low payload"},
    {0x7FBFFFFF, 0x7FC0, "signalling NaN, all payload bits"},
    {0x7FFFFFFF, 0x7FC0, "NaN of all ones (rounding must not carry into the sign)"},
};

static const known f16_known[] = {
    {0x00000000, 0x0000, "+0"},
    {0x80000000, 0x8000, "-0"},
    {0x3F800000, 0x3C00, "1"},
    {0x3F801000, 0x3C00, "1 + 2^-11: a tie, to even 1"},
    {0x3F801001, 0x3C01, "just above that tie"},
    {0x3F803000, 0x3C02, "1 + 3*2^-11: a tie between odd and even, to even"},
    {0xBF803000, 0xBC02, "the same, negative"},
    {0x477FE000, 0x7BFF, "65504, the largest finite f16"},
    {0x477FEFFF, 0x7BFF, "just below 65520"},
    {0x477FF000, 0x7C00, "65520: a tie, to even 2^16: infinity"},
    {0xC77FF000, 0xFC00, "-65520 to -inf"},
    {0x47800000, 0x7C00, "65536"},
    {0x7F7FFFFF, 0x7C00, "FLT_MAX overflows"},
    {0x7F800000, 0x7C00, "+inf"},
    {0xFF800000, 0xFC00, "-inf"},
    {0x38800000, 0x0400, "2^-14, the smallest normal f16"},
    {0x387FE000, 0x0400, "2^-14 - 2^-25: a tie between 0x3FF (odd) and 0x400"},
    {0x387FC000, 0x03FF, "2^-14 - 2^-24, the largest subnormal f16"},
    {0x33800000, 0x0001, "2^-24, the smallest subnormal f16"},
    {0x33000000, 0x0000, "2^-25: a tie, to even 0"},
    {0xB3000000, 0x8000, "-2^-25: to -0"},
    {0x33000001, 0x0001, "just above 2^-25"},
    {0x33C00000, 0x0002, "3*2^-25: a tie between 1 and 2, to even 2"},
    {0x34200000, 0x0002, "5*2^-25: a tie between 2 and 3, to even 2"},
    {0x00000001, 0x0000, "a float subnormal to +0"},
    {0x807FFFFF, 0x8000, "a negative float subnormal to -0"},
    {0x7FC00000, 0x7E00, "quiet NaN"},
    {0xFFC00000, 0xFE00, "negative quiet NaN"},
    {0x7F800001, 0x7E00, "signalling NaN, low payload (not inf)"},
    {0xFF800001, 0xFE00, "negative signalling NaN, low payload"},
    {0x7F802000, 0x7E00, "signalling NaN, payload just above what f16 keeps"},
    {0x7FFFFFFF, 0x7E00, "NaN of all ones"},
};
/* clang-format on */

static void known_values(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    const known *k = ht->dtype == ATTN_BF16 ? bf16_known : f16_known;
    const size_t n = ht->dtype == ATTN_BF16 ? N_OF(bf16_known) : N_OF(f16_known);
    float *in = talloc(n * sizeof(float));
    uint16_t *out = talloc(n * sizeof(uint16_t));
    for (size_t i = 0; i < n; i++)
        in[i] = float_of(k[i].in);
    ht->lib_narrow(in, out, n);
    compare_narrowing(ht, in, n, "known values");
    for (size_t i = 0; i < n; i++) {
        const uint16_t ref = ht->encode(in[i]);
        expect_true(narrow_ok(ht, in[i], ref, k[i].out),
                    "%s: the reference narrows %#010x (%s) to %#06x, not %#06x", ht->name,
                    k[i].in, k[i].what, ref, k[i].out);
        expect_true(narrow_ok(ht, in[i], out[i], k[i].out),
                    "%s: narrowing %#010x (%.9g, %s) gives %#06x, want %#06x", ht->name, k[i].in,
                    (double)in[i], k[i].what, out[i], k[i].out);
    }
    test_leave("known values");
}

static void random_values(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    test_rng rng;
    rng_seed(&rng, ht->dtype == ATTN_BF16 ? 4101 : 4102);
    /* counts that are no multiple of a vector block: every path has a tail */
    enum { N_BITS = (1 << 20) + 13, N_BETWEEN = (1 << 18) + 7, N_TIES = (1 << 16) + 5 };
    float *in = talloc(N_BITS * sizeof(float));
    for (size_t i = 0; i < N_BITS; i++)
        in[i] = float_of((uint32_t)rng_u64(&rng));
    compare_narrowing(ht, in, N_BITS, "random float bits");
    /* between two neighbours a < b of the type (finite, of either sign; b the
     * next larger magnitude, infinity after the largest finite): uniform
     * floats in [a, b] and the midpoints */
    float *between = talloc(N_BETWEEN * sizeof(float)), *ties = talloc(N_TIES * sizeof(float));
    const uint16_t last = (uint16_t)(ht->inf - 1);
    for (size_t i = 0; i < N_BETWEEN + N_TIES; i++) {
        const uint16_t m = (uint16_t)rng_below(&rng, (size_t)last + 1);
        const double a = ht->decode(m);
        const double b = m == last ? 2.0 * ht->max - ht->decode((uint16_t)(last - 1))
                                   : ht->decode((uint16_t)(m + 1));
        const double sign = rng_u64(&rng) & 1 ? -1.0 : 1.0;
        if (i < N_BETWEEN)
            between[i] = (float)(sign * (a + (b - a) * rng_uniform(&rng)));
        else
            ties[i - N_BETWEEN] = (float)(sign * (a + b) / 2.0);
    }
    compare_narrowing(ht, between, N_BETWEEN, "between neighbours");
    /* the midpoints are exact floats (the type's values have at most 11
     * significant bits, their midpoints 12): each a tie */
    compare_narrowing(ht, ties, N_TIES, "midpoints (ties)");
    test_leave("random values");
}

/* The kernels' scaled narrowing (kernels.h, narrow_scaled: a half
 * forward's rows of out, y times 1/l) on the set in use: bit for bit the
 * reference narrowing of the float product x * scale, on random float bits
 * and on values near 1 with scales near their inverse, counts with tails. */
static void scaled_narrowing(void **state)
{
    const half_type *ht = HALF_TYPE(state);
    test_enter();
    const attn_half_kernels hk = attn_half_kernels_of(attn_isa_active(), ht->dtype == ATTN_BF16);
    check_true(hk.narrow_scaled != NULL, "%s: no narrow_scaled", ht->name);
    test_rng rng;
    rng_seed(&rng, ht->dtype == ATTN_BF16 ? 4103 : 4104);
    enum { N = 4099 };
    static const float scales[] = {1.0f, 0.5f, 1.0f / 3.0f, 7.0e-3f, 1.0e30f, 0.0f};
    float *x = talloc(N * sizeof(float));
    uint16_t *got = talloc((N + 1) * sizeof(uint16_t));
    size_t bad = 0;
    for (size_t sc = 0; sc < sizeof scales / sizeof scales[0]; sc++)
        for (int near_one = 0; near_one < 2; near_one++) {
            for (size_t i = 0; i < N; i++)
                x[i] = near_one ? (float)(rng_uniform(&rng) + 0.5) / scales[sc]
                                : float_of((uint32_t)rng_u64(&rng));
            const size_t n = N - sc; /* tails of several lengths */
            got[n] = 0x5A5A;
            hk.narrow_scaled(x, scales[sc], got, n);
            expect_true(got[n] == 0x5A5A, "%s: narrow_scaled wrote past n", ht->name);
            for (size_t i = 0; i < n; i++) {
                const float y = x[i] * scales[sc];
                if (!narrow_ok(ht, y, got[i], ht->encode(y)) && bad++ < 8)
                    expect_true(0, "%s: narrow_scaled(%a, %a) gives %#06x, reference %#06x",
                                ht->name, (double)x[i], (double)scales[sc], got[i],
                                ht->encode(y));
            }
        }
    expect_true(bad == 0, "%s: %zu scaled narrowings wrong", ht->name, bad);
    test_leave("scaled narrowing");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        HALF_CASES(widen),
        HALF_CASES(round_trip),
        HALF_CASES(known_values),
        HALF_CASES(random_values),
        HALF_CASES(scaled_narrowing),
    };
    return cmocka_run_group_tests_name("sdpa_half_convert", tests, NULL, NULL);
}
