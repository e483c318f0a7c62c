#!/usr/bin/env python3
"""ggml peer of attn-bench (the run command: projected heads).

Times the projected heads on ggml's CPU backend as a llama.cpp layer
computes them (the protocol: peer_common.py), through
bench/peers/ggml/ggml_sdpa_shim.c's attn_ggml_projected_* (loaded with
ctypes; ./attn.sh peers builds it and ggml's CPU library:
ggml_sdpa_peer.py): ggml_mul_mat of X by Wq, Wk, Wv (F32 weights stored
transposed, as llama.cpp stores them), the heads viewed permuted,
ggml_flash_attn_ext (an F16 causal mask for causal shapes, F32
accumulation), ggml_mul_mat by Wo. The graph is built once per shape with
the weights in it, X set once; a timed call is ggml_graph_compute on
--threads threads. Checked against the float64 reference before timing
(engine_projected_cases.py). f32 forwards only.

--shim PATH: the shim library (as ggml_sdpa_peer.py's).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()

(np,) = peer_common.import_or_unavailable("ggml", "numpy")

import engine_projected_cases as projected  # noqa: E402
import engine_sdpa_cases as engine  # noqa: E402
from ggml_sdpa_peer import add_shim_argument, header_lines, load_shim  # noqa: E402


class Graph:
    """The shape's ggml graph, its weights and X set."""

    def __init__(self, shim, shape, arrays, threads):
        X, Wq, Wk, Wv, Wo = arrays[:5]
        self.shim = shim
        self.weights = [None if W is None else np.ascontiguousarray(W.T, dtype=np.float32)
                        for W in (Wq, Wk, Wv, Wo)]
        self.handle = shim.attn_ggml_projected_create(
            shape.B, shape.T, shape.C, shape.NH, shape.hs, int(shape.causal), threads,
            *(None if W is None else W.ctypes.data for W in self.weights))
        if not self.handle:
            raise MemoryError("ggml_init failed")
        self.X = np.ascontiguousarray(X, dtype=np.float32)
        shim.attn_ggml_projected_set_x(self.handle, self.X.ctypes.data)
        width = shape.C if Wo is not None else shape.NH * shape.hs
        out = shim.attn_ggml_projected_out(self.handle)
        self.out = np.ctypeslib.as_array(out, shape=(shape.B * shape.T * width,)).reshape(
            shape.B, shape.T, width)

    def __call__(self):
        status = self.shim.attn_ggml_projected_run(self.handle)
        if status != 0:
            raise RuntimeError(f"ggml_graph_compute returned {status}")
        return self.out

    def __del__(self):
        if getattr(self, "handle", None):
            self.shim.attn_ggml_projected_destroy(self.handle)


def main():
    args = peer_common.parse_arguments(__doc__.split("\n\n")[0], add_shim_argument)
    threads = max(1, args.threads)
    shim = load_shim(args.shim)
    if not hasattr(shim, "attn_ggml_projected_create"):
        print(f"unavailable ggml: {args.shim} predates the projected heads "
              "(./attn.sh peers rebuilds it)", flush=True)
        return

    def candidates_of(shape, arrays):
        return [engine.Candidate("ggml_mul_mat+ggml_flash_attn_ext",
                                 "f16-causal" if shape.causal else "none",
                                 Graph(shim, shape, arrays, threads))]

    impl = ("ggml's CPU backend as a llama.cpp layer: ggml_mul_mat by the F32 weights, the "
            "heads permuted, ggml_flash_attn_ext (F16 causal mask, F32 accumulation), "
            "ggml_mul_mat by Wo; the graph built once, computed with n_threads")
    projected.serve_projected(header_lines(args.shim, impl, threads), candidates_of, args,
                              threads)


if __name__ == "__main__":
    main()
