#!/usr/bin/env python3
"""ONNX Runtime peer of attn-bench sdpa.

Times ONNX Runtime's attention operators on the configurations attn-bench
sdpa sends (the protocol: sdpa_peer_protocol.py), one small ONNX graph per
operator made with the onnx package's helper API, run by an
InferenceSession on the CPU execution provider with intra_op_num_threads =
--threads and inter_op_num_threads = 1 (sequential execution). The
candidates, each offered where it can express the case, the fastest kept
(engine_sdpa_cases.py: every one checked against the float64 reference
before any timing):
  com.microsoft GroupQueryAttention   grouped heads natively, always causal:
      a prefill (Tq == Tk, every key, no window, no mask) without a past; a
      decode step (Tq == 1, no mask, no window, key lengths as seqlens_k)
      with K and V as its past (B, NH_kv, Tk, hs) and the step's own token
      as key and value
  com.microsoft MultiHeadAttention    NH_kv < NH: K and V repeated to NH
      heads, untimed; causal squares as unidirectional, everything else as
      an additive attention_bias
  Attention (ONNX opset 23)           grouped heads natively (q_num_heads,
      kv_num_heads), is_causal for causal squares, else a boolean or
      additive attn_mask; where the installed onnxruntime implements it
The operators take their own layouts ((B, T, H*d) for the com.microsoft
ones, (B, H, T, d) for Attention): the inputs are given in them (untimed),
whatever the configuration's layout. Inputs are bound once (io_binding),
so a timed call is session.run_with_iobinding alone. An f16 row's graph has
float16 inputs, mask and output (tensor(float16), as its operators take).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()

np, ort, onnx = peer_common.import_or_unavailable("ort", "numpy", "onnxruntime", "onnx")
from onnx import TensorProto, helper  # noqa: E402

import engine_sdpa_cases as engine  # noqa: E402
import sdpa_peer_protocol  # noqa: E402


def float_type(c):
    """The graph's float tensor type for the row: FLOAT16 (f16) or FLOAT."""
    return TensorProto.FLOAT16 if c.dtype == "f16" else TensorProto.FLOAT


def session_of(nodes, inputs, outputs, opsets, threads, initializers=()):
    graph = helper.make_graph(nodes, "attention", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = min(model.ir_version, 10)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def header_lines(impl, threads):
    """The info, blas and impl lines of an ONNX Runtime peer (ort_peer.py's too)."""
    return [f"info onnxruntime={ort.__version__} onnx={onnx.__version__} "
            f"python={sys.version.split()[0]} numpy={np.__version__}",
            f"blas CPUExecutionProvider (of {','.join(ort.get_available_providers())}); "
            f"intra_op_num_threads={threads} inter_op_num_threads=1; threads={threads}",
            f"impl {impl}"]


def value_info(name, array):
    type_ = {np.dtype(np.bool_): TensorProto.BOOL, np.dtype(np.int32): TensorProto.INT32,
             np.dtype(np.float16): TensorProto.FLOAT16}.get(array.dtype, TensorProto.FLOAT)
    return helper.make_tensor_value_info(name, type_, list(array.shape))


def bound_call(session, feeds, output_shape, dtype, to_bhsd, shared=()):
    """A call of session on feeds bound once; returns out (output_shape, of
    dtype) as (B, NH, Tq, hs_v) via to_bhsd. shared: (input, output) names
    bound to one buffer."""
    binding = session.io_binding()
    values = {name: ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(a))
              for name, a in feeds.items()}
    for name, value in values.items():
        binding.bind_ortvalue_input(name, value)
    out = np.empty(output_shape, dtype=dtype)
    binding.bind_output("out", "cpu", 0, out.dtype, list(out.shape), out.ctypes.data)
    for input_name, output_name in shared:
        binding.bind_ortvalue_output(output_name, values[input_name])

    def call():
        session.run_with_iobinding(binding)
        return to_bhsd(out)
    call.keep = (values, binding, out)
    return call


def rows(X):
    """(B, H, T, d) -> (B, T, H*d)"""
    B, H, T, d = X.shape
    return np.ascontiguousarray(X.transpose(0, 2, 1, 3).reshape(B, T, H * d))


def from_rows(c):
    return lambda out: out.reshape(c.B, c.Tq, c.NH, c.hs_v).transpose(0, 2, 1, 3)


