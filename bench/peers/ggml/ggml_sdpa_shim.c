/*
 * The ggml peer's C side (bench/peers/ggml_sdpa_peer.py loads it with
 * ctypes): one attention call of attn-bench sdpa as llama.cpp makes it,
 * ggml_flash_attn_ext on ggml's CPU backend, its graph built once and
 * computed on n_threads threads per call. Built by build_ggml.sh against the
 * ggml it builds; the API below is this file's own.
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

typedef struct shim {
    struct ggml_context *ctx;
    struct ggml_tensor *q, *k, *v, *mask, *out; /* q, k, v: the storages */
    struct ggml_cgraph *graph;
    struct ggml_cplan plan;
    void *work;
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
    if (s->ctx)
        ggml_free(s->ctx);
    free(s->work);
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
                         (size_t)(B * NH * Tq * hs_v) * 4 + ggml_graph_overhead() +
                         16 * ggml_tensor_overhead() + (1u << 20);
    struct ggml_init_params params = {.mem_size = bytes, .mem_buffer = NULL, .no_alloc = false};
    ggml_cpu_init();
    s->ctx = ggml_init(params);
    if (!s->ctx) {
        attn_ggml_shim_destroy(s);
        return NULL;
    }
    struct ggml_tensor *q, *k, *v;
    s->q = stored(s->ctx, GGML_TYPE_F32, bshd, hs, Tq, NH, B, &q);
    s->k = stored(s->ctx, kv_type, bshd, hs, Tk, NH_kv, B, &k);
    s->v = stored(s->ctx, kv_type, bshd, hs_v, Tk, NH_kv, B, &v);
    if (with_mask > 0)
        s->mask = ggml_new_tensor_4d(s->ctx, GGML_TYPE_F16, Tk, Tq, with_mask > 1 ? NH : 1, B);
    s->out = ggml_flash_attn_ext(s->ctx, q, k, v, s->mask, 1.0f / sqrtf((float)hs), 0.0f, 0.0f);
    ggml_prec_set_acc(s->out, GGML_PREC_F32);
    s->graph = ggml_new_graph(s->ctx);
    ggml_build_forward_expand(s->graph, s->out);
    s->plan = ggml_graph_plan(s->graph, n_threads, NULL);
    if (s->plan.work_size) {
        s->work = malloc(s->plan.work_size);
        if (!s->work) {
            attn_ggml_shim_destroy(s);
            return NULL;
        }
        s->plan.work_data = s->work;
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
    return (int)ggml_graph_compute(s->graph, &s->plan);
}

/* The last output, (B, Tq, NH, hs_v) float32. */
const float *attn_ggml_shim_out(const shim *s)
{
    return s->out->data;
}
