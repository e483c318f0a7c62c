/*
 * attn's call of one sdpa configuration: the plan (attn_sdpa_plan_create
 * with ATTN_CAUSAL and, for forwards, ATTN_INFERENCE; the window; engine
 * blas or own: attn_plan_set_threads 0 or --threads, auto: no call), made
 * once for the shape (a decode loop's: Tq = 1 and Tk the cache's capacity),
 * and the arguments bound to the problem's arrays with the strides of its
 * layout (sdpa_layout.h), given explicitly also where 0 would mean the same.
 * The call is attn_sdpa_forward_* (lse NULL), or for op=backward
 * attn_sdpa_forward_* (with lse) followed by attn_sdpa_backward_*.
 * With --dropout p above 0 (op backward), each timed call is preceded by
 * attn_plan_set_dropout(plan, p, BENCH_DROPOUT_SEED, offset), the offset
 * one more for each call (0 first), as a training step's; the checked call
 * runs before any of them, at p = 0.
 * The dtype picks the calls: _f32, _f64, or attn.h's half precision _bf16,
 * _f16 (a plan of ATTN_BF16 / ATTN_F16; the mask and lse float).
 */
#ifndef ATTN_BENCH_SDPA_CALL_H
#define ATTN_BENCH_SDPA_CALL_H

#include <stdint.h>

#include <attn/attn.h>

#include "measure/sdpa_problem.h"

typedef struct bench_sdpa_call {
    attn_plan *plan;
    const bench_sdpa_problem *problem;
    attn_sdpa_args_f32 a32;
    attn_sdpa_args_f64 a64;
    attn_sdpa_args_bf16 abf16;
    attn_sdpa_args_f16 af16;
    int backward;
    double dropout;          /* p of the timed calls (0: none) */
    uint64_t dropout_offset; /* of the next timed call */
} bench_sdpa_call;

/* Creates the plan of the configuration (engine: the config's) and binds
 * the problem's arrays. On error call->plan is NULL. */
attn_status bench_sdpa_call_create(bench_sdpa_call *call, const bench_sdpa_shape *shape,
                                   bench_engine engine, const bench_sdpa_problem *problem);

/* Points Q and out at the arrays of step `step` of a decode loop (0: the first). */
void bench_sdpa_call_at_step(bench_sdpa_call *call, size_t step);

attn_status bench_sdpa_call_run(const bench_sdpa_call *call);

/* A timed call: the dropout of the call's offset set (p above 0), then the call. */
attn_status bench_sdpa_call_run_timed(bench_sdpa_call *call);

void bench_sdpa_call_destroy(bench_sdpa_call *call);

#endif /* ATTN_BENCH_SDPA_CALL_H */
