/*
 * fuzz_api: a libFuzzer harness over attn's public API (built with clang,
 * -fsanitize=fuzzer,address,undefined, against the static library compiled
 * with the same sanitizers; see CMakeLists.txt here and .ci/reliability).
 *
 * Each input is decoded into one call sequence:
 *   attn_softmax_rows, attn_lookup, attn_self_attention, attn_mha_forward,
 *   attn_mha_backward (_f32 or _f64), or a plan: attn_plan_create with any
 *   dtype, flags (unknown bits too) and scale, attn_plan_set_threads (BLAS
 *   threads, 1 to 3 threads of its own, or more than ATTN_MAX_THREADS), maybe
 *   attn_plan_set_dropout (fuzz_dropout.c: any p, NULL and inference plans),
 *   then up to 6 forwards and backwards in either precision (DTYPE_MISMATCH),
 *   with or without Wo and weights, then attn_plan_destroy; or an sdpa
 *   plan (attention on given Q, K, V): attn_sdpa_plan_create with any dtype,
 *   shape (B, NH, NH_kv, Tq, Tk, hs, hs_v), flags (the projected plans'
 *   ATTN_MATERIALIZED and ATTN_TILED and unknown bits too), scale and window,
 *   its threads and dropout, then up to 6 attn_sdpa_forward and attn_sdpa_backward calls
 *   in its precision or another (_f32, _f64, and for ATTN_BF16 and ATTN_F16
 *   plans _bf16, _f16: fuzz_sdpa_half.c) with any batch, head and row strides of Q, K, V, out
 *   (take_layout: dense, padded, too small or huge rows; (B,NH,T,hs), with
 *   gaps, a cache longer than T, overlapping sequences or heads, heads among
 *   the rows, any three dimensions), key lengths (NULL, any up to Tk, above
 *   it; the unfilled slots of K and V NaN), masks (NULL, every broadcast layout, any strides, -inf
 *   entries) and lse or not, and PLAN_KIND calls both ways; or the one-shot
 *   attn_sdpa_f32/f64/bf16/f16 on the same choices.
 * Dimensions are mostly 1..8, sometimes 9..512, 0, or huge (2^31, 2^32,
 * 2^62, SIZE_MAX/2, SIZE_MAX, ...). Arrays get exactly the bytes their shape
 * documents (so ASan sees a read or write one element past an array) when
 * every array of the call holds at most CAP_ELEMENTS elements; larger shapes
 * get 64-byte dummies and are called only when the status model (below) says
 * the call must fail before touching memory -- a library that touched them
 * anyway is an ASan finding. Pointers may be NULL (required or optional),
 * outputs may point into another argument (ALIASING), inputs may share one
 * buffer (allowed). Values come from a palette (0, -0, +-1, +-1e4, +-1e30,
 * +-FLT_MAX, +-DBL_MAX, +-inf, NaN, subnormals, exp's overflow and underflow
 * thresholds), from N(0, gain^2) for gains 1e-3..1e4, constants, or a mix.
 *
 * Oracles (each violated one aborts: a libFuzzer crash with the input saved):
 *   1. no crash, no sanitizer report, no leak (libFuzzer's leak check);
 *   2. the status is the one attn.h documents: the first failing check in
 *      the documented order (NULL pointers, zero dimensions, C % NH, size
 *      overflow of every array and of the workspace (the plan's arena as
 *      attn.h's "Memory:" paragraph lays it out), BLAS range, stride, scale,
 *      aliasing, and for plans dtype, flags, mismatch, inference, no
 *      forward, the forward's inputs (their pointers); for sdpa calls
 *      attn.h's order: NULL, plan kind, dtype, inference, strides (an
 *      array placing two elements at one place by attn.h's rule:
 *      strides_repeat; a nonzero mask stride below what it steps over,
 *      however large), extents, BLAS range of the row strides, key lengths,
 *      aliasing (attn.h's rule, strided_may_share: spans, or residues
 *      modulo a stride for arrays laid out by strides; the mask, lse and
 *      key_lengths by their spans; key_lengths an input too)), predicted by
 *      an independent model here;
 *      attn_status_string never returns NULL;
 *   3. nonzero status: every byte of every buffer the call received (inputs
 *      and outputs) is unchanged, and *plan is untouched;
 *   4. status OK: inputs unchanged; the same call again gives the same bytes;
 *      a one-shot equals its plan (attn.h: they are plan create + execute +
 *      destroy) bit for bit;
 *   5. weights rows (when requested): causal entries above the diagonal are
 *      exactly 0, and each row is all NaN, or all 0, or has entries in
 *      [0, 1 + tol] summing to 1 within sum_tol(n) (below);
 *   6. softmax_rows: the documented semantics exactly -- a NaN row is all
 *      NaN, +inf entries share the row (others 0), an all -inf row is 0 --
 *      and otherwise the double reference within a per-entry bound; the
 *      entries between cols and ld are unchanged;
 *   7. finiteness: when every input is finite and the magnitude bounds
 *      below stay under REAL_MAX/4, the outputs are finite, no weight is
 *      NaN and (unless scale * |S| may overflow) no row is all 0. Bounds,
 *      computed in double from the largest input magnitudes (mx = max|X|,
 *      mw = max|Wq|,|Wk|,|Wv|, mo = max|Wo|, md = max|dout|):
 *        q = C mx mw (|Q|,|K|,|V|),  s = hs q^2 (|S| and its partial sums),
 *        with Wo: D q mo (|out|);
 *        backward: dy = Wo ? C md mo : md, rows q md (dWo), T dy (dV),
 *        2 hs dy q (dP, dS), dq = max(1, scale) T 2 hs dy q^2 (dQ, dK),
 *        rows mx max(dq, T dy) (dW*), 3 D max(dq, T dy) mw (dX);
 *      for lookup q, k, v: s = d max|q| max|k|, and max|v|. A +-inf scaled
 *      score is then only the documented +inf / masked rule, never a NaN;
 *   8. accuracy: for each weights row whose scaled scores have a bounded
 *      rounding error dz (from the exact double scores of the rounded inputs:
 *      |dS| <= u (2C+2 + hs+2) sum_c |X||Wq| |X||Wk| for heads, u (d+2)
 *      sum |q||k| for lookup, plus 2u |z| + 2u |z - max|) the weights are
 *      within w_ref (expm1(2 dz) + sum_tol(n) + ...) of the double softmax,
 *      and out is within the matching bound of the double reference output
 *      (propagated through V's and Wo's rounding).
 *   9. sdpa (check_sdpa_forward, check_sdpa_backward): a row that sees no
 *      key, or whose visible scores are all -inf, is lse -inf and (V finite
 *      on the keys only the mask or window hides) out 0 exactly; a NaN
 *      among a row's visible inputs makes its out and lse NaN; a +inf score
 *      makes lse +inf; otherwise out and lse within oracle 8's bounds (Q, K,
 *      V given exactly); the bytes of an output's allocation that no
 *      output's layout addresses are unchanged (settle_sdpa_outputs), and
 *      an output the aliasing rule accepted shares no byte with an input or
 *      another output (enumerated: check_sdpa_disjoint); dK, dV of keys
 *      j >= L_b and dQ of queries without keys are exactly 0; gradients
 *      finite under stated magnitude bounds; a one-shot equals its
 *      ATTN_INFERENCE plan bit for bit and a call made twice gives the same
 *      bytes.
 * sum_tol(n) = 2 exp_err + (min(n, 1024) + 8) u, with u the unit roundoff
 * and exp_err the kernels' exp accuracy (2e-7 f32, 1e-14 f64, kernels.h):
 * each weight carries a few exp and rounding errors, the normalizing sum
 * is summed in chunks (float lanes, merged in double) or, on the tiled
 * path, block by block.
 *
 *  10. dropout (fuzz_dropout.c): attn_plan_set_dropout's status by attn.h's
 *      order; with p > 0 in force, a forward's lse (sdpa) and weights
 *      (projected) equal those of the same call without dropout bit for
 *      bit, the numeric oracles above hold for that undropped twin, and the
 *      setting put back gives the dropped bytes again.
 * Files: this one, the entry point; fuzz_input.c (the input, call
 * arguments, choices), fuzz_model.c (the status model), fuzz_oracles.c
 * (the numeric oracles), fuzz_calls.c, fuzz_mha.c and fuzz_plan.c (the
 * projected calls), fuzz_dropout.c (dropout settings and their oracles),
 * and the sdpa ones (fuzz_sdpa.h; the 16-bit types' calls and their
 * oracle, attn.h's bound: fuzz_sdpa_half.c); what they share: fuzz_common.h.
 *
 * BLAS: fuzz_cblas.c (linked ahead of OpenBLAS) computes the library's
 * cblas_?gemm and cblas_?trmm calls in instrumented loops and checks their
 * arguments, so ASan sees every element BLAS touches for the library.
 *
 * Input format (bytes; reading past the end gives 0): byte 0 the call (value
 * % 7: softmax_rows, lookup, self_attention, mha_forward, mha_backward,
 * plan, sdpa); byte 1 bit 0 the precision (1: f64), bytes 1-3 the seed of the
 * value generator; then the call's fields in the order the fuzz_* functions
 * read them (take_dim: a dimension; take_scale; take_null; take_alias;
 * fill_values: one array). corpus/ holds hand-made seeds, written by
 * gen_corpus.py. FUZZ_API_VERBOSE=1 prints the calls an input decodes to and
 * their statuses.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <attn/attn.h>

#include "fuzz_common.h"
#include "fuzz_sdpa.h"

/* ---- entry ------------------------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0, 0};
    const uint8_t op = take(&r), pb = take(&r);
    r.rng = (uint64_t)pb << 16 | (uint64_t)take(&r) << 8 | take(&r);
    const prec *p = (pb & 1) ? &prec_f64 : &prec_f32;
    typedef void (*one_call)(const prec *p, reader *r);
    static const one_call calls[5] = {fuzz_softmax_rows, fuzz_lookup, fuzz_self_attention,
                                      fuzz_mha_forward, fuzz_mha_backward};
    if (op % 7 < 5)
        calls[op % 7](p, &r);
    else if (op % 7 == 5)
        fuzz_plan(&r);
    else
        fuzz_sdpa(&r);
    free_all();
    return 0;
}
