/*
 * The configurations of a sweep: the cartesian product of the option lists
 * (util/product.h), nested as threads > dtype > op > causal > B > C > heads >
 * wo > T > dropout > api > path > engine (engine varies fastest). The
 * configurations of one shape (they differ in dropout, api, path and engine)
 * are neighbours, so the peers measure a shape once, right after attn's
 * first configuration of it.
 *
 * Left out, and counted by reason: combinations attn cannot run (see
 * bench_config_invalid_reason), C not a multiple of NH, and engine auto (and
 * one-shots, which run at the default) at a thread count other than the one
 * auto resolves to (bench_attn_auto_mismatch: every row runs attn, its peers
 * and the ceiling on one count). A configuration
 * whose path cannot be chosen runs once, as path auto, whatever --path lists.
 */
#ifndef ATTN_BENCH_SWEEP_H
#define ATTN_BENCH_SWEEP_H

#include <stddef.h>

#include "measure/config.h"
#include "measure/omissions.h"
#include "measure/options.h"

#define BENCH_SWEEP_MAX 100000

typedef struct bench_sweep {
    bench_config *configs;
    size_t count;
    bench_omissions omitted;
} bench_sweep;

/* Returns 0, or -1 with a reason in error (more than BENCH_SWEEP_MAX
 * combinations, memory, nothing left to run). */
int bench_sweep_build(const bench_options *options, bench_sweep *sweep, char *error,
                      size_t error_size);

void bench_sweep_free(bench_sweep *sweep);

#endif /* ATTN_BENCH_SWEEP_H */
