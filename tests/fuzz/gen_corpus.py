#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_api (tests/fuzz/corpus/): one small file per
seed, each a call sequence in the input format fuzz_api.c decodes (its header
and the fuzz_* functions give the order of the fields). Run from anywhere:

    python3 tests/fuzz/gen_corpus.py

The seeds start the fuzzer on every entry point, both precisions, each error
status and the value palette; the fuzzer mutates them from there.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")

OP = {"softmax_rows": 0, "lookup": 1, "self_attention": 2,
      "mha_forward": 3, "mha_backward": 4, "plan": 5, "sdpa": 6}
MEDIUM = [0, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 128, 129, 257, 511, 512]
HUGE = {"0": 0, "2048": 1, "65536": 2, "2^20": 3, "INT_MAX": 4, "2^31": 5,
        "2^32": 6, "2^32+1": 7, "2^62": 8, "SIZE_MAX/2": 9, "SIZE_MAX/2+1": 10,
        "SIZE_MAX/4": 11, "SIZE_MAX/8+1": 12, "SIZE_MAX-1": 13, "SIZE_MAX": 14,
        "3037000500": 15}
# palette indices (fuzz_input.c `palette`)
PAL = {"0": 0, "-0": 1, "1": 2, "-1": 3, "0.5": 4, "2": 5, "1e4": 6, "-1e4": 7,
       "1e30": 8, "-1e30": 9, "FLT_MAX": 10, "-FLT_MAX": 11, "DBL_MAX": 12,
       "-DBL_MAX": 13, "inf": 14, "-inf": 15, "nan": 16, "FLT_TRUE_MIN": 17,
       "-FLT_TRUE_MIN": 18, "FLT_MIN": 19, "DBL_TRUE_MIN": 20, "DBL_MIN": 21,
       "1e-30": 22, "88.7": 23, "89": 24, "104": 25, "-104": 26, "709.8": 27,
       "710": 28, "-745.2": 29, "3": 30, "-3": 31}
# scale byte: < 0x80 is the default; else scales[b & 15]
SCALE = {"default": 0x00, "-1": 0x80, "1": 0x81, "0.5": 0x82, "1e-30": 0x83,
         "1e30": 0x84, "FLT_MAX": 0x85, "above FLT_MAX": 0x86, "DBL_MAX": 0x87,
         "nan": 0x88, "inf": 0x89, "-inf": 0x8A, "-0": 0x8B, "DBL_TRUE_MIN": 0x8C,
         "1e4": 0x8D, "0.125": 0x8E, "-1e300": 0x8F}
GAIN = {"1": 0, "0.1": 2, "10": 3, "100": 4, "1e4": 5, "1e-3": 6, "3": 7}
NO_NULL, NO_ALIAS = [0x00], [0x00, 0x00, 0x00]


def dim(n):
    """the byte of a dimension: 1..8, a medium size, or a HUGE name"""
    if isinstance(n, str):
        return [0xE0 | HUGE[n]]
    if 1 <= n <= 8:
        return [n - 1]
    return [0xC0 | MEDIUM.index(n)]


def normal(gain="1"):
    return [GAIN[gain] << 2]


def specials(*values, gain="1"):
    """N(0, gain^2) with up to 4 palette values at fixed positions"""
    out = [(GAIN[gain] << 2) | 1 | ((len(values) - 1) << 5)]
    for pos, name in values:
        out += [pos & 0xFF, pos >> 8, PAL[name]]
    return out


def each(*names):
    """one palette value per element"""
    return [2] + [PAL[n] for n in names]


def constant(name):
    return [0x83, PAL[name]]


def null(index):
    return [0xF0 + index]


def alias(output, target, offset=0):
    return [0xE0 + output, target, offset]


def head(op, f64=False, seed=7):
    return [OP[op], (1 if f64 else 0) | (seed << 1) & 0xFE, seed & 0xFF, 0x5A]


SEEDS = {}


def seed(name, *parts):
    data = []
    for p in parts:
        data += p
    SEEDS[name] = bytes(data)


# ---- attn_softmax_rows: rows, cols, ld byte, null byte, values
seed("softmax_f32_normal", head("softmax_rows"), dim(3), dim(8), [0x00], NO_NULL, normal("10"))
seed("softmax_f64_long_strided", head("softmax_rows", True), dim(2), dim(257), [0x83], NO_NULL,
     specials((3, "1e30"), (100, "-inf"), (200, "FLT_MAX"), gain="100"))
