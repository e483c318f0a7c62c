/*
 * attn-bench-ring-worker: what a ring plan's steps cost on this machine
 * (the numbers docs/scaling-model.md is checked against), the MPI program
 * that `attn-bench ring` (ring_command.c) starts under mpiexec, once per
 * rank count and mode; by hand, e.g.
 *   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ATTN_NUM_THREADS=1 \
 *   mpirun -np 2 attn-bench-ring-worker T=1024 hs=64 NH=8 NH_kv=8 B=1 mode=zigzag \
 *     dtype=f32 reps=5
 * (mode: full = not causal, causal = causal contiguous, zigzag = causal
 * zigzag). It prints, from attn_ring_counters over `reps` calls after one
 * warm-up call, per ring step and rank (mean and max over the ranks):
 *   compute   seconds computing (block products, merges, packing, sums)
 *   progress  seconds in MPI_Testall between a step's pieces of work
 *   wait      seconds blocked on the step's messages after its computation
 * the bytes each rank sent per call, the time the same messages take alone
 * (the ring exchange with nothing to compute: MPI_Isend/MPI_Irecv +
 * MPI_Waitall of one block, which on shared memory is a copy), and
 *   hidden = 1 - wait in the steps / (their exchanges alone)
 * the share of the communication hidden behind the computation; and the
 * rate of the block products (the model's FLOPs over the compute seconds).
 * The forward's steps exchange P - 1 K/V blocks, the backward's P - 1 K/V
 * blocks and P - 1 dK/dV blocks (the same size); the backward's last
 * dK/dV block, which returns each rank's own sums after the last step,
 * is reported apart (nothing is left to compute while it travels).
 * Rank 0 also prints one line per op for attn-bench ring's CSV:
 *   row OP P MODE DTYPE B NH NH_kv T_LOCAL REPS MS_PER_CALL MS_MAX COMPUTE_MS
 *       PROGRESS_MS WAIT_MS SENT_BYTES BLOCK_BYTES EXCHANGE_MS HIDDEN RETURN_MS
 *       GFLOPS
 * (the step times per step and rank, means over the ranks; HIDDEN a
 * fraction in [0, 1]).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <attn/attn.h>
#include <attn/attn_mpi.h>

typedef struct options {
    size_t T, hs, NH, NH_kv, B;
    int causal, zigzag, f64, reps;
} options;

static int parse(int argc, char **argv, options *o)
{
    *o = (options){1024, 64, 8, 8, 1, 1, 1, 0, 5};
    for (int i = 1; i < argc; i++) {
        char key[32];
        char value[32];
        if (sscanf(argv[i], "%31[^=]=%31s", key, value) != 2)
            return 0;
        const size_t n = (size_t)strtoull(value, NULL, 10);
        if (strcmp(key, "T") == 0)
            o->T = n;
        else if (strcmp(key, "hs") == 0)
            o->hs = n;
        else if (strcmp(key, "NH") == 0)
            o->NH = n;
        else if (strcmp(key, "NH_kv") == 0)
            o->NH_kv = n;
        else if (strcmp(key, "B") == 0)
            o->B = n;
        else if (strcmp(key, "reps") == 0)
            o->reps = (int)n;
        else if (strcmp(key, "dtype") == 0)
            o->f64 = strcmp(value, "f64") == 0;
        else if (strcmp(key, "mode") == 0) {
            o->causal = strcmp(value, "full") != 0;
            o->zigzag = strcmp(value, "zigzag") == 0;
        } else
            return 0;
    }
    return o->reps > 0;
}

/* The model's FLOPs of one rank's forward (2 per multiply-add of S = Q K^T
 * and of P V over the visible part of each block; the causal diagonal
 * counts its lower triangle with the diagonal). */
static double forward_flops(const options *o, int rank, int size)
{
    const double full = 4.0 * (double)o->B * (double)o->NH * (double)o->T * (double)o->T *
                        (double)o->hs;
    const double diagonal = full * ((double)o->T + 1.0) / (2.0 * (double)o->T);
    double total = 0.0;
    for (int src = 0; src < size; src++) {
        if (!o->causal)
            total += full;
        else if (src == rank)
            total += diagonal;
        else if (o->zigzag)
            total += full / 2.0;
        else if (src < rank)
            total += full;
    }
    return total;
}

static void fill(void *x, size_t n, int f64, unsigned seed)
{
    srand(seed);
    for (size_t i = 0; i < n; i++) {
        const double v = (double)rand() / RAND_MAX - 0.5;
        if (f64)
            ((double *)x)[i] = v;
        else
            ((float *)x)[i] = (float)v;
    }
}

static attn_status forward(attn_plan *plan, int f64, void *Q, void *K, void *V, void *out,
                           void *lse)
{
    if (f64) {
        const attn_sdpa_args_f64 a = {.Q = Q, .K = K, .V = V, .out = out, .lse = lse};
        return attn_ring_forward_f64(plan, &a);
    }
    const attn_sdpa_args_f32 a = {.Q = Q, .K = K, .V = V, .out = out, .lse = lse};
    return attn_ring_forward_f32(plan, &a);
}

