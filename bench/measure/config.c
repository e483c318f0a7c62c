#include "measure/config.h"

#include <attn/attn.h>

const char *const bench_op_names[BENCH_OP_COUNT] = {"forward", "backward"};
const char *const bench_api_names[BENCH_API_COUNT] = {"plan", "oneshot"};
const char *const bench_path_names[BENCH_PATH_COUNT] = {"auto", "materialized", "tiled"};
const char *const bench_engine_names[BENCH_ENGINE_COUNT] = {"auto", "blas", "own"};

size_t bench_shape_heads_width(const bench_shape *shape)
{
    return shape->NH * shape->hs;
}

size_t bench_shape_out_width(const bench_shape *shape)
{
    return shape->wo ? shape->C : bench_shape_heads_width(shape);
}

int bench_shape_equal(const bench_shape *a, const bench_shape *b)
{
    return a->dtype == b->dtype && a->op == b->op && a->causal == b->causal && a->B == b->B &&
           a->T == b->T && a->C == b->C && a->NH == b->NH && a->hs == b->hs && a->wo == b->wo &&
           a->threads == b->threads && a->dropout == b->dropout;
}

int bench_shape_same_but_dropout(const bench_shape *a, const bench_shape *b)
{
    bench_shape other = *b;
    other.dropout = a->dropout;
    return bench_shape_equal(a, &other);
}

int bench_config_path_selectable(const bench_config *config)
{
    return config->api == BENCH_API_PLAN && config->shape.op == BENCH_OP_FORWARD &&
           !config->with_weights;
}

const char *bench_config_invalid_reason(const bench_config *config)
{
    const bench_shape *s = &config->shape;
    if (config->path != BENCH_PATH_AUTO && !bench_config_path_selectable(config))
        return "--path materialized/tiled applies to plan forwards without weights";
    if (s->dropout > 0.0 && s->op != BENCH_OP_BACKWARD)
        return "--dropout above 0 on a forward (an inference op: dropout is for training, "
               "--op backward)";
    if (s->dropout > 0.0 && config->api != BENCH_API_PLAN)
        return "--dropout above 0 needs a plan (--api plan: attn_plan_set_dropout)";
    if (config->api != BENCH_API_ONESHOT)
        return NULL;
    if (config->heads_from_count)
        return config->with_weights ? "attn_mha_forward/_backward write no weights" : NULL;
    if (s->op == BENCH_OP_BACKWARD)
        return "no single-head one-shot backward (use --NH, or --api plan)";
    if (s->wo)
        return "attn_self_attention has no output projection (use --NH, or --api plan)";
    return NULL;
}

const char *bench_config_ran_path(const bench_config *config)
{
    if (config->with_weights || config->shape.op == BENCH_OP_BACKWARD)
        return "materialized";
    if (config->path == BENCH_PATH_TILED)
        return "tiled";
    if (config->path == BENCH_PATH_MATERIALIZED)
        return "materialized";
    return config->shape.T >= ATTN_TILED_MIN_T ? "tiled" : "materialized";
}
