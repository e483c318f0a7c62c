/*
 * attn — scaled dot-product self-attention on CBLAS.
 *
 * Conventions (they hold for every declaration below)
 * ---------------------------------------------------
 *  - Shapes are written PyTorch-style and arrays are dense, row-major, last
 *    index fastest: X (B,T,C) means element X[(b*T + t)*C + c].
 *    B batch, T sequence length, C model width, hs head size,
 *    Tq/Tk query/key counts, d key width, dv value width.
 *  - Every function exists for float (suffix _f32) and double (suffix _f64)
 *    with identical arguments and meaning (sdpa: also _bf16, _f16).
 *  - Every fallible call returns an attn_status; ATTN_OK is 0. On any
 *    nonzero status nothing is printed, nothing aborts, and every output
 *    buffer is left exactly as the caller passed it.
 *  - Arguments are checked in a fixed order and the first failure is
 *    reported: NULL pointers, then zero dimensions, then size overflow, then
 *    the BLAS integer range, then strides, then the scale, then overlap of
 *    outputs with inputs, then memory.
 *  - Softmax uses -INFINITY for masked entries. A row whose entries are all
 *    -INFINITY (or fully masked) yields weights 0 and output 0, never NaN,
 *    even where the values it would weigh (v, V = X Wv) hold Inf or NaN.
 *    A NaN anywhere in a row makes that row's results NaN (it is never
 *    silently dropped). Entries equal to +INFINITY share the row's weight
 *    equally and every finite entry gets 0.
 *  - "scale <= 0" selects the default scale 1/sqrt(d) (1/sqrt(hs) for heads);
 *    a NaN or infinite scale, or a positive one beyond the largest finite
 *    value of the call's precision (FLT_MAX for _f32), is ATTN_ERR_BAD_SCALE.
 *  - The library's one piece of process-wide state is the pool of shared
 *    threads that plans and one-shots run on by default (ATTN_THREADS_AUTO,
 *    see attn_plan_set_threads): started on first use, used by one call at a
 *    time, never changing a result. It never changes the BLAS library's
 *    process-wide settings (its thread count included), and every function
 *    is safe to call from several threads at once on distinct output
 *    buffers. Results are deterministic for a given build, shape, SIMD
 *    kernel and engine: on attn's own threads for every thread count (and
 *    whatever OPENBLAS_NUM_THREADS says), on BLAS threads for a given BLAS
 *    thread count and BLAS kernel; not across kernel sets, BLAS libraries
 *    or BLAS thread counts (docs/api.md, "Determinism").
 *  - The softmax kernel (AVX-512 or AVX2 on x86-64, NEON on AArch64, or
 *    portable scalar) is chosen once per process from the CPU; the
 *    environment variable ATTN_SIMD=scalar|avx2|avx512|neon, read at that
 *    moment, can force a kernel the build and the CPU support.
 *
 * Errors (attn_status)
 * --------------------
 *   ATTN_ERR_NULL_POINTER    a required pointer is NULL
 *   ATTN_ERR_ZERO_DIMENSION  a dimension is 0
 *   ATTN_ERR_SIZE_OVERFLOW   a product of dimensions (an array's element or
 *                            byte count) does not fit in size_t
 *   ATTN_ERR_BLAS_RANGE      a dimension or leading dimension handed to BLAS
 *                            exceeds its integer range (INT_MAX here)
 *   ATTN_ERR_BAD_STRIDE      a row stride ld is smaller than the row length, or
 *                            strides that place two elements at one address
 *   ATTN_ERR_BAD_SCALE       scale is NaN, infinite, or too large for the precision
 *   ATTN_ERR_ALIASING        an output array overlaps an input array or
 *                            another output array
 *   ATTN_ERR_OUT_OF_MEMORY   a workspace allocation failed
 *   ATTN_ERR_BAD_SHAPE       C is not a multiple of NH (multi-head one-shots),
 *                            or NH not a multiple of NH_kv (sdpa)
 *   ATTN_ERR_BAD_DTYPE       a dtype the plan creator does not take
 *   ATTN_ERR_BAD_FLAGS       attn_plan_create got an unknown flag bit or
 *                            contradictory flags
 *   ATTN_ERR_DTYPE_MISMATCH  a call of another precision than its plan's
 *   ATTN_ERR_INFERENCE_PLAN  a backward on a plan created with ATTN_INFERENCE
 *   ATTN_ERR_NO_FORWARD      a backward on a plan that has run no forward
 *   ATTN_ERR_FORWARD_MISMATCH a backward given other X, Wq, Wk, Wv or Wo
 *                            pointers (Wo's presence included) than the
 *                            forward it differentiates
 *   ATTN_ERR_BAD_THREADS     attn_plan_set_threads got more than
 *                            ATTN_MAX_THREADS threads (and not ATTN_THREADS_AUTO)
 *   ATTN_ERR_PLAN_KIND       a projected-plan call (attn_forward_*,
 *                            attn_backward_*) on an sdpa plan, or the reverse
 *   ATTN_ERR_BAD_LENGTH      an sdpa key length above Tk
 *   ATTN_ERR_BAD_DROPOUT     attn_plan_set_dropout's p NaN or outside [0, 1)
 */
