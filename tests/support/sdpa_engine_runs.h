/*
 * One sdpa case on every engine (test_sdpa, and the decode split, NaN,
 * special-score, gradient and one-shot cases of its sibling suites): plans
 * on BLAS threads (attn_plan_set_threads 0), 1 and 2 own threads, the checks
 * of one run's outputs against the reference (sdpa_problem.h), and the
 * largest residuals, reported per precision.
 *
 * run_case: the case's forward (out and lse) and, where marked, backward
 * (dQ, dK, dV) on a training plan on each engine, and its forward again on
 * an ATTN_INFERENCE plan (2 own threads, lse NULL); 1 and 2 own threads give
 * the same bytes (attn.h: own-thread results do not depend on the count).
 * Every output buffer starts as a sentinel pattern, so an element left
 * unwritten (or accumulated into) fails; the gaps between rows must be
 * untouched, the rows of dK and dV of keys j >= L_b exactly 0, rows that
 * see no key out 0 and lse -inf exactly, their dQ rows 0.
 *
 * Under valgrind (~50x slower), or with ATTN_SDPA_SHORT=1 in the environment
 * (other slow hosts: CI's AArch64 build under qemu-aarch64; sdpa_calls.h:
 * sdpa_short_run), each case runs on BLAS threads and 2 own threads, in one
 * precision (alternating from case to case, counted over the program's
 * run_case calls), without the extra inference-plan forward: the same code
 * paths in about a quarter of the time.
 */
#ifndef ATTN_TEST_SDPA_ENGINE_RUNS_H
#define ATTN_TEST_SDPA_ENGINE_RUNS_H

#include <stddef.h>

#include <attn/attn.h>

#include "support/check.h"
#include "support/sdpa_problem.h"

/* whether this run is short (above; sdpa_short_run, asked once) */
int sdpa_reduced_run(void);
/* whether code runs many times slower than a Release build: a slow build,
 * or a short run */
int slow_run(void);

/* prints a largest residual with its tolerance and the kernel set */
void report(const char *what, const check_worst *w);

typedef struct worsts {
    check_worst out, lse, grads;
} worsts;

void check_forward(const test_prec *p, const problem *pr, const expected *e, const outputs *o,
                   int with_lse, worsts *w, const char *what);
void check_backward(const test_prec *p, const problem *pr, const expected *e, const outputs *o,
                    worsts *w, const char *what);

typedef struct engine {
    const char *name;
    unsigned threads; /* the argument of attn_plan_set_threads; AUTO: not called */
} engine;

/* BLAS threads (0), 1 own thread, 2 own threads */
extern const engine engines[3];

/* "<kernel set> <precision> "<case>" (<its fields>), <path>, <engine>" in buf */
const char *describe(char *buf, size_t size, const test_prec *p, const spec *c,
                     const char *engine_name, const char *path);
/* a plan for pr with flags (plus the case's causal), on `threads`; NULL
 * (the failure recorded) if it cannot be had */
attn_plan *problem_plan(const test_prec *p, const problem *pr, unsigned flags, unsigned threads,
                        const char *what);
/* the bytes of two runs' outputs equal */
int outputs_identical(const test_prec *p, const problem *pr, const outputs *a, const outputs *b,
                      int backward);
/* whether this run uses precision pi (0 f32, 1 f64) for its n-th case */
int precision_runs(size_t pi, size_t n);
/* whether this run uses engine k */
int engine_runs(size_t k);

/* One case on every engine in both precisions (above). */
void run_case(const spec *c, test_rng *rng, worsts w[2]);
/* The cases in turn (rng seeded with seed), then their largest residuals. */
void run_cases(const spec *cases, size_t n, unsigned long seed, const char *what);

#endif /* ATTN_TEST_SDPA_ENGINE_RUNS_H */