# found by libFuzzer: one f64 row of 65536 (three 1s, then 0s), whose reference
# sum of 65533 equal terms erred by 1e-13 in a plain double loop (raw bytes)
seed("softmax_f64_65536_equal_terms", [0x00, 0x7D, 0x7D, 0x01, 0x00] + [0xE2] * 8)
# found by libFuzzer: a training plan's weights, recomputed from one rounded
# f32 log-sum-exp of large scores, summed to 1 + 6e-3 (raw bytes)
seed("plan_training_weights_large_scores",
     [5, 14, 7, 90, 0, 1, 4, 3, 1, 2, 0, 1, 0, 2, 3, 12, 0, 0, 254, 255, 255, 123] + [0] * 18)
# found by libFuzzer: an f64 multi-head backward whose equal scores (~1e37,
# Wk = -FLT_MAX) the backward recomputed one ulp (1e21) above the forward's
# max at an edge tile, so that exp(s - lse) overflowed (raw bytes)
seed("mha_backward_f64_huge_equal_scores",
     [158, 15, 7, 50, 1, 205, 131, 0, 0, 15, 0, 0, 86, 43, 3, 219, 11, 128, 7, 0, 14, 7, 90,
      0, 1, 1, 1, 0, 1, 0, 0, 0, 2, 0, 2, 0, 5, 14, 90, 0, 0, 0, 0, 80])
seed("softmax_specials", head("softmax_rows"), dim(4), dim(5), [0x00], NO_NULL,
     each("nan", "1", "2", "3", "-3", "inf", "0", "inf", "-inf", "1", "-inf", "-inf", "-inf",
          "-inf", "-inf", "FLT_MAX", "-FLT_MAX", "FLT_MAX", "1e30", "FLT_TRUE_MIN"))
seed("softmax_equal_rows", head("softmax_rows", True), dim(3), dim(17), [0x00], NO_NULL,
     constant("1e4"))
seed("softmax_overflow", head("softmax_rows"), dim("SIZE_MAX/2"), dim(4), [0xE0], dim(8),
     NO_NULL)
seed("softmax_bad_stride", head("softmax_rows", True), dim(2), dim(6), [0xC1], NO_NULL)
seed("softmax_null", head("softmax_rows"), dim(2), dim(3), [0x00], null(0))

# ---- attn_lookup: Tq Tk d dv, scale, options (1 weights, 2 k=q, 4 v=k), null, alias, q k v
seed("lookup_f32_weights", head("lookup"), dim(4), dim(6), dim(3), dim(2), [SCALE["default"]],
     [0x01], NO_NULL, NO_ALIAS, normal(), normal(), normal())
seed("lookup_f64_scale_1e30", head("lookup", True), dim(3), dim(5), dim(2), dim(2),
     [SCALE["1e30"]], [0x01], NO_NULL, NO_ALIAS, normal(), normal("3"), normal())
seed("lookup_scale_max", head("lookup"), dim(2), dim(3), dim(1), dim(2), [SCALE["FLT_MAX"]],
     [0x01], NO_NULL, NO_ALIAS, each("1", "-1"), each("2", "-1", "3"), normal())
seed("lookup_blas_range", head("lookup"), dim(1), dim("2^31"), dim(1), dim(1),
     [SCALE["default"]], [0x00], NO_NULL, NO_ALIAS)
seed("lookup_alias_out_q", head("lookup", True), dim(3), dim(3), dim(2), dim(2),
     [SCALE["1"]], [0x01], NO_NULL, alias(0, 0, 1), normal(), normal(), normal())
seed("lookup_shared_inputs", head("lookup"), dim(5), dim(5), dim(4), dim(4), [SCALE["0.5"]],
     [0x06], NO_NULL, NO_ALIAS, normal(), normal(), normal())
seed("lookup_bad_scale", head("lookup", True), dim(2), dim(2), dim(2), dim(2), [SCALE["nan"]],
     [0x00], NO_NULL, NO_ALIAS, normal(), normal(), normal())
seed("lookup_long_keys", head("lookup"), dim(2), dim("2048"), dim(4), dim(3),
     [SCALE["default"]], [0x01], NO_NULL, NO_ALIAS, normal(), normal(), normal())

