/*
 * test_stress: many plans and one-shot calls used at once from several
 * threads, checked bit for bit against the same calls made one after another
 * on one thread (attn.h: distinct plans share nothing, creating and
 * destroying plans is thread-safe, every function may run on several
 * threads at once on distinct outputs, results are deterministic).
 *
 *   - first_use: the first library calls of the process are made by
 *     THREADS threads released together (the kernel dispatch is decided
 *     once, under pthread_once): identical results to a second, sequential
 *     pass.
 *   - plans_and_one_shots: 16 plans (f32 and f64; training and inference;
 *     causal or not; with and without Wo and weights; the materialized and
 *     tiled paths; T = 1 and T > the causal block of 128) and 6 one-shot
 *     tasks (mha forward and backward, self-attention, lookup without a
 *     weights buffer, row softmax: these create and destroy plans or
 *     workspaces inside the call). Each task has VARIANTS input sets; the
 *     expected bytes of every (task, variant) come from a sequential pass,
 *     which is also checked against the double reference (p->tol,
 *     mha_grad_tol) so that the bytes compared are right ones. Then THREADS
 *     threads run ROUNDS rounds separated by a barrier; in round r task i
 *     belongs to thread (i + r) % THREADS and runs variant (i + r) %
 *     VARIANTS, so each plan moves from thread to thread and its kept
 *     forward state is replaced with other inputs between uses. Outputs are
 *     refilled with a sentinel before each run, and every run must give
 *     exactly the expected bytes (forward, weights and every gradient).
 *
 * ATTN_STRESS_ROUNDS (default 1024) sets the number of rounds: the CI
 * reliability script shrinks it under valgrind, which runs threads one at a
 * time. No tolerance in the concurrent comparisons: memcmp.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "reference/mha.h"
#include "support/test_common.h"

#define THREADS 4
#define VARIANTS 3

/* ---- tasks -------------------------------------------------------------- */

typedef enum task_kind {
    RUN_PLAN,
    RUN_MHA_FORWARD,
    RUN_MHA_BACKWARD,
    RUN_SELF_ATTENTION, /* NH = 1, hs = s.hs, no Wo */
    RUN_LOOKUP,         /* q = k = v = X as (B*T, C), no weights buffer */
    RUN_SOFTMAX_ROWS,   /* X as (B*T, C), in place in out */
} task_kind;

typedef struct result {
    void *out, *weights; /* weights NULL: not requested */
    mha_grads grads;     /* all NULL unless the task computes gradients */
    attn_status status;
} result;

typedef struct task {
    task_kind kind;
    const test_prec *p;
    mha_shape s;
    unsigned flags;   /* RUN_PLAN: the plan's extra flags */
    attn_plan *plan;  /* RUN_PLAN */
    int with_weights; /* weights requested */
    mha_data data[VARIANTS];
    mha_typed in[VARIANTS];
    result expected[VARIANTS]; /* the sequential pass */
    result scratch;            /* the concurrent runs, by the owning thread */
    int mismatches;            /* written by the owning thread of a round */
    int first_bad_round;
    attn_status bad_status;
} task;

static int has_grads(const task *k)
{
    return k->kind == RUN_MHA_BACKWARD || (k->kind == RUN_PLAN && !(k->flags & ATTN_INFERENCE));
}

static size_t out_elems(const task *k)
{
    const size_t rows = k->s.B * k->s.T;
    switch (k->kind) {
    case RUN_LOOKUP:
    case RUN_SOFTMAX_ROWS:
        return rows * k->s.C;
    case RUN_MHA_BACKWARD:
        return 1; /* no out */
    default:
        return mha_out_elems(&k->s);
    }
}

static size_t weights_elems(const task *k)
{
    return mha_weights_elems(&k->s);
}

static void fill(void *b, size_t bytes)
{
    if (b != NULL)
        sentinel_fill(b, bytes);
}

static result result_alloc(const task *k)
{
    const test_prec *p = k->p;
    result r = {talloc(out_elems(k) * p->size),
                k->with_weights ? talloc(weights_elems(k) * p->size) : NULL,
                {{NULL}},
                ATTN_OK};
    if (has_grads(k))
        r.grads = mha_grads_alloc(p, &k->s);
    return r;
}

/* Runs variant v of the task into r; calls nothing but the library and
 * memory functions, so it may run on any thread. */