#ifndef ATTN_ATTN_H
#define ATTN_ATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version: the macros describe the header, attn_version_* the library */
#define ATTN_VERSION_MAJOR 0
#define ATTN_VERSION_MINOR 1
#define ATTN_VERSION_PATCH 0
#define ATTN_VERSION_NUMBER (ATTN_VERSION_MAJOR * 10000 + ATTN_VERSION_MINOR * 100 + ATTN_VERSION_PATCH)
#define ATTN_VERSION_STRINGIFY_(x) #x
#define ATTN_VERSION_STRINGIFY(x) ATTN_VERSION_STRINGIFY_(x)
#define ATTN_VERSION_STRING ATTN_VERSION_STRINGIFY(ATTN_VERSION_MAJOR) "." \
    ATTN_VERSION_STRINGIFY(ATTN_VERSION_MINOR) "." ATTN_VERSION_STRINGIFY(ATTN_VERSION_PATCH)

/* ---- symbol visibility: the library is built with hidden symbols */
#if defined(_WIN32) && defined(ATTN_BUILDING_SHARED)
#define ATTN_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define ATTN_API __attribute__((visibility("default")))
#else
#define ATTN_API
#endif

typedef enum attn_status {
    ATTN_OK = 0,
    ATTN_ERR_NULL_POINTER = 1,
    ATTN_ERR_ZERO_DIMENSION = 2,
    ATTN_ERR_SIZE_OVERFLOW = 3,
    ATTN_ERR_BLAS_RANGE = 4,
    ATTN_ERR_BAD_STRIDE = 5,
    ATTN_ERR_BAD_SCALE = 6,
    ATTN_ERR_ALIASING = 7,
    ATTN_ERR_OUT_OF_MEMORY = 8,
    ATTN_ERR_BAD_SHAPE = 9,
    ATTN_ERR_BAD_DTYPE = 10,
    ATTN_ERR_BAD_FLAGS = 11,
    ATTN_ERR_DTYPE_MISMATCH = 12,
    ATTN_ERR_INFERENCE_PLAN = 13,
    ATTN_ERR_NO_FORWARD = 14,
    ATTN_ERR_FORWARD_MISMATCH = 15,
    ATTN_ERR_BAD_THREADS = 16,
    ATTN_ERR_PLAN_KIND = 17,
    ATTN_ERR_BAD_LENGTH = 18,
    ATTN_ERR_BAD_DROPOUT = 19
} attn_status;

/* A static, human-readable description of `status`; never NULL (an unknown
 * value gives "unknown attn_status"). */
ATTN_API const char *attn_status_string(attn_status status);

/* ATTN_VERSION_NUMBER and ATTN_VERSION_STRING of the library actually linked. */
ATTN_API unsigned attn_version_number(void);
ATTN_API const char *attn_version_string(void);

/* The kernel set in use: "amx" or "avx512-bf16" (avx512 with a bf16 plan's products on AMX or
 * vdpbf16ps), "avx512", "avx2", "neon" or "scalar". Never NULL. */
ATTN_API const char *attn_simd_name(void);

/* ---- row softmax ---------------------------------------------------------
 * x holds `rows` rows of `cols` entries, row r starting at x + r*ld.
 * In place, each row becomes softmax(row): exp(x_j - max) / sum_k exp(x_k - max).
 * Entries between cols and ld are neither read nor written.
 * Errors: NULL_POINTER (x), ZERO_DIMENSION (rows or cols), BAD_STRIDE
 * (ld < cols), SIZE_OVERFLOW ((rows-1)*ld + cols elements). */
ATTN_API attn_status attn_softmax_rows_f32(float *x, size_t rows, size_t cols, size_t ld);
ATTN_API attn_status attn_softmax_rows_f64(double *x, size_t rows, size_t cols, size_t ld);

/* ---- soft lookup ---------------------------------------------------------
 * q (Tq,d), k (Tk,d), v (Tk,dv) -> out (Tq,dv), weights (Tq,Tk) or NULL:
 *   weights = softmax_rows(scale * q k^T),   out = weights v.
 * scale <= 0 means 1/sqrt(d); the lesson's unscaled lookup is scale = 1.
 * Without a weights buffer the call allocates a workspace of max(2^18, Tk)
 * elements and takes the queries in blocks, so memory stays O(Tk).
 * Errors: NULL_POINTER (q, k, v, out), ZERO_DIMENSION, SIZE_OVERFLOW,
 * BLAS_RANGE, BAD_SCALE, ALIASING (out or weights overlapping q, k, v or each
 * other), OUT_OF_MEMORY. */
ATTN_API attn_status attn_lookup_f32(size_t Tq, size_t Tk, size_t d, size_t dv, double scale,
                                     const float *q, const float *k, const float *v,
                                     float *out, float *weights);
ATTN_API attn_status attn_lookup_f64(size_t Tq, size_t Tk, size_t d, size_t dv, double scale,
                                     const double *q, const double *k, const double *v,
                                     double *out, double *weights);

