#!/usr/bin/env python3
"""What attention dropout costs a training step, attn against PyTorch, same run.

Issue 26 asks that dropout cost at most 15% over the same training step
without it. This times forward + backward of

  sdpa   scaled dot-product attention on given q, k, v (PyTorch's layout
         (B, NH, T, hs), default B=1, 32 query heads on 8 key/value heads,
         T=2048, hs=128, causal, float32): attn's PyTorch drop-in
         (attn.torch.scaled_dot_product_attention, enable_gqa=True) against
         torch.nn.functional.scaled_dot_product_attention, both through
         autograd (the drop-in's backward is attn_sdpa_backward);
  block  a GPT-2 attention block (default B=1, T=1024, C=768, 12 heads,
         causal, float32): attn.Plan forward + backward (X in, projections
         Wq, Wk, Wv, Wo, gradients of all five out) against PyTorch's
         X @ Wq, ..., F.scaled_dot_product_attention, @ Wo through autograd,

each with dropout_p = 0 and with dropout_p = P (default 0.1: GPT-2's
attn_pdrop; attn's masks are its own Philox draws, PyTorch's its
generator's, so the outputs differ and are not compared here: attn's
dropout is checked bit for bit by tests/unit/test_dropout*.c).

Timing: a round times one call of each of the four (attn p=0, attn p=P,
torch p=0, torch p=P), one after the other, so that a busy moment of a
shared machine hits all four; --rounds rounds after one untimed warm-up
round; each figure is the median over the rounds (min beside it). The
overhead is median(p=P) / median(p=0) - 1 of the same library. Threads:
torch.set_num_threads(--threads) and attn's plans on --threads own threads.

    ATTN_LIBRARY=build/<dir>/lib/libattn.so PYTHONPATH=python/src \\
        .venv-peers/bin/python python/benchmarks/dropout_overhead.py \\
        [--p 0.1] [--rounds 7] [--threads N] [--cases sdpa,block] [--T 2048]
        [--libs attn,torch]
"""

import argparse
import os
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import attn
import attn.torch as at
from overhead import cpu_model  # the CPU named beside every figure


def sdpa_case(args):
    """(name, {variant: call}) of the sdpa training step."""
    B, NH, NH_kv, T, hs = 1, args.NH, args.NH_kv, args.T, args.hs
    g = torch.Generator().manual_seed(0)
    q = torch.randn(B, NH, T, hs, generator=g).requires_grad_()
    k = torch.randn(B, NH_kv, T, hs, generator=g).requires_grad_()
    v = torch.randn(B, NH_kv, T, hs, generator=g).requires_grad_()
    dout = torch.randn(B, NH, T, hs, generator=g)

    def step(fn, p):
        def call():
            q.grad = k.grad = v.grad = None
            out = fn(q, k, v, is_causal=True, dropout_p=p, enable_gqa=True)
            out.backward(dout)
        return call

    name = "sdpa (%d,%d/%d,%d,%d) causal fwd+bwd" % (B, NH, NH_kv, T, hs)
    return name, {
        ("attn", 0.0): step(at.scaled_dot_product_attention, 0.0),
        ("attn", args.p): step(at.scaled_dot_product_attention, args.p),
        ("torch", 0.0): step(F.scaled_dot_product_attention, 0.0),
        ("torch", args.p): step(F.scaled_dot_product_attention, args.p),
    }


def block_case(args):
    """(name, {variant: call}) of the GPT-2 attention block's training step."""
    B, T, C, NH = 1, args.block_T, args.C, args.block_NH
    hs = C // NH
    rng = np.random.default_rng(0)
    X = rng.standard_normal((B, T, C), dtype=np.float32)
    Ws = [(rng.standard_normal((C, C), dtype=np.float32) * 0.02) for _ in range(4)]
    dout = rng.standard_normal((B, T, C), dtype=np.float32)
    plans = {}
    for p in (0.0, args.p):
        plans[p] = attn.Plan(B, T, C, NH, causal=True, threads=args.threads)
        if p > 0:
            plans[p].set_dropout(p, 1234, 0)

    def attn_step(plan):
        def call():
            plan.forward(X, *Ws)
            plan.backward(X, *Ws, dout)
        return call

    Xt = torch.from_numpy(X).requires_grad_()
    Wt = [torch.from_numpy(W).requires_grad_() for W in Ws]
    doutt = torch.from_numpy(dout)

    def torch_step(p):
        def call():
            for t in [Xt] + Wt:
                t.grad = None
            heads = [(Xt @ W).view(B, T, NH, hs).transpose(1, 2) for W in Wt[:3]]
            y = F.scaled_dot_product_attention(*heads, is_causal=True, dropout_p=p)
            out = y.transpose(1, 2).reshape(B, T, C) @ Wt[3]
            out.backward(doutt)
        return call

    name = "GPT-2 block B=%d T=%d C=%d %d heads causal fwd+bwd" % (B, T, C, NH)
    return name, {
        ("attn", 0.0): attn_step(plans[0.0]),
        ("attn", args.p): attn_step(plans[args.p]),
        ("torch", 0.0): torch_step(0.0),
        ("torch", args.p): torch_step(args.p),
    }


def measure(calls, rounds):
    times = {key: [] for key in calls}
    for r in range(rounds + 1):
        for key, call in calls.items():
            t0 = time.perf_counter()
            call()
            if r > 0:  # round 0 warms up
                times[key].append(time.perf_counter() - t0)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--p", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--cases", default="sdpa,block")
    ap.add_argument("--libs", default="attn,torch",
                    help="whose steps to time (attn alone: more rounds in the same time)")
    ap.add_argument("--NH", type=int, default=32)
    ap.add_argument("--NH-kv", dest="NH_kv", type=int, default=8)
    ap.add_argument("--T", type=int, default=2048)
    ap.add_argument("--hs", type=int, default=128)
    ap.add_argument("--block-T", dest="block_T", type=int, default=1024)
    ap.add_argument("--C", type=int, default=768)
    ap.add_argument("--block-NH", dest="block_NH", type=int, default=12)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print("CPU: %s; %d threads (torch.set_num_threads, attn's own); torch %s; attn kernels %s"
          % (cpu_model(), args.threads, torch.__version__, attn.simd))
    print("%d interleaved rounds (1 call of each variant a round) after a warm-up round; "
          "median [min] ms" % args.rounds)
    makers = {"sdpa": sdpa_case, "block": block_case}
    for case in args.cases.split(","):
        name, calls = makers[case](args)
        libs = args.libs.split(",")
        calls = {key: call for key, call in calls.items() if key[0] in libs}
        times = measure(calls, args.rounds)
        print("\n" + name)
        med = {key: statistics.median(ts) * 1e3 for key, ts in times.items()}
        for lib in libs:
            base, drop = med[(lib, 0.0)], med[(lib, args.p)]
            print("  %-5s p=0 %9.1f [%7.1f]   p=%g %9.1f [%7.1f]   dropout +%.1f%%"
                  % (lib, base, min(times[(lib, 0.0)]) * 1e3, args.p, drop,
                     min(times[(lib, args.p)]) * 1e3, (drop / base - 1.0) * 100.0))
        if len(libs) < 2:
            continue
        print("  attn / torch: p=0 %.2fx, p=%g %.2fx (time ratio, below 1: attn faster)"
              % (med[("attn", 0.0)] / med[("torch", 0.0)], args.p,
                 med[("attn", args.p)] / med[("torch", args.p)]))


if __name__ == "__main__":
    main()
