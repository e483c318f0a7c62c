/*
 * test_self_attention: attn_self_attention_* (one projected head, X (B,T,C),
 * Wq/Wk/Wv (C,hs), scale 1/sqrt(hs)) against the double reference over many
 * shapes: T = 1, hs = 1, C = 1, C and T not multiples of 8 or 16, B > 1,
 * causal and not, weights requested and weights = NULL, and sequences long
 * enough (T >= 2048) for the library's tiled path.
 *
 * Inputs: X ~ N(0,1) and W* ~ N(0, 1/C) (so Q, K, V = O(1) and the scaled
 * scores are O(1)), rounded to the element type; the reference runs in
 * double on the rounded values.
 * Residuals (check.h): weights per row max|w - ref| / max ref; out
 * max|out - ref| / max|V| with V = X Wv from the reference. Tolerance 1e-5
 * (f32) / 1e-12 (f64), justified in precision.h.
 */
#include <string.h>

#include "support/inputs.h"
#include "support/test_common.h"

typedef struct head_shape {
    size_t B, T, C, hs;
} head_shape;

static void random_shapes(void **state)
{
    const test_prec *p = TEST_PREC(state);
    const head_shape shapes[] = {
        {1, 1, 1, 1},   {1, 1, 8, 1},    {2, 1, 5, 3},    {1, 6, 64, 16},  {3, 7, 13, 5},
        {2, 17, 33, 1}, {1, 31, 24, 17}, {4, 9, 70, 9},   {2, 64, 48, 16}, {1, 100, 37, 23},
        {5, 3, 1, 7},   {1, 130, 16, 8}, {3, 16, 16, 16}, {2, 33, 65, 4},  {1, 2, 3, 129},
    };
    test_rng rng;
    rng_seed(&rng, 41);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int causal = 0; causal <= 1; causal++)
            for (int with_weights = 1; with_weights >= 0; with_weights--) {
                head_data h = head_random(p, &rng, shapes[i].B, shapes[i].T, shapes[i].C,
                                          shapes[i].hs, 2.0);
                head_check(p, &h, causal, with_weights, "random");
            }
    check_worst_report(p->name);
}

/* Long sequences without weights take the library's tiled path (online
 * softmax over key blocks, for T >= 2048 at present); with weights the full
 * (T,T) path. Both against the reference at T = 2178 (no multiple of a
 * power-of-two block), causal and not, B = 2, T = 2048 exactly, and W gain 2:
 * scores up to ~15,
 * so the running maximum moves between key blocks and the rescaling matters.
 * A score's rounding error is ~u|S|, so the f32 residual grows with the
 * gain: 1.2e-6 at gain 1, 3e-6 at gain 2 (8e-6 at gain 3, too close to the
 * tolerance to say anything). */
static void long_sequences(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 43);
    /* query positions at and beside the power-of-two block edges up to 1024
     * and the last ones; the reference runs for these rows only (each
     * library run at this length costs seconds under valgrind, so there are
     * four, one with B = 2) */
    const size_t rows[] = {0,    1,    2,    63,   64,   127,  128,  129,  255,  256,  257,  511,
                           512,  513,  1023, 1024, 1025, 1500, 2047, 2048, 2100, 2176, 2177};
    const size_t n_rows = sizeof rows / sizeof rows[0];
    const size_t T = 2178;
    head_data h1 = head_random(p, &rng, 1, T, 4, 3, 2.0);
    head_check_rows(p, &h1, 0, 0, rows, n_rows, "long, not causal, weights NULL");
    head_check_rows(p, &h1, 1, 1, rows, n_rows, "long, causal, weights requested");
    head_data h2 = head_random(p, &rng, 2, T, 5, 2, 2.0);
    head_check_rows(p, &h2, 1, 0, rows, n_rows, "long, causal, weights NULL, B = 2");
    /* exactly at the present tiling threshold */
    head_data h3 = head_random(p, &rng, 1, 2048, 3, 4, 2.0);
    head_check_rows(p, &h3, 1, 0, rows, n_rows - 4, "T = 2048, causal, weights NULL");
    check_worst_report(p->name);
}

/* causal is "0 or nonzero": any nonzero value masks exactly like 1 */
static void causal_flag_values(void **state)
{
    const test_prec *p = TEST_PREC(state);
    test_rng rng;
    rng_seed(&rng, 42);
    head_data h = head_random(p, &rng, 2, 5, 6, 3, 1.0);
    const int flags[] = {1, 2, -1, 1 << 30};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        head_check(p, &h, flags[i], 1, flags[i] == 1 ? "causal 1" : "causal != 0, 1");
    /* the same computation as causal = 1, to the bit */
    double *out1, *w1, *out2, *w2;
    head_run(p, &h, NULL, 1, &out1, &w1);
    head_run(p, &h, NULL, -1, &out2, &w2);
    check_true(memcmp(w1, w2, h.B * h.T * h.T * sizeof(double)) == 0, "causal -1 differs from 1");
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        PREC_CASES(random_shapes),
        PREC_CASES(long_sequences),
        PREC_CASES(causal_flag_values),
    };
    return cmocka_run_group_tests_name("attn_self_attention", tests, NULL, NULL);
}