/* ---- one projected head (the course's self_attention) --------------------
 * X (B,T,C); Wq, Wk, Wv (C,hs) -> out (B,T,hs), weights (B,T,T) or NULL:
 *   Q = X Wq,  K = X Wk,  V = X Wv                      (B,T,hs)
 *   S = Q K^T / sqrt(hs); if causal, S[b][t][j] = -inf for j > t   (B,T,T)
 *   weights = softmax_rows(S),  out = weights V          (B,T,hs)
 * causal is 0 (every position sees every position) or nonzero.
 * It is a plan (below) with NH = 1 and ATTN_INFERENCE, created for the call,
 * executed once and destroyed: its workspace (4*B*T*hs elements plus a
 * tile of 128*T per thread below ATTN_TILED_MIN_T, O(T) from there on)
 * lives for the call.
 * Errors: NULL_POINTER (X, Wq, Wk, Wv, out), ZERO_DIMENSION, SIZE_OVERFLOW,
 * BLAS_RANGE, ALIASING (out or weights overlapping X, Wq, Wk, Wv or each
 * other), OUT_OF_MEMORY. */
ATTN_API attn_status attn_self_attention_f32(size_t B, size_t T, size_t C, size_t hs, int causal,
                                             const float *X, const float *Wq, const float *Wk,
                                             const float *Wv, float *out, float *weights);
ATTN_API attn_status attn_self_attention_f64(size_t B, size_t T, size_t C, size_t hs, int causal,
                                             const double *X, const double *Wq, const double *Wk,
                                             const double *Wv, double *out, double *weights);

/* ---- multi-head one-shots -------------------------------------------------
 * NH heads split the width: hs = C/NH (C must be a multiple of NH, else
 * ATTN_ERR_BAD_SHAPE). Wq, Wk, Wv, Wo are (C,C) stored (in,out); head h uses
 * columns [h*hs, (h+1)*hs) of Wq, Wk, Wv:
 *   Q, K, V = X Wq, X Wk, X Wv                                  (B,T,C)
 *   Y[:, :, h] = softmax_rows(Q_h K_h^T / sqrt(hs) [+ causal mask]) V_h
 *   out = Y Wo, or out = Y when Wo is NULL                      (B,T,C)
 * They are attn_plan_create + attn_forward/attn_backward + attn_plan_destroy
 * (plans, below, avoid the per-call allocation).
 * Errors: as attn_self_attention, plus BAD_SHAPE. */
ATTN_API attn_status attn_mha_forward_f32(size_t B, size_t T, size_t C, size_t NH, int causal,
                                          const float *X, const float *Wq, const float *Wk,
                                          const float *Wv, const float *Wo, float *out);
ATTN_API attn_status attn_mha_forward_f64(size_t B, size_t T, size_t C, size_t NH, int causal,
                                          const double *X, const double *Wq, const double *Wk,
                                          const double *Wv, const double *Wo, double *out);

/* Gradients of L = sum(out * dout) (dout (B,T,C), the gradient of a loss with
 * respect to out) for the forward above: dX (B,T,C) and dWq, dWk, dWv, dWo
 * (C,C), all overwritten. When Wo is NULL, dWo is ignored and may be NULL.
 * Errors: as attn_mha_forward; ALIASING also covers the gradient buffers. */
ATTN_API attn_status attn_mha_backward_f32(size_t B, size_t T, size_t C, size_t NH, int causal,
                                           const float *X, const float *Wq, const float *Wk,
                                           const float *Wv, const float *Wo, const float *dout,
                                           float *dX, float *dWq, float *dWk, float *dWv,
                                           float *dWo);
ATTN_API attn_status attn_mha_backward_f64(size_t B, size_t T, size_t C, size_t NH, int causal,
                                           const double *X, const double *Wq, const double *Wk,
                                           const double *Wv, const double *Wo, const double *dout,
                                           double *dX, double *dWq, double *dWk, double *dWv,
                                           double *dWo);

/* ---- plans ------------------------------------------------------------------
 * A plan fixes a shape, a precision and options once; it owns every buffer
 * a forward and a backward need, so executing it allocates nothing.
 *
 * Life cycle:
 *   attn_plan_create(&plan, ...)            allocates (the only allocation)
 *   attn_forward_f32(plan, ...)             any number of times, new arrays
 *   attn_backward_f32(plan, ...)            gradients of the last forward
 *   attn_plan_destroy(plan)                 frees; NULL is fine
 *
 * Shapes: D = NH*hs. X (B,T,C); Wq, Wk, Wv (C,D), head h in columns
 * [h*hs, (h+1)*hs); Wo (D,C) or NULL; out (B,T,C) with Wo, else (B,T,D);
 * weights (B,NH,T,T) or NULL. hs need not be C/NH: a single head of any hs is NH = 1.
 *
 * Threads: a plan is used by one thread at a time (it holds the state of its
 * last forward). Distinct plans share no data, so threads scale by owning a
 * plan each; creating and destroying plans is thread-safe. Within one call a
 * plan runs on the engine attn picks (ATTN_THREADS_AUTO, the default), on
 * BLAS threads, or on threads of its own: see attn_plan_set_threads.
 *
 * Memory: 4*B*T*D elements (Q, K, V, heads); without ATTN_INFERENCE also
 * 2*B*NH*T (each row's log-sum-exp and the backward's row sums), 4*B*T*D
 * gradient buffers and, training fewer than 4 (batch, head) pairs, up to
 * 8*T*hs partial query gradients: O(T), never T*T. A training forward
 * takes the tiled path and keeps the log-sum-exp of every row, from which
 * the backward recomputes the weights block by block (FlashAttention-2).
 * Each thread that runs the plan has a scratch of its own: at most about
 * 150k elements for attn's matrix-product kernel, plus 128*T elements (a
 * block of 128 queries' scores), or 128*512 + 3*128 + T on the tiled path
 * (and in training).
 * On attn's own engine (by default where it is the engine picked, or after
 * attn_plan_set_threads(plan, n >= 1)) a plan also holds B*T*D
 * elements (K transposed; twice that in training, for V transposed too)
 * and about 4*C*(D+64) (the weights packed for the kernel), except a plan
 * whose calls are too small to share between threads (a few microseconds
 * of work): it runs on the calling thread with one scratch and neither.
 */