def gqa(c, Q, K, V, threads):
    """GroupQueryAttention, a prefill without a past or a decode step on its past."""
    prefill = engine.plain_causal(c)
    decode = c.Tq == 1 and c.mask == "none" and c.window == 0
    if not (prefill or decode):
        return None
    attrs = dict(num_heads=c.NH, kv_num_heads=c.NH_kv, scale=1.0 / c.hs ** 0.5)
    if prefill:
        feeds = {"query": rows(Q), "key": rows(K), "value": rows(V),
                 "seqlens_k": np.full(c.B, c.Tk - 1, dtype=np.int32),
                 "total_sequence_length": np.array(c.Tk, dtype=np.int32)}
        names = ["query", "key", "value", "", "", "seqlens_k", "total_sequence_length"]
        shared = ()
    else:  # the step's own token (slot L_b - 1) as key and value, K and V as the past
        last = [length - 1 for length in c.lengths]
        token = [np.stack([X[b, :, max(last[b], 0)] for b in range(c.B)])[:, :, None, :]
                 for X in (K, V)]  # (B, NH_kv, 1, d)
        feeds = {"query": rows(Q), "key": rows(token[0]), "value": rows(token[1]),
                 "past_key": K.copy(), "past_value": V.copy(),
                 "seqlens_k": np.array(last, dtype=np.int32),
                 "total_sequence_length": np.array(max(c.lengths), dtype=np.int32)}
        names = ["query", "key", "value", "past_key", "past_value", "seqlens_k",
                 "total_sequence_length"]
        shared = (("past_key", "present_key"), ("past_value", "present_value"))
        if min(c.lengths) < 1:
            return None
    node = helper.make_node("GroupQueryAttention", names, ["out", "present_key", "present_value"],
                            domain="com.microsoft", **attrs)
    kv_shape = list(feeds["past_key"].shape) if not prefill else [c.B, c.NH_kv, c.Tk, c.hs]
    kind = float_type(c)
    outputs = [helper.make_tensor_value_info("out", kind, [c.B, c.Tq, c.NH * c.hs_v]),
               helper.make_tensor_value_info("present_key", kind, kv_shape),
               helper.make_tensor_value_info("present_value", kind, kv_shape[:3] + [c.hs_v])]
    session = session_of([node], [value_info(n, feeds[n]) for n in names if n], outputs,
                         [("", 21), ("com.microsoft", 1)], threads)
    call = bound_call(session, feeds, (c.B, c.Tq, c.NH * c.hs_v), engine.element(c),
                      from_rows(c), shared)
    mask = "causal" if prefill else f"seqlens_k({c.B})"
    return engine.Candidate("com.microsoft.GroupQueryAttention", mask, call)


def mha(c, Q, K, V, bias, threads):
    """MultiHeadAttention, K and V repeated to NH heads untimed when grouped."""
    group = c.NH // c.NH_kv
    if group > 1:
        K, V = (np.repeat(X, group, axis=1) for X in (K, V))
    feeds = {"query": rows(Q), "key": rows(K), "value": rows(V)}
    names = ["query", "key", "value"]
    unidirectional = engine.plain_causal(c)
    mask = None if unidirectional else engine.additive_mask(c, bias)
    if mask is not None:
        feeds["attention_bias"] = mask
        names += ["", "", "attention_bias"]
    node = helper.make_node("MultiHeadAttention", names, ["out"], domain="com.microsoft",
                            num_heads=c.NH, unidirectional=int(unidirectional),
                            scale=1.0 / c.hs ** 0.5)
    outputs = [helper.make_tensor_value_info("out", float_type(c), [c.B, c.Tq, c.NH * c.hs_v])]
    session = session_of([node], [value_info(n, feeds[n]) for n in names if n], outputs,
                         [("", 21), ("com.microsoft", 1)], threads)
    call = bound_call(session, feeds, (c.B, c.Tq, c.NH * c.hs_v), engine.element(c),
                      from_rows(c))
    words = "unidirectional" if unidirectional else engine.mask_text("attention_bias", mask)
    return engine.Candidate("com.microsoft.MultiHeadAttention", words + (
        f",KV-repeated-x{group}" if group > 1 else ""), call)


def onnx_attention(c, Q, K, V, bias, threads):
    """ONNX Attention (opset 23) on (B, H, T, d) tensors."""
    feeds = {"Q": Q, "K": K, "V": V}
    names = ["Q", "K", "V"]
    is_causal = engine.plain_causal(c)
    if not is_causal:
        seen = sdpa_peer_protocol.visibility(c)
        mask = engine.additive_mask(c, bias) if bias is not None else (
            None if bool(seen.all()) else seen)
        if mask is not None:
            feeds["attn_mask"] = mask
            names.append("attn_mask")
    node = helper.make_node("Attention", names, ["out"], is_causal=int(is_causal),
                            q_num_heads=c.NH, kv_num_heads=c.NH_kv, scale=1.0 / c.hs ** 0.5)
    outputs = [helper.make_tensor_value_info("out", float_type(c), [c.B, c.NH, c.Tq, c.hs_v])]
    session = session_of([node], [value_info(n, feeds[n]) for n in names], outputs,
                         [("", 23)], threads)
    call = bound_call(session, feeds, (c.B, c.NH, c.Tq, c.hs_v), engine.element(c),
                      lambda out: out)
    mask = feeds.get("attn_mask")
    words = "is_causal" if is_causal else engine.mask_text(
        "none" if mask is None else "bool" if mask.dtype == np.bool_ else str(mask.dtype), mask)
    return engine.Candidate("Attention-23", words, call)


def main():
    args = peer_common.parse_arguments(__doc__.split("\n\n")[0],
                                       sdpa_peer_protocol.add_arguments)
    threads = max(1, args.threads)
    notes = []

    def candidates_of(c, inputs):
        Q, K, V, bias = inputs
        return engine.candidates_built(
            (("GroupQueryAttention", lambda: gqa(c, Q, K, V, threads)),
             ("MultiHeadAttention", lambda: mha(c, Q, K, V, bias, threads)),
             ("Attention-23", lambda: onnx_attention(c, Q, K, V, bias, threads))), notes)

    impl = ("ONNX Runtime CPU execution provider: the fastest of com.microsoft "
            "GroupQueryAttention, MultiHeadAttention and ONNX Attention (opset 23) that expresses "
            "the case and passes the check (KERNEL per row); the operators' own layouts; "
            "inputs bound once (io_binding); f16 rows in float16 tensors")
    engine.serve_engine(header_lines(impl, threads), candidates_of, args, threads)


if __name__ == "__main__":
    main()
