"""What numpy_peer.py and torch_peer.py share: attn-bench's line protocol,
its repeat policy and its input distribution.

Protocol. Input: one shape per line on stdin,
``DTYPE OP CAUSAL B T C NH HS WO`` (e.g. ``f32 forward 1 1 256 768 1 64 0``),
each answered (and flushed) before the next is read, until the end of stdin;
or the shapes as arguments joined by colons (``f32:forward:1:1:256:768:1:64:0``).
OP is forward or backward (forward and backward timed together); WO is 1
when an output projection Wo (NH*HS, C) follows the heads.

Output, one line each, space separated:
  info NAME=VERSION ...                    what runs
  blas DESCRIPTION threads=N               its BLAS and thread count
  impl DESCRIPTION                         how it computes attention
  ready                                    (then the shapes are read)
  result SHAPE MEDIAN_S MIN_S REPEATS OUT_DTYPE
  pending SHAPE                            a block of a shape measured in rounds was
                                           timed; the numbers come with the last round
  unsupported SHAPE REASON                 this peer does not compute that shape
  error SHAPE MESSAGE                      that shape failed, others go on
  unavailable REASON                       the peer cannot run: nothing else follows
With --describe the peer prints its info, blas and impl lines and exits
(./attn.sh peers shows them so).

Inputs per shape (D = NH*HS): X ~ N(0, 1), Wq, Wk, Wv ~ N(0, 1)/sqrt(C),
Wo ~ N(0, 1)/sqrt(D), dout ~ N(0, 1), from
numpy.random.default_rng((seed, B, T, C, NH, HS)), as float32 for f32 and
float64 for f64: attn-bench's distribution, not its numbers.

Repeat policy: WARMUP untimed calls, then timed calls (time.perf_counter, one
sample per call) until at least REPEATS samples that add up to at least
MIN_TIME seconds, or MAX_REPEATS samples. Measured in R rounds (attn-bench
sdpa --rounds), round r's block follows block_policy: attn-bench's
bench_sdpa_block_policy.

Threads: call use_thread_count_from_argv() before importing NumPy or
PyTorch; it puts --threads N into OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and
MKL_NUM_THREADS (attn-bench sets them too). Then import_or_unavailable()
imports them, or answers 'unavailable'.

bench/peers/torch_sdpa_peer.py (attn-bench sdpa) speaks its own shapes and
result fields, with the same header lines, repeat policy (plus a cold-cache
read) and answers: it passes serve() its own parse and text_of.
"""
import argparse
import importlib
import math
import os
import statistics
import sys
import time
from collections import namedtuple

# dropout: attention dropout p of a training shape, sent as a tenth field
# "dropout=P" (%.17g) when above 0 (attn-bench --dropout; the torch peer's)
Shape = namedtuple("Shape", "dtype op causal B T C NH hs wo dropout", defaults=(0.0,))


class Unsupported(Exception):
    """This peer does not compute the shape (answered with 'unsupported')."""


def use_thread_count_from_argv():
    """--threads N in sys.argv -> the BLAS and OpenMP thread variables."""
    for i, arg in enumerate(sys.argv[:-1]):
        if arg == "--threads":
            for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                os.environ[name] = sys.argv[i + 1]


def import_or_unavailable(what, *names):
    """The modules called names, imported; when one cannot be, the line
    'unavailable WHAT cannot be imported: REASON', and the peer exits."""
    try:
        return tuple(importlib.import_module(name) for name in names)
    except ImportError as exc:
        print(f"unavailable {what} cannot be imported: {exc}", flush=True)
        sys.exit(0)


def parse_arguments(description, add_arguments=None):
    """attn-bench's arguments; add_arguments(parser) adds a peer's own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--max-repeats", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--describe", action="store_true",
                        help="print the info, blas and impl lines, then exit")
    if add_arguments:
        add_arguments(parser)
    parser.add_argument("shapes", nargs="*",
                        help="DTYPE:OP:CAUSAL:B:T:C:NH:HS:WO (default: stdin)")
    return parser.parse_args()


def parse_shape(fields):
    """The nine protocol fields as strings (and "dropout=P") -> Shape."""
    dropout = 0.0
    if len(fields) == 10 and fields[9].startswith("dropout="):
        dropout = float(fields[9][len("dropout="):])
        if not 0.0 < dropout < 1.0 or fields[1] != "backward":
            raise ValueError("dropout=P needs 0 < P < 1 and OP backward")
        fields = fields[:9]
    if (len(fields) != 9 or fields[0] not in ("f32", "f64")
            or fields[1] not in ("forward", "backward")
            or fields[2] not in ("0", "1") or fields[8] not in ("0", "1")):
        raise ValueError("not a shape (DTYPE OP CAUSAL B T C NH HS WO)")
    sizes = [int(v) for v in fields[3:8]]
    if min(sizes) < 1:
        raise ValueError("sizes must be positive")
    return Shape(fields[0], fields[1], int(fields[2]), *sizes, int(fields[8]), dropout)


def shape_text(shape):
    text = " ".join(str(v) for v in shape[:9])
    return text + f" dropout={shape.dropout:.17g}" if shape.dropout else text


def shapes_from(arguments):
    """Yields the shapes' fields, reading stdin one line at a time (no read-ahead)."""
    if arguments:
        yield from (a.split(":") for a in arguments)
        return
    for line in iter(sys.stdin.readline, ""):
        if line.strip():
            yield line.split()


