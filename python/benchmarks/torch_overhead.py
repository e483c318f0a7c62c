#!/usr/bin/env python3
"""The PyTorch drop-in's cost per call against PyTorch's own SDPA, same run.

On tiny tensors (default query, key, value (1, 4, 8, 16) float32, no mask),
where the attention itself is a couple of microseconds, it times

  attn no_grad    attn.torch.scaled_dot_product_attention under torch.no_grad()
  torch no_grad   torch.nn.functional.scaled_dot_product_attention alike
  attn autograd   the drop-in's forward on inputs that require grad (the
                  autograd graph is built, then dropped)
  torch autograd  PyTorch's alike

and, with --layouts, the same no_grad call on a transposed (B, L, NH, E)
view and on a slice of a larger cache. The four calls of a repeat run one
after the other (so that a busy moment of a shared machine hits all of
them); each figure is the median over --repeats of the mean time of
--calls calls, as wall time and as this thread's CPU time
(time.thread_time, which a preempted thread does not accrue). The drop-in
on (B, NH, L, E) tensors passes them to C in place and runs on a cached
plan; what it costs beyond C is measured by python/benchmarks/overhead.py
for attn.sdpa.

    python python/benchmarks/torch_overhead.py [--calls 2000] [--repeats 21]
        [--shape B NH L E] [--dtype float32|float64] [--threads N] [--layouts]
"""

import argparse
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import attn
import attn.torch as at
from overhead import cpu_model  # the CPU named beside every figure


def timed(fn, calls):
    """(wall, thread CPU) mean microseconds per call of fn() over `calls` calls."""
    w0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(calls):
        fn()
    return ((time.perf_counter() - w0) / calls * 1e6, (time.thread_time() - c0) / calls * 1e6)


def cases(shape, dtype, layouts):
    """(name, function, no_grad) of every timed call."""
    B, NH, L, E = shape
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(shape, generator=g, dtype=dtype) for _ in range(3))
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    sdpa = at.scaled_dot_product_attention
    out = [
        ("attn no_grad", lambda: sdpa(q, k, v), True),
        ("torch no_grad", lambda: F.scaled_dot_product_attention(q, k, v), True),
        ("attn autograd", lambda: sdpa(qg, kg, vg), False),
        ("torch autograd", lambda: F.scaled_dot_product_attention(qg, kg, vg), False),
    ]
    if layouts:
        qt, kt, vt = (torch.randn((B, L, NH, E), generator=g, dtype=dtype).transpose(1, 2)
                      for _ in range(3))
        kc, vc = (torch.randn((B, NH, 4 * L, E), generator=g, dtype=dtype)[:, :, :L]
                  for _ in range(2))
        out += [
            ("attn BSHD view", lambda: sdpa(qt, kt, vt), True),
            ("torch BSHD view", lambda: F.scaled_dot_product_attention(qt, kt, vt), True),
            ("attn cache slice", lambda: sdpa(q, kc, vc), True),
            ("torch cache slice", lambda: F.scaled_dot_product_attention(q, kc, vc), True),
        ]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--shape", type=int, nargs=4, default=[1, 4, 8, 16],
                    metavar=("B", "NH", "L", "E"))
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--threads", type=int, default=0,
                    help="torch.set_num_threads (0: PyTorch's default)")
    ap.add_argument("--layouts", action="store_true",
                    help="also a transposed view and a cache slice (no_grad)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if not hasattr(F, "scaled_dot_product_attention"):
        raise SystemExit("torch_overhead: this PyTorch (%s) has no scaled_dot_product_attention"
                         % torch.__version__)
    timed_cases = cases(tuple(args.shape), getattr(torch, args.dtype), args.layouts)
    wall = {name: [] for name, _, _ in timed_cases}
    cpu = {name: [] for name, _, _ in timed_cases}
    for _, fn, no_grad in timed_cases:  # warm up (plans, caches)
        with torch.no_grad() if no_grad else torch.enable_grad():
            for _ in range(50):
                fn()
    for _ in range(args.repeats):
        for name, fn, no_grad in timed_cases:
            with torch.no_grad() if no_grad else torch.enable_grad():
                w, c = timed(fn, args.calls)
            wall[name].append(w)
            cpu[name].append(c)

    print("attn %s (%s kernel), torch %s (%d threads), Python %s, %s"
          % (attn.__version__, attn.simd, torch.__version__, torch.get_num_threads(),
             platform.python_version(), cpu_model()))
    print("query, key, value %s %s, no mask; medians of %d repeats x %d calls"
          % (tuple(args.shape), args.dtype, args.repeats, args.calls))
    print("%-18s %10s %10s" % ("call", "wall us", "cpu us"))
    for name, _, _ in timed_cases:
        print("%-18s %10.2f %10.2f" % (name, statistics.median(wall[name]),
                                        statistics.median(cpu[name])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
