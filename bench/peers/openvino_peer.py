#!/usr/bin/env python3
"""OpenVINO peer of attn-bench (the run command: projected heads).

Times OpenVINO on the shapes attn-bench sends (the protocol:
peer_common.py): a model made with openvino's opset Python API, X (B, T, C)
its parameter and the weights its constants, compiled for the CPU plugin
as openvino_sdpa_peer.py compiles (INFERENCE_PRECISION_HINT f32, so that it
does not drop to bf16 where the CPU has it; INFERENCE_NUM_THREADS =
--threads, NUM_STREAMS 1, the LATENCY hint), run by one infer request whose
input shares X's memory. The model, as a converted transformer's attention
block is:
  q, k, v = MatMul(X, Wq), MatMul(X, Wk), MatMul(X, Wv)
  each Reshape (B, T, NH, hs), Transpose (B, NH, T, hs)
  ScaledDotProductAttention (opset 13; causal=True for causal shapes)
  Transpose, Reshape (B, T, NH*hs), then MatMul(., Wo) with an output projection
checked against the float64 reference before any timing
(engine_projected_cases.py). f32 forward only.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()

import engine_projected_cases as projected  # noqa: E402
import engine_sdpa_cases as engine  # noqa: E402
from openvino_sdpa_peer import compile_config, header_lines, np, ops, ov  # noqa: E402


def constant(values):
    return ops.constant(np.array(values, dtype=np.int64))


def build(shape, arrays):
    X, Wq, Wk, Wv, Wo = arrays[:5]
    B, T, NH, hs = shape.B, shape.T, shape.NH, shape.hs
    x = ops.parameter(list(X.shape), ov.Type.f32, name="X")

    def heads(W):
        rows = ops.matmul(x, ops.constant(W), False, False)
        return ops.transpose(ops.reshape(rows, constant([B, T, NH, hs]), False), [0, 2, 1, 3])
    scale = ops.constant(np.float32(1.0 / hs ** 0.5))
    y = ops.scaled_dot_product_attention(heads(Wq), heads(Wk), heads(Wv), None, scale,
                                         causal=bool(shape.causal))
    out = ops.reshape(ops.transpose(y, [0, 2, 1, 3]), constant([B, T, NH * hs]), False)
    if Wo is not None:
        out = ops.matmul(out, ops.constant(Wo), False, False)
    return ov.Model([out], [x], "projected_attention")


def main():
    args = peer_common.parse_arguments(__doc__.split("\n\n")[0])
    threads = max(1, args.threads)
    core = ov.Core()
    config = compile_config(threads)

    def candidates_of(shape, arrays):
        compiled = core.compile_model(build(shape, arrays), "CPU", config)
        request = compiled.create_infer_request()
        X = np.ascontiguousarray(arrays[0])
        request.set_input_tensor(0, ov.Tensor(X, shared_memory=True))

        def call():
            request.infer()
            return request.get_output_tensor(0).data
        call.keep = (compiled, request, X)
        return [engine.Candidate("MatMul+ScaledDotProductAttention", "causal" if shape.causal
                                 else "none", call)]

    impl = ("OpenVINO CPU plugin, f32 precision hint: X (B,T,C) in, the weights as constants; "
            "MatMul, Reshape/Transpose to heads, ScaledDotProductAttention (opset 13, causal "
            "flag), back to rows, MatMul Wo: a converted attention block")
    probe = core.compile_model(build(peer_common.parse_shape("f32 forward 0 1 2 8 1 8 0".split()),
                                     [np.zeros((1, 2, 8), np.float32)] +
                                     [np.eye(8, dtype=np.float32)] * 3 + [None]),
                               "CPU", config)
    threads_used = int(probe.get_property("INFERENCE_NUM_THREADS"))
    precision = str(probe.get_property("INFERENCE_PRECISION_HINT")).replace(
        "<Type: '", "").replace("'>", "")
    projected.serve_projected(header_lines(core, impl, precision, threads_used), candidates_of,
                              args, threads_used)


if __name__ == "__main__":
    main()
