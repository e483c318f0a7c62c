/*
 * Where a plan's time goes (attn_plan_set_profiling, attn_plan_profile):
 * while a plan profiles, each thread that works on its calls adds, per
 * phase (attn_phase, attn.h), the time it spent and the FLOPs it did to a
 * row of its own, so no two threads ever write one counter (and no counter
 * is written when the plan does not profile: the row pointer is NULL and
 * the clock is never read). Not templated.
 *
 *   row = attn_profile_row(rows, worker)          NULL when not profiling
 *   ATTN_PROFILED(row, ATTN_PHASE_SCORES, attn_product_flops(M, N, K),
 *                 the phase's work);
 */
#ifndef ATTN_PROFILE_H
#define ATTN_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include <attn/attn.h>

/* Doubles per worker row: seconds and FLOPs of each phase, padded to whole
 * cache lines so that two workers' rows never share one. */
#define ATTN_PROFILE_ROW_DOUBLES ((2 * ATTN_PHASE_COUNT + 7) / 8 * 8)

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t attn_profile_now_ns(void);

static inline double *attn_profile_row(double *rows, unsigned worker)
{
    return rows != NULL ? rows + (size_t)worker * ATTN_PROFILE_ROW_DOUBLES : NULL;
}

static inline uint64_t attn_profile_begin(const double *row)
{
    return row != NULL ? attn_profile_now_ns() : 0;
}

static inline void attn_profile_end(double *row, attn_phase phase, uint64_t start, double flops)
{
    if (row == NULL)
        return;
    row[2 * phase] += (double)(attn_profile_now_ns() - start) * 1e-9;
    row[2 * phase + 1] += flops;
}

/* `statement`, counted to `phase` of `row` with `flops` when profiling. */
#define ATTN_PROFILED(row, phase, flops, statement)                          \
    do {                                                                    \
        const uint64_t attn_profiled_start_ = attn_profile_begin(row);      \
        statement;                                                          \
        attn_profile_end((row), (phase), attn_profiled_start_, (flops));    \
    } while (0)

/* 2 M N K: the FLOPs of an (M,K) by (K,N) product. */
static inline double attn_product_flops(size_t M, size_t N, size_t K)
{
    return 2.0 * (double)M * (double)N * (double)K;
}

#endif /* ATTN_PROFILE_H */