# ---- attn_self_attention: B T C hs, options (1 causal, 2 weights, 4 shared W), null, alias
seed("self_attention_f32_causal", head("self_attention"), dim(2), dim(5), dim(4), dim(3),
     [0x03], NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal())
seed("self_attention_f64_long", head("self_attention", True), dim(1), dim(129), dim(3),
     dim(2), [0x01], NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal())
seed("self_attention_tiled_default", head("self_attention"), dim(1), dim(512), dim(2), dim(2),
     [0x01], NO_NULL, NO_ALIAS, normal(), normal("3"), normal("3"), normal())
seed("self_attention_extremes", head("self_attention"), dim(1), dim(4), dim(2), dim(2),
     [0x02], NO_NULL, NO_ALIAS, each("1e30", "-1e30", "1", "2", "FLT_MAX", "0", "1e4", "-1e4"),
     normal(), normal(), normal())
seed("self_attention_zero", head("self_attention"), dim(2), dim("0"), dim(4), dim(3), [0x02],
     NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal())
seed("self_attention_overflow", head("self_attention", True), dim("2^32"), dim("2^32"),
     dim(1), dim(1), [0x00], NO_NULL, NO_ALIAS)

# ---- attn_mha_forward: B T C NH, options (1 causal, 2 Wo), null, alias, X Wq Wk Wv [Wo]
seed("mha_forward_f32_wo", head("mha_forward"), dim(2), dim(7), dim(6), dim(3), [0x03],
     NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal(), normal())
seed("mha_forward_bad_shape", head("mha_forward", True), dim(2), dim(3), dim(5), dim(2),
     [0x00], NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal())
seed("mha_forward_blas_range", head("mha_forward"), dim("2^31"), dim(1), dim(1), dim(1),
     [0x00], NO_NULL, NO_ALIAS)

# ---- attn_mha_backward: as the forward (option 4: dWo without Wo), then dout
seed("mha_backward_f64_wo", head("mha_backward", True), dim(2), dim(4), dim(4), dim(2),
     [0x03], NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal(), normal(), normal())
seed("mha_backward_alias_dx_x", head("mha_backward"), dim(1), dim(3), dim(2), dim(1), [0x00],
     NO_NULL, alias(0, 0), normal(), normal(), normal(), normal(), normal())
seed("mha_backward_dwo_ignored", head("mha_backward"), dim(2), dim(2), dim(3), dim(3), [0x05],
     NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal(), normal())

# ---- plans: dtype byte, B T C NH hs, scale, flags (bit 7: an unknown bit follows), null,
# then, once created, the threads byte (% 4; 0xC0 set: ATTN_MAX_THREADS + 1), steps; each step: byte (1 backward, 4 Wo, 8 weights / dWo, 0x42 the other precision),
# null, alias, then the step's input arrays
FWD = lambda wo, weights: [(4 if wo else 0) | (8 if weights else 0)]
BWD = lambda wo: [1 | (4 if wo else 0)]
seed("plan_f32_train", head("plan"), [0x00], dim(2), dim(5), dim(4), dim(2), dim(3),
     [SCALE["default"]], [0x01], NO_NULL, [2], [3],
     FWD(True, True), NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal(), normal(),
     BWD(True), NO_NULL, NO_ALIAS, normal(),
     FWD(False, False), NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal())
seed("plan_f64_tiled", head("plan"), [0x01], dim(1), dim(65), dim(3), dim(2), dim(2),
     [SCALE["0.125"]], [0x0B], NO_NULL, [3], [1], FWD(True, False), NO_NULL, NO_ALIAS, normal(),
     normal(), normal(), normal(), normal())
seed("plan_bad_dtype", head("plan"), [0x03, 0x07], dim(1), dim(2), dim(2), dim(1), dim(2),
     [0x00], [0x00], NO_NULL, [0])
seed("plan_unknown_flag", head("plan"), [0x00], dim(1), dim(2), dim(2), dim(1), dim(2),
     [0x00], [0x80, 27], NO_NULL, [0])
seed("plan_both_paths", head("plan"), [0x01], dim(1), dim(2), dim(2), dim(1), dim(2),
     [0x00], [0x0E], NO_NULL, [0])