Policy = namedtuple("Policy", "warmup repeats min_time max_repeats")


def block_policy(args, round_index, rounds):
    """The policy of round round_index (0-based) of rounds: the warmup in the
    first round (one untimed call in the others: the call before was another
    process's), a rounds-th of the repeats, the time and the cap."""
    return Policy(args.warmup if round_index == 0 else 1, max(1, -(-args.repeats // rounds)),
                  args.min_time / rounds, max(1, -(-args.max_repeats // rounds)))


def time_samples(call, policy, before=None):
    """The timed samples of call under policy (anything with warmup, repeats,
    min_time and max_repeats, such as the parsed arguments) and the last
    result. before() (None: nothing) runs before every call, the warmup calls
    too, outside the timing."""
    result = None
    for _ in range(policy.warmup):
        if before:
            before()
        result = call()
    samples = []
    total = 0.0
    while len(samples) < policy.max_repeats and (len(samples) < policy.repeats
                                                  or total < policy.min_time):
        if before:
            before()
        start = time.perf_counter()
        result = call()
        elapsed = time.perf_counter() - start
        samples.append(elapsed)
        total += elapsed
    return samples, result


def time_calls(call, args, before=None):
    """attn-bench's repeat policy; returns (median, min, repeats, last result)."""
    samples, result = time_samples(call, args, before)
    return statistics.median(samples), min(samples), len(samples), result


def make_inputs(np, shape, seed):
    """X, Wq, Wk, Wv, Wo (or None), dout (or None) as NumPy arrays."""
    rng = np.random.default_rng((seed, shape.B, shape.T, shape.C, shape.NH, shape.hs))
    D = shape.NH * shape.hs
    dtype = np.float32 if shape.dtype == "f32" else np.float64
    X = rng.standard_normal((shape.B, shape.T, shape.C))
    Wq, Wk, Wv = (rng.standard_normal((shape.C, D)) / math.sqrt(shape.C) for _ in range(3))
    Wo = rng.standard_normal((D, shape.C)) / math.sqrt(D) if shape.wo else None
    out_width = shape.C if shape.wo else D
    dout = (rng.standard_normal((shape.B, shape.T, out_width))
            if shape.op == "backward" else None)
    return tuple(None if a is None else a.astype(dtype) for a in (X, Wq, Wk, Wv, Wo, dout))


def one_line(text):
    return " ".join(str(text).split())


def serve(header_lines, measure, args, parse=parse_shape, text_of=shape_text):
    """Prints the header lines and 'ready', then answers every shape:
    parse(fields) makes it, text_of(shape) names it in the answer, and
    measure(shape) returns (median, min, repeats, out_dtype_name, *more), more
    being further fields of the result line, as text, or None for a block of
    a shape measured in rounds that is not the last ('pending'). With
    --describe, only the header lines."""
    for line in header_lines:
        print(line, flush=True)
    if args.describe:
        return
    print("ready", flush=True)
    for fields in shapes_from(args.shapes):
        text = " ".join(fields)
        try:
            shape = parse(fields)
            text = text_of(shape)
            measured = measure(shape)
            if measured is None:
                print(f"pending {text}", flush=True)
                continue
            median, fastest, repeats, out_dtype, *more = measured
            print(" ".join([f"result {text} {median:.9e} {fastest:.9e} {repeats} {out_dtype}",
                            *more]), flush=True)
        except Unsupported as exc:
            print(f"unsupported {text} {one_line(exc)}", flush=True)
        except Exception as exc:  # e.g. MemoryError: report it, go on with the next
            print(f"error {text} {one_line(f'{type(exc).__name__}: {exc}')}", flush=True)
