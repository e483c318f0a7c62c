"""The line protocol of attn-bench sdpa's peers (bench/peers/*_sdpa_peer.py),
what they share: the configuration a line describes, the visibility rule,
the inputs, the float64 check, and measurement in rounds.

Protocol: one configuration and round per line on stdin (or as arguments,
the fields joined by colons), answered and flushed before the next is read:
  DTYPE OP B NH NH_KV TQ TK HS HS_V CAUSAL WINDOW MASK LENGTHS CACHE LAYOUT
  SCENARIO STEPS ROUND/ROUNDS
e.g. "f32 forward 4 32 8 1 8192 128 128 1 0 none 1000/3000/5000/8192 warm
bhsd call 0 1/1"; LENGTHS is "full" or one length per sequence joined by
"/"; MASK none, padding or full; CACHE warm or cold; LAYOUT bshd or bhsd;
SCENARIO call (STEPS 0) or decode-loop (STEPS steps); ROUND/ROUNDS, 1-based,
the round of the configuration (1/1: one block, the whole repeat policy).
A training row (OP backward) with attention dropout adds a last field
"dropout=P" (0 < P < 1, attn-bench sdpa --dropout): the peer's timed step
drops with that p (its check runs at p = 0: no engine draws attn's masks);
a peer that cannot drop answers unsupported.
Answers:
  pending LINE                      rounds 1 .. ROUNDS-1: this round's block timed
  result LINE MEDIAN_S MIN_S REPEATS OUT_DTYPE CHECK_ERROR MASK THREADS KERNEL
                                    the last round: over every round's samples
  unsupported LINE REASON / error LINE MESSAGE   (no more rounds of it)
MASK says what the engine got (is_causal, none, or the mask's type and
shape); CHECK_ERROR is the case's own check against float64 loops over the
visible keys (reference_error): the proof that the mask it got is attn's;
THREADS the threads the engine runs on, as it reports them; KERNEL the
operator or kernel that ran (no spaces).

Which keys query t of sequence b sees (attn.h; bench/measure/sdpa_config.h): with
L_b its length and A_b = L_b (MASK none: attn gets key_lengths) or Tk
(MASK padding/full: the lengths are in the mask), p = A_b - Tq + t, key j is
visible when j < L_b, and if causal j <= p, and if WINDOW > 0 j > p - WINDOW.

Inputs: Q (B, NH, Tq, hs), K (B, NH_kv, Tk, hs), V (B, NH_kv, Tk, hs_v) and,
for MASK full, a bias (B, NH, Tq, Tk), drawn in that order as (B, H, T, d)
arrays from numpy.random.default_rng((seed, B, NH, NH_KV, TQ, TK, HS, HS_V)),
uniform on [-sqrt 3, sqrt 3] (Inputs.draw): attn-bench's distribution, not its
numbers; every peer gets the same numbers.

DTYPE f32, f64, or the half types bf16 and f16 (attn.h's "half precision"):
their inputs are drawn as float32 and rounded to the type by the peer (NumPy
has no bfloat16), and their check (reference_check) runs the float64 loops
on the rounded inputs, with attn.h's bound as the tolerance (half_bound);
above it the case fails (CheckFailed: an error line, no numbers).
"""
import math

import numpy as np

import peer_common

FIELDS = ("dtype op B NH NH_kv Tq Tk hs hs_v causal window mask lengths cache layout "
          "scenario steps round").split()
DTYPES = ("f32", "f64", "bf16", "f16")
HALF_UNIT = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11}  # u: the unit roundoff of a half type


class CheckFailed(Exception):
    """A half-precision case's output beyond attn.h's bound (reference_check)."""