seed("plan_scale_too_large", head("plan"), [0x00], dim(1), dim(2), dim(2), dim(1), dim(2),
     [SCALE["above FLT_MAX"]], [0x00], NO_NULL, [0])
seed("plan_backward_states", head("plan"), [0x00], dim(1), dim(3), dim(2), dim(2), dim(1),
     [0x00], [0x00], NO_NULL, [1], [3],
     BWD(False), NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal(), normal(),
     FWD(True, False), NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal(), normal(),
     BWD(False), NO_NULL, NO_ALIAS, normal())
seed("plan_inference_backward", head("plan"), [0x01], dim(1), dim(3), dim(2), dim(2), dim(1),
     [0x00], [0x02], NO_NULL, [0], [2],
     FWD(False, True), NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal(),
     BWD(False), NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal(), normal())
seed("plan_dtype_mismatch", head("plan"), [0x00], dim(2), dim(2), dim(2), dim(1), dim(2),
     [0x00], [0x00], NO_NULL, [2], [1], [0x42], NO_NULL, NO_ALIAS, normal(), normal(), normal(),
     normal())
seed("plan_overflow", head("plan"), [0x00], dim(1), dim("2^32"), dim(1), dim(1), dim(1),
     [0x00], [0x02], NO_NULL, [0])
seed("plan_too_many_threads", head("plan"), [0x00], dim(1), dim(2), dim(2), dim(1), dim(2),
     [0x00], [0x00], NO_NULL, [0xC0], [0])
seed("plan_null", head("plan"), [0x00], dim(1), dim(2), dim(2), dim(1), dim(2), [0x00],
     [0x00], null(0), [0])

# ---- sdpa: dtype byte, B NH NH_kv Tq Tk hs, hs_v byte (>= 0x80: a dimension follows), scale,
# flags byte (1 causal, 2 inference, 4 MATERIALIZED, 8 TILED, 0x20 one-shot, 0x40 one-shot
# without lse, 0x80 an unknown bit follows), window byte (>= 0x80: a dimension follows), null
# (0 plan, 1 shape); then the one-shot's call, or the threads byte, the step count and the steps:
# step byte (1 backward, 4 forward without lse, 0x42 the other precision, 0x30 a PLAN_KIND call:
# 0x08 on a projected plan, 4 backward; 0x80 a backward's out and lse not from a forward), then
# the call (SDPA_CALL) and its input arrays: Q K V [mask], backward: out lse dout
LAYOUT = {"bhsd": 0, "bhsd gaps": 1, "cache": 2, "bhsd sb 0": 3, "bhsd sb - 1": 4,
          "bshd sb + k": 5, "interleaved": 6, "any": 7}


def ld(kind, n=0, dims=()):
    """an array's stride byte (fuzz_sdpa_model.c, take_layout): dense (0), padded rows by n, n+1
    below the row, a row stride dimension, or a layout of LAYOUT tuned by n (0..7), "any"
    with three dimensions (sb, sh, ld)"""
    if kind == "dense":
        return [0x00]
    if kind == "pad":
        return [0x80 | n]
    if kind == "below":
        return [0xC0 | n]
    if kind in LAYOUT:
        out = [0x40 | LAYOUT[kind] << 3 | n]
        for d in dims:
            out += dim(d)
        return out
    return [0xE0] + dim(n)


MASK = {"full": 0, "keypad": 1, "heads": 2, "batch": 3, "row": 4}


def mask(kind, inf=0, strides=None):
    """the mask byte: a layout (or strides chosen: 3 stride bytes) and its -inf mode"""
    if kind is None:
        return [0x00]
    if kind == "strides":
        return [0x80 | 5 | (inf << 4)] + strides
    return [0x80 | MASK[kind] | (inf << 4)]


def lengths(*values, nan_slots=False):
    if not values:
        return [0x00]
    return [0x80 | (0x40 if nan_slots else 0)] + list(values)


def sdpa_call(lds=("dense",) * 4, m=None, lens=None, nul=NO_NULL, al=NO_ALIAS):
    out = []
    for x in lds:
        out += ld(*x) if isinstance(x, tuple) else ld(x)
    out += m if m is not None else mask(None)
    out += lens if lens is not None else lengths()
    return out + nul + al


