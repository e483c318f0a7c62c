/*
 * What one configuration of `attn-bench sdpa` measures: attention on given
 * Q, K, V (attn_sdpa_*, attn.h's "sdpa" section) for a shape, a mask, key
 * lengths, a sliding window, an element type, forward or forward+backward,
 * an engine, a thread count and a cache state.
 *
 * Which keys a query sees (attn.h; the reference, the FLOP count, the bytes
 * and the PyTorch peer's mask all follow this one definition): for sequence
 * b with L_b keys (--lengths) and A_b the key count the library is told
 * about (L_b passed as key_lengths with --mask none; Tk with --mask padding
 * or full, which carry the lengths in the mask instead), query t sits at
 * p = A_b - Tq + t and key j is visible when
 *   j < L_b,  and with causal j <= p,  and with window > 0 j > p - window;
 * the visible keys of a query are thus one range [lo, hi). --mask full adds
 * a finite bias to every visible score.
 *
 * Layouts (--layout): where Q, K, V, out (and dout, dQ, dK, dV) keep their
 * heads, passed to attn through the strides of attn_sdpa_args_* (the
 * strides are in sdpa_layout.h): bshd is attn's dense (B,T,NH,hs) rows,
 * bhsd PyTorch's (B,NH,T,hs).
 *
 * Scenarios (--scenario): call times one call on the arrays; decode-loop
 * times the client's loop of `steps` decode steps: each appends one token's
 * K and V to a cache of capacity Tk + steps, its first Tk slots filled at
 * the start, and attends with one query (Tq = 1) over the S filled slots
 * (S = Tk + 1 ... Tk + steps), in place: the plan is made for the capacity
 * and told S as key_lengths. A loop's counts (pairs, FLOPs, bytes) are
 * those of its mean step, whose S is Tk + (steps + 1) / 2.
 */
#ifndef ATTN_BENCH_SDPA_CONFIG_H
#define ATTN_BENCH_SDPA_CONFIG_H

#include <stddef.h>

#include "measure/config.h"
#include "util/dtype.h"

typedef enum bench_sdpa_mask {
    BENCH_SDPA_MASK_NONE = 0,    /* no mask array; lengths as key_lengths */
    BENCH_SDPA_MASK_PADDING = 1, /* additive (B,1,1,Tk): -inf at j >= L_b; mask_ld = mask_sh = 0 */
    BENCH_SDPA_MASK_FULL = 2     /* additive (B,NH,Tq,Tk): a bias, -inf at j >= L_b */
} bench_sdpa_mask;
#define BENCH_SDPA_MASK_COUNT 3

typedef enum bench_sdpa_cache {
    BENCH_SDPA_CACHE_WARM = 0, /* calls back to back: what the last call left in the caches */
    BENCH_SDPA_CACHE_COLD = 1  /* a streaming read of the bandwidth buffer before every call */
} bench_sdpa_cache;
#define BENCH_SDPA_CACHE_COUNT 2

typedef enum bench_sdpa_layout {
    BENCH_SDPA_LAYOUT_BSHD = 0, /* (B,T,NH,hs): attn's dense rows */
    BENCH_SDPA_LAYOUT_BHSD = 1  /* (B,NH,T,hs): PyTorch's */
} bench_sdpa_layout;
#define BENCH_SDPA_LAYOUT_COUNT 2

typedef enum bench_sdpa_scenario {
    BENCH_SDPA_SCENARIO_CALL = 0,       /* one call on the arrays */
    BENCH_SDPA_SCENARIO_DECODE_LOOP = 1 /* steps decode steps on a growing cache */
} bench_sdpa_scenario;
#define BENCH_SDPA_SCENARIO_COUNT 2

extern const char *const bench_sdpa_mask_names[BENCH_SDPA_MASK_COUNT];
extern const char *const bench_sdpa_cache_names[BENCH_SDPA_CACHE_COUNT];
extern const char *const bench_sdpa_layout_names[BENCH_SDPA_LAYOUT_COUNT];
extern const char *const bench_sdpa_scenario_names[BENCH_SDPA_SCENARIO_COUNT];

/* One item of --lengths: "full" (count 0) or per-sequence lengths
 * "L0/L1/..." (count values; a single value is every sequence's). */
typedef struct bench_sdpa_lengths {
    size_t count;
    size_t *values;
    char text[256]; /* as written */
} bench_sdpa_lengths;

typedef struct bench_sdpa_shape {
    bench_dtype dtype;
    bench_op op;
    int causal;
    size_t window; /* 0: none */
    bench_sdpa_mask mask;
    size_t B, NH, NH_kv, Tq, Tk, hs, hs_v; /* hs_v resolved (never 0) */
    const bench_sdpa_lengths *lengths;     /* owned by the options */
    bench_sdpa_cache cache;
    bench_sdpa_layout layout;
    bench_sdpa_scenario scenario;
    size_t steps; /* decode-loop: the steps; call: 0 */
    size_t threads;
    double dropout; /* attention dropout p (op backward only; 0: none; --dropout) */
} bench_sdpa_shape;

typedef struct bench_sdpa_config {
    bench_sdpa_shape shape;
    bench_engine engine;
} bench_sdpa_config;

/* Key/value slots the arrays hold per sequence: Tk, plus the steps of a decode loop. */
size_t bench_sdpa_capacity(const bench_sdpa_shape *shape);

/* L_b of sequence b: Tk for "full", the item's value (its only one, or b-th). */
size_t bench_sdpa_length(const bench_sdpa_shape *shape, size_t b);

/* The keys the library is told sequence b has: L_b with --mask none, Tk otherwise. */
size_t bench_sdpa_aligned_length(const bench_sdpa_shape *shape, size_t b);

/* The visible keys [*lo, *hi) of query t of sequence b (*lo == *hi: none). */
void bench_sdpa_visible_range(const bench_sdpa_shape *shape, size_t b, size_t t, size_t *lo,
                              size_t *hi);

/* Visible (query, key) pairs of one query head summed over the sequences;
 * times NH for every head. */
double bench_sdpa_visible_pairs(const bench_sdpa_shape *shape);

/* Keys of sequence b that at least one query sees (the union of the ranges). */
size_t bench_sdpa_keys_needed(const bench_sdpa_shape *shape, size_t b);

/* K+V bytes a call must read at least: sum_b keys_needed(b) * NH_kv *
 * (hs + hs_v) * sizeof(element). */
double bench_sdpa_kv_bytes(const bench_sdpa_shape *shape);

/* FLOP count of one measured call (see bench_sdpa_flops_formula). */
double bench_sdpa_flops(const bench_sdpa_shape *shape);
extern const char bench_sdpa_flops_formula[];

/* A decode row of the table: Tq <= BENCH_SDPA_DECODE_MAX_TQ. */
#define BENCH_SDPA_DECODE_MAX_TQ 16
int bench_sdpa_is_decode(const bench_sdpa_shape *shape);

/* Same arrays and same peer measurement: every field but the engine. */
int bench_sdpa_shape_equal(const bench_sdpa_shape *a, const bench_sdpa_shape *b);

/* The same shape but perhaps for the layout and the dropout: measured as
 * one group (a row with dropout beside its twin without, interleaved). */
int bench_sdpa_shape_same_group(const bench_sdpa_shape *a, const bench_sdpa_shape *b);

/* The per-sequence lengths as "L0/L1/..." (every sequence spelled out), or
 * "full"; for the peer's protocol line. Returns -1 when it does not fit. */
int bench_sdpa_format_lengths(const bench_sdpa_shape *shape, char *text, size_t size);

#endif /* ATTN_BENCH_SDPA_CONFIG_H */
