/*
 * The ggml peers' C side (bench/peers/ggml_sdpa_peer.py and ggml_peer.py
 * load it with ctypes): one attention call of attn-bench sdpa as llama.cpp
 * makes it, ggml_flash_attn_ext on ggml's CPU backend, its graph built once
 * and computed on n_threads threads per call; and the run command's
 * projected heads (attn_ggml_projected_*, at the end). Built by
 * build_ggml.sh against the ggml it builds; the API below is this file's own.
 *
 * Shapes (ggml's ne[] lists the fastest dimension first):
 *   q     [hs,   Tq, NH,    B]  a view of storage in the layout:
 *   k     [hs,   Tk, NH_kv, B]    bhsd: (B, H, T, d) contiguous;
 *   v     [hs_v, Tk, NH_kv, B]    bshd: (B, T, H, d) contiguous, permuted
 *   mask  [Tk, Tq, 1 or NH, B]  F16, additive (0 / -inf, plus a bias), or none
 *   out   [hs_v, NH, Tq, B]     (B, Tq, NH, hs_v) contiguous: ggml's result
 * K and V are stored as F32 or F16 (kv_f16), converted from the caller's
 * float32 when they are set (untimed, as a KV cache is filled); Q is F32.
 * scale = 1/sqrt(hs), no ALiBi, no soft cap; accumulation asked in F32
 * (ggml_prec_set_acc).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-cpu.h"
#include "ggml.h"

/* A graph built once and computed per call: its context (the tensors'
 * memory), the graph, its plan for n_threads and the plan's work buffer. */
typedef struct computed {
    struct ggml_context *ctx;
    struct ggml_cgraph *graph;
    struct ggml_cplan plan;
    void *work;
} computed;

/* A context of `bytes` for the tensors; 0, or -1. */
static int computed_init(computed *g, size_t bytes)
{
    struct ggml_init_params params = {.mem_size = bytes + ggml_graph_overhead() +
                                                  32 * ggml_tensor_overhead() + (1u << 20),
                                      .mem_buffer = NULL,
                                      .no_alloc = false};
    ggml_cpu_init();
    g->ctx = ggml_init(params);
    return g->ctx ? 0 : -1;
}

/* The graph that computes out, planned for n_threads; 0, or -1. */
static int computed_plan(computed *g, struct ggml_tensor *out, int n_threads)
{
    g->graph = ggml_new_graph(g->ctx);
    ggml_build_forward_expand(g->graph, out);
    g->plan = ggml_graph_plan(g->graph, n_threads, NULL);
    if (g->plan.work_size) {
        g->work = malloc(g->plan.work_size);
        if (!g->work)
            return -1;
        g->plan.work_data = g->work;
    }
    return 0;
}

static void computed_free(computed *g)
{
    if (g->ctx)
        ggml_free(g->ctx);
    free(g->work);
}

typedef struct shim {
    computed g;
    struct ggml_tensor *q, *k, *v, *mask, *out; /* q, k, v: the storages */
    int64_t B, NH, NH_kv, Tq, Tk, hs, hs_v;
    int bshd;
} shim;

/* The storage of a (B, H, T, d) tensor in the layout, and its [d, T, H, B] view. */
static struct ggml_tensor *stored(struct ggml_context *ctx, enum ggml_type type, int bshd,
                                  int64_t d, int64_t T, int64_t H, int64_t B,
                                  struct ggml_tensor **view)
{
    if (!bshd) {
        struct ggml_tensor *t = ggml_new_tensor_4d(ctx, type, d, T, H, B);
        *view = t;
        return t;
    }
    struct ggml_tensor *t = ggml_new_tensor_4d(ctx, type, d, H, T, B);
    *view = ggml_permute(ctx, t, 0, 2, 1, 3); /* [d, H, T, B] -> [d, T, H, B] */
    return t;
}

void attn_ggml_shim_destroy(shim *s)
{
    if (!s)
        return;
    computed_free(&s->g);
    free(s);
}

