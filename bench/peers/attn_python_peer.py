#!/usr/bin/env python3
"""attn's own Python package as a peer of attn-bench (--peers python).

Times attn through its binding (python/: ``attn.Plan`` over ctypes) on the
shapes attn-bench sends, with attn-bench's repeat policy: the same library
and kernels as the C rows beside it, so python_median_ms - attn_median_ms is
what the binding costs per call (its argument checks and the ctypes call),
and the ratio xpython is about 1 wherever a call is long. The protocol, the
inputs and the repeat policy are described in peer_common.py, next to this
script.

Per shape: one plan, as attn-bench's own-engine plan row makes it
(ATTN_INFERENCE for a forward, the default path, ``set_threads(--threads)``:
the plan's own threads), created before the timing; OP=forward times
``plan.forward(X, Wq, Wk, Wv, Wo, out=out)`` (the output array allocated
once), OP=backward ``plan.forward`` then ``plan.backward(grads=...)`` into
gradient arrays allocated once (two binding calls per timed call, as the C
row makes two library calls). Compare with the C row of engine=own.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()

np, attn = peer_common.import_or_unavailable("attn (./attn.sh python installs it)",
                                             "numpy", "attn")


def main():
    args = peer_common.parse_arguments(__doc__.split("\n\n")[0])

    def make_case(shape):
        X, Wq, Wk, Wv, Wo, dout = peer_common.make_inputs(np, shape, args.seed)
        dtype = np.float32 if shape.dtype == "f32" else np.float64
        backward = shape.op == "backward"
        plan = attn.Plan(shape.B, shape.T, shape.C, shape.NH, shape.hs, dtype=dtype,
                         causal=bool(shape.causal), inference=not backward,
                         threads=args.threads)
        width = shape.C if Wo is not None else shape.NH * shape.hs
        out = np.empty((shape.B, shape.T, width), dtype)
        if backward:
            grads = attn.Gradients(np.empty_like(X), np.empty_like(Wq), np.empty_like(Wk),
                                   np.empty_like(Wv), None if Wo is None else np.empty_like(Wo))

            def call():
                plan.forward(X, Wq, Wk, Wv, Wo, out=out)
                return plan.backward(X, Wq, Wk, Wv, Wo, dout, grads=grads).dX
        else:
            def call():
                return plan.forward(X, Wq, Wk, Wv, Wo, out=out)
        return peer_common.TimedCase(call, lambda result: result.dtype.name, close=plan.close)

    peer_common.serve_in_rounds([
        f"info attn={attn.__version__} numpy={np.__version__} python={sys.version.split()[0]}",
        f"blas attn's own kernels on the plan's threads threads={args.threads}",
        "impl attn.Plan forward/backward through the Python package (ctypes over its "
        "bundled libattn): the C call plus the binding",
    ], make_case, args)


if __name__ == "__main__":
    main()
