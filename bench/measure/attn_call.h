/*
 * The measured attn call of a configuration, on a problem's arrays:
 *   api=plan     the plan is created once by bench_attn_call_prepare (flags:
 *                ATTN_CAUSAL; ATTN_INFERENCE for forwards; ATTN_MATERIALIZED
 *                or ATTN_TILED for a forced path; engine blas or own:
 *                attn_plan_set_threads 0 or threads, auto: no call), then each call is
 *                attn_forward_* (op=forward) or attn_forward_* +
 *                attn_backward_* (op=backward);
 *   api=oneshot  each call is attn_self_attention_* (single head, heads from
 *                --hs) or attn_mha_forward_* / attn_mha_backward_* (heads
 *                from --NH), which create and destroy their own plan.
 */
#ifndef ATTN_BENCH_ATTN_CALL_H
#define ATTN_BENCH_ATTN_CALL_H

#include <attn/attn.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/config.h"
#include "measure/problem.h"

typedef struct bench_attn_call {
    bench_config config;
    const bench_problem *problem;
    attn_plan *plan; /* api=plan only */
    uint64_t dropout_offset; /* of the next timed call (shape.dropout above 0) */
} bench_attn_call;

/* Binds the call to the problem and creates its plan (api=plan). Returns
 * ATTN_OK or attn_plan_create's status. */
attn_status bench_attn_call_prepare(bench_attn_call *call, const bench_config *config,
                                    const bench_problem *problem);

/* The engine the call runs on (attn_plan_get_threads): 0 = BLAS threads,
 * n = n threads of attn's own; a one-shot's is the default's,
 * bench_attn_auto_threads(). */
unsigned bench_attn_call_engine_threads(const bench_attn_call *call);

/* What ATTN_THREADS_AUTO resolves to in this process (ATTN_NUM_THREADS, else
 * the kernel set and the CPUs), from a throwaway plan, asked once. */
unsigned bench_attn_auto_threads(void);

/* Why a configuration with engine auto (a one-shot runs at the default too,
 * as auto) cannot stand in a row of `threads` threads: auto resolves to
 * attn's own engine on another count, so its row's peers and ceiling would
 * run on other counts than attn; NULL when it can (auto resolves to that
 * count, or to BLAS threads, which run at the row's count). */
const char *bench_attn_auto_mismatch(bench_engine engine, size_t threads);

/* The threads attn ran on: engine_threads (attn_plan_get_threads) when it
 * ran on its own engine, else the row's BLAS threads. */
size_t bench_attn_threads_used(unsigned engine_threads, size_t row_threads);

/* The header's "# engine auto (WHAT): ..." line: what that is here. */
void bench_attn_auto_threads_print(FILE *out, const char *what);

/* One measured call. */
attn_status bench_attn_call_run(const bench_attn_call *call);

/* Before a timed call of a training row with dropout p above 0 (nothing at
 * p = 0): attn_plan_set_dropout(plan, p, BENCH_DROPOUT_SEED, *offset), then
 * *offset one more, as a training loop gives each step its own offset. The
 * checked call runs before any of them, at p = 0. */
attn_status bench_dropout_before_call(attn_plan *plan, double p, uint64_t *offset);

/* A timed call: bench_dropout_before_call, then bench_attn_call_run. */
attn_status bench_attn_call_run_timed(bench_attn_call *call);

/* Destroys the plan. */
void bench_attn_call_release(bench_attn_call *call);

#endif /* ATTN_BENCH_ATTN_CALL_H */
