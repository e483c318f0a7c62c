#!/usr/bin/env python3
"""NumPy peer of attn-bench.

Times the course's reference attention head -- ``softmax`` and
``self_attention`` below, the lesson's code unchanged -- on the shapes
attn-bench sends, with attn-bench's repeat policy, in one process per thread
count. The protocol, the inputs and the repeat policy are described in
peer_common.py, next to this script.

Several heads (NH > 1) call the lesson's self_attention once per head on
that head's columns of Wq, Wk, Wv, concatenate the heads and multiply by Wo
when there is one. The lesson has no backward, so OP=backward is answered
'unsupported'.

OUT_DTYPE is the dtype of the returned ``out``: with NumPy >= 2 the lesson's
``/ np.sqrt(hs)`` (a float64 scalar) promotes float32 scores to float64, so
for f32 the softmax and ``weights @ V`` run in double.

With --float32 (attn-bench's numpy32 peer) each head is
``self_attention_float32`` instead: the same computation, the scores divided
by sqrt(hs) as a scalar of their own dtype, so f32 stays float32 throughout
(NumPy's output float32). f64 shapes are then answered 'unsupported': the
lesson's code already keeps float64 (the numpy peer times it).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()  # before NumPy loads its BLAS

np, = peer_common.import_or_unavailable("numpy", "numpy")


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


def self_attention_float32(X, Wq, Wk, Wv, causal=False):
    """The lesson's self_attention with one change: sqrt(hs) is a scalar of
    the scores' dtype (the lesson's np.sqrt(hs) is a float64 scalar, which
    NumPy 2 lets promote float32 scores). The mask's -1e9 is a Python float,
    which NumPy casts to the scores' dtype, so float32 stays float32."""
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.transpose(0, 2, 1) / Q.dtype.type(np.sqrt(Q.shape[-1]))
    if causal:
        T = scores.shape[1]
        scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -1e9, scores)
    return softmax(scores, axis=-1) @ V, None


def attention(head, X, Wq, Wk, Wv, Wo, NH, causal):
    """NH heads (the lesson's self_attention or its float32 variant) side by
    side, then Wo (when given)."""
    if NH == 1:
        out = head(X, Wq, Wk, Wv, causal=causal)[0]
    else:
        hs = Wq.shape[1] // NH
        columns = [slice(h * hs, (h + 1) * hs) for h in range(NH)]
        out = np.concatenate([head(X, Wq[:, c], Wk[:, c], Wv[:, c], causal=causal)[0]
                              for c in columns], axis=-1)
    return out @ Wo if Wo is not None else out


def blas_threads():
    """Thread count of the BLAS NumPy loaded, or 'unknown'."""
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


def lesson_promotes_float32():
    """Whether the lesson's / np.sqrt(hs) turns float32 scores into float64
    (NumPy >= 2: a NumPy float64 scalar is no longer cast down)."""
    return (np.ones(1, dtype=np.float32) / np.sqrt(4)).dtype != np.float32


def add_float32_flag(parser):
    parser.add_argument("--float32", action="store_true",
                        help="the float32-faithful variant (attn-bench's numpy32 peer)")


def main():
    args = peer_common.parse_arguments(__doc__.split("\n\n")[0], add_float32_flag)
    head = self_attention_float32 if args.float32 else self_attention

    def make_case(shape):
        if shape.op != "forward":
            raise peer_common.Unsupported("the lesson's NumPy reference has no backward")
        if args.float32 and shape.dtype != "f32":
            raise peer_common.Unsupported("f64: the lesson's code keeps float64 already "
                                          "(see the numpy peer)")
        X, Wq, Wk, Wv, Wo, _ = peer_common.make_inputs(np, shape, args.seed)
        return peer_common.TimedCase(
            lambda: attention(head, X, Wq, Wk, Wv, Wo, shape.NH, bool(shape.causal)),
            lambda out: out.dtype.name)

    if args.float32:
        impl = ("the lesson's self_attention per head with sqrt(hs) as a float32 scalar: "
                "float32 throughout (NumPy matmul, softmax, mask -1e9)")
    else:
        impl = ("the lesson's self_attention per head, unchanged (NumPy matmul, softmax, "
                "mask -1e9); " + ("its / np.sqrt(hs) promotes f32 scores to float64"
                                  if lesson_promotes_float32() else "f32 stays float32"))
    peer_common.serve_in_rounds([
        f"info numpy={np.__version__} python={sys.version.split()[0]}",
        f"blas {blas_description()} threads={blas_threads()}",
        f"impl {impl}",
    ], make_case, args)


if __name__ == "__main__":
    main()
