"""What the inference-engine peers of the run command share (ort_peer.py,
openvino_peer.py, ggml_peer.py): the projected heads' float64 reference, and the choice
among an engine's ways of computing a shape (engine_sdpa_cases.EngineCase,
checked against this reference instead of the sdpa one).

A shape of the run command (peer_common.py) is projected attention:
  Q, K, V = X Wq, X Wk, X Wv (B, T, NH*hs), NH heads of hs
  Y_h = softmax(Q_h K_h^T / sqrt(hs), causal: keys j <= t) V_h
  out = Y Wo (B, T, C) with an output projection (WO 1), else Y
with the weights as the engine's constants (a deployed model's form) and X
its input, bound once; a timed call is the engine's run alone.

The check, before any timing: out of the first and the last sequence, at
CHECK_ROWS query positions spread evenly over [0, T) (both ends), against
the formula above in float64 on the f32 inputs; error = max |out - ref| /
max |ref| over those rows, within engine_sdpa_cases.TOLERANCE (1e-4, the
run command's own f32 forward tolerance).

What the engines do not compute here (Unsupported): f64 (their attention
operators are float32), backward (inference engines) and attention dropout
(attn-bench sends dropout shapes to the torch peer alone).
"""
import math

import numpy as np

import engine_sdpa_cases as engine
import peer_common
import sdpa_peer_protocol

CHECK_ROWS = 16


def require_supported(shape):
    if shape.dtype != "f32":
        raise peer_common.Unsupported("f32 only: the engines' attention operators have no f64")
    if shape.op != "forward":
        raise peer_common.Unsupported("forward only: an inference engine")
    if shape.dropout:
        raise peer_common.Unsupported("no attention dropout: an inference engine")


def reference_error(shape, arrays, out):
    """max |out - ref| / max |ref| over the checked rows (above); out is
    (B, T, C or NH*hs) as the engine returned it."""
    X, Wq, Wk, Wv, Wo = (None if a is None else a.astype(np.float64) for a in arrays[:5])
    NH, hs, T = shape.NH, shape.hs, shape.T
    rows = sorted({round(i * (T - 1) / max(1, CHECK_ROWS - 1)) for i in range(CHECK_ROWS)})
    worst, largest = 0.0, 0.0
    for b in sorted({0, shape.B - 1}):
        K = (X[b] @ Wk).reshape(T, NH, hs)
        V = (X[b] @ Wv).reshape(T, NH, hs)
        Q = (X[b, rows] @ Wq).reshape(len(rows), NH, hs)
        Y = np.empty((len(rows), NH, hs))
        for i, t in enumerate(rows):
            seen = t + 1 if shape.causal else T
            scores = np.einsum("hd,jhd->hj", Q[i], K[:seen]) / math.sqrt(hs)
            weights = np.exp(scores - scores.max(axis=1, keepdims=True))
            weights /= weights.sum(axis=1, keepdims=True)
            Y[i] = np.einsum("hj,jhd->hd", weights, V[:seen])
        want = Y.reshape(len(rows), NH * hs)
        if Wo is not None:
            want = want @ Wo
        got = np.asarray(out, dtype=np.float64)[b, rows]
        if not np.all(np.isfinite(got)):
            return math.inf
        worst = max(worst, float(np.max(np.abs(got - want))))
        largest = max(largest, float(np.max(np.abs(want))))
    return worst / largest if largest > 0 else worst


def serve_projected(header_lines, candidates_of, args, threads):
    """Serves the run command's shapes: candidates_of(shape, arrays) lists
    the engine's engine_sdpa_cases.Candidate for a shape and its NumPy
    inputs (peer_common.make_inputs); each is checked here before the
    fastest is timed in the rounds. The result line's further words: the
    check's error, the mask the engine got, the threads and the kernel."""
    warm = sdpa_peer_protocol.Flush(0, False)

    def make_case(shape):
        require_supported(shape)
        arrays = peer_common.make_inputs(np, shape, args.seed)
        return engine.EngineCase(shape, None, candidates_of(shape, arrays), warm, threads,
                                 check_of=lambda out: (reference_error(shape, arrays, out), None))

    def more_words(case, error):
        return [f"{error:.3e}", case.description, str(case.threads), case.kernel]

    peer_common.serve_in_rounds(header_lines, make_case, args, more_words=more_words)