typedef struct attn_plan attn_plan;

typedef enum attn_dtype { ATTN_F32 = 1, ATTN_F64 = 2, ATTN_BF16 = 3, ATTN_F16 = 4 } attn_dtype;

#define ATTN_CAUSAL (1u << 0)    /* key j > query t is masked */
#define ATTN_INFERENCE (1u << 1) /* forward keeps nothing for a backward */

/* The path of an ATTN_INFERENCE forward called without weights (other
 * forwards write the T*T weights; a training forward recomputes them from
 * the tiled path's log-sum-exp). By default the plan chooses from T:
 * a materialized (T,T) score matrix below ATTN_TILED_MIN_T positions, the
 * tiled path (online softmax over key blocks, O(T) memory) from there on.
 * These flags force one path; both at once is ATTN_ERR_BAD_FLAGS, and
 * either without ATTN_INFERENCE has no effect. */
#define ATTN_MATERIALIZED (1u << 2)
#define ATTN_TILED (1u << 3)
#define ATTN_TILED_MIN_T 512

/* Creates a plan in *plan (left untouched on error). scale <= 0 means
 * 1/sqrt(hs). Errors: NULL_POINTER (plan), BAD_DTYPE, BAD_FLAGS (unknown
 * bits, or ATTN_MATERIALIZED with ATTN_TILED), ZERO_DIMENSION, SIZE_OVERFLOW (any array or the workspace),
 * BLAS_RANGE, BAD_SCALE, OUT_OF_MEMORY. */
ATTN_API attn_status attn_plan_create(attn_plan **plan, attn_dtype dtype, size_t B, size_t T,
                                      size_t C, size_t NH, size_t hs, double scale,
                                      unsigned flags);
ATTN_API void attn_plan_destroy(attn_plan *plan);

/* The threads that execute a plan's forwards and backwards.
 *   threads = ATTN_THREADS_AUTO (every plan starts so; the one-shot calls
 *     run so): the engine that measured faster on CPUs like this one, on
 *     every CPU the process may run on. With a SIMD kernel set (AVX-512,
 *     AVX2, NEON) that is attn's own engine (below) on the process's shared
 *     threads: one per CPU of sched_getaffinity at the first call that
 *     needs them, started once and kept for the life of the process (or of
 *     the library), used by one call at a time; a call that finds them busy
 *     (another thread's call holds them) runs on its calling thread alone,
 *     so callers that run plans concurrently never oversubscribe the CPUs.
 *     With the scalar kernel set it is BLAS threads. The environment
 *     variable ATTN_NUM_THREADS, read once per process, overrides the
 *     choice: 0 means BLAS threads, n >= 1 own threads, n of them.
 *   threads = 0: BLAS threads. The calling thread runs the plan; its large
 *     matrix products are BLAS calls, threaded as the BLAS library is set
 *     (OPENBLAS_NUM_THREADS, openblas_set_num_threads; attn never changes
 *     that setting); products too small for a BLAS call to pay go to attn's
 *     own kernel. Results are deterministic for a given BLAS thread count.
 *   threads = n >= 1: the plan's own n threads, the caller and n-1 workers
 *     that the plan starts now and keeps until it is destroyed or set again.
 *     The work is split into items (blocks of rows, and for short inputs
 *     of columns, of each projection; one block of 128 queries of one
 *     (batch, head); in the backward one group of key blocks of one (batch,
 *     head)) and every matrix product is attn's own single-threaded
 *     kernel: the BLAS is not called, so BLAS threads never compete with the
 *     plan's. The items do not depend on n, so the results are the same, bit
 *     for bit, for every n (and for ATTN_THREADS_AUTO on own threads).
 *   On every setting a call of fewer than about 2 million floating-point
 *   operations runs on its calling thread alone (handing it out costs more).
 * Call it between executions; the state a forward kept for a backward
 * survives it. Errors: NULL_POINTER (plan), BAD_THREADS (threads >
 * ATTN_MAX_THREADS and not ATTN_THREADS_AUTO), SIZE_OVERFLOW, OUT_OF_MEMORY
 * (memory or a thread could not be had); on error the plan keeps its
 * threads. */
