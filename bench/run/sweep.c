#include "run/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/attn_call.h"
#include "util/product.h"

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

/* The axes of the product, outermost first (sweep.h); a shape's dropouts,
 * apis, paths and engines are its neighbours. */
enum { AX_THREADS, AX_DTYPE, AX_OP, AX_CAUSAL, AX_B, AX_C, AX_HEADS, AX_WO, AX_T, AX_DROPOUT,
       AX_API, AX_PATH, AX_ENGINE, AX_COUNT };

static void add_combination(bench_sweep *sweep, const bench_options *o, const size_t *at)
{
    bench_shape s = {
        .dtype = (bench_dtype)o->dtypes[at[AX_DTYPE]],
        .op = (bench_op)o->ops[at[AX_OP]],
        .causal = o->common.causal[at[AX_CAUSAL]],
        .B = o->B.values[at[AX_B]],
        .T = o->T.values[at[AX_T]],
        .C = o->C.values[at[AX_C]],
        .wo = o->wo[at[AX_WO]],
        .threads = o->common.threads.values[at[AX_THREADS]],
        .dropout = o->common.dropouts[at[AX_DROPOUT]],
    };
    heads_of(o, at[AX_HEADS], s.C, &s);
    add_config(sweep, o, &s, at[AX_API], at[AX_PATH], at[AX_ENGINE]);
}

int bench_sweep_build(const bench_options *o, bench_sweep *sweep, char *error,
                      size_t error_size)
{
    memset(sweep, 0, sizeof *sweep);
    const bench_common_options *common = &o->common;
    const size_t counts[AX_COUNT] = {
        [AX_THREADS] = common->threads.count,
        [AX_DTYPE] = o->dtype_count,
        [AX_OP] = o->op_count,
        [AX_CAUSAL] = common->causal_count,
        [AX_B] = o->B.count,
        [AX_C] = o->C.count,
        [AX_HEADS] = o->heads_from_count ? o->NH.count : o->hs.count,
        [AX_WO] = o->wo_count,
        [AX_T] = o->T.count,
        [AX_DROPOUT] = common->dropout_count,
        [AX_API] = o->api_count,
        [AX_PATH] = o->path_count,
        [AX_ENGINE] = o->engine_count,
    };
    bench_product product;
    if (bench_product_init(&product, counts, AX_COUNT, BENCH_SWEEP_MAX) != 0) {
        snprintf(error, error_size, "the sweep has more than %d combinations", BENCH_SWEEP_MAX);
        return -1;
    }
    sweep->configs = malloc(product.total * sizeof *sweep->configs);
    if (!sweep->configs) {
        snprintf(error, error_size, "out of memory for %zu configurations", product.total);
        return -1;
    }
    for (size_t n = 0; n < product.total; ++n) {
        size_t at[AX_COUNT];
        bench_product_at(&product, n, at);
        add_combination(sweep, o, at);
    }
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