shim *attn_ggml_shim_create(int64_t B, int64_t NH, int64_t NH_kv, int64_t Tq, int64_t Tk,
                            int64_t hs, int64_t hs_v, int kv_f16, int with_mask, int bshd,
                            int n_threads)
{
    shim *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    *s = (shim){.B = B, .NH = NH, .NH_kv = NH_kv, .Tq = Tq, .Tk = Tk, .hs = hs, .hs_v = hs_v,
                .bshd = bshd};
    const enum ggml_type kv_type = kv_f16 ? GGML_TYPE_F16 : GGML_TYPE_F32;
    const size_t kv_size = kv_f16 ? 2 : 4;
    const size_t bytes = (size_t)(B * NH * Tq * hs) * 4 + (size_t)(B * NH_kv * Tk * (hs + hs_v)) * kv_size +
                         (with_mask ? (size_t)(B * NH * Tq * Tk) * 2 : 0) +
                         (size_t)(B * NH * Tq * hs_v) * 4;
    if (computed_init(&s->g, bytes) != 0) {
        attn_ggml_shim_destroy(s);
        return NULL;
    }
    struct ggml_context *ctx = s->g.ctx;
    struct ggml_tensor *q, *k, *v;
    s->q = stored(ctx, GGML_TYPE_F32, bshd, hs, Tq, NH, B, &q);
    s->k = stored(ctx, kv_type, bshd, hs, Tk, NH_kv, B, &k);
    s->v = stored(ctx, kv_type, bshd, hs_v, Tk, NH_kv, B, &v);
    if (with_mask > 0)
        s->mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, Tk, Tq, with_mask > 1 ? NH : 1, B);
    s->out = ggml_flash_attn_ext(ctx, q, k, v, s->mask, 1.0f / sqrtf((float)hs), 0.0f, 0.0f);
    ggml_prec_set_acc(s->out, GGML_PREC_F32);
    if (computed_plan(&s->g, s->out, n_threads) != 0) {
        attn_ggml_shim_destroy(s);
        return NULL;
    }
    return s;
}

/* Copies a float32 (B, H, T, d) array into a storage in the layout. */
static void fill(const shim *s, struct ggml_tensor *t, const float *from, int64_t d, int64_t T,
                 int64_t H)
{
    for (int64_t b = 0; b < s->B; ++b)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < T; ++i) {
                const float *row = from + ((b * H + h) * T + i) * d;
                const size_t at = s->bshd ? (size_t)(((b * T + i) * H + h) * d)
                                          : (size_t)(((b * H + h) * T + i) * d);
                if (t->type == GGML_TYPE_F16)
                    ggml_fp32_to_fp16_row(row, (ggml_fp16_t *)t->data + at, d);
                else
                    memcpy((float *)t->data + at, row, (size_t)d * sizeof *row);
            }
}

/* q (B, NH, Tq, hs), k (B, NH_kv, Tk, hs), v (B, NH_kv, Tk, hs_v), mask
 * (B, 1 or NH, Tq, Tk) or NULL: float32, dense. */
void attn_ggml_shim_set(shim *s, const float *q, const float *k, const float *v,
                        const float *mask)
{
    fill(s, s->q, q, s->hs, s->Tq, s->NH);
    fill(s, s->k, k, s->hs, s->Tk, s->NH_kv);
    fill(s, s->v, v, s->hs_v, s->Tk, s->NH_kv);
    if (s->mask && mask)
        ggml_fp32_to_fp16_row(mask, s->mask->data, ggml_nelements(s->mask));
}

/* One call; 0, or ggml's status. */
int attn_ggml_shim_run(shim *s)
{
    return (int)ggml_graph_compute(s->g.graph, &s->g.plan);
}

/* The last output, (B, Tq, NH, hs_v) float32. */
const float *attn_ggml_shim_out(const shim *s)
{
    return s->out->data;
}

/*
 * The projected heads of the run command (bench/peers/ggml_peer.py) as a
 * llama.cpp layer computes them, the graph built once:
 *   x   [C, T, B]            X (B, T, C)
 *   wq, wk, wv [C, D]        the weights stored transposed, (D, C) rows: what
 *                            ggml_mul_mat takes (llama.cpp's weight layout)
 *   q = ggml_mul_mat(wq, x)  [D, T, B], reshaped [hs, NH, T, B], viewed
 *                            [hs, T, NH, B]; k and v alike
 *   y = ggml_flash_attn_ext(q, k, v, causal mask or none)   [hs, NH, T, B]
 *   out = ggml_mul_mat(wo, y as [D, T, B])  [C, T, B] with wo [D, C]
 *                            (Wo stored transposed), else y: (B, T, D)
 * mask: F16 [T, T], 0 for keys j <= t, -inf above (causal only).
 */
