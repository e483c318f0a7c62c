/*
 * --profile: where a plan's time goes, phase by phase (attn_plan_set_profiling,
 * attn_plan_profile). After a configuration is timed (profiling off: that is
 * the time the table reports), its plan runs the same number of calls again
 * while it profiles; the counters, divided by the calls, give per call and
 * per phase:
 *
 *   thread_ms      the time the engine's threads spent in the phase, summed
 *                  over threads. On attn's own threads (engine_threads n >= 1)
 *                  that is what attn counts. On BLAS threads (engine_threads
 *                  0) attn counts the calling thread only, whose products run
 *                  on --threads BLAS threads: its times count --threads times,
 *                  so that the engines compare (a phase on the caller alone,
 *                  the softmax, then keeps the other BLAS threads idle, which
 *                  is where that time goes).
 *   share          thread_ms / the call's thread time, wall time x threads
 *                  (n own threads, or --threads BLAS threads); what no phase
 *                  holds is the row "outside" (waiting, imbalance, calls).
 *   gflops         the phase's FLOPs (attn's count of its products) over its
 *                  thread time: GF/s per thread.
 *   ceiling share  gflops / the per-thread ceiling, the GEMM ceiling of the
 *                  dtype and --threads divided by --threads.
 */
#ifndef ATTN_BENCH_PHASE_PROFILE_H
#define ATTN_BENCH_PHASE_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include <attn/attn.h>

typedef struct bench_phase_profile {
    int measured;            /* 0: not profiled (one-shot, not timed, or it failed) */
    unsigned engine_threads; /* attn_plan_get_threads: 0 = BLAS threads */
    size_t threads;          /* --threads: the BLAS threads and the ceiling's */
    size_t calls;            /* profiled calls */
    double wall_s;           /* wall time of one profiled call (their mean) */
    double seconds[ATTN_PHASE_COUNT]; /* attn's thread-seconds of one call */
    double flops[ATTN_PHASE_COUNT];   /* attn's FLOPs of one call */
} bench_phase_profile;

/* One profiled call of a command's kind (the run command's plan call, an
 * sdpa call, a decode loop's pass): it returns its attn_status, says in
 * *calls how many calls it made and in *seconds how long they took (what
 * it does untimed around them, as a cold-cache read, left out). */
typedef attn_status (*bench_profiled_call_fn)(void *context, size_t *calls, double *seconds);

/* Runs `calls` calls of `call` on the plan (NULL: a one-shot, nothing
 * profiled) while it profiles and fills *profile. Returns ATTN_OK
 * (profile->measured = 0 for a one-shot) or the failing call's status. */
attn_status bench_phase_profile_measure(attn_plan *plan, bench_profiled_call_fn call,
                                        void *context, size_t calls, size_t threads,
                                        bench_phase_profile *profile);

/* The block printed under the configuration's table row. ceiling_gflops:
 * the GEMM ceiling of the dtype and threads (0: not measured). */
void bench_phase_profile_print(FILE *out, const bench_phase_profile *profile,
                               double ceiling_gflops);

/* The JSON object {"engine_threads", ..., "phases": [...]} of one row. */
void bench_phase_profile_write_json(FILE *out, const bench_phase_profile *profile,
                                    double ceiling_gflops);

/* --help's PROFILE section. */
void bench_phase_profile_print_help(FILE *out);

/* The profiles of a run, by the CSV key of their row, for the JSON. */
typedef struct bench_phase_profile_entry {
    char key[320]; /* the CSV key columns and the dropout */
    bench_phase_profile profile;
    double ceiling_gflops;
} bench_phase_profile_entry;

typedef struct bench_phase_profile_log {
    bench_phase_profile_entry *entries;
    size_t count, capacity;
} bench_phase_profile_log;

/* Adds a copy; -1 when memory runs out (the profile is then not in the JSON). */
int bench_phase_profile_log_add(bench_phase_profile_log *log, const char *key,
                                const bench_phase_profile *profile, double ceiling_gflops);

/* The entry of a key, or NULL. */
const bench_phase_profile_entry *bench_phase_profile_log_find(const bench_phase_profile_log *log,
                                                              const char *key);

void bench_phase_profile_log_free(bench_phase_profile_log *log);

#endif /* ATTN_BENCH_PHASE_PROFILE_H */