static void run_task(task *k, int v, result *r)
{
    const test_prec *p = k->p;
    const mha_typed *t = &k->in[v];
    const mha_shape *s = &k->s;
    const size_t rows = s->B * s->T;
    void *const *g = r->grads.g;
    fill(r->out, out_elems(k) * p->size);
    fill(r->weights, weights_elems(k) * p->size);
    for (int i = 0; i < MHA_GRADS; i++)
        fill(g[i], mha_grad_elems(s, i) * p->size);
    switch (k->kind) {
    case RUN_PLAN:
        r->status = p->forward(k->plan, t->X, t->Wq, t->Wk, t->Wv, t->Wo, r->out, r->weights);
        if (r->status == ATTN_OK && has_grads(k))
            r->status = p->backward(k->plan, t->X, t->Wq, t->Wk, t->Wv, t->Wo, t->dout, g[MHA_DX],
                                    g[MHA_DWQ], g[MHA_DWK], g[MHA_DWV], g[MHA_DWO]);
        break;
    case RUN_MHA_FORWARD:
        r->status = p->mha_forward(s->B, s->T, s->C, s->NH, s->causal, t->X, t->Wq, t->Wk, t->Wv,
                                   t->Wo, r->out);
        break;
    case RUN_MHA_BACKWARD:
        r->status =
            p->mha_backward(s->B, s->T, s->C, s->NH, s->causal, t->X, t->Wq, t->Wk, t->Wv, t->Wo,
                            t->dout, g[MHA_DX], g[MHA_DWQ], g[MHA_DWK], g[MHA_DWV], g[MHA_DWO]);
        break;
    case RUN_SELF_ATTENTION:
        r->status = p->self_attention(s->B, s->T, s->C, s->hs, s->causal, t->X, t->Wq, t->Wk, t->Wv,
                                      r->out, r->weights);
        break;
    case RUN_LOOKUP:
        r->status = p->lookup(rows, rows, s->C, s->C, s->scale, t->X, t->X, t->X, r->out, NULL);
        break;
    case RUN_SOFTMAX_ROWS:
        memcpy(r->out, t->X, rows * s->C * p->size);
        r->status = p->softmax_rows(r->out, rows, s->C, s->C);
        break;
    }
}

static int results_identical(const task *k, const result *a, const result *b)
{
    const size_t size = k->p->size;
    if (a->status != b->status || memcmp(a->out, b->out, out_elems(k) * size) != 0)
        return 0;
    if (k->with_weights && memcmp(a->weights, b->weights, weights_elems(k) * size) != 0)
        return 0;
    return !has_grads(k) || mha_grads_identical(k->p, &k->s, &a->grads, &b->grads);
}

/* The sequential result of variant 0 against the double reference. */
static void check_reference(const task *k, const result *r)
{
    const test_prec *p = k->p;
    const mha_data *d = &k->data[0];
    const mha_shape *s = &k->s;
    const size_t rows = s->B * s->T, C = s->C;
    if (k->kind == RUN_LOOKUP || k->kind == RUN_SOFTMAX_ROWS) {
        double *got = prec_doubles(p, r->out, rows * C), *ref = talloc_doubles(rows * C);
        if (k->kind == RUN_LOOKUP) {
            ref_lookup(rows, rows, C, C, s->scale, d->X, d->X, d->X, ref, NULL);
            check_residual(residual_scaled(got, ref, rows * C, max_abs(d->X, rows * C)), p->tol,
                           "lookup task");
        } else {
            for (size_t i = 0; i < rows; i++)
                ref_softmax_row(d->X + i * C, ref + i * C, C, C, 1.0);
            check_residual(residual_rows(got, ref, rows, C), p->tol, "softmax task");
        }
        return;
    }
    if (k->kind != RUN_MHA_BACKWARD)
        mha_check_forward(p, d, r->out, r->weights, "stress task");
    if (has_grads(k)) {
        mha_grads got = mha_grads_doubles(p, s, &r->grads), ref = mha_reference_grads(d);
        mha_grads_residual(s, &got, &ref, mha_grad_tol(p), "stress task");
    }
}

typedef struct task_spec {
    task_kind kind;
    int f64;
    mha_shape s;
    unsigned flags;
    int with_weights;
} task_spec;

static task make_task(const task_spec *spec, test_rng *rng)
{
    task k;
    memset(&k, 0, sizeof k);
    k.kind = spec->kind;
    k.p = spec->f64 ? &test_prec_f64 : &test_prec_f32;
    k.s = spec->s;
    k.flags = spec->flags;
    k.with_weights = spec->with_weights;
    if (k.kind == RUN_PLAN)
        k.plan = mha_plan(k.p, &k.s, k.flags);
    for (int v = 0; v < VARIANTS; v++) {
        k.data[v] = mha_random(k.p, rng, k.s, MHA_W_GAIN);
        k.in[v] = mha_typed_copy(k.p, &k.data[v]);
        k.expected[v] = result_alloc(&k);
    }
    k.scratch = result_alloc(&k);
    k.first_bad_round = -1;
    return k;
}

