#include "run/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/attn_call.h"

/* The product of the list lengths, or 0 when it exceeds BENCH_SWEEP_MAX. */
static size_t combination_count(const bench_options *o)
{
    const bench_size_list *heads = o->heads_from_count ? &o->NH : &o->hs;
    size_t lengths[] = {o->threads.count, o->dtype_count, o->op_count,  o->causal_count,
                        o->B.count,       o->C.count,     heads->count, o->wo_count,
                        o->T.count,       o->api_count,   o->path_count,
                        o->engine_count,  o->dropout_count};
    size_t product = 1;
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
        if (lengths[i] == 0 || lengths[i] > BENCH_SWEEP_MAX / product)
            return 0;
        product *= lengths[i];
    }
    return product;
}

/* Adds the configuration of the api, path and engine lists' entries (a, p, e). */
static void add_config(bench_sweep *sweep, const bench_options *o, const bench_shape *shape,
                       size_t a, size_t p, size_t e)
{
    bench_config config = {
        .shape = *shape,
        .api = (bench_api)o->apis[a],
        .path = (bench_path)o->paths[p],
        .engine = (bench_engine)o->engines[e],
        .heads_from_count = o->heads_from_count,
        .with_weights = o->with_weights,
    };
    if (o->heads_from_count && shape->C % shape->NH != 0) {
        bench_omissions_add(&sweep->omitted, "C is not a multiple of NH");
        return;
    }
    if (!bench_config_path_selectable(&config)) {
        if (p > 0)
            return; /* it ran once already, as auto */
        config.path = BENCH_PATH_AUTO;
    }
    if (config.api != BENCH_API_PLAN) {
        if (e > 0)
            return; /* it ran once already, as auto: one-shots run at their default */
        config.engine = BENCH_ENGINE_AUTO;
    }
    const char *reason = bench_config_invalid_reason(&config);
    if (!reason) /* every row runs attn, its peers and the ceiling on one count */
        reason = bench_attn_auto_mismatch(config.engine, shape->threads);
    if (reason) {
        bench_omissions_add(&sweep->omitted, reason);
        return;
    }
    sweep->configs[sweep->count++] = config;
}

/* Every dropout, api and path of one shape (a shape's dropouts side by side). */
static void add_shape(bench_sweep *sweep, const bench_options *o, const bench_shape *shape)
{
    for (size_t d = 0; d < o->dropout_count; ++d) {
        bench_shape dropped = *shape;
        dropped.dropout = o->dropouts[d];
        for (size_t a = 0; a < o->api_count; ++a)
            for (size_t p = 0; p < o->path_count; ++p)
                for (size_t e = 0; e < o->engine_count; ++e)
                    add_config(sweep, o, &dropped, a, p, e);
    }
}

/* The head count and head size of entry h of the heads list for width C. */
static void heads_of(const bench_options *o, size_t h, size_t C, bench_shape *shape)
{
    if (o->heads_from_count) {
        shape->NH = o->NH.values[h];
        shape->hs = C / shape->NH > 0 ? C / shape->NH : 1;
    } else {
        shape->NH = 1;
        shape->hs = o->hs.values[h];
    }
}

static void add_all(bench_sweep *sweep, const bench_options *o)
{
    size_t head_count = o->heads_from_count ? o->NH.count : o->hs.count;
    bench_shape s;
    for (size_t th = 0; th < o->threads.count; ++th)
        for (size_t d = 0; d < o->dtype_count; ++d)
            for (size_t op = 0; op < o->op_count; ++op)
                for (size_t m = 0; m < o->causal_count; ++m)
                    for (size_t b = 0; b < o->B.count; ++b)
                        for (size_t c = 0; c < o->C.count; ++c)
                            for (size_t h = 0; h < head_count; ++h)
                                for (size_t w = 0; w < o->wo_count; ++w)
                                    for (size_t t = 0; t < o->T.count; ++t) {
                                        s = (bench_shape){
                                            .dtype = (bench_dtype)o->dtypes[d],
                                            .op = (bench_op)o->ops[op],
                                            .causal = o->causal[m],
                                            .B = o->B.values[b],
                                            .T = o->T.values[t],
                                            .C = o->C.values[c],
                                            .wo = o->wo[w],
                                            .threads = o->threads.values[th],
                                        };
                                        heads_of(o, h, s.C, &s);
                                        add_shape(sweep, o, &s);
                                    }
}

int bench_sweep_build(const bench_options *o, bench_sweep *sweep, char *error,
                      size_t error_size)
{
    memset(sweep, 0, sizeof *sweep);
    size_t capacity = combination_count(o);
    if (capacity == 0) {
        snprintf(error, error_size, "the sweep has more than %d combinations", BENCH_SWEEP_MAX);
        return -1;
    }
    sweep->configs = malloc(capacity * sizeof *sweep->configs);
    if (!sweep->configs) {
        snprintf(error, error_size, "out of memory for %zu configurations", capacity);
        return -1;
    }
    add_all(sweep, o);
    if (sweep->count == 0) {
        snprintf(error, error_size, "no configuration of this sweep can run%s%s",
                 sweep->omitted.count ? ": " : "",
                 sweep->omitted.count ? sweep->omitted.reasons[0].reason : "");
        bench_sweep_free(sweep);
        return -1;
    }
    return 0;
}

void bench_sweep_free(bench_sweep *sweep)
{
    free(sweep->configs);
    sweep->configs = NULL;
    sweep->count = 0;
}
