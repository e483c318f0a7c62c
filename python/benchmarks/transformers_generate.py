#!/usr/bin/env python3
"""A transformers model generating with attn against PyTorch's SDPA, same run.

A Llama-style model built from a config with random weights (nothing is
downloaded; default: 4 layers, hidden 1024, 16 query heads, 4 key/value
heads, head size 64, float32, or --dtype bfloat16 / float16: the model
loaded in that type) generates --new greedy tokens after a
--prompt-token prompt (a DynamicCache: a prefill, then a step per token),
once with attn_implementation="attn" (attn.transformers) and once with
"sdpa" (torch.nn.functional.scaled_dot_product_attention), alternating for
--repeats rounds (each round starting with the next one). Both models hold the same weights and must produce the
same tokens in float32 (exit status 1 otherwise); in a half type, where
the two round differently, how many generated tokens agree is reported.
Reported per implementation, as medians over the rounds: the
whole generate, and the time spent inside the attention calls (each
implementation's attention function registered again under a timed name:
what the model calls, transformers' own wrapper code included), in all and
split into the prompt's calls (prefill) and the one-token steps (decode).
With --own-threads, a third model (the same weights) runs attn on its own
threads (attn.torch.use_openmp_threads(False) around its generate) in the
same rounds, beside attn on PyTorch's OpenMP threads (the default). With
--alone-ab, another model runs attn on PyTorch's threads with its small
decode steps on the calling thread alone (attn/_torch_call.py,
DECODE_ALONE_ON_OPENMP; the default runs them on the plan's threads there),
and the time each model spends outside attention is compared with PyTorch's
round by round.

    python python/benchmarks/transformers_generate.py [--prompt 1024] [--new 64]
        [--layers 4] [--hidden 1024] [--heads 16] [--kv-heads 4] [--repeats 3]
        [--threads 2] [--own-threads] [--alone-ab] [--dtype float32]
"""

import argparse
import copy
import platform
import statistics
import sys
import time

import torch
import transformers
from transformers import AttentionInterface, AutoModelForCausalLM, LlamaConfig
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

import attn
import attn.torch as attn_torch
import attn.transformers as attn_tf
from attn import _torch_call
from torch_overhead import cpu_model

SPENT = {}


