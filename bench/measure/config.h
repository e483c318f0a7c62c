/*
 * What one point of a sweep measures.
 *
 * A bench_shape is the problem every implementation (attn and each peer)
 * computes: the element type, forward or forward+backward, the mask, the
 * sizes, whether an output projection Wo follows the heads, and the BLAS
 * thread count. A bench_config adds how attn is called (a plan or a one-shot
 * call, and the forward path a plan is forced onto); peers do not depend on
 * those, so the configurations of one shape share one peer measurement.
 *
 * Arrays (D = NH*hs): X (B,T,C); Wq, Wk, Wv (C,D); Wo (D,C) when wo;
 * out (B,T,C) with Wo, else (B,T,D). A single head (NH = 1, any hs) is the
 * course's self_attention; with NH heads head h uses columns [h*hs,(h+1)*hs).
 */
#ifndef ATTN_BENCH_CONFIG_H
#define ATTN_BENCH_CONFIG_H

#include <stddef.h>

#include "util/dtype.h"

typedef enum bench_op {
    BENCH_OP_FORWARD = 0, /* the forward pass */
    BENCH_OP_BACKWARD = 1 /* forward + backward, timed together */
} bench_op;
#define BENCH_OP_COUNT 2

/* The seed of attention dropout in attn-bench's training rows (--dropout P
 * above 0): attn_plan_set_dropout(plan, P, BENCH_DROPOUT_SEED, offset), the
 * offset 0 for the first timed call and one more for each next call, as a
 * training loop gives each step its own (attn.h). */
#define BENCH_DROPOUT_SEED 20260026u

typedef enum bench_api {
    BENCH_API_PLAN = 0,   /* attn_plan_create once, attn_forward/attn_backward timed */
    BENCH_API_ONESHOT = 1 /* attn_self_attention / attn_mha_forward / attn_mha_backward */
} bench_api;
#define BENCH_API_COUNT 2

typedef enum bench_path {
    BENCH_PATH_AUTO = 0,         /* the plan chooses from T */
    BENCH_PATH_MATERIALIZED = 1, /* ATTN_MATERIALIZED */
    BENCH_PATH_TILED = 2         /* ATTN_TILED */
} bench_path;
#define BENCH_PATH_COUNT 3

typedef enum bench_engine {
    BENCH_ENGINE_AUTO = 0, /* the plan's default (ATTN_THREADS_AUTO): no set_threads call */
    BENCH_ENGINE_BLAS = 1, /* attn_plan_set_threads(plan, 0): BLAS threads */
    BENCH_ENGINE_OWN = 2   /* attn_plan_set_threads(plan, threads): the plan's own threads */
} bench_engine;
#define BENCH_ENGINE_COUNT 3

typedef struct bench_shape {
    bench_dtype dtype;
    bench_op op;
    int causal; /* 0 or 1 */
    size_t B, T, C, NH, hs;
    int wo;         /* 1: out = heads Wo */
    size_t threads; /* BLAS threads of attn and of the peers */
    double dropout; /* attention dropout p of a training plan (--dropout; 0: none) */
} bench_shape;

typedef struct bench_config {
    bench_shape shape;
    bench_api api;
    bench_path path;
    bench_engine engine; /* plans only: one-shots always run as auto (their default) */
    int heads_from_count; /* heads came from --NH (hs = C/NH): one-shots are attn_mha_* */
    int with_weights;     /* the forward also writes the (B,NH,T,T) weights */
} bench_config;

extern const char *const bench_op_names[BENCH_OP_COUNT];
extern const char *const bench_api_names[BENCH_API_COUNT];
extern const char *const bench_path_names[BENCH_PATH_COUNT];
extern const char *const bench_engine_names[BENCH_ENGINE_COUNT];

/* D = NH*hs, the width of the concatenated heads */
size_t bench_shape_heads_width(const bench_shape *shape);

/* The width of out: C with Wo, else D */
size_t bench_shape_out_width(const bench_shape *shape);

int bench_shape_equal(const bench_shape *a, const bench_shape *b);

/* Equal but perhaps for the dropout: one problem at several p, whose rows
 * the run command measures together (attn's interleaved, as a shape's). */
int bench_shape_same_but_dropout(const bench_shape *a, const bench_shape *b);

/* Whether --path can choose this configuration's path: plan forwards that
 * keep nothing for a backward (ATTN_INFERENCE) and write no weights. */
int bench_config_path_selectable(const bench_config *config);

/* NULL when attn can run this configuration, else why not (a static text). */
const char *bench_config_invalid_reason(const bench_config *config);

/* The path attn actually takes: "materialized" or "tiled" (attn.h: forwards
 * that keep or write the weights materialize them; an inference forward
 * without weights takes the forced path, else tiled from ATTN_TILED_MIN_T). */
const char *bench_config_ran_path(const bench_config *config);

#endif /* ATTN_BENCH_CONFIG_H */