#define ATTN_MAX_THREADS 256u
#define ATTN_THREADS_AUTO 0xFFFFFFFFu
ATTN_API attn_status attn_plan_set_threads(attn_plan *plan, unsigned threads);

/* The engine the plan's calls run on: *threads = 0 for BLAS threads, n >= 1
 * for n threads of attn's own (under ATTN_THREADS_AUTO the shared threads'
 * count, the most a call uses). Errors: NULL_POINTER (plan, threads). */
ATTN_API attn_status attn_plan_get_threads(const attn_plan *plan, unsigned *threads);

/* ---- attention on given Q, K, V (sdpa) --------------------------------------
 * The attention step alone, as engines and training code call it (PyTorch's
 * scaled_dot_product_attention): Q, K, V computed by the caller (a fused
 * QKV projection, rotary embeddings, a KV cache), read in place through
 * row strides, never copied.
 *
 * For sequence b, query head h, query t, with L_b = key_lengths[b] (or Tk)
 * and g = h / (NH / NH_kv) its key/value head:
 *   p = L_b - Tq + t                       the query's position (bottom-right
 *                                          alignment: the last query sits at
 *                                          the last key, as in a decode step)
 *   key j is visible when j < L_b, and with ATTN_CAUSAL j <= p, and with
 *     window > 0 j > p - window
 *   s_j = scale * <Q[b,t,h], K[b,j,g]> + mask(b,h,t,j)       (visible j)
 *   out[b,t,h] = sum_j softmax(s)_j V[b,j,g],   lse[b,h,t] = log sum_j exp(s_j)
 * scale <= 0 means 1/sqrt(hs). A row with no visible key, or whose visible
 * scores are all -INFINITY, gets out = 0 and lse = -INFINITY, never NaN. A
 * score of +INFINITY takes the row's weight (shared equally) and its lse is
 * +INFINITY; NaN anywhere in a row's visible inputs makes the row NaN.
 * Keys j >= L_b are never read (a KV cache's unfilled slots may hold
 * anything); keys outside a row's causal range are never multiplied into
 * its output; keys that only the mask or the window hides may be multiplied
 * by a weight of 0, so that a NaN or Inf in such a V reaches a row that has
 * some weight elsewhere (as in PyTorch); a row with no weight at all is 0.
 *
 * The backward differentiates sum(out * dout) from the forward's out and
 * lse, recomputing the weights block by block (FlashAttention-2): O(Tq + Tk)
 * memory, no Tq*Tk buffer. dK and dV are summed over the query heads that
 * share them; rows of dK, dV for keys j >= L_b are 0; the mask gets no
 * gradient.
 */
typedef struct attn_sdpa_shape {
    size_t B;     /* sequences */
    size_t NH;    /* query heads */
    size_t NH_kv; /* key/value heads, NH % NH_kv == 0: NH_kv = NH (multi-head),
                   * 1 (multi-query), else grouped */
    size_t Tq;    /* queries per sequence */
    size_t Tk;    /* key/value slots per sequence (a KV cache's capacity) */
    size_t hs;    /* head size of Q and K */
    size_t hs_v;  /* head size of V and of the output; 0 means hs */
} attn_sdpa_shape;

/* The arrays of one call, in any layout whose last dimension is contiguous.
 * Element i of row t of head h of sequence b of Q is
 *   Q[b*sbq + h*shq + t*ldq + i]
 * and so for K (sbk, shk, ldk), V (sbv, shv, ldv) and out (sbo, sho, ldo);
 * every stride is in elements and 0 means the dense one: ld = NH*hs (Q),
 * NH_kv*hs (K), NH_kv*hs_v (V), NH*hs_v (out); sh = hs (Q, K) or hs_v
 * (V, out); sb = Tq*ld (Q, out) or Tk*ld (K, V). A zero-initialized struct
 * is attn's own (B,T,NH,hs) rows. Some layouts as strides (Q; K, V alike
 * with Tk and NH_kv):
 *   (B,T,NH,hs) dense                      all 0
 *   (B,NH,T,hs), PyTorch's                 ldq = hs, shq = Tq*hs, sbq = NH*Tq*hs
 *   a (B,NH_kv,S_max,hs) cache, Tk <= S_max ldk = hs, shk = S_max*hs,
 *                                          sbk = NH_kv*S_max*hs
 *   one fused (B,T,3,NH,hs) QKV buffer     ldq = ldk = ldv = 3*NH*hs, K at
 *                                          Q + NH*hs, V at Q + 2*NH*hs
 * Rules (attn_sdpa_forward_*, attn_sdpa_backward_*): each of Q, K, V and
 * out must place its elements at distinct addresses, judged by its
 * dimensions of more than one element sorted by stride (the row of hs
 * elements first): each stride at least the span of the dimensions below
 * it, else ATTN_ERR_BAD_STRIDE (this refuses every overlapping layout, and
 * the rare non-overlapping ones whose dimensions interleave). A forward
 * given key_lengths judges K, V (rows) and the mask (columns) by the keys
 * it reads, max(1, max_b key_lengths[b]): a plan for a cache's capacity Tk
 * takes (B,NH_kv,L,hs) tensors and (..., L) masks of its L filled slots; a
 * backward, all Tk (it writes every row of dK, dV). A row stride goes to BLAS: above INT_MAX
 * is ATTN_ERR_BLAS_RANGE; head and batch strides do not. ATTN_ERR_ALIASING: see
 * attn_sdpa_forward_f32. Results are the same bytes in every layout but a decode step's out
 * with NH_kv > 1 heads apart (shk >= ldk), which may differ by rounding (docs/api.md). */
