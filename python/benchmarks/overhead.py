#!/usr/bin/env python3
"""The binding's overhead per call: attn.sdpa and SdpaPlan.forward against C.

On a tiny shape (default B=1, NH=2, Tq=Tk=8, hs=16, float32, no mask), where
the attention itself takes about a microsecond, it times

  C one-shot      attn_sdpa_f32 called in a loop from C
  C plan          attn_sdpa_forward_f32 on one plan, in a loop from C
  ctypes bare     attn_sdpa_f32 through ctypes with a prebuilt argument struct
                  (what ctypes itself costs)
  attn.sdpa       the package's call: checks, output allocation, its plan
                  and argument struct cached for the signature (attn/_plans.py),
                  so it is compared with the C plan
  plan.forward    SdpaPlan.forward(q, k, v, out=out): the plan's own struct
  plan.forward+   SdpaPlan.forward(q, k, v), allocating out

The C loops are overhead_c.c, compiled here (cc -shared, -Wall -Wextra
-Werror) against the repository's attn.h and linked to the package's own
libattn, and called in this process on the same arrays and the same plan,
each C repeat right before the Python repeats it is compared with (so that
a busy moment of a shared machine hits both). Each figure is the median
over --repeats of the mean time of --calls calls; the overhead is the
Python call's median minus the C call's. Without a C compiler or the
header (outside a clone) the C rows are skipped and the overhead is taken
against the bare ctypes call, which hides ctypes' own cost.

    python python/benchmarks/overhead.py [--calls 2000] [--repeats 21]
"""

import argparse
import ctypes
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import attn
from attn import _lib

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown CPU"


def build_c_timer(tmp):
    """The overhead_c shared library (ctypes.CDLL), or (None, why not)."""
    include = os.environ.get("ATTN_INCLUDE", os.path.join(HERE, "..", "..", "include"))
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc or not os.path.exists(os.path.join(include, "attn", "attn.h")):
        return None, "no C compiler or no attn.h (set CC / ATTN_INCLUDE)"
    libattn = os.path.realpath(attn.library_path)
    so = os.path.join(tmp, "overhead_c.so")
    cmd = [cc, "-O2", "-std=c11", "-D_POSIX_C_SOURCE=199309L", "-Wall", "-Wextra", "-Werror",
           "-fPIC", "-shared", "-I", include, os.path.join(HERE, "overhead_c.c"), "-o", so,
           libattn, "-Wl,-rpath," + os.path.dirname(libattn)]
    built = subprocess.run(cmd, capture_output=True, text=True)
    if built.returncode:
        return None, "overhead_c.c did not compile: " + built.stderr.strip()
    timer = ctypes.CDLL(so)
    for name in ("overhead_oneshot_ns", "overhead_plan_ns"):
        fn = getattr(timer, name)
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return timer, ""


def python_ns(fn, calls):
    """Mean nanoseconds per call of fn() over `calls` calls."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e9


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--shape", type=int, nargs=5, default=[1, 2, 8, 8, 16],
                    metavar=("B", "NH", "Tq", "Tk", "hs"))
    args = ap.parse_args(argv)
    B, NH, Tq, Tk, hs = args.shape
    rng = np.random.default_rng(0)
    q = rng.standard_normal((B, Tq, NH, hs)).astype(np.float32)
    k = rng.standard_normal((B, Tk, NH, hs)).astype(np.float32)
    v = rng.standard_normal((B, Tk, NH, hs)).astype(np.float32)
    out = np.empty_like(q)

    shape = _lib.SdpaShape(B, NH, NH, Tq, Tk, hs, hs)
    cargs = _lib.SdpaArgs(Q=q.ctypes.data, K=k.ctypes.data, V=v.ctypes.data,
                          out=out.ctypes.data)
    shape_addr, cargs_addr = ctypes.addressof(shape), ctypes.addressof(cargs)
    bare = _lib.lib.attn_sdpa_f32
    plan = attn.SdpaPlan(B, NH, Tq, Tk, hs, dtype=np.float32, inference=True)

    cases = [  # name, Python call, the C loop it is compared with
        ("ctypes bare", lambda: bare(shape_addr, 0.0, 0, 0, cargs_addr), "oneshot"),
        ("attn.sdpa", lambda: attn.sdpa(q, k, v), "plan"),
        ("plan.forward", lambda: plan.forward(q, k, v, out=out), "plan"),
        ("plan.forward+", lambda: plan.forward(q, k, v), "plan"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        timer, why = build_c_timer(tmp)
        c_loops = {}
        if timer is not None:
            c_loops = {
                "oneshot": lambda n: timer.overhead_oneshot_ns(shape_addr, cargs_addr, n),
                "plan": lambda n: timer.overhead_plan_ns(plan._ptr, cargs_addr, n),
            }
        times = {name: [] for name in list(c_loops) + [c[0] for c in cases]}
        for _, fn, _ in cases:  # warm up
            fn()
        for loop in c_loops.values():
            loop(10)
        for _ in range(args.repeats):
            for base, loop in c_loops.items():
                ns = loop(args.calls)
                if ns < 0:
                    raise SystemExit("overhead: a C call failed")
                times[base].append(ns)
            for name, fn, _ in cases:
                times[name].append(python_ns(fn, args.calls))
    plan.close()
    med = {name: statistics.median(ts) / 1e3 for name, ts in times.items()}

    print("attn %s (%s kernel), Python %s, NumPy %s, %s"
          % (attn.__version__, attn.simd, platform.python_version(), np.__version__,
             cpu_model()))
    print("shape B=%d NH=%d Tq=%d Tk=%d hs=%d float32; medians of %d repeats x %d calls"
          % (B, NH, Tq, Tk, hs, args.repeats, args.calls))
    if not c_loops:
        print("C loops skipped: %s; overheads are against the bare ctypes call" % why)
    else:
        print("%-14s %8.2f us per call" % ("C one-shot", med["oneshot"]))
        print("%-14s %8.2f us per call" % ("C plan", med["plan"]))
    worst = 0.0
    for name, _, base in cases:
        ref_name = base if c_loops else "ctypes bare"
        diff = med[name] - med[ref_name]
        if name != "ctypes bare":
            worst = max(worst, diff)
        print("%-14s %8.2f us per call, overhead %5.2f us over %s"
              % (name, med[name], diff, ("C " + base) if c_loops else "ctypes bare"))
    print("largest binding overhead: %.2f us per call" % worst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
