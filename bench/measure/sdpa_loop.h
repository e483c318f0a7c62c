/*
 * attn's side of the decode-loop scenario (sdpa_config.h): a pass of the
 * loop as a client runs it, and its check.
 *
 * Step s (0 .. steps-1) of a pass, for S = Tk + s + 1: the token's K and V
 * (K_new, V_new of the step) are copied into slot S - 1 of every key/value
 * head of every sequence, through the cache's strides (bshd
 * (B,Tk+steps,NH_kv,hs) or bhsd (B,NH_kv,Tk+steps,hs): the append of
 * PyTorch's k_cache[:, :, S-1] = k); key_lengths become S; then the one
 * timed call: attn_sdpa_forward_* of the step's query (Tq = 1) on the cache
 * where it is, the plan being made once for the capacity (sdpa_call.h).
 * The append and the cold-cache read (when asked) are not timed. Every
 * pass rewrites the same tokens into the same slots, so every pass computes
 * the same.
 */
#ifndef ATTN_BENCH_SDPA_LOOP_H
#define ATTN_BENCH_SDPA_LOOP_H

#include "measure/sdpa_call.h"
#include "measure/sdpa_reference.h"
#include "util/timing.h"

/* One pass: samples[s] gets step s's seconds (samples NULL: untimed);
 * prepare(context) runs before each call, untimed (NULL: nothing). Returns
 * ATTN_OK or the first failing call's status. */
attn_status bench_sdpa_loop_pass(bench_sdpa_call *call, bench_prepare_fn prepare,
                                 void *context, double *samples);

/* Checks the outputs of the last pass: the steps BENCH_SDPA_LOOP_CHECKED_STEPS
 * spread over the loop (the first and the last included), each against the
 * reference of its query over its S keys (sdpa_reference.h, check_rows
 * rows); check gets the worst. Returns 0, or -1 when memory runs out. */
#define BENCH_SDPA_LOOP_CHECKED_STEPS 5
int bench_sdpa_loop_check(const bench_sdpa_problem *problem, size_t check_rows,
                          bench_check *check);

#endif /* ATTN_BENCH_SDPA_LOOP_H */