typedef struct attn_sdpa_args_f32 {
    const float *Q; size_t ldq;   /* (B,Tq,NH,hs): row stride; 0: NH*hs */
    const float *K; size_t ldk;   /* (B,Tk,NH_kv,hs); 0: NH_kv*hs */
    const float *V; size_t ldv;   /* (B,Tk,NH_kv,hs_v); 0: NH_kv*hs_v */
    const float *mask;            /* additive, or NULL: entry (t,j) of (b,h) at
                                   * mask[b*mask_sb + h*mask_sh + t*mask_ld + j] */
    size_t mask_ld, mask_sb, mask_sh; /* a stride of 0 broadcasts; -INFINITY masks */
    const size_t *key_lengths;    /* (B): keys j >= key_lengths[b] do not exist; NULL: all Tk */
    float *out; size_t ldo;       /* (B,Tq,NH,hs_v); 0: NH*hs_v */
    float *lse;                   /* (B,NH,Tq), dense: log-sum-exp of each row's scaled,
                                   * masked scores; or NULL (required by the backward) */
    size_t sbq, shq;   /* Q:   batch and head strides in elements; 0 = dense (sbq = Tq*ldq, shq = hs)   */
    size_t sbk, shk;   /* K:   0 = dense (sbk = Tk*ldk, shk = hs)                                       */
    size_t sbv, shv;   /* V:   0 = dense (sbv = Tk*ldv, shv = hs_v)                                     */
    size_t sbo, sho;   /* out: 0 = dense (sbo = Tq*ldo, sho = hs_v)                                     */
} attn_sdpa_args_f32;

typedef struct attn_sdpa_args_f64 {
    const double *Q; size_t ldq;
    const double *K; size_t ldk;
    const double *V; size_t ldv;
    const double *mask;
    size_t mask_ld, mask_sb, mask_sh;
    const size_t *key_lengths;
    double *out; size_t ldo;
    double *lse;
    size_t sbq, shq;
    size_t sbk, shk;
    size_t sbv, shv;
    size_t sbo, sho;
} attn_sdpa_args_f64;

/* Creates an sdpa plan of dtype ATTN_F32, ATTN_F64, ATTN_BF16 or ATTN_F16
 * in *plan (left untouched on error): flags ATTN_CAUSAL and ATTN_INFERENCE
 * (no backward; nothing kept for one), window 0 (none) or the sliding
 * window's length. Its memory beside each thread's scratch (about 150k
 * elements and a 128*512 tile of scores): the backward's row sums
 * (B*NH*Tq); below 8 (sequence, key/value head) pairs, partial results of
 * key blocks (up to 8*B*NH*Tq*(hs_v+2) elements in a forward, 8*B*NH*Tq*hs
 * in a backward); on attn's own threads with Tq >= 128, K^T and V (and V^T
 * in training) packed, about B*NH_kv*Tk*(hs + hs_v) each. Errors, in order:
 * NULL_POINTER (plan, shape), BAD_DTYPE, BAD_FLAGS, ZERO_DIMENSION (B, NH,
 * NH_kv, Tq, Tk, hs), BAD_SHAPE (NH % NH_kv), SIZE_OVERFLOW, BLAS_RANGE,
 * BAD_SCALE, OUT_OF_MEMORY. */
ATTN_API attn_status attn_sdpa_plan_create(attn_plan **plan, attn_dtype dtype,
                                           const attn_sdpa_shape *shape, double scale,
                                           unsigned flags, size_t window);

/* The forward: writes out (and lse when set). Errors, in order:
 * NULL_POINTER (plan, a, Q, K, V, out), PLAN_KIND, DTYPE_MISMATCH,
 * BAD_STRIDE (Q, K, V or out placing two elements at one address by the
 * rule above; a nonzero mask stride smaller than what it steps over:
 * mask_ld < Tk (the keys read, above), mask_sh < one head's (Tq,Tk) extent, mask_sb < that
 * of one sequence's heads), SIZE_OVERFLOW (an array's extent, its first to
 * its last element, or a dense default stride), BLAS_RANGE (a row stride
 * above INT_MAX), BAD_LENGTH (a key length above Tk), ALIASING (out or lse
 * sharing an address with an input, key_lengths included, or with each
 * other).
 * ALIASING is decided exactly for two arrays laid out by strides (Q, K, V,
 * out, dout, dQ, dK, dV): they are accepted when their spans (first to last
 * element) are disjoint, or when some stride P of either makes the columns
 * they touch within a period P disjoint: every stride of both a multiple of
 * P or part of an inner span of at most P from the array's start, and the
 * two inner spans, taken modulo P, disjoint (the interleaved arrays of one
 * fused buffer, wherever it starts: Q, K, V or dQ, dK, dV side by side in
 * each row, or head by head). Every other overlap of spans is refused, even
 * where no element is shared. The mask, lse and key_lengths are judged by
 * their spans. */