static attn_status backward(attn_plan *plan, int f64, void *Q, void *K, void *V, void *out,
                            void *lse, void *dout, void *dQ, void *dK, void *dV)
{
    if (f64) {
        const attn_sdpa_args_f64 a = {.Q = Q, .K = K, .V = V, .out = out, .lse = lse};
        return attn_ring_backward_f64(plan, &a, dout, dQ, dK, dV);
    }
    const attn_sdpa_args_f32 a = {.Q = Q, .K = K, .V = V, .out = out, .lse = lse};
    return attn_ring_backward_f32(plan, &a, dout, dQ, dK, dV);
}

/* Seconds of one ring exchange of `bytes` (send to the next rank, receive
 * from the previous one) with nothing else to do, the max over the ranks of
 * the mean over `reps`. */
static double exchange_alone(size_t bytes, int reps)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 1)
        return 0.0;
    char *send = calloc(bytes, 1), *recv = calloc(bytes, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int r = 0; r < reps; r++) {
        MPI_Request req[2];
        MPI_Irecv(recv, (int)bytes, MPI_BYTE, (rank + size - 1) % size, 9, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(send, (int)bytes, MPI_BYTE, (rank + 1) % size, 9, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    const double mine = (MPI_Wtime() - start) / reps;
    double worst = 0.0;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    free(send);
    free(recv);
    return worst;
}

/* Mean and max over the ranks of one counter. */
static void over_ranks(double mine, int size, double *mean, double *max)
{
    MPI_Allreduce(&mine, mean, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *mean /= size;
}

static void report(const char *what, const options *o, const double c[ATTN_RING_COUNTER_COUNT],
                   double wall, double flops, double block_bytes, double alone, double exchanges,
                   int rank, int size, int reps)
{
    const double steps = c[ATTN_RING_STEPS];
    double compute_mean, compute_max, progress_mean, progress_max, wait_mean, wait_max;
    double sent_mean, sent_max, flops_mean, flops_max, wall_mean, wall_max;
    over_ranks(c[ATTN_RING_COMPUTE_SECONDS] / steps, size, &compute_mean, &compute_max);
    over_ranks(c[ATTN_RING_PROGRESS_SECONDS] / steps, size, &progress_mean, &progress_max);
    over_ranks(c[ATTN_RING_WAIT_SECONDS] / steps, size, &wait_mean, &wait_max);
    over_ranks(c[ATTN_RING_BYTES_SENT] / reps, size, &sent_mean, &sent_max);
    over_ranks(flops / c[ATTN_RING_COMPUTE_SECONDS] * reps, size, &flops_mean, &flops_max);
    over_ranks(wall / reps, size, &wall_mean, &wall_max);
    double return_mean, return_max;
    over_ranks(c[ATTN_RING_RETURN_SECONDS] / reps, size, &return_mean, &return_max);
    if (rank != 0)
        return;
    /* per call and rank, in the steps (the backward's return apart) */
    const double waited = wait_mean * steps / reps - return_mean;
    const double hidden = exchanges > 0.0 ? 1.0 - waited / (exchanges * alone) : 1.0;
    printf("%s: %.3f ms per call (max over ranks %.3f)\n", what, 1e3 * wall_mean, 1e3 * wall_max);
    printf("  per step and rank: compute %.3f ms (max %.3f), MPI progress %.3f ms (max %.3f), "
           "wait %.3f ms (max %.3f)\n",
           1e3 * compute_mean, 1e3 * compute_max, 1e3 * progress_mean, 1e3 * progress_max,
           1e3 * wait_mean, 1e3 * wait_max);
    printf("  sent per rank and call: %.0f bytes (%.2f MiB), %.0f blocks of %.0f bytes; one "
           "exchange alone %.3f ms (%.2f GB/s)\n",
           sent_mean, sent_mean / 1048576.0, sent_mean / block_bytes, block_bytes, 1e3 * alone,
           alone > 0.0 ? block_bytes / alone / 1e9 : 0.0);
    printf("  communication hidden in the steps: %.0f%% (wait %.3f ms per call against %.3f ms "
           "for their %.0f exchanges alone)\n",
           100.0 * (hidden < 0.0 ? 0.0 : hidden), 1e3 * waited, 1e3 * exchanges * alone,
           exchanges);
    if (return_max > 0.0)
        printf("  wait for the own block's dK, dV after the last step: %.3f ms per call (max "
               "%.3f)\n",
               1e3 * return_mean, 1e3 * return_max);
    printf("  block products: %.2f GFLOP/s per rank while computing (best rank %.2f)\n",
           flops_mean / 1e9, flops_max / 1e9);
    printf("row %s %d %s %s %zu %zu %zu %zu %d %.6f %.6f %.6f %.6f %.6f %.0f %.0f %.6f %.4f "
           "%.6f %.3f\n",
           what, size, !o->causal ? "full" : o->zigzag ? "zigzag" : "causal",
           o->f64 ? "f64" : "f32", o->B, o->NH, o->NH_kv, o->T, reps, 1e3 * wall_mean,
           1e3 * wall_max, 1e3 * compute_mean, 1e3 * progress_mean, 1e3 * wait_mean, sent_mean,
           block_bytes, 1e3 * alone, hidden < 0.0 ? 0.0 : hidden, 1e3 * return_mean,
           flops_mean / 1e9);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options o;
    if (!parse(argc, argv, &o)) {
        if (rank == 0)
            fprintf(stderr, "usage: attn-bench-ring-worker [T=n] [hs=n] [NH=n] [NH_kv=n] [B=n] "
                            "[mode=full|causal|zigzag] [dtype=f32|f64] [reps=n]\n");
        MPI_Finalize();
        return 2;
    }
    const size_t e = o.f64 ? sizeof(double) : sizeof(float);
    const size_t nq = o.B * o.T * o.NH * o.hs, nk = o.B * o.T * o.NH_kv * o.hs;
    const size_t nl = o.B * o.NH * o.T;
    void *Q = malloc(nq * e), *K = malloc(nk * e), *V = malloc(nk * e), *out = malloc(nq * e);
    void *lse = malloc(nl * e), *dout = malloc(nq * e), *dQ = malloc(nq * e);
    void *dK = malloc(nk * e), *dV = malloc(nk * e);
    fill(Q, nq, o.f64, 1u + (unsigned)rank);
    fill(K, nk, o.f64, 101u + (unsigned)rank);
    fill(V, nk, o.f64, 201u + (unsigned)rank);
    fill(dout, nq, o.f64, 301u + (unsigned)rank);
    const attn_sdpa_shape shape = {o.B, o.NH, o.NH_kv, o.T, o.T, o.hs, 0};
    const unsigned flags = (o.causal ? ATTN_CAUSAL : 0u) | (o.zigzag ? ATTN_ZIGZAG : 0u);
    attn_plan *plan = NULL;
    attn_status status = attn_ring_plan_create(&plan, MPI_COMM_WORLD, o.f64 ? ATTN_F64 : ATTN_F32,
                                               &shape, 0.0, flags);
    if (status != ATTN_OK) {
        if (rank == 0)
            fprintf(stderr, "attn_ring_plan_create: %s\n", attn_status_string(status));
        MPI_Finalize();
        return 1;
    }
    unsigned threads = 0;
    attn_plan_get_threads(plan, &threads);
    if (rank == 0)
        printf("attn-bench-ring-worker: P=%d ranks, B=%zu NH=%zu NH_kv=%zu T_local=%zu (T=%zu) hs=%zu %s "
               "%s, %d reps, %u thread(s) per rank, simd %s\n",
               size, o.B, o.NH, o.NH_kv, o.T, o.T * (size_t)size, o.hs, o.f64 ? "f64" : "f32",
               !o.causal ? "not causal" : o.zigzag ? "causal zigzag" : "causal contiguous",
               o.reps, threads, attn_simd_name());

    /* warm-up */
    status = forward(plan, o.f64, Q, K, V, out, lse);
    if (status == ATTN_OK)
        status = backward(plan, o.f64, Q, K, V, out, lse, dout, dQ, dK, dV);
    const double block_bytes = (double)(2 * nk * e);
    const double alone = exchange_alone((size_t)block_bytes, 2 * o.reps + 2);
    const double fwd_flops = forward_flops(&o, rank, size);
    double c[ATTN_RING_COUNTER_COUNT];

    attn_ring_counters_reset(plan);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int r = 0; r < o.reps && status == ATTN_OK; r++)
        status = forward(plan, o.f64, Q, K, V, out, lse);
    double wall = MPI_Wtime() - start;
    attn_ring_counters(plan, c);
    report("forward", &o, c, wall, fwd_flops, block_bytes, alone, (double)(size - 1), rank, size,
           o.reps);

    attn_ring_counters_reset(plan);
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (int r = 0; r < o.reps && status == ATTN_OK; r++)
        status = backward(plan, o.f64, Q, K, V, out, lse, dout, dQ, dK, dV);
    wall = MPI_Wtime() - start;
    attn_ring_counters(plan, c);
    /* the backward's products: S again, dV, dP, dQ, dK (5 of the forward's 2) */
    report("backward", &o, c, wall, 2.5 * fwd_flops, block_bytes, alone, (double)(2 * (size - 1)),
           rank, size, o.reps);
    if (status != ATTN_OK && rank == 0)
        fprintf(stderr, "ring call: %s\n", attn_status_string(status));

    attn_plan_destroy(plan);
    free(Q), free(K), free(V), free(out), free(lse), free(dout), free(dQ), free(dK), free(dV);
    MPI_Finalize();
    return status == ATTN_OK ? 0 : 1;
}