def timed(name, fn):
    """fn, adding the seconds each call takes to SPENT[name] and to
    SPENT[(name, "prefill")] or SPENT[(name, "decode")] (one query row)."""
    def call(module, query, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(module, query, *args, **kwargs)
        finally:
            t = time.perf_counter() - t0
            SPENT[name] += t
            SPENT[(name, "decode" if query.shape[2] == 1 else "prefill")] += t
    return call


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompt", type=int, default=1024)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32")
    ap.add_argument("--own-threads", action="store_true",
                    help="also attn on its own threads, not PyTorch's OpenMP ones")
    ap.add_argument("--alone-ab", action="store_true",
                    help="also attn on PyTorch's threads with small decode steps alone")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    impls = {"attn": attn_tf.attention_forward, "sdpa": sdpa_attention_forward}
    if args.own_threads:
        impls["attn-own"] = attn_tf.attention_forward
    if args.alone_ab:
        impls["attn-alone"] = attn_tf.attention_forward
    hosted = attn_torch.use_openmp_threads()
    for name, fn in impls.items():
        AttentionInterface.register(name + "_timed", timed(name, fn))
        AttentionMaskInterface.register(name + "_timed", sdpa_mask)
    cfg = LlamaConfig(hidden_size=args.hidden, intermediate_size=4 * args.hidden,
                      num_hidden_layers=args.layers, num_attention_heads=args.heads,
                      num_key_value_heads=args.kv_heads, vocab_size=32000,
                      max_position_embeddings=args.prompt + args.new + 8)
    torch.manual_seed(0)
    models = {}
    for name in impls:
        models[name] = AutoModelForCausalLM.from_config(
            copy.deepcopy(cfg), attn_implementation=name + "_timed").to(
                getattr(torch, args.dtype)).eval()
    for name in impls:
        if name != "attn":
            models[name].load_state_dict(models["attn"].state_dict())
    ids = torch.randint(3, cfg.vocab_size, (1, args.prompt),
                        generator=torch.Generator().manual_seed(1))
    total = {name: [] for name in impls}
    inside = {name: [] for name in impls}
    parts = {(name, kind): [] for name in impls for kind in ("prefill", "decode")}
    tokens = {}
    with torch.no_grad():
        order = list(models.items())
        for r in range(args.repeats):
            # each round starts with another implementation: none always follows the same
            for name, model in order[r % len(order):] + order[:r % len(order)]:
                SPENT[name] = SPENT[(name, "prefill")] = SPENT[(name, "decode")] = 0.0
                _torch_call.DECODE_ALONE_ON_OPENMP = name == "attn-alone"
                attn_torch.use_openmp_threads(hosted is not None and name != "attn-own")
                t0 = time.perf_counter()
                out = model.generate(ids, attention_mask=torch.ones_like(ids),
                                     max_new_tokens=args.new, min_new_tokens=args.new,
                                     do_sample=False, pad_token_id=0)
                total[name].append(time.perf_counter() - t0)
                inside[name].append(SPENT[name])
                for kind in ("prefill", "decode"):
                    parts[(name, kind)].append(SPENT[(name, kind)])
                tokens[name] = out
    _torch_call.DECODE_ALONE_ON_OPENMP = False
    attn_torch.use_openmp_threads(hosted is not None)
    same = all(torch.equal(tokens["attn"], tokens[name]) for name in impls)
    agree = min(int((tokens[name][0, args.prompt:] == tokens["sdpa"][0, args.prompt:]).sum())
                for name in impls)
    print("attn %s (%s kernel), torch %s (%d threads), transformers %s, Python %s, %s"
          % (attn.__version__, attn.simd, torch.__version__, torch.get_num_threads(),
             transformers.__version__, platform.python_version(), cpu_model()))
    print("Llama-style: %d layers, hidden %d, %d/%d heads, head size %d, %s; "
          "prompt %d + %d greedy tokens; medians of %d rounds"
          % (args.layers, args.hidden, args.heads, args.kv_heads, args.hidden // args.heads,
             args.dtype, args.prompt, args.new, args.repeats))
    print("attn's threads: %s" % ("PyTorch's OpenMP runtime " + hosted if hosted else "its own"))
    print("%-10s %12s %14s %12s %12s" % ("impl", "generate s", "attention s", "prefill s",
                                         "decode s"))
    for name in impls:
        print("%-10s %12.3f %14.3f %12.4f %12.4f"
              % (name, statistics.median(total[name]), statistics.median(inside[name]),
                 statistics.median(parts[(name, "prefill")]),
                 statistics.median(parts[(name, "decode")])))
    a, s = (statistics.median(inside[n]) for n in ("attn", "sdpa"))
    ga, gs = (statistics.median(total[n]) for n in ("attn", "sdpa"))
    print("attention: attn %.2fx PyTorch's SDPA; generate %.2fx; tokens identical: %s "
          "(%d of %d generated tokens agree)" % (s / a, gs / ga, same, agree, args.new))
    if args.own_threads:
        o, go = statistics.median(inside["attn-own"]), statistics.median(total["attn-own"])
        print("attn on its own threads: attention %.2fx PyTorch's SDPA; generate %.2fx"
              % (s / o, gs / go))
    if args.alone_ab:
        o, go = statistics.median(inside["attn-alone"]), statistics.median(total["attn-alone"])
        print("attn with decode steps alone: attention %.2fx PyTorch's SDPA; generate %.3fx"
              % (s / o, gs / go))
        for name in ("attn", "attn-alone"):
            more = [(t - i) - (ts - its) for t, i, ts, its
                    in zip(total[name], inside[name], total["sdpa"], inside["sdpa"])]
            print("%s: time outside attention minus PyTorch's model's, median of the rounds "
                  "%+.3f s" % (name, statistics.median(more)))
    return 0 if same or args.dtype != "float32" else 1


if __name__ == "__main__":
    sys.exit(main())
