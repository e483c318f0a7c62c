/*
 * Rows of no weight: a row of weights P whose scores were all -inf (fully
 * masked) is all 0, and its output must be 0 too (attn.h: "output 0, never
 * NaN"); but the product P V multiplies V by those zeros, which is NaN
 * wherever V holds an Inf or a NaN. The paths that form P V from a
 * materialized P clear such rows after the product. A row with any weight
 * has a nonzero entry (1 at its max, or a share of +inf, or NaN), so "all
 * entries 0" is exactly "no weight".
 */
#ifndef ATTN_UNWEIGHTED_H
#define ATTN_UNWEIGHTED_H

#include <stddef.h>
#include <string.h>

#include "core/real.h"

/* Rows r < rows of P (ld ldp) with n_valid + r * n_valid_step entries each
 * (those the row kernel weighted): where all are 0, row r of Y (ld ldy,
 * width entries) is set to 0. */
static inline void FN(attn_clear_unweighted_rows)(const real *P, size_t ldp, size_t rows,
                                                  size_t n_valid, size_t n_valid_step, real *Y,
                                                  size_t ldy, size_t width)
{
    for (size_t r = 0; r < rows; r++) {
        const real *p = P + r * ldp;
        const size_t n = n_valid + r * n_valid_step;
        size_t j = 0;
        while (j < n && p[j] == REAL_C(0.0))
            j++;
        if (j == n)
            memset(Y + r * ldy, 0, width * sizeof(real));
    }
}

#endif /* ATTN_UNWEIGHTED_H */