def sdpa_plan(f64, B, NH, NH_kv, Tq, Tk, hs, hs_v=None, scale="default", flags=0, window=None,
              nul=NO_NULL, unknown=None):
    out = [0x01 if f64 else 0x00] + dim(B) + dim(NH) + dim(NH_kv) + dim(Tq) + dim(Tk) + dim(hs)
    out += [0x80] + dim(hs_v) if hs_v is not None else [0x00]
    out += [SCALE[scale], flags | (0x80 if unknown is not None else 0)]
    if unknown is not None:
        out += [unknown]
    out += [0x80] + dim(window) if window is not None else [0x00]
    return out + nul


SFWD, SBWD = [0x00], [0x01]
seed("sdpa_f32_gqa_causal_train", head("sdpa"), sdpa_plan(False, 2, 4, 2, 5, 7, 3, flags=1),
     [2], [2], SFWD, sdpa_call(), normal(), normal(), normal(),
     SBWD, sdpa_call(), normal(), normal(), normal(), normal(), normal(), normal())
seed("sdpa_f64_decode_lengths_nan_slots", head("sdpa", True),
     sdpa_plan(True, 3, 4, 1, 1, 65, 8, flags=3), [1], [1],
     SFWD, sdpa_call(lens=lengths(64, 10, 0, nan_slots=True)), normal(), normal(), normal())
seed("sdpa_train_lengths_backward", head("sdpa"), sdpa_plan(False, 2, 2, 1, 3, 9, 4, flags=1),
     [0], [1], SBWD, sdpa_call(lens=lengths(9, 4, nan_slots=True)), normal(), normal(),
     normal(), normal(), normal(), normal())
seed("sdpa_mask_keypad", head("sdpa"), sdpa_plan(False, 3, 2, 2, 4, 6, 2), [1], [1],
     SFWD, sdpa_call(m=mask("keypad", 1)), normal(), normal(), normal(), normal())
seed("sdpa_mask_strides_padded_fully_masked_row", head("sdpa", True),
     sdpa_plan(True, 2, 2, 1, 3, 5, 2, flags=1), [2], [2],
     SFWD, sdpa_call(m=mask("strides", 2, [0x82, 0x81, 0x80])), normal(), normal(), normal(),
     normal(),
     SBWD, sdpa_call(m=mask("strides", 2, [0x82, 0x81, 0x80])), normal(), normal(), normal(),
     normal(), normal(), normal(), normal())
seed("sdpa_mask_heads_batch_row", head("sdpa"), sdpa_plan(False, 2, 4, 2, 3, 4, 2), [3], [3],
     SFWD, sdpa_call(m=mask("heads", 1)), normal(), normal(), normal(), normal(),
     SFWD, sdpa_call(m=mask("batch", 0)), normal(), normal(), normal(), normal(),
     SFWD, sdpa_call(m=mask("row", 3)), normal(), normal(), normal(), normal())
seed("sdpa_hs_v_strided", head("sdpa", True), sdpa_plan(True, 2, 3, 3, 4, 6, 2, hs_v=5, flags=1),
     [2], [2], SFWD, sdpa_call(lds=(("pad", 3), ("pad", 1), ("pad", 2), ("pad", 4))), normal(),
     normal(), normal(),
     SBWD, sdpa_call(lds=(("pad", 3), ("pad", 1), ("pad", 2), ("pad", 4))), normal(), normal(),
     normal(), normal(), normal(), normal())
seed("sdpa_window_causal", head("sdpa"), sdpa_plan(False, 1, 2, 1, 8, 8, 3, flags=1, window=3),
     [1], [2], SFWD, sdpa_call(), normal(), normal(), normal(),
     SBWD, sdpa_call(), normal(), normal(), normal(), normal(), normal(), normal())
seed("sdpa_nan_inputs", head("sdpa"), sdpa_plan(False, 1, 2, 2, 4, 4, 2, flags=1), [0], [1],
     SFWD, sdpa_call(), specials((3, "nan")), specials((9, "nan")), specials((5, "inf")))
seed("sdpa_large_tiles", head("sdpa"), sdpa_plan(False, 1, 1, 1, 129, 257, 2, flags=1), [2],
     [2], SFWD, sdpa_call(), normal(), normal(), normal(),
     SBWD, sdpa_call(), normal(), normal(), normal(), normal(), normal(), normal())
