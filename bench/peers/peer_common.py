"""What numpy_peer.py and torch_peer.py share: attn-bench's line protocol,
its repeat policy and its input distribution.

Protocol. Input: one shape per line on stdin,
``DTYPE OP CAUSAL B T C NH HS WO [ROUND/ROUNDS]`` (e.g.
``f32 forward 1 1 256 768 1 64 0 1/8``), each answered (and flushed) before
the next is read, until the end of stdin; or the shapes as arguments joined
by colons (``f32:forward:1:1:256:768:1:64:0``). OP is forward or backward
(forward and backward timed together); WO is 1 when an output projection
Wo (NH*HS, C) follows the heads. ROUND/ROUNDS (1-based; 1/1 when absent)
is the round of the shape: attn-bench times a shape in rounds between
its own blocks of calls (serve_in_rounds), as its sdpa command does
(sdpa_peer_protocol.py).

Output, one line each, space separated:
  info NAME=VERSION ...                    what runs
  blas DESCRIPTION threads=N               its BLAS and thread count
  impl DESCRIPTION                         how it computes attention
  ready                                    (then the shapes are read)
  result SHAPE MEDIAN_S MIN_S REPEATS OUT_DTYPE   (the last round: every round's samples)
  pending SHAPE                            rounds 1 .. ROUNDS-1: this round's block timed
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

# dropout: attention dropout p of a training shape, sent as a last field
# "dropout=P" (%.17g) when above 0 (attn-bench --dropout; the torch peer's);
# round, rounds: the round of the shape (1/1: the whole repeat policy);
# text: the line as it came (the answers repeat it); key: the shape
# whatever the round
Shape = namedtuple("Shape", "dtype op causal B T C NH hs wo dropout round rounds text key",
                   defaults=(0.0, 1, 1, "", ""))


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


def parse_round(text):
    """ "ROUND/ROUNDS" -> (round, rounds), 1 <= round <= rounds."""
    round_index, rounds = (int(v) for v in text.split("/"))
    if not 1 <= round_index <= rounds:
        raise ValueError("ROUND/ROUNDS needs 1 <= ROUND <= ROUNDS")
    return round_index, rounds


def parse_shape(fields):
    """The protocol fields as strings (nine, then ROUND/ROUNDS and
    "dropout=P" when there) -> Shape."""
    text = " ".join(fields)
    dropout = 0.0
    if len(fields) > 9 and fields[-1].startswith("dropout="):
        dropout = float(fields[-1][len("dropout="):])
        if not 0.0 < dropout < 1.0 or fields[1] != "backward":
            raise ValueError("dropout=P needs 0 < P < 1 and OP backward")
        fields = fields[:-1]
    round_index, rounds = 1, 1
    if len(fields) == 10 and "/" in fields[9]:
        round_index, rounds = parse_round(fields[9])
        fields = fields[:9]
    if (len(fields) != 9 or fields[0] not in ("f32", "f64")
            or fields[1] not in ("forward", "backward")
            or fields[2] not in ("0", "1") or fields[8] not in ("0", "1")):
        raise ValueError("not a shape (DTYPE OP CAUSAL B T C NH HS WO [ROUND/ROUNDS])")
    sizes = [int(v) for v in fields[3:8]]
    if min(sizes) < 1:
        raise ValueError("sizes must be positive")
    key = " ".join(fields) + (f" dropout={dropout:.17g}" if dropout else "")
    return Shape(fields[0], fields[1], int(fields[2]), *sizes, int(fields[8]), dropout,
                 round_index, rounds, text, key)


def shape_text(shape):
    """The line of a shape: its nine fields, its round when not 1/1, its dropout."""
    text = " ".join(str(v) for v in shape[:9])
    if shape.rounds != 1:
        text += f" {shape.round}/{shape.rounds}"
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
    too, outside the samples; min_time counts it (attn-bench's timing.h: a
    budget of wall time, so a small call after a cold-cache read each is not
    repeated thousands of times)."""
    result = None
    for _ in range(policy.warmup):
        if before:
            before()
        result = call()
    samples = []
    total = 0.0
    while len(samples) < policy.max_repeats and (len(samples) < policy.repeats
                                                  or total < policy.min_time):
        prepared = time.perf_counter()
        if before:
            before()
        start = time.perf_counter()
        result = call()
        end = time.perf_counter()
        samples.append(end - start)
        total += end - prepared
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


def serve(header_lines, measure, args, parse=parse_shape, text_of=lambda shape: shape.text):
    """Prints the header lines and 'ready', then answers every line:
    parse(fields) makes its shape, text_of(shape) names it in the answer
    (the line as it came), and measure(shape) returns (median, min, repeats,
    out_dtype_name, *more), more being further fields of the result line, as
    text, or None for a block of a shape measured in rounds that is not the
    last ('pending'). With --describe, only the header lines."""
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


def serve_in_rounds(header_lines, make_case, args, parse=parse_shape, more_words=None):
    """Answers the lines, each a shape (or configuration) and its round, as
    serve does: make_case(shape) (at its first round) returns a case with
    block(policy, first) -> samples and check() -> (error, out_dtype); each
    round times the case's block under block_policy, and the last round
    answers with the samples of every round (before it: 'pending').
    more_words(case, error) (None: none) gives the result line's further
    words (the sdpa peers': the check, the mask, the threads, the kernel).
    A parsed shape has .round, .rounds and .key (the shape whatever the
    round) and .text (the line); the case of a shape whose round 1 did not
    run is an error."""
    in_progress = {}  # key -> (case, samples) of a shape measured in rounds

    def measure(shape):
        if shape.round == 1:
            in_progress.pop(shape.key, None)
            in_progress[shape.key] = (make_case(shape), [])
        elif shape.key not in in_progress:
            raise ValueError(f"round {shape.round} of a shape whose round 1 did not run")
        case, samples = in_progress[shape.key]
        policy = block_policy(args, shape.round - 1, shape.rounds)
        samples.extend(case.block(policy, shape.round == 1))
        if shape.round < shape.rounds:
            return None
        del in_progress[shape.key]
        error, out_dtype = case.check()
        more = more_words(case, error) if more_words else []
        return (statistics.median(samples), min(samples), len(samples), out_dtype, *more)

    serve(header_lines, measure, args, parse=parse, text_of=lambda shape: shape.text)


class TimedCase:
    """A case of serve_in_rounds from a call: block times it under the round's
    policy (time_samples), check gives no error (None: the run command's
    peers are checked by attn-bench's own reference, not here) and the last
    result's dtype through out_dtype_of(result)."""

    def __init__(self, call, out_dtype_of, close=None):
        self.call, self.out_dtype_of, self.close = call, out_dtype_of, close
        self.result = None

    def block(self, policy, first):
        del first  # the policy has the warmup
        samples, self.result = time_samples(self.call, policy)
        return samples

    def check(self):
        out_dtype = self.out_dtype_of(self.result)
        if self.close:
            self.close()
        return None, out_dtype
