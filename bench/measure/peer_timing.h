/*
 * What a peer (an outside implementation timed on the same shapes) reports
 * for one shape.
 */
#ifndef ATTN_BENCH_PEER_H
#define ATTN_BENCH_PEER_H

#include <stddef.h>

#include "util/timing.h"

/* The peers, in the order of the table and CSV columns. numpy is the
 * lesson's code unchanged (with NumPy >= 2 its f32 runs partly in float64),
 * numpy32 the same computation kept in float32 (f32 shapes only); python
 * is attn's own plan called through its Python package (the binding's cost
 * over the C call: python_median_ms - attn_median_ms of the own-engine row);
 * ort, openvino and ggml the inference engines on the projected heads, f32
 * forwards (their fastest way, checked before timing). */
typedef enum bench_peer_kind {
    BENCH_PEER_KIND_NAIVE = 0,
    BENCH_PEER_KIND_NUMPY = 1,
    BENCH_PEER_KIND_NUMPY32 = 2,
    BENCH_PEER_KIND_TORCH = 3,
    BENCH_PEER_KIND_PYTHON = 4, /* attn itself through its Python package (python/) */
    BENCH_PEER_KIND_ORT = 5,      /* ONNX Runtime (bench/peers/ort_peer.py) */
    BENCH_PEER_KIND_OPENVINO = 6, /* OpenVINO (bench/peers/openvino_peer.py) */
    BENCH_PEER_KIND_GGML = 7      /* ggml (bench/peers/ggml_peer.py) */
} bench_peer_kind;
#define BENCH_PEER_KINDS 8

/* "naive", "numpy", "numpy32", "torch", "python", "ort", "openvino", "ggml" */
extern const char *const bench_peer_kind_names[BENCH_PEER_KINDS];

/* The sdpa command's peers (peers/sdpa_peer.h runs them) are the kinds
 * from torch on, in the same order: naive, numpy and numpy32 run the
 * lesson's projected heads only. Its arrays of peers are indexed from
 * there (kind BENCH_SDPA_PEER_FIRST + k), so a peer is one kind of both. */
enum {
    BENCH_SDPA_PEER_FIRST = BENCH_PEER_KIND_TORCH,
    BENCH_SDPA_PEER_TORCH = BENCH_PEER_KIND_TORCH - BENCH_SDPA_PEER_FIRST,
    BENCH_SDPA_PEER_PYTHON = BENCH_PEER_KIND_PYTHON - BENCH_SDPA_PEER_FIRST,
    BENCH_SDPA_PEER_ORT = BENCH_PEER_KIND_ORT - BENCH_SDPA_PEER_FIRST,
    BENCH_SDPA_PEER_OPENVINO = BENCH_PEER_KIND_OPENVINO - BENCH_SDPA_PEER_FIRST,
    BENCH_SDPA_PEER_GGML = BENCH_PEER_KIND_GGML - BENCH_SDPA_PEER_FIRST,
    BENCH_SDPA_PEER_COUNT = BENCH_PEER_KINDS - BENCH_SDPA_PEER_FIRST
};

/* bench_peer_kind_names from torch on: "torch", "python", "ort", ... */
extern const char *const *const bench_sdpa_peer_names;

/* One peer's answer for one shape or configuration, in either command (the
 * line protocol: peer_common.py; sdpa's configurations and rounds:
 * sdpa_peer_protocol.py). The run command's peers fill the first fields;
 * the sdpa peers' result lines add a check, the mask, the threads and the
 * kernel. */
typedef struct bench_peer_timing {
    int measured;        /* 0: no numbers for this shape (see note) */
    int pending;         /* a round was timed; its numbers come with the last one */
    bench_timing timing; /* median, min, repeats as the peer measured them */
    size_t threads;      /* the threads it ran on: its result's THREADS, else its blas
                          * line's threads=N; 0: not said */
    char out_dtype[16];  /* element type of the peer's output, e.g. "float64" */
    double check_error;  /* its own check of its output against float64; < 0: none */
    char mask[96];       /* what the function got: is_causal, none, bool(B,1,Tq,Tk), ... */
    char kernel[96];     /* the operator or kernel that ran ("": not said) */
    char version[64];    /* the engine and its version (the first word of its info line) */
    char note[160];      /* why there are no numbers, when the peer says */
} bench_peer_timing;

#endif /* ATTN_BENCH_PEER_H */
