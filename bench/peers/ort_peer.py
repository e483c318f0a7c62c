#!/usr/bin/env python3
"""ONNX Runtime peer of attn-bench (the run command: projected heads).

Times ONNX Runtime on the shapes attn-bench sends (the protocol:
peer_common.py): one ONNX graph per candidate, the weights Wq, Wk, Wv (and
Wo) its initializers and X its input, run by an InferenceSession on the CPU
execution provider with intra_op_num_threads = --threads and
inter_op_num_threads = 1 (ort_sdpa_peer.session_of), X and out bound once
(io_binding). The candidates, each checked against the float64 reference
before any timing, the fastest kept (engine_projected_cases.py):
  com.microsoft.Attention   the fused operator of BERT/GPT-2 exports: X and
      the weights [Wq Wk Wv] (C, 3*NH*hs) in, every head out (unidirectional
      for causal)
  MatMul + com.microsoft.MultiHeadAttention   three products, then the
      operator on (B, T, NH*hs) rows
  MatMul + com.microsoft.GroupQueryAttention  causal shapes (it is always
      causal), NH key/value heads, no past
  MatMul + Attention (ONNX opset 23)   (B, T, NH*hs) inputs with q_num_heads
      and kv_num_heads, is_causal; where the installed onnxruntime has it
then MatMul Wo when the shape has an output projection. f32 forward only.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()

np, ort, onnx = peer_common.import_or_unavailable("ort", "numpy", "onnxruntime", "onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import engine_projected_cases as projected  # noqa: E402
import engine_sdpa_cases as engine  # noqa: E402
from ort_sdpa_peer import header_lines, session_of  # noqa: E402

FLOAT = TensorProto.FLOAT


def graph_call(shape, arrays, heads_nodes, threads, opsets):
    """The session of X -> [heads_nodes: 'X' and initializers -> 'Y'] -> out
    (Y Wo, or Y) and its bound call returning out (B, T, width)."""
    X, Wq, Wk, Wv, Wo = arrays[:5]
    D = shape.NH * shape.hs
    width = shape.C if Wo is not None else D
    nodes, initializers = heads_nodes(Wq, Wk, Wv)
    if Wo is not None:
        initializers.append(numpy_helper.from_array(Wo, "Wo"))
        nodes.append(helper.make_node("MatMul", ["Y", "Wo"], ["out"]))
    else:
        nodes.append(helper.make_node("Identity", ["Y"], ["out"]))
    graph = [helper.make_tensor_value_info("X", FLOAT, list(X.shape))]
    outputs = [helper.make_tensor_value_info("out", FLOAT, [shape.B, shape.T, width])]
    session = session_of(nodes, graph, outputs, opsets, threads, initializers)
    binding = session.io_binding()
    x = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(X))
    binding.bind_ortvalue_input("X", x)
    out = np.empty((shape.B, shape.T, width), dtype=np.float32)
    binding.bind_output("out", "cpu", 0, np.float32, list(out.shape), out.ctypes.data)

    def call():
        session.run_with_iobinding(binding)
        return out
    call.keep = (session, binding, x, out)
    return call


def projections(Wq, Wk, Wv):
    nodes = [helper.make_node("MatMul", ["X", w], [name])
             for w, name in (("Wq", "q"), ("Wk", "k"), ("Wv", "v"))]
    initializers = [numpy_helper.from_array(W, name)
                    for W, name in ((Wq, "Wq"), (Wk, "Wk"), (Wv, "Wv"))]
    return nodes, initializers


def fused(shape):
    def heads(Wq, Wk, Wv):
        W = np.ascontiguousarray(np.concatenate([Wq, Wk, Wv], axis=1))
        node = helper.make_node("Attention", ["X", "W"], ["Y"], domain="com.microsoft",
                                num_heads=shape.NH, unidirectional=int(shape.causal))
        return [node], [numpy_helper.from_array(W, "W")]
    return heads


def multi_head(shape):
    def heads(Wq, Wk, Wv):
        nodes, initializers = projections(Wq, Wk, Wv)
        nodes.append(helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["Y"],
                                      domain="com.microsoft", num_heads=shape.NH,
                                      unidirectional=int(shape.causal)))
        return nodes, initializers
    return heads


def group_query(shape):
    def heads(Wq, Wk, Wv):
        nodes, initializers = projections(Wq, Wk, Wv)
        initializers += [numpy_helper.from_array(np.full(shape.B, shape.T - 1, np.int32),
                                                 "seqlens_k"),
                         numpy_helper.from_array(np.array(shape.T, np.int32), "total")]
        nodes.append(helper.make_node("GroupQueryAttention",
                                      ["q", "k", "v", "", "", "seqlens_k", "total"],
                                      ["Y", "present_key", "present_value"],
                                      domain="com.microsoft", num_heads=shape.NH,
                                      kv_num_heads=shape.NH))
        return nodes, initializers
    return heads


def onnx_attention(shape):
    def heads(Wq, Wk, Wv):
        nodes, initializers = projections(Wq, Wk, Wv)
        nodes.append(helper.make_node("Attention", ["q", "k", "v"], ["Y"],
                                      is_causal=int(shape.causal), q_num_heads=shape.NH,
                                      kv_num_heads=shape.NH))
        return nodes, initializers
    return heads


def main():
    args = peer_common.parse_arguments(__doc__.split("\n\n")[0])
    threads = max(1, args.threads)
    notes = []
    microsoft = [("", 21), ("com.microsoft", 1)]

    def candidates_of(shape, arrays):
        mask = "unidirectional" if shape.causal else "none"
        offers = [("com.microsoft.Attention", fused(shape), microsoft, mask),
                  ("MatMul+com.microsoft.MultiHeadAttention", multi_head(shape), microsoft,
                   mask),
                  ("MatMul+Attention-23", onnx_attention(shape), [("", 23)],
                   "is_causal" if shape.causal else "none")]
        if shape.causal:
            offers.insert(2, ("MatMul+com.microsoft.GroupQueryAttention", group_query(shape),
                              microsoft, "causal"))

        def build(kernel, heads, opsets, words):
            return lambda: engine.Candidate(
                kernel, words, graph_call(shape, arrays, heads, threads, opsets))
        return engine.candidates_built([(offer[0], build(*offer)) for offer in offers], notes)

    impl = ("ONNX Runtime CPU execution provider: X (B,T,C) in, the weights as initializers; "
            "the fastest of com.microsoft Attention (fused QKV), MatMul + MultiHeadAttention, "
            "MatMul + GroupQueryAttention (causal) and MatMul + ONNX Attention (opset 23) that "
            "passes the check (KERNEL per row), then MatMul Wo; X and out bound once "
            "(io_binding)")
    projected.serve_projected(header_lines(impl, threads), candidates_of, args, threads)


if __name__ == "__main__":
    main()