ATTN_API attn_status attn_sdpa_forward_f32(attn_plan *plan, const attn_sdpa_args_f32 *a);
ATTN_API attn_status attn_sdpa_forward_f64(attn_plan *plan, const attn_sdpa_args_f64 *a);

/* The backward: dQ (with Q's strides), dK (K's), dV (V's) overwritten with
 * the gradients of sum(out * dout) (dout with out's strides), from a->out and a->lse of
 * the forward of the same inputs. The plan keeps nothing between the two
 * calls, so nothing is checked against that forward: Q, K, V, the mask and
 * key_lengths must hold the values that forward read, and out and lse the
 * values it wrote (the same arrays, or copies); other values give wrong
 * gradients, without an error. Errors: as the forward, NULL_POINTER
 * also for lse, dout, dQ, dK, dV, and INFERENCE_PLAN right after
 * DTYPE_MISMATCH; ALIASING for a gradient sharing an address with an
 * input (out, lse and dout included) or another gradient, by the rule of
 * the forward (dQ, dK, dV interleaved in one fused buffer are accepted). */
ATTN_API attn_status attn_sdpa_backward_f32(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                            const float *dout, float *dQ, float *dK, float *dV);
ATTN_API attn_status attn_sdpa_backward_f64(attn_plan *plan, const attn_sdpa_args_f64 *a,
                                            const double *dout, double *dQ, double *dK,
                                            double *dV);

/* One-shot forward: an ATTN_INFERENCE sdpa plan created, executed and
 * destroyed (on the shared threads: nothing is started per call). Errors:
 * those of attn_sdpa_plan_create (NULL_POINTER also for a) and of
 * attn_sdpa_forward. */
ATTN_API attn_status attn_sdpa_f32(const attn_sdpa_shape *shape, double scale, unsigned flags,
                                   size_t window, const attn_sdpa_args_f32 *a);
ATTN_API attn_status attn_sdpa_f64(const attn_sdpa_shape *shape, double scale, unsigned flags,
                                   size_t window, const attn_sdpa_args_f64 *a);

#include <attn/attn_half.h> /* ---- half precision (sdpa): bf16 and f16 */

/* ---- attention dropout (training plans; docs/api.md) -------------------------
 * From the plan's next forward on, each weight P[b,h,t,j] (sequence b, query
 * head h, query t, key j) is multiplied by keep/(1-p), keep ~ Bernoulli(1-p):
 * out = (P o M/(1-p)) V, with lse, the row statistics and a projected
 * forward's weights output those of the undropped P (as PyTorch and
 * FlashAttention). p = 0 (the default) is off, bit for bit. The draws are
 * Philox-4x32-10 (Salmon et al., SC'11), each index taken modulo 2^32:
 *   (k0, k1) = words 0, 1 of Philox(counter (offset_lo, offset_hi, 0, 0),
 *              key (seed_lo, seed_hi))
 *   keep     = word j%4 of Philox(counter (j/4, t, h, b), key (k0, k1))
 *              >= floor(p * 2^32)
 * a pure function of (seed, offset, b, h, t, j), on any threads, path and
 * tiling, regenerated by the backward (nothing stored): a projected plan's
 * uses its last forward's setting, an sdpa plan's the setting at the call.
 * Training loops keep one seed and give each call an offset of its own
 * (e.g. step * layers + layer). Errors, in order (the setting unchanged):
 * NULL_POINTER, PLAN_KIND (ring plans: no dropout), INFERENCE_PLAN,
 * BAD_DROPOUT (p NaN or outside [0, 1)). */
ATTN_API attn_status attn_plan_set_dropout(attn_plan *plan, double p, uint64_t seed,
                                           uint64_t offset);

/* ---- profiling: where a plan's time goes ---------------------------------
 * While a plan profiles (off by default), each of its forwards and
 * backwards adds to counters per phase the time its threads spent in the
 * phase (summed over threads: thread-seconds) and the floating-point
 * operations they did there (2 per multiply-add of a matrix product; the
 * softmax phases count none). Reading the clock costs a few tens of
 * nanoseconds per product while profiling and nothing otherwise. */