seed("sdpa_decode_split", head("sdpa", True), sdpa_plan(True, 1, 2, 1, 1, "2048", 2), [1],
     [2], SFWD, sdpa_call(), normal(), normal(), normal(),
     SBWD, sdpa_call(), normal(), normal(), normal(), normal(), normal(), normal())
seed("sdpa_bad_stride", head("sdpa"), sdpa_plan(False, 2, 2, 1, 3, 4, 2), [0], [1],
     SFWD, sdpa_call(lds=(("below", 1), "dense", "dense", "dense")), normal(), normal(),
     normal())
seed("sdpa_mask_bad_stride", head("sdpa"), sdpa_plan(False, 2, 2, 1, 3, 4, 2), [0], [1],
     SFWD, sdpa_call(m=mask("strides", 0, [0xC0, 0x40, 0x40])), normal(), normal(), normal(),
     normal())
seed("sdpa_stride_overflow", head("sdpa", True), sdpa_plan(True, 2, 2, 1, 3, 4, 2), [0], [1],
     SFWD, sdpa_call(lds=(("dim", "SIZE_MAX/4"), "dense", "dense", "dense")))
seed("sdpa_stride_blas_range", head("sdpa"), sdpa_plan(False, 2, 2, 1, 3, 4, 2), [0], [1],
     SFWD, sdpa_call(lds=("dense", ("dim", "2^31"), "dense", "dense")))
seed("sdpa_bad_length", head("sdpa"), sdpa_plan(False, 2, 2, 1, 3, 4, 2), [0], [1],
     SFWD, sdpa_call(lens=lengths(0xF0, 1)), normal(), normal(), normal())
seed("sdpa_alias_out_q", head("sdpa"), sdpa_plan(False, 1, 2, 1, 3, 4, 2), [0], [1],
     SFWD, sdpa_call(al=alias(0, 0)), normal(), normal(), normal())
seed("sdpa_alias_dk_k", head("sdpa", True), sdpa_plan(True, 1, 2, 1, 3, 4, 2), [0], [1],
     SBWD, sdpa_call(al=alias(1, 1)), normal(), normal(), normal(), normal(), normal(),
     normal())
seed("sdpa_null_lse_backward", head("sdpa"), sdpa_plan(False, 1, 2, 1, 3, 4, 2), [0], [1],
     SBWD, sdpa_call(nul=null(4)), normal(), normal(), normal(), normal(), normal())
seed("sdpa_inference_backward", head("sdpa"), sdpa_plan(False, 1, 2, 1, 3, 4, 2, flags=2), [0],
     [1], SBWD, sdpa_call(), normal(), normal(), normal(), normal(), normal(), normal())
seed("sdpa_dtype_mismatch", head("sdpa"), sdpa_plan(False, 1, 2, 1, 3, 4, 2), [0], [1],
     [0x42], sdpa_call(), normal(), normal(), normal())
seed("sdpa_plan_kind", head("sdpa"), sdpa_plan(True, 1, 2, 1, 3, 4, 2), [1], [4],
     [0x30], [0x34], [0x38], [0x3C])
seed("sdpa_one_shot", head("sdpa"), sdpa_plan(False, 2, 4, 2, 3, 6, 2, flags=0x21), sdpa_call(),
     normal(), normal(), normal())
seed("sdpa_one_shot_f64_mask_no_lse", head("sdpa", True),
     sdpa_plan(True, 2, 2, 2, 3, 5, 3, flags=0x60, window=2), sdpa_call(m=mask("full", 1)),
     normal(), normal(), normal(), normal())
seed("sdpa_one_shot_null_shape", head("sdpa"), sdpa_plan(False, 1, 1, 1, 1, 1, 1, flags=0x20,
     nul=null(1)), sdpa_call())
seed("sdpa_create_bad_shape", head("sdpa"), sdpa_plan(False, 1, 4, 3, 2, 2, 2), [0])
seed("sdpa_create_bad_flags", head("sdpa"), sdpa_plan(False, 1, 2, 1, 2, 2, 2, flags=4), [0])
seed("sdpa_create_unknown_flag", head("sdpa"), sdpa_plan(True, 1, 2, 1, 2, 2, 2, unknown=3),
     [0])