class Config:
    def __init__(self, fields):
        self.dropout, dropout = 0.0, ""
        if len(fields) == len(FIELDS) + 1 and fields[-1].startswith("dropout="):
            dropout = " " + fields[-1]
            self.dropout = float(fields[-1][len("dropout="):])
            if not 0.0 < self.dropout < 1.0:
                raise ValueError("dropout=P needs 0 < P < 1")
            fields = fields[:-1]
        if len(fields) != len(FIELDS):
            raise ValueError(f"not a configuration ({' '.join(FIELDS)})")
        self.text = " ".join(fields) + dropout  # as it came, for the answer
        self.key = " ".join(fields[:-1]) + dropout  # the configuration, whatever the round
        (self.dtype, self.op, B, NH, NH_kv, Tq, Tk, hs, hs_v, causal, window, self.mask,
         lengths, self.cache, self.layout, self.scenario, steps, round_text) = fields
        if (self.dtype not in DTYPES or self.op not in ("forward", "backward")
                or causal not in ("0", "1") or self.mask not in ("none", "padding", "full")
                or self.cache not in ("warm", "cold") or self.layout not in ("bshd", "bhsd")
                or self.scenario not in ("call", "decode-loop")):
            raise ValueError("bad dtype, op, causal, mask, cache, layout or scenario")
        self.B, self.NH, self.NH_kv, self.Tq, self.Tk, self.hs, self.hs_v, self.steps = (
            int(v) for v in (B, NH, NH_kv, Tq, Tk, hs, hs_v, steps))
        self.round, self.rounds = peer_common.parse_round(round_text)
        self.causal, self.window = causal == "1", int(window)
        self.half = self.dtype in HALF_UNIT
        if min(self.B, self.NH, self.NH_kv, self.Tq, self.Tk, self.hs, self.hs_v) < 1:
            raise ValueError("sizes must be positive")
        if self.NH % self.NH_kv:
            raise ValueError("NH is not a multiple of NH_kv")
        self.full_lengths = lengths == "full"
        self.lengths = ([self.Tk] * self.B if self.full_lengths
                        else [int(v) for v in lengths.split("/")])
        if len(self.lengths) != self.B or max(self.lengths) > self.Tk:
            raise ValueError("LENGTHS needs B lengths <= Tk")
        self.loop = self.scenario == "decode-loop"
        if self.loop and (self.steps < 1 or self.Tq != 1 or not self.full_lengths
                          or self.mask != "none" or self.window or self.op != "forward"):
            raise ValueError("a decode loop is a forward of Tq = 1, STEPS >= 1, full "
                             "lengths, no mask, no window")
        if self.dropout and self.op != "backward":
            raise ValueError("dropout=P is for training rows (OP backward)")

    def visible_range(self, b, t):
        """[lo, hi) of the keys query t of sequence b sees (the rule above)."""
        length = self.lengths[b]
        aligned = length if self.mask == "none" else self.Tk
        p = aligned - self.Tq + t
        hi = min(length, p + 1) if self.causal else length
        lo = max(0, p - self.window + 1) if self.window > 0 else 0
        hi = max(hi, 0)
        return min(lo, hi), hi




def visibility(c):
    """bool (B, 1, Tq or 1, Tk) NumPy array: True where the key is visible
    (the rule above); (B, 1, 1, Tk) when no query differs from another."""
    lengths = np.array(c.lengths)
    aligned = lengths if c.mask == "none" else np.full(c.B, c.Tk)
    j = np.arange(c.Tk)
    if not (c.causal or c.window > 0):
        return (j[None, :] < lengths[:, None])[:, None, None, :]
    p = aligned[:, None] - c.Tq + np.arange(c.Tq)[None, :]              # (B, Tq)
    seen = j[None, None, :] < lengths[:, None, None]                    # (B, Tq, Tk)
    if c.causal:
        seen = seen & (j[None, None, :] <= p[:, :, None])
    if c.window > 0:
        seen = seen & (j[None, None, :] > p[:, :, None] - c.window)
    return seen[:, None, :, :]


def reference_error(c, Q, K, V, bias, out, times=None):
    """max|out - ref| / max|ref| over a few rows, in float64 from the rule.
    Q, K, V, out are (B, NH, T, hs) arrays or views (NumPy, or anything
    numpy.asarray reads: CPU tensors of float32 or float64); times the query
    rows (default: the first, middle and last)."""
    return reference_check(c, Q, K, V, bias, out, times)[0]


def half_bound(c, q, k, v, want):
    """attn.h's bound of a half type's out row, entry by entry: with u the
    type's unit roundoff, u_P = u (bf16) or 0 (f16), n the visible keys,
    d = hs and g = 2^-24 (n + d + 16) + 2^-23 d scale max_j sum_i |q_i k_ji|,
    |out - x| <= u |x| + (u_P + 4 g) max_j |V_j| (x the exact result)."""
    u = HALF_UNIT[c.dtype]
    u_p = u if c.dtype == "bf16" else 0.0
    d = c.hs
    g = 2.0 ** -24 * (len(k) + d + 16) + 2.0 ** -23 * d / math.sqrt(d) * float(
        np.max(np.abs(k) @ np.abs(q)))
    return u * np.abs(want) + (u_p + 4 * g) * float(np.max(np.abs(v)))