typedef struct projected {
    computed g;
    struct ggml_tensor *x, *w[4], *out; /* w: wq, wk, wv, wo (or NULL) */
} projected;

void attn_ggml_projected_destroy(projected *p)
{
    if (!p)
        return;
    computed_free(&p->g);
    free(p);
}

/* The heads of a projection [D, T, B] as [hs, T, NH, B]. */
static struct ggml_tensor *heads_of(struct ggml_context *ctx, struct ggml_tensor *rows,
                                    int64_t hs, int64_t NH, int64_t T, int64_t B)
{
    return ggml_permute(ctx, ggml_reshape_4d(ctx, rows, hs, NH, T, B), 0, 2, 1, 3);
}

/* wq, wk, wv (D, C) and wo (C, D) or NULL: float32 rows, copied. */
projected *attn_ggml_projected_create(int64_t B, int64_t T, int64_t C, int64_t NH, int64_t hs,
                                      int causal, int n_threads, const float *wq,
                                      const float *wk, const float *wv, const float *wo)
{
    projected *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    const int64_t D = NH * hs;
    const size_t floats = (size_t)(B * T * C) * 2 + (size_t)(C * D) * 4 +
                          (size_t)(B * T * D) * 5;
    if (computed_init(&p->g, floats * 4 + (size_t)(T * T) * 2) != 0) {
        attn_ggml_projected_destroy(p);
        return NULL;
    }
    struct ggml_context *ctx = p->g.ctx;
    const float *from[4] = {wq, wk, wv, wo};
    for (int m = 0; m < 4; ++m) {
        if (!from[m])
            continue;
        p->w[m] = m < 3 ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, C, D)
                        : ggml_new_tensor_2d(ctx, GGML_TYPE_F32, D, C);
        memcpy(p->w[m]->data, from[m], (size_t)(C * D) * sizeof(float));
    }
    p->x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, C, T, B);
    struct ggml_tensor *mask = NULL;
    if (causal) {
        mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, T, T);
        ggml_fp16_t *m = mask->data;
        for (int64_t t = 0; t < T; ++t)
            for (int64_t j = 0; j < T; ++j)
                m[t * T + j] = ggml_fp32_to_fp16(j <= t ? 0.0f : -INFINITY);
    }
    struct ggml_tensor *q = heads_of(ctx, ggml_mul_mat(ctx, p->w[0], p->x), hs, NH, T, B);
    struct ggml_tensor *k = heads_of(ctx, ggml_mul_mat(ctx, p->w[1], p->x), hs, NH, T, B);
    struct ggml_tensor *v = heads_of(ctx, ggml_mul_mat(ctx, p->w[2], p->x), hs, NH, T, B);
    struct ggml_tensor *y =
        ggml_flash_attn_ext(ctx, q, k, v, mask, 1.0f / sqrtf((float)hs), 0.0f, 0.0f);
    ggml_prec_set_acc(y, GGML_PREC_F32);
    y = ggml_reshape_3d(ctx, y, D, T, B);
    p->out = p->w[3] ? ggml_mul_mat(ctx, p->w[3], y) : y;
    if (computed_plan(&p->g, p->out, n_threads) != 0) {
        attn_ggml_projected_destroy(p);
        return NULL;
    }
    return p;
}

/* X (B, T, C) float32 into the graph's input. */
void attn_ggml_projected_set_x(projected *p, const float *x)
{
    memcpy(p->x->data, x, ggml_nbytes(p->x));
}

/* One call; 0, or ggml's status. */
int attn_ggml_projected_run(projected *p)
{
    return (int)ggml_graph_compute(p->g.graph, &p->g.plan);
}

/* The last output, (B, T, C) with Wo, else (B, T, NH*hs), float32. */
const float *attn_ggml_projected_out(const projected *p)
{
    return p->out->data;
}