seed("sdpa_create_zero_kv_heads", head("sdpa"), sdpa_plan(False, 1, 2, "0", 2, 2, 2), [0])
seed("sdpa_create_blas_range", head("sdpa"), sdpa_plan(False, 1, 1, 1, 1, 1, "2^31"), [0])
seed("sdpa_create_bad_scale", head("sdpa"), sdpa_plan(False, 1, 1, 1, 1, 1, 2,
     scale="above FLT_MAX"), [0])
# found while writing the tests: B*NH_kv wrapping to 0 divided by zero in the
# layout, and a window above PTRDIFF_MAX hid every key (then crashed)
seed("sdpa_create_wrapping_products", head("sdpa"), sdpa_plan(False, "2^62", 4, 4, 1, 1, 1),
     [0])
# attn.h: BAD_STRIDE before SIZE_OVERFLOW, also when the extent a nonzero mask
# stride steps over (a head's, (Tq-1)*mask_ld + Tk) is beyond size_t
seed("sdpa_mask_stride_below_overflowing_extent", head("sdpa"),
     sdpa_plan(False, 2, 2, 1, 3, 4, 2), [0], [1],
     SFWD, sdpa_call(m=mask("strides", 0, [0xE0] + dim("SIZE_MAX/2") + [0xE0] + dim(2) + [0x00])))
# found while writing the tests: a row with a +inf and a NaN score had lse +inf
# (attn.h: NaN anywhere makes the row NaN)
seed("sdpa_nan_with_inf_score", head("sdpa"), sdpa_plan(False, 1, 1, 1, 1, 2, 1, scale="1"),
     [0], [1], SFWD, sdpa_call(), each("1"), each("inf", "nan"), normal())
# a causal prefill on BLAS threads with a NaN in the value of key 1 (OpenBLAS's
# TRMM multiplied it by the zeros above the diagonal; fuzz_cblas.c's loops do
# not, so here it exercises the path, test_sdpa's nan_confinement the bug)
seed("sdpa_blas_causal_nan_value", head("sdpa"), sdpa_plan(False, 1, 1, 1, 128, 128, 16, flags=3),
     [0], [1], SFWD, sdpa_call(), normal(), normal(), specials((16, "nan")))
seed("sdpa_window_size_max", head("sdpa"), sdpa_plan(False, 1, 2, 1, 4, 4, 2, flags=1,
     window="SIZE_MAX"), [0], [1], SFWD, sdpa_call(), normal(), normal(), normal())

# batch and head strides (issue 23): PyTorch's (B,NH,T,hs), a KV cache longer than Tk, gaps,
# the refused layouts, strides as dimensions, and out placed in the gaps of Q's rows (accepted
# when the residues of Q's and out's columns modulo the row stride are disjoint and unwrapped)
BHSD4 = (("bhsd",),) * 4
seed("sdpa_layout_bhsd_train", head("sdpa"), sdpa_plan(False, 2, 4, 2, 5, 7, 3, flags=1),
     [2], [2], SFWD, sdpa_call(lds=BHSD4), normal(), normal(), normal(),
     SBWD, sdpa_call(lds=BHSD4), normal(), normal(), normal(), normal(), normal(), normal())
seed("sdpa_layout_cache_decode_lengths", head("sdpa", True),
     sdpa_plan(True, 2, 4, 2, 1, 9, 4, flags=1), [1], [2],
     SFWD, sdpa_call(lds=(("bhsd",), ("cache", 3), ("cache", 5), ("bshd sb + k", 2)),
                     lens=lengths(9, 4, nan_slots=True)), normal(), normal(), normal(),
     SBWD, sdpa_call(lds=(("bhsd gaps", 5), ("cache", 3), ("cache", 5), ("bhsd gaps", 2)),
                     lens=lengths(9, 4, nan_slots=True)), normal(), normal(), normal(),
     normal(), normal(), normal())
seed("sdpa_layout_refused", head("sdpa"), sdpa_plan(False, 2, 2, 2, 3, 3, 2), [0], [4],
     SFWD, sdpa_call(lds=(("bhsd sb 0",), "dense", "dense", "dense")), normal(), normal(),
     normal(),
     SFWD, sdpa_call(lds=("dense", ("bhsd sb - 1",), "dense", "dense")), normal(), normal(),
     normal(),
     SFWD, sdpa_call(lds=("dense", "dense", ("interleaved", 0), "dense")), normal(), normal(),
     normal(),
     SFWD, sdpa_call(lds=("dense", "dense", "dense", ("any", 0, (16, 6, 4)))), normal(),
     normal(), normal())