def reference_check(c, Q, K, V, bias, out, times=None):
    """(error, tolerance): reference_error's error, and for a half type the
    largest of attn.h's bound (half_bound) over the compared entries over
    max|ref|, the error's normalization (else None)."""
    group = c.NH // c.NH_kv
    scale = 1.0 / math.sqrt(c.hs)
    worst = biggest = bound = 0.0
    for b in sorted({0, c.B - 1}):
        for h in sorted({0, c.NH - 1}):
            for t in times or sorted({0, c.Tq // 2, c.Tq - 1}):
                lo, hi = c.visible_range(b, t)
                want = np.zeros(c.hs_v)
                if hi > lo:
                    q = np.asarray(Q[b, h, t], dtype=np.float64)
                    k = np.asarray(K[b, h // group, lo:hi], dtype=np.float64)
                    v = np.asarray(V[b, h // group, lo:hi], dtype=np.float64)
                    s = k @ q * scale
                    if bias is not None:
                        s = s + np.asarray(bias[b, h, t, lo:hi], dtype=np.float64)
                    w = np.exp(s - s.max())
                    want = (w / w.sum()) @ v
                    if c.half:
                        bound = max(bound, float(np.max(half_bound(c, q, k, v, want))))
                got = np.asarray(out[b, h, t], dtype=np.float64)
                worst = max(worst, float(np.max(np.abs(got - want))))
                biggest = max(biggest, float(np.max(np.abs(want))))
    error = worst / biggest if biggest > 0 else worst
    if not c.half:
        return error, None
    return error, bound / biggest if biggest > 0 else bound


def require_within(error, tolerance):
    """CheckFailed when a half type's error is beyond its bound (tolerance None: no bound)."""
    if tolerance is not None and not error <= tolerance:
        raise CheckFailed(f"check error {error:.3e} > {tolerance:.3e}, attn.h's half bound")


class Inputs:
    """The configuration's random (B, H, T, d) NumPy arrays, drawn in turn."""

    def __init__(self, c, seed):
        self.c = c
        self.rng = np.random.default_rng((seed, c.B, c.NH, c.NH_kv, c.Tq, c.Tk, c.hs, c.hs_v))
        # a half type is drawn as float32 (then rounded by the peer: NumPy has no bfloat16)
        self.np_dtype = np.float64 if c.dtype == "f64" else np.float32

    def draw(self, *shape):
        half = math.sqrt(3.0)
        return self.rng.uniform(-half, half, shape).astype(self.np_dtype)

    def qkv_bias(self):
        """Q, K, V and the bias (MASK full) or None, in the documented order."""
        c = self.c
        Q, K, V = (self.draw(c.B, c.NH, c.Tq, c.hs), self.draw(c.B, c.NH_kv, c.Tk, c.hs),
                   self.draw(c.B, c.NH_kv, c.Tk, c.hs_v))
        bias = self.draw(c.B, c.NH, c.Tq, c.Tk) if c.mask == "full" else None
        return Q, K, V, bias


def add_arguments(parser):
    """The options every sdpa peer takes beyond peer_common's."""
    parser.add_argument("--flush-mib", type=int, default=256,
                        help="MiB read before every call of a cold configuration")


def serve_in_rounds(header_lines, make_case, args):
    """Answers the configurations (peer_common.serve_in_rounds): make_case
    (config) returns a case with block, check -> (error, out_dtype), and
    description, threads and kernel (the result line's MASK, THREADS and
    KERNEL words, after its CHECK_ERROR)."""
    def more_words(case, error):
        return [f"{error:.3e}", case.description, str(case.threads), case.kernel]

    peer_common.serve_in_rounds(header_lines, make_case, args, parse=Config,
                                more_words=more_words)


class Flush:
    """The cold-cache read: a --flush-mib buffer summed by NumPy on the calling
    thread (not by the engine, whose threads would keep spinning after it and
    take the CPUs from the next call)."""

    def __init__(self, mib, cold):
        self.mib, self.cold, self.buffer, self.sum = mib, cold, None, 0

    def read(self):
        self.sum = int(self.buffer.sum())

    def before(self):
        """The function to run before every call (None: warm caches)."""
        if not self.cold:
            return None
        if self.buffer is None:
            self.buffer = np.ones(max(1, self.mib) << 17, dtype=np.int64)
        return self.read