/* ---- threads ---------------------------------------------------------------- */

typedef struct stress {
    task *tasks;
    size_t n_tasks;
    int rounds;
    pthread_barrier_t barrier;
} stress;

typedef struct worker {
    stress *st;
    int id;
    pthread_t thread;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    stress *st = w->st;
    for (int r = 0; r < st->rounds; r++) {
        pthread_barrier_wait(&st->barrier); /* the previous owners are done */
        for (size_t i = 0; i < st->n_tasks; i++) {
            if ((i + (size_t)r) % THREADS != (size_t)w->id)
                continue;
            task *k = &st->tasks[i];
            const int v = (int)((i + (size_t)r) % VARIANTS);
            run_task(k, v, &k->scratch);
            if (!results_identical(k, &k->scratch, &k->expected[v])) {
                if (k->mismatches++ == 0) {
                    k->first_bad_round = r;
                    k->bad_status = k->scratch.status;
                }
            }
        }
    }
    return NULL;
}

/* Runs the tasks on THREADS threads for `rounds` rounds. */
static void run_concurrently(task *tasks, size_t n_tasks, int rounds)
{
    stress st;
    st.tasks = tasks;
    st.n_tasks = n_tasks;
    st.rounds = rounds;
    check_true(pthread_barrier_init(&st.barrier, NULL, THREADS) == 0, "pthread_barrier_init");
    worker workers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i].st = &st;
        workers[i].id = i;
        if (pthread_create(&workers[i].thread, NULL, work, &workers[i]) != 0) {
            /* the started threads would wait at the barrier for ever */
            print_error("pthread_create failed for thread %d\n", i);
            abort();
        }
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(workers[i].thread, NULL);
    pthread_barrier_destroy(&st.barrier);
}

static int stress_rounds(void)
{
    const char *env = getenv("ATTN_STRESS_ROUNDS");
    int rounds = env != NULL ? atoi(env) : 1024;
    return rounds > 0 ? rounds : 1;
}

/* ---- the cases ------------------------------------------------------------------ */

/* The first calls into the library come from THREADS threads at once. */
static void *first_call(void *arg)
{
    task *k = arg;
    run_task(k, 0, &k->scratch);
    return NULL;
}

static void first_use(void **state)
{
    (void)state;
    const task_spec specs[THREADS] = {
        {RUN_SOFTMAX_ROWS, 0, {3, 7, 40, 1, 40, 0.0, 0, 0}, 0u, 0},
        {RUN_SOFTMAX_ROWS, 1, {2, 5, 33, 1, 33, 0.0, 0, 0}, 0u, 0},
        {RUN_LOOKUP, 0, {1, 9, 6, 1, 6, 0.0, 0, 0}, 0u, 0},
        {RUN_SELF_ATTENTION, 1, {2, 8, 5, 1, 3, 0.0, 1, 0}, 0u, 1},
    };
    static task tasks[THREADS];
    test_rng rng;
    rng_seed(&rng, 6101);
    for (int i = 0; i < THREADS; i++)
        tasks[i] = make_task(&specs[i], &rng);
    pthread_t threads[THREADS];
    int started = 0;
    for (; started < THREADS; started++)
        if (pthread_create(&threads[started], NULL, first_call, &tasks[started]) != 0)
            break;
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    check_true(started == THREADS, "only %d threads started", started);
    for (int i = 0; i < THREADS; i++) {
        run_task(&tasks[i], 0, &tasks[i].expected[0]);
        check_true(tasks[i].expected[0].status == ATTN_OK, "task %d: %s", i,
                   attn_status_string(tasks[i].expected[0].status));
        check_reference(&tasks[i], &tasks[i].expected[0]);
        check_true(results_identical(&tasks[i], &tasks[i].scratch, &tasks[i].expected[0]),
                   "task %d: the first (concurrent) call and a later one differ", i);
    }
}

