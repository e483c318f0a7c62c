/*
 * The naive C peer (naive.h) timed on a problem's arrays, in this process,
 * with its own repeat policy (its calls are slow: one warmup call and
 * --naive-repeats timed calls, --min-time applying). Shapes with T above
 * max_T are skipped with a note: the loops cost O(B*NH*T^2*hs) and would
 * dominate the sweep.
 */
#ifndef ATTN_BENCH_PEER_NAIVE_H
#define ATTN_BENCH_PEER_NAIVE_H

#include <stddef.h>

#include "measure/peer_timing.h"
#include "measure/problem.h"
#include "util/timing.h"

/* Overwrites the problem's outputs. */
void bench_naive_peer_time(const bench_problem *problem, const bench_repeat_policy *policy,
                           size_t max_T, bench_peer_timing *result);

#endif /* ATTN_BENCH_PEER_NAIVE_H */
