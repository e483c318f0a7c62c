"""What the inference-engine peers of attn-bench sdpa share (ort_sdpa_peer.py,
openvino_sdpa_peer.py, ggml_sdpa_peer.py): a configuration's NumPy inputs,
its masks, and the choice among an engine's ways of computing it.

An engine offers candidates for a configuration: each a kernel or operator
name, the mask it got, and a call returning out as a (B, NH, Tq, hs_v) array
or view. EngineCase checks every candidate once against the float64
reference (sdpa_peer_protocol.reference_check) BEFORE any timing; one whose
error is above its tolerance (TOLERANCE; a half-precision K/V cache of an
f32 row: HALF_TOLERANCE; an f16 or bf16 row: attn.h's bound, as for the
torch peer) is dropped, and if none is left the configuration is an error
(the notes say why). With more than one left, each is timed for a
short trial (TRIAL_CALLS calls) and the fastest is the one timed in the
rounds: the peer's number is the engine's best for the case, and the result
line names it (KERNEL).

An f16 row's inputs are drawn as float32 and rounded to float16 here
(half_inputs): ONNX Runtime and OpenVINO get float16 arrays and models of
float16 tensors, ggml its Q in F32 holding the rounded values and K, V in
F16 (llama.cpp's arrangement). A bf16 row's are rounded to bfloat16 and
kept in float32 arrays (NumPy has no bfloat16), which an engine that takes
bf16 rows (serve_engine's half_types: OpenVINO) turns into its own bf16
tensors. Every check is against those rounded inputs.

What the engines do not compute here (Unsupported): f64 (their attention
operators are float32 or lower), bf16 but where an engine says so (ONNX
Runtime's CPU operators and ggml's shim take none; PyTorch takes those
rows), backward (inference engines), and the decode loop (one call per
configuration), except where an engine serves it (serve_engine's
loop_case_of: OpenVINO's stateful model).
"""
import statistics
import time

import numpy as np

import peer_common
import sdpa_peer_protocol

TOLERANCE = 1e-4
HALF_TOLERANCE = 2e-2
TRIAL_CALLS = 3


def require_supported(c, loops=False, half_types=("f16",)):
    """Unsupported for what no engine peer computes (above); loops: the
    engine runs decode loops (OpenVINO's stateful model); half_types: the
    half types it takes."""
    if c.half and c.dtype not in half_types:
        raise peer_common.Unsupported(f"{c.dtype}: this engine takes no half-precision "
                                      f"{c.dtype} inputs here (f32 and {', '.join(half_types)})")
    if c.dtype not in ("f32",) + tuple(half_types):
        raise peer_common.Unsupported(f"{c.dtype}: the engines' attention operators have none "
                                      f"(f32 and {', '.join(half_types)})")
    if c.op != "forward":
        raise peer_common.Unsupported("forward only: an inference engine")
    if c.loop and not loops:
        raise peer_common.Unsupported("one call per configuration (no decode loop)")


def element(c):
    """The NumPy type of the engines' arrays for the row: float16 for f16,
    else float32 (a bf16 row's values, rounded, in float32)."""
    return np.float16 if c.dtype == "f16" else np.float32


def bf16_rounded(X):
    """float32 X rounded to the nearest bfloat16 (ties to even; NaN and inf
    kept), still float32."""
    bits = np.ascontiguousarray(X, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(X), X, out).astype(np.float32)


def half_inputs(c, inputs):
    """(Q, K, V, bias) of a half row rounded to its type (the bias too: the
    engines take masks in the inputs' type): float16 arrays for f16,
    float32 arrays of bfloat16 values for bf16; other rows as they are."""
    if c.dtype == "f16":
        return tuple(None if X is None else X.astype(np.float16) for X in inputs)
    if c.dtype == "bf16":
        return tuple(None if X is None else bf16_rounded(X) for X in inputs)
    return inputs


def plain_causal(c):
    """Whether the configuration is a causal square (Tq == Tk) with every key
    there and no window: top-left and bottom-right alignment agree, and an
    engine's own causal flag says it."""
    return c.causal and c.Tq == c.Tk and c.full_lengths and c.window == 0 and c.mask == "none"


def additive_mask(c, bias):
    """(B, 1 or NH, Tq or 1, Tk) in the row's element type: 0 where visible,
    -inf elsewhere, plus the bias (MASK full); None when every key is visible
    and there is no bias."""
    seen = sdpa_peer_protocol.visibility(c)
    if bias is None and bool(seen.all()):
        return None
    kind = element(c)
    mask = np.where(seen, kind(0), kind(-np.inf)).astype(kind)
    if bias is not None:
        mask = (mask + bias).astype(kind)
    return mask