seed("sdpa_layout_size_one_any_stride", head("sdpa", True), sdpa_plan(True, 1, 2, 1, 1, 3, 2),
     [0], [1], SFWD, sdpa_call(lds=(("any", 0, (1, 2, 1)), ("any", 0, (1, 1, 2)),
                                    ("any", 0, ("SIZE_MAX", "SIZE_MAX", 2)),
                                    ("any", 0, (1, 2, 1)))), normal(), normal(), normal())
# alias output 0x10 + i: "grow", the target's allocation extended to hold the output
seed("sdpa_layout_out_in_q_gaps", head("sdpa"), sdpa_plan(False, 1, 2, 2, 3, 3, 2), [0], [1],
     SFWD, sdpa_call(lds=(("pad", 4), "dense", "dense", ("pad", 4)), al=alias(0x10, 0, 4)),
     normal(), normal(), normal())
seed("sdpa_layout_dk_in_dq_gaps", head("sdpa", True), sdpa_plan(True, 2, 2, 2, 3, 3, 2, flags=1),
     [0], [1], SBWD, sdpa_call(lds=(("pad", 4), ("pad", 4), "dense", "dense"),
                               al=alias(0x10, 8, 4)),
     normal(), normal(), normal(), normal(), normal(), normal())

# ---- dropout (fuzz_dropout.c): bits 2 and 3 of a plan's threads byte set, then a byte (bits
# 0-1 how many attn_plan_set_dropout calls, bit 7 the first on a NULL plan) and per call a p byte
# (DROP_P: palette indices; 12 and up uniform in [-0.5, 1.5]), two seed and two offset bytes
DROP_P = {"0": 0, "-0": 1, "1e-300": 2, "-1e-300": 3, "0.1": 4, "0.5": 5, "below 1": 6,
          "1": 7, "1.5": 8, "nan": 9, "inf": 10, "-inf": 11}
DROPOUT = 0x0C


def dropout(*calls, null_first=False):
    out = [len(calls) | (0x80 if null_first else 0)]
    for i, p in enumerate(calls):
        out += [DROP_P[p], 1 + i, 2, 3 + i, 4]
    return out


seed("plan_dropout_train", head("plan"), [0x00], dim(2), dim(5), dim(4), dim(2), dim(3),
     [SCALE["default"]], [0x01], NO_NULL, [DROPOUT | 2], dropout("nan", "0.5", null_first=False),
     [3], FWD(True, True), NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal(), normal(),
     BWD(True), NO_NULL, NO_ALIAS, normal(),
     FWD(False, False), NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal())
seed("plan_dropout_inference", head("plan"), [0x01], dim(1), dim(3), dim(2), dim(2), dim(1),
     [0x00], [0x02], NO_NULL, [DROPOUT], dropout("0.5"), [1],
     FWD(False, True), NO_NULL, NO_ALIAS, normal(), normal(), normal(), normal())
seed("sdpa_dropout_gqa_causal", head("sdpa"), sdpa_plan(False, 2, 4, 2, 5, 7, 3, flags=1),
     [DROPOUT | 2], dropout("0.1", "1", "below 1", null_first=True), [2],
     SFWD, sdpa_call(), normal(), normal(), normal(),
     SBWD, sdpa_call(), normal(), normal(), normal(), normal(), normal(), normal())
seed("sdpa_dropout_f64_tiles_lengths", head("sdpa", True),
     sdpa_plan(True, 2, 2, 1, 3, 511, 4, flags=1), [DROPOUT | 1], dropout("0.5"), [2],
     SFWD, sdpa_call(lens=lengths(200, 100)), normal(), normal(), normal(),
     SBWD, sdpa_call(lens=lengths(200, 100)), normal(), normal(), normal(), normal(), normal(),
     normal())
seed("sdpa_dropout_inference", head("sdpa"), sdpa_plan(False, 1, 2, 1, 3, 4, 2, flags=2),
     [DROPOUT], dropout("0.5", "-inf"), [1], SFWD, sdpa_call(), normal(), normal(), normal())


def main():
    os.makedirs(OUT, exist_ok=True)  # the fuzzer's regression seeds there are kept
    for name, data in sorted(SEEDS.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"{len(SEEDS)} seeds in {OUT}")


if __name__ == "__main__":
    main()
