#!/usr/bin/env python3
"""What an attention call costs inside a PyTorch program, beyond its kernel.

Three measurements, attn's drop-in (attn.torch, attn.transformers) and
PyTorch's SDPA side by side, medians of --calls calls:

  1. the cost of a call on tiny tensors with the caches warm (calls back to
     back) and cold (a streaming read of --evict-mib MiB before each call,
     as a model's MLP leaves them): the Python, dispatch and allocation
     around the kernel, which a model pays at every layer;
  2. a decode step of --keys keys (16/4 heads, hs 64, f32): the whole call
     against the C call inside it (attn_sdpa_forward_f32, timed through
     attn._plans), the same arrays every call;
  3. a prefill (T --prompt, 16/4 heads, hs 64, causal; the query a
     transposed view as a model's projection gives it) alone, and right
     after a PyTorch matrix product (1024 x 1024 x 1024): PyTorch's OpenMP
     workers keep polling for a while after it, on the cores attn's own
     threads then run on.

    python python/benchmarks/inside_model_costs.py [--calls 2000] [--keys 1088]
        [--prompt 1024] [--evict-mib 4] [--threads 2]
"""

import argparse
import statistics
import time

import numpy as np
import torch
from transformers.integrations.sdpa_attention import sdpa_attention_forward

import attn.transformers as attn_tf
from attn import _plans
from attn import torch as at
from torch_overhead import cpu_model


class Module(torch.nn.Module):
    """What transformers' attention functions read of the attention module."""

    def __init__(self):
        super().__init__()
        self.is_causal, self.num_key_value_groups, self.layer_idx = True, 4, 0


def median_us(fn, calls, before=None):
    times = []
    for _ in range(calls):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--keys", type=int, default=1088)
    ap.add_argument("--prompt", type=int, default=1024)
    ap.add_argument("--evict-mib", type=float, default=4.0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    m, g = Module(), torch.Generator().manual_seed(0)
    big = np.ones(int(args.evict_mib * 2 ** 20) // 8)
    print("torch %s (%d threads), %s" % (torch.__version__, torch.get_num_threads(), cpu_model()))

    q, k = torch.randn(1, 16, 1, 8, generator=g), torch.randn(1, 4, 8, 8, generator=g)
    calls = {
        "attn.torch.scaled_dot_product_attention": lambda: at.scaled_dot_product_attention(
            q, k, k, enable_gqa=True),
        "torch.nn.functional.scaled_dot_product_attention":
            lambda: torch.nn.functional.scaled_dot_product_attention(q, k, k, enable_gqa=True),
        "attn.transformers.attention_forward": lambda: attn_tf.attention_forward(
            m, q, k, k, None, scaling=0.125, dropout=0.0),
        "transformers' sdpa_attention_forward": lambda: sdpa_attention_forward(
            m, q, k, k, None, scaling=0.125, dropout=0.0),
    }
    print("1. tiny (1,16,1,8) on (1,4,8,8): us a call, caches warm / after a %.0f MiB read"
          % args.evict_mib)
    for name, fn in calls.items():
        warm = median_us(fn, args.calls)
        cold = median_us(fn, args.calls, big.sum)
        print("   %-50s %7.1f %7.1f" % (name, warm, cold))

    q = torch.randn(1, 16, 1, 64, generator=g)
    k, v = (torch.randn(1, 4, args.keys, 64, generator=g) for _ in range(2))
    inner, real = [], _plans._forward_f32

    def timed(plan, a):
        t0 = time.perf_counter()
        status = real(plan, a)
        inner.append(time.perf_counter() - t0)
        return status
    _plans._forward_f32 = timed
    try:
        whole = median_us(lambda: attn_tf.attention_forward(m, q, k, v, None, scaling=0.125,
                                                            dropout=0.0), args.calls)
    finally:
        _plans._forward_f32 = real
    torch_whole = median_us(lambda: sdpa_attention_forward(m, q, k, v, None, scaling=0.125,
                                                           dropout=0.0), args.calls)
    print("2. decode step, %d keys: attn %.0f us a call (its C call %.0f us); PyTorch %.0f us"
          % (args.keys, whole, statistics.median(inner) * 1e6, torch_whole))

    T = args.prompt
    q = torch.randn(1, T, 16, 64, generator=g).transpose(1, 2)
    k, v = (torch.randn(1, 4, T, 64, generator=g) for _ in range(2))
    x, w = torch.randn(1024, 1024, generator=g), torch.randn(1024, 1024, generator=g)
    print("3. prefill T=%d: ms a call, alone / right after a 1024^3 PyTorch matmul" % T)
    for name, fn in (("attn", attn_tf.attention_forward), ("PyTorch", sdpa_attention_forward)):
        call = lambda fn=fn: fn(m, q, k, v, None, scaling=0.125, dropout=0.0, is_causal=True)
        alone = median_us(call, 15) / 1e3
        after = median_us(call, 15, lambda: x @ w) / 1e3
        print("   %-8s %7.2f %7.2f" % (name, alone, after))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