def mask_text(kind, mask):
    return "none" if mask is None else kind + str(tuple(mask.shape)).replace(" ", "")


def candidates_built(builds, notes):
    """The candidates that builds, [(name, build)], make: build() returns a
    Candidate, or None for a case it does not express; an exception is the
    installed engine lacking the operator, added to notes. None made:
    Unsupported, with the last notes."""
    made = []
    for name, build in builds:
        try:
            candidate = build()
        except Exception as exc:  # the installed engine lacks the operator
            notes.append(f"{name}: {type(exc).__name__}: {exc}"[:160])
            continue
        if candidate:
            made.append(candidate)
    if not made:
        raise peer_common.Unsupported("no operator expresses it: " + "; ".join(notes[-3:]))
    return made


class Candidate:
    """One way of an engine to compute the configuration. before (None:
    nothing) runs before each timed call, outside the timing (a stateful
    cache brought back to the configuration's length), and before the
    cold-cache flush."""

    def __init__(self, kernel, mask, call, half=False, before=None, out_dtype=None,
                 widen=None):
        self.kernel, self.mask, self.call, self.half = kernel, mask, call, half
        self.before = before
        self.out_dtype = out_dtype  # None: the dtype of what call returns
        self.widen = widen  # None, or what makes call's output an array to check (untimed)


class EngineCase:
    """A configuration on an engine: the candidates checked, the fastest kept.
    check_of(out) (None: the sdpa reference of inputs, (Q, K, V, bias)) is
    a candidate's (check error, bound or None: the usual tolerance);
    engine_projected_cases.py passes its own."""

    def __init__(self, c, inputs, candidates, flush, threads, check_of=None):
        self.c, self.flush, self.threads = c, flush, threads
        if check_of is None:
            Q, K, V, bias = inputs

            def check_of(out):
                return sdpa_peer_protocol.reference_check(c, Q, K, V, bias, out)
        kept, notes = [], []
        for candidate in candidates:
            try:
                out = candidate.call()
                if candidate.widen is not None:
                    out = candidate.widen(out)
                error, bound = check_of(out)
            except Exception as exc:  # an operator the engine refuses for this case
                notes.append(f"{candidate.kernel}: {type(exc).__name__}: {exc}"[:200])
                continue
            tolerance = bound if bound is not None else (
                HALF_TOLERANCE if candidate.half else TOLERANCE)
            if not error <= tolerance:
                notes.append(f"{candidate.kernel}: check error {error:.2e} > {tolerance:.1e}")
                continue
            kept.append((candidate, error, candidate.out_dtype or str(np.asarray(out).dtype)))
        if not kept:
            raise RuntimeError("no operator passed the check: " + "; ".join(notes))
        if len(kept) > 1:
            kept.sort(key=lambda chosen: self.trial(chosen[0]))
        self.chosen, self.error, self.out_dtype = kept[0]
        self.kernel = self.chosen.kernel
        self.description = self.chosen.mask

    def before_of(self, candidate):
        """The untimed work before each of candidate's calls (None: nothing)."""
        steps = [f for f in (candidate.before, self.flush.before()) if f is not None]
        if len(steps) < 2:
            return steps[0] if steps else None
        return lambda: [f() for f in steps]

    def trial(self, candidate):
        samples = []
        before = self.before_of(candidate)
        for _ in range(TRIAL_CALLS):
            if before:
                before()
            start = time.perf_counter()
            candidate.call()
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    def block(self, policy, first):
        del first  # the policy has the warmup
        samples, _ = peer_common.time_samples(self.chosen.call, policy,
                                              self.before_of(self.chosen))
        return samples

    def check(self):
        """(the check's error, taken before the timing; the output's dtype)."""
        return self.error, self.out_dtype


def serve_engine(header_lines, candidates_of, args, threads, loop_case_of=None,
                 half_types=("f16",)):
    """Serves the configurations: candidates_of(c, inputs) lists an engine's
    candidates for configuration c and its (Q, K, V, bias); loop_case_of(c,
    flush) (None: decode loops are unsupported) makes a decode loop's case,
    with EngineCase's block, check, description, threads and kernel;
    half_types: the half types whose rows the engine takes."""
    flushes = {}

    def make_case(c):
        require_supported(c, loops=loop_case_of is not None, half_types=half_types)
        flush = flushes.setdefault(c.cache, sdpa_peer_protocol.Flush(args.flush_mib,
                                                                    c.cache == "cold"))
        if c.loop:
            return loop_case_of(c, flush)
        inputs = half_inputs(c, sdpa_peer_protocol.Inputs(c, args.seed).qkv_bias())
        return EngineCase(c, inputs, candidates_of(c, inputs), flush, threads)

    sdpa_peer_protocol.serve_in_rounds(header_lines, make_case, args)
