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
      "mha_forward": 3, "mha_backward": 4, "plan": 5}
MEDIUM = [0, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 128, 129, 257, 511, 512]
HUGE = {"0": 0, "2048": 1, "65536": 2, "2^20": 3, "INT_MAX": 4, "2^31": 5,
        "2^32": 6, "2^32+1": 7, "2^62": 8, "SIZE_MAX/2": 9, "SIZE_MAX/2+1": 10,
        "SIZE_MAX/4": 11, "SIZE_MAX/8+1": 12, "SIZE_MAX-1": 13, "SIZE_MAX": 14,
        "3037000500": 15}
# palette indices (fuzz_api.c `palette`)
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


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        os.remove(os.path.join(OUT, old))
    for name, data in sorted(SEEDS.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"{len(SEEDS)} seeds in {OUT}")


if __name__ == "__main__":
    main()
