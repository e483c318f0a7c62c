#!/usr/bin/env python3
"""NumPy peer of attn-bench.

Times the course's reference attention head -- ``softmax`` and
``self_attention`` below, the lesson's code unchanged -- on the shapes
attn-bench sends, with attn-bench's repeat policy, in one process for the
whole sweep.

Input: one shape per line on stdin, ``DTYPE CAUSAL B T C HS`` (e.g.
``f32 1 1 256 768 64``), each answered (and flushed) before the next is
read, until the end of stdin; or the shapes as arguments joined by colons
(``f32:1:1:256:768:64``).

Output, one line each, space separated:
  info numpy=VERSION python=VERSION
  blas DESCRIPTION threads=N
  ready                                    (then the shapes are read)
  result DTYPE CAUSAL B T C HS MEDIAN_S MIN_S REPEATS OUT_DTYPE
  error DTYPE CAUSAL B T C HS MESSAGE      (that shape failed, others go on)
  unavailable REASON                       (numpy missing: nothing else follows)

Inputs per shape: X ~ N(0, 1) and Wq, Wk, Wv ~ N(0, 1) / sqrt(C) from
numpy.random.default_rng((seed, B, T, C, hs)), as float32 arrays for f32 and
float64 for f64 (the distribution attn-bench uses; not the same numbers).
OUT_DTYPE is the dtype of the returned ``out``: with NumPy >= 2 the lesson's
``/ np.sqrt(hs)`` (a float64 scalar) promotes float32 scores to float64, so
for f32 the softmax and ``weights @ V`` run in double.

Repeat policy: WARMUP untimed calls, then timed calls (time.perf_counter, one
sample per call) until at least REPEATS samples that add up to at least
MIN_TIME seconds, or MAX_REPEATS samples.
"""
import argparse
import math
import statistics
import sys
import time

try:
    import numpy as np
except ImportError as exc:
    print(f"unavailable numpy cannot be imported: {exc}", flush=True)
    sys.exit(0)


# ---- the lesson's reference (module 1, lesson 4), unchanged ----------------

def softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)   # subtract row max for stability
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)

def self_attention(X, Wq, Wk, Wv, causal=False):
    # X: (B, T, C);  Wq/Wk/Wv: (C, hs)
    Q, K, V = X @ Wq, X @ Wk, X @ Wv                  # each (B, T, hs)
    hs = Q.shape[-1]
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(hs)   # (B, T, T)
    if causal:
        T = scores.shape[1]
        mask = np.triu(np.ones((T, T), dtype=bool), k=1)
        scores = np.where(mask, -1e9, scores)
    weights = softmax(scores, axis=-1)                # (B, T, T)
    return weights @ V, weights                       # out: (B, T, hs)

# -----------------------------------------------------------------------------


DTYPES = {"f32": np.float32, "f64": np.float64}


def blas_threads():
    """Thread count of the OpenBLAS NumPy loaded, or 'unknown'."""
    try:
        import threadpoolctl
        for pool in threadpoolctl.threadpool_info():
            if pool.get("user_api") == "blas":
                return str(pool.get("num_threads"))
    except Exception:
        pass
    try:  # ask the loaded library itself
        import ctypes
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
        for path in sorted(paths):
            library = ctypes.CDLL(path)
            for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                         "openblas_get_num_threads"):
                function = getattr(library, name, None)
                if function is not None:
                    return str(function())
    except Exception:
        pass
    return "unknown"


def blas_description():
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        config = blas.get("openblas configuration", "")
        text = f"{blas.get('name', '?')} {blas.get('version', '?')}"
        return f"{text} ({' '.join(config.split())})" if config else text
    except Exception:
        return "unknown"


def time_calls(call, warmup, min_repeats, max_repeats, min_time):
    """attn-bench's repeat policy; returns (median, min, repeats, last result)."""
    result = None
    for _ in range(warmup):
        result = call()
    samples = []
    total = 0.0
    while len(samples) < max_repeats and (len(samples) < min_repeats or total < min_time):
        start = time.perf_counter()
        result = call()
        elapsed = time.perf_counter() - start
        samples.append(elapsed)
        total += elapsed
    return statistics.median(samples), min(samples), len(samples), result


def make_inputs(dtype, B, T, C, hs, seed):
    rng = np.random.default_rng((seed, B, T, C, hs))
    X = rng.standard_normal((B, T, C))
    scale = 1.0 / math.sqrt(C)
    Wq, Wk, Wv = (rng.standard_normal((C, hs)) * scale for _ in range(3))
    return tuple(a.astype(DTYPES[dtype]) for a in (X, Wq, Wk, Wv))


def parse_shape(fields):
    """DTYPE CAUSAL B T C HS as strings -> (dtype, causal, B, T, C, hs)."""
    if len(fields) != 6 or fields[0] not in DTYPES or fields[1] not in ("0", "1"):
        raise ValueError("not a shape (DTYPE CAUSAL B T C HS)")
    sizes = [int(v) for v in fields[2:]]
    if min(sizes) < 1:
        raise ValueError("sizes must be positive")
    return (fields[0], int(fields[1]), *sizes)


def shapes_from(arguments):
    """Yields the shapes, reading stdin one line at a time (no read-ahead)."""
    if arguments:
        yield from (a.split(":") for a in arguments)
        return
    for line in iter(sys.stdin.readline, ""):
        if line.strip():
            yield line.split()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--max-repeats", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("shapes", nargs="*", help="DTYPE:CAUSAL:B:T:C:HS (default: stdin)")
    args = parser.parse_args()

    print(f"info numpy={np.__version__} python={sys.version.split()[0]}", flush=True)
    print(f"blas {blas_description()} threads={blas_threads()}", flush=True)
    print("ready", flush=True)
    for fields in shapes_from(args.shapes):
        shape = " ".join(fields)
        try:
            dtype, causal, B, T, C, hs = parse_shape(fields)
            shape = f"{dtype} {causal} {B} {T} {C} {hs}"
            X, Wq, Wk, Wv = make_inputs(dtype, B, T, C, hs, args.seed)
            median, fastest, repeats, (out, _) = time_calls(
                lambda: self_attention(X, Wq, Wk, Wv, causal=bool(causal)),
                args.warmup, args.repeats, args.max_repeats, args.min_time)
            print(f"result {shape} {median:.9e} {fastest:.9e} {repeats} {out.dtype.name}",
                  flush=True)
        except Exception as exc:  # e.g. MemoryError: report it, go on with the next
            message = " ".join(f"{type(exc).__name__}: {exc}".split())
            print(f"error {shape} {message}", flush=True)


if __name__ == "__main__":
    main()
