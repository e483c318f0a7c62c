/*
 * Helpers of the MPI suites (tests/mpi): the ranks' context and failure
 * counts (plain style: every rank checks everything and keeps going, so
 * that all ranks make the same collective calls; the failures are summed
 * at the end), one element type seen through untyped wrappers of the sdpa
 * and ring calls (so each test body exists once), deterministic inputs,
 * the local slice of a global sequence, and the ring-against-sdpa cases.
 *
 * Residual: max_i |got_i - ref_i| / max_i |ref_i| over an array (the
 * relative error on the array's scale); infinities must match exactly and
 * a NaN counts as +inf. Tolerances (the suite's, precision.h of
 * tests/support): f64 1e-12, f32 1e-5.
 */
#ifndef ATTN_TEST_RING_SUPPORT_H
#define ATTN_TEST_RING_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <attn/attn.h>
#include <attn/attn_mpi.h>

/* ---- context ---------------------------------------------------------- */

typedef struct rt_ctx {
    int rank, size;
    long failures, checks;
    double worst[2]; /* largest residual seen per precision (0 f32, 1 f64) */
} rt_ctx;

/* MPI_Init and the communicator's rank and size. */
void rt_init(rt_ctx *ctx, int *argc, char ***argv);
/* Counts a failure of this rank and prints it (stderr, with the rank). */
void rt_fail(rt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Fails unless got == want. */
void rt_expect_status(rt_ctx *ctx, attn_status got, attn_status want, const char *what);
/* Fails unless residual <= tol (NaN fails); records the worst per precision. */
void rt_expect_residual(rt_ctx *ctx, int f64, double residual, double tol, const char *what);
/* Sums every rank's failures, prints a summary on rank 0, MPI_Finalize;
 * the process's exit code (0: no rank failed). */
int rt_finish(rt_ctx *ctx, const char *suite);

/* ---- one element type --------------------------------------------------- */

/* The arrays of an sdpa or ring call, untyped (attn_sdpa_args_*). */
typedef struct rt_arrays {
    const void *Q, *K, *V;
    size_t ldq, ldk, ldv;
    const void *mask;
    size_t mask_ld, mask_sb, mask_sh;
    const size_t *key_lengths;
    void *out;
    size_t ldo;
    void *lse;
    size_t sbq, shq, sbk, shk, sbv, shv, sbo, sho; /* batch and head strides; 0: dense */
} rt_arrays;

typedef struct rt_prec {
    const char *name; /* "f32", "f64" */
    attn_dtype dtype;
    size_t size;
    double tol;
    int f64;
    void (*from_double)(void *dst, const double *src, size_t n);
    void (*to_double)(double *dst, const void *src, size_t n);
    /* a NULL rt_arrays passes a NULL args pointer */
    attn_status (*sdpa_forward)(attn_plan *plan, const rt_arrays *a);
    attn_status (*sdpa_backward)(attn_plan *plan, const rt_arrays *a, const void *dout,
                                 void *dQ, void *dK, void *dV);
    attn_status (*ring_forward)(attn_plan *plan, const rt_arrays *a);
    attn_status (*ring_backward)(attn_plan *plan, const rt_arrays *a, const void *dout,
                                 void *dQ, void *dK, void *dV);
    const struct rt_prec *other;
} rt_prec;

extern const rt_prec rt_f32, rt_f64;

/* ---- data ------------------------------------------------------------------ */

/* splitmix64 normals: n values N(0,1) from `seed`, the same on every rank. */
void rt_normals(uint64_t seed, double *x, size_t n);
/* x rounded to the element type, in place. */
void rt_round(const rt_prec *p, double *x, size_t n);
/* malloc that fails the process on NULL (tests only). */
void *rt_alloc(size_t bytes);

/* The global token of local token t of `rank` (attn_mpi.h's layouts). */
size_t rt_global_token(size_t t, size_t T_local, int rank, int size, int zigzag);

/* max |got - ref| / max |ref| (see above). */
double rt_residual(const double *got, const double *ref, size_t n);

/* ---- the ring against sdpa on the gathered sequence ------------------------ */

/* The layouts of the local arrays (attn.h's strides), all of them read and
 * written in place by the ring. */
typedef enum rt_layout {
    RT_ROWS = 0, /* (B,T,NH,hs) rows: only ld given (0 when dense), sb, sh 0 */
    RT_HEADS,    /* (B,NH,T,hs), PyTorch's: every stride given */
    RT_FUSED     /* Q, K, V in one (B,T,NH*hs + NH_kv*(hs + hs_v)) buffer, and dQ, dK,
                  * dV likewise (the strides of Q, K, V); out and dout (B,NH,T,hs_v) */
} rt_layout;

typedef struct rt_problem {
    size_t B, NH, NH_kv, T_local, hs, hs_v;
    int causal, zigzag;
    size_t pad;    /* gaps: extra elements at the end of every row (RT_ROWS, and
                    * RT_FUSED's fused rows), extra rows at the end of every head
                    * (RT_HEADS's, and RT_FUSED's out: a cache's spare capacity) */
    int no_lse;    /* forward without lse (the ring keeps its own) */
    double scale;  /* <= 0: the default */
    uint64_t seed;
    rt_layout layout;
} rt_problem;

/* Runs the problem on every rank: the reference (an sdpa plan on the global
 * sequence, dense, computed on every rank), the ring plan's forward and,
 * when `backward`, its backward on the rank's arrays in the problem's
 * layout, and checks the rank's out, lse, dQ, dK, dV against the
 * reference's rows, and that the layout's gaps are untouched. */
void rt_run_problem(rt_ctx *ctx, const rt_prec *p, const rt_problem *problem, int backward,
                    const char *name);

/* The problems of both correctness suites (ring_cases.c) and their names. */
extern const rt_problem rt_cases[];
extern const char *const rt_case_names[];
extern const size_t rt_case_count;

#endif /* ATTN_TEST_RING_SUPPORT_H */