static void plans_and_one_shots(void **state)
{
    (void)state;
    const unsigned INF = ATTN_INFERENCE;
    const task_spec specs[] = {
        /* plans: kind, f64, {B, T, C, NH, hs, scale, causal, with_Wo}, flags, weights */
        {RUN_PLAN, 0, {2, 17, 12, 3, 4, 0.0, 1, 1}, 0u, 1},
        {RUN_PLAN, 1, {1, 33, 8, 2, 4, 0.5, 0, 0}, 0u, 0},
        {RUN_PLAN, 0, {3, 9, 6, 1, 5, 0.0, 1, 0}, INF, 1},
        {RUN_PLAN, 1, {1, 40, 16, 4, 4, 0.0, 0, 1}, INF | ATTN_TILED, 0},
        {RUN_PLAN, 0, {2, 24, 10, 2, 3, 0.0, 1, 1}, INF | ATTN_MATERIALIZED, 0},
        {RUN_PLAN, 1, {1, 1, 5, 2, 2, 0.0, 1, 1}, 0u, 1},
        {RUN_PLAN, 0, {4, 5, 3, 3, 1, 2.0, 0, 0}, 0u, 1},
        {RUN_PLAN, 1, {1, 130, 8, 2, 4, 0.0, 1, 0}, INF | ATTN_TILED, 0},
        {RUN_PLAN, 0, {1, 130, 6, 1, 6, 0.0, 1, 1}, 0u, 0},
        {RUN_PLAN, 1, {2, 12, 7, 1, 7, 0.0, 0, 1}, INF, 1},
        {RUN_PLAN, 0, {2, 12, 7, 1, 7, 0.0, 0, 1}, INF, 1}, /* same shape, other precision */
        {RUN_PLAN, 1, {1, 20, 9, 3, 2, 0.0, 1, 0}, 0u, 1},
        {RUN_PLAN, 0, {3, 6, 4, 2, 6, 0.3, 1, 1}, 0u, 0},
        {RUN_PLAN, 1, {1, 64, 32, 4, 8, 0.0, 0, 1}, INF | ATTN_MATERIALIZED, 0},
        {RUN_PLAN, 0, {1, 64, 32, 4, 8, 0.0, 0, 1}, INF | ATTN_TILED, 0},
        {RUN_PLAN, 1, {2, 10, 3, 1, 1, 0.0, 0, 0}, 0u, 1},
        /* one-shots (hs = C/NH, the default scale) */
        {RUN_MHA_FORWARD, 0, {2, 11, 8, 2, 4, 0.0, 1, 1}, 0u, 0},
        {RUN_MHA_FORWARD, 1, {1, 15, 9, 3, 3, 0.0, 0, 0}, 0u, 0},
        {RUN_MHA_BACKWARD, 1, {2, 7, 6, 2, 3, 0.0, 1, 1}, 0u, 0},
        {RUN_SELF_ATTENTION, 0, {2, 14, 6, 1, 5, 0.0, 1, 0}, 0u, 1},
        {RUN_LOOKUP, 1, {2, 25, 6, 1, 6, 0.0, 0, 0}, 0u, 0},
        {RUN_SOFTMAX_ROWS, 0, {4, 8, 37, 1, 37, 0.0, 0, 0}, 0u, 0},
    };
    enum { N_TASKS = sizeof specs / sizeof specs[0] };
    static task tasks[N_TASKS];
    test_rng rng;
    rng_seed(&rng, 6102);
    for (size_t i = 0; i < N_TASKS; i++)
        tasks[i] = make_task(&specs[i], &rng);

    /* the sequential pass: expected bytes, checked against the reference */
    for (size_t i = 0; i < N_TASKS; i++)
        for (int v = 0; v < VARIANTS; v++) {
            run_task(&tasks[i], v, &tasks[i].expected[v]);
            check_true(tasks[i].expected[v].status == ATTN_OK, "task %zu variant %d: %s", i, v,
                       attn_status_string(tasks[i].expected[v].status));
        }
    for (size_t i = 0; i < N_TASKS; i++)
        check_reference(&tasks[i], &tasks[i].expected[0]);

    const int rounds = stress_rounds();
    run_concurrently(tasks, N_TASKS, rounds);
    int bad = 0;
    for (size_t i = 0; i < N_TASKS; i++)
        if (tasks[i].mismatches > 0) {
            bad++;
            print_error("task %zu (kind %d, %s): %d of its runs differ from the sequential ones, "
                        "first in round %d (status %s)\n",
                        i, (int)tasks[i].kind, tasks[i].p->name, tasks[i].mismatches,
                        tasks[i].first_bad_round, attn_status_string(tasks[i].bad_status));
        }
    print_message("  %d tasks x %d rounds on %d threads\n", (int)N_TASKS, rounds, THREADS);
    check_true(bad == 0, "%d of %d tasks gave other bytes when run concurrently", bad,
               (int)N_TASKS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MHA_CASE("first_use", first_use, NULL),
        MHA_CASE("plans_and_one_shots", plans_and_one_shots, NULL),
    };
    return cmocka_run_group_tests_name("concurrent stress", tests, NULL, NULL);
}
