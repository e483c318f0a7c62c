/*
 * A program outside the attn tree, built against an installed attn (CMake
 * package or pkg-config). It includes the header the way users do, calls one
 * projected head on a tiny input and checks the result; exit status 0 means
 * every check passed.
 */
#include <attn/attn.h>

#include <math.h>
#include <stdio.h>

#define B 1
#define T 3
#define C 2
#define HS 2

int main(void)
{
    /* X (B,T,C); Wq, Wk, Wv (C,hs) */
    const double X[B * T * C] = {1.0, 0.0, 0.0, 1.0, 1.0, 1.0};
    const double Wq[C * HS] = {0.5, -0.25, 0.125, 1.0};
    const double Wk[C * HS] = {1.0, 0.5, -0.5, 0.25};
    const double Wv[C * HS] = {1.0, 2.0, 3.0, 4.0};
    double out[B * T * HS];
    double weights[B * T * T];
    int failures = 0;

    if (attn_version_number() != ATTN_VERSION_NUMBER) {
        fprintf(stderr, "library version %u (%s) != header version %u (%s)\n",
                attn_version_number(), attn_version_string(), (unsigned)ATTN_VERSION_NUMBER,
                ATTN_VERSION_STRING);
        ++failures;
    }

    for (int causal = 0; causal <= 1; ++causal) {
        attn_status st = attn_self_attention_f64(B, T, C, HS, causal, X, Wq, Wk, Wv, out, weights);
        if (st != ATTN_OK) {
            fprintf(stderr, "causal=%d: attn_self_attention_f64: %s\n", causal,
                    attn_status_string(st));
            ++failures;
            continue;
        }
        for (int t = 0; t < T; ++t) {
            double sum = 0.0;
            for (int j = 0; j < T; ++j) {
                double w = weights[t * T + j];
                if (!(w >= 0.0 && w <= 1.0) || (causal && j > t && w != 0.0)) {
                    fprintf(stderr, "causal=%d: weights[%d][%d] = %g\n", causal, t, j, w);
                    ++failures;
                }
                sum += w;
            }
            if (fabs(sum - 1.0) > 1e-12) {
                fprintf(stderr, "causal=%d: row %d of the weights sums to %.17g\n", causal, t,
                        sum);
                ++failures;
            }
        }
        /* Row 0 of a causal head sees only itself: out[0] = V[0] = X[0] Wv. */
        if (causal && (fabs(out[0] - 1.0) > 1e-12 || fabs(out[1] - 2.0) > 1e-12)) {
            fprintf(stderr, "causal=1: out[0] = (%g, %g), expected (1, 2)\n", out[0], out[1]);
            ++failures;
        }
    }

    if (attn_self_attention_f64(B, T, C, HS, 0, NULL, Wq, Wk, Wv, out, NULL) !=
        ATTN_ERR_NULL_POINTER) {
        fprintf(stderr, "a NULL X was not reported as ATTN_ERR_NULL_POINTER\n");
        ++failures;
    }

    printf("attn %s (%s softmax): %s\n", attn_version_string(), attn_simd_name(),
           failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
