#include "measure/sdpa_loop.h"

#include <string.h>

/* Step s's token into slot Tk + s of every sequence and key/value head. */
static void append_token(const bench_sdpa_problem *p, size_t step)
{
    const bench_sdpa_shape *s = &p->shape;
    const size_t element = bench_dtype_size(s->dtype), slot = s->Tk + step;
    const char *k_new = p->K_new, *v_new = p->V_new;
    for (size_t b = 0; b < s->B; ++b)
        for (size_t g = 0; g < s->NH_kv; ++g) {
            const size_t token = (step * s->B + b) * s->NH_kv + g;
            memcpy((char *)p->K + bench_sdpa_at(&p->strides.k, b, g, slot) * element,
                   k_new + token * s->hs * element, s->hs * element);
            memcpy((char *)p->V + bench_sdpa_at(&p->strides.v, b, g, slot) * element,
                   v_new + token * s->hs_v * element, s->hs_v * element);
        }
}

attn_status bench_sdpa_loop_pass(bench_sdpa_call *call, bench_prepare_fn prepare,
                                 void *context, double *samples)
{
    const bench_sdpa_problem *p = call->problem;
    const bench_sdpa_shape *s = &p->shape;
    for (size_t step = 0; step < s->steps; ++step) {
        append_token(p, step);
        for (size_t b = 0; b < s->B; ++b)
            p->key_lengths[b] = s->Tk + step + 1;
        bench_sdpa_call_at_step(call, step);
        if (prepare)
            prepare(context);
        const double start = bench_monotonic_seconds();
        const attn_status status = bench_sdpa_call_run(call);
        const double elapsed = bench_monotonic_seconds() - start;
        if (status != ATTN_OK)
            return status;
        if (samples)
            samples[step] = elapsed;
    }
    return ATTN_OK;
}

/* n steps spread evenly over [0, steps), both ends (all when fewer). */
static size_t checked_steps(size_t steps, size_t *out)
{
    const size_t n = steps < BENCH_SDPA_LOOP_CHECKED_STEPS ? steps : BENCH_SDPA_LOOP_CHECKED_STEPS;
    for (size_t i = 0; i < n; ++i)
        out[i] = n == 1 ? 0 : (size_t)((double)i * (double)(steps - 1) / (double)(n - 1) + 0.5);
    return n;
}

int bench_sdpa_loop_check(const bench_sdpa_problem *p, size_t check_rows,
                          bench_check *check)
{
    size_t steps[BENCH_SDPA_LOOP_CHECKED_STEPS];
    const size_t n = checked_steps(p->shape.steps, steps);
    const size_t element = bench_dtype_size(p->shape.dtype);
    memset(check, 0, sizeof *check);
    check->error = -1.0;
    for (size_t i = 0; i < n; ++i) {
        /* step s as one call: its query over the first S slots of the cache */
        size_t length = p->shape.Tk + steps[i] + 1;
        const bench_sdpa_lengths lengths = {.count = 1, .values = &length, .text = ""};
        bench_sdpa_problem view = *p;
        view.shape.scenario = BENCH_SDPA_SCENARIO_CALL;
        view.shape.steps = 0;
        view.shape.Tk = bench_sdpa_capacity(&p->shape);
        view.shape.lengths = &lengths;
        view.Q = (char *)p->Q + steps[i] * p->q_count * element;
        view.out = (char *)p->out + steps[i] * p->out_count * element;
        view.steps = 1;
        bench_check one;
        if (bench_sdpa_check_problem(&view, check_rows, 0, &one) != 0)
            return -1;
        const size_t rows = check->rows;
        /* the worst step: the largest error / tolerance (the same tolerance in
         * every step of f32 and f64; a half type's follows each step's bound) */
        if (i == 0 || one.error != one.error ||
            one.error * check->tolerance > check->error * one.tolerance)
            *check = one;
        check->rows = rows + one.rows;
    }
    return 0;
}