typedef enum attn_phase {
    ATTN_PHASE_PACK = 0,          /* forward: the weights packed for attn's kernel */
    ATTN_PHASE_PROJECTIONS,       /* Q, K, V = X Wq, X Wk, X Wv */
    ATTN_PHASE_TRANSPOSE,         /* K^T of each head (own threads) */
    ATTN_PHASE_SCORES,            /* S = Q K^T */
    ATTN_PHASE_SOFTMAX,           /* scale, mask, softmax (online, with rescaling, when tiled) */
    ATTN_PHASE_WEIGHTED_SUM,      /* Y = P V */
    ATTN_PHASE_OUTPUT,            /* out = Y Wo */
    ATTN_PHASE_BACKWARD_PACK,     /* backward: the transposed weights packed */
    ATTN_PHASE_BACKWARD_OUTPUT,   /* dWo = Y^T dout, dY = dout Wo^T */
    ATTN_PHASE_BACKWARD_TRANSPOSE, /* V^T of each head (own threads) */
    ATTN_PHASE_BACKWARD_VALUES,   /* dV = P^T dY */
    ATTN_PHASE_BACKWARD_WEIGHTS,  /* dP = dY V^T */
    ATTN_PHASE_BACKWARD_SOFTMAX,  /* dS = P o (dP - rowsum(dP o P)), and the row sums */
    ATTN_PHASE_BACKWARD_SCORES,   /* dQ = scale dS K, dK = scale dS^T Q */
    ATTN_PHASE_BACKWARD_PROJECTIONS, /* dWq, dWk, dWv = X^T dQ, X^T dK, X^T dV */
    ATTN_PHASE_BACKWARD_INPUT,    /* dX = dQ Wq^T + dK Wk^T + dV Wv^T */
    ATTN_PHASE_BACKWARD_RECOMPUTE, /* P = exp(scale Q K^T - lse) again, block by block */
    ATTN_PHASE_COUNT
} attn_phase;

/* A short name of `phase` ("scores", "backward_input", ...); never NULL
 * ("unknown" outside the enum). */
ATTN_API const char *attn_phase_name(attn_phase phase);

/* enabled != 0: the plan profiles from its next call on, counters at 0
 * (again at 0 when it already profiled); 0: it stops (counters dropped).
 * Errors: NULL_POINTER (plan), OUT_OF_MEMORY (the counters, a few tens of
 * KiB; the plan then does not profile). */
ATTN_API attn_status attn_plan_set_profiling(attn_plan *plan, int enabled);

/* The counters since profiling was enabled: seconds[p] thread-seconds and
 * flops[p] operations of phase p, for every p < ATTN_PHASE_COUNT (zeros
 * when the plan does not profile). Either array may be NULL. Errors:
 * NULL_POINTER (plan). */
ATTN_API attn_status attn_plan_profile(const attn_plan *plan, double seconds[ATTN_PHASE_COUNT],
                                       double flops[ATTN_PHASE_COUNT]);

/* Runs the forward pass of the formula of the multi-head one-shots with the
 * plan's shape, scale and mask. Unless the plan has ATTN_INFERENCE it keeps
 * what attn_backward needs (replacing what an earlier forward kept).
 * Errors, in order: NULL_POINTER (plan, X, Wq, Wk, Wv, out), PLAN_KIND (an
 * sdpa plan), DTYPE_MISMATCH, ALIASING (out or weights overlapping an input or each other). */
ATTN_API attn_status attn_forward_f32(attn_plan *plan, const float *X, const float *Wq,
                                      const float *Wk, const float *Wv, const float *Wo,
                                      float *out, float *weights);
ATTN_API attn_status attn_forward_f64(attn_plan *plan, const double *X, const double *Wq,
                                      const double *Wk, const double *Wv, const double *Wo,
                                      double *out, double *weights);

/* Gradients of sum(out * dout) for the last forward on this plan: dX (B,T,C),
 * dWq, dWk, dWv (C,D), dWo (D,C), all overwritten. The forward keeps Q, K,
 * V, the heads' outputs and each row's statistics, but not X and the
 * weights: the backward reads them again. So X, Wq, Wk, Wv and Wo must be
 * the very arrays that forward was given, holding the same values:
 *   - the pointers are checked: any of the five differing from the
 *     forward's (Wo NULL in one call and not in the other included) is
 *     FORWARD_MISMATCH;
 *   - the contents are the caller's promise, not checked: an array changed
 *     in place between the two calls (a weight update before the backward)
 *     gives gradients of neither the old nor the new values. Update the
 *     weights after the backward, or run the forward again.
 * dout may be any array. Errors, in order: NULL_POINTER (plan, X, Wq, Wk, Wv, dout, dX, dWq, dWk,
 * dWv, and dWo when Wo is set), PLAN_KIND, DTYPE_MISMATCH, INFERENCE_PLAN, NO_FORWARD,
 * FORWARD_MISMATCH (X, Wq, Wk, Wv or Wo other than the forward's),
 * ALIASING (a gradient overlapping an input or another gradient). */
ATTN_API attn_status attn_backward_f32(attn_plan *plan, const float *X, const float *Wq,
                                       const float *Wk, const float *Wv, const float *Wo,
                                       const float *dout, float *dX, float *dWq, float *dWk,
                                       float *dWv, float *dWo);
ATTN_API attn_status attn_backward_f64(attn_plan *plan, const double *X, const double *Wq,
                                       const double *Wk, const double *Wv, const double *Wo,
                                       const double *dout, double *dX, double *dWq,
                                       double *dWk, double *dWv, double *dWo);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_ATTN_H */
