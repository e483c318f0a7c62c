#!/usr/bin/env python3
"""OpenVINO peer of attn-bench sdpa.

Times OpenVINO's ScaledDotProductAttention operator (opset 13) on the
configurations attn-bench sdpa sends (the protocol: sdpa_peer_protocol.py):
a model of the one operator made with openvino's opset Python API, compiled
for the CPU plugin with INFERENCE_PRECISION_HINT f32 (so that it does not
drop to bf16 where the CPU has it), INFERENCE_NUM_THREADS = --threads,
NUM_STREAMS 1 and the LATENCY hint, run by one infer request whose input
tensors share the arrays' memory. Inputs come in the configuration's layout:
bhsd as (B, H, T, d) parameters, bshd as (B, T, H, d) parameters transposed
in the model (as a converted model does; OpenVINO fuses the transposes).
Grouped heads (NH_kv < NH), the candidates (engine_sdpa_cases.py: each
checked against the float64 reference before any timing, the fastest kept):
  repeat     K and V repeated to NH heads in the model (Broadcast, Reshape),
             4-D SDPA
  broadcast  Q as (B, NH_kv, NH/NH_kv, Tq, hs) against K, V as
             (B, NH_kv, 1, Tk, d): 5-D SDPA, the heads broadcast
causal=True for causal squares (Tq == Tk, every key, no window), otherwise
an additive float attention_mask (0 / -inf, plus the bias). A decode step is
the stateless form: the K/V cache is an input of every call; the stateful
form (ReadValue/Assign on a cache inside the model) is not built.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()

np, ov = peer_common.import_or_unavailable("openvino", "numpy", "openvino")
try:
    import openvino.opset13 as ops
except ImportError:  # older packages keep the opsets under openvino.runtime
    ops = peer_common.import_or_unavailable("openvino", "openvino.runtime.opset13")[0]

import engine_sdpa_cases as engine  # noqa: E402
import sdpa_peer_protocol  # noqa: E402


def placed(c, X):
    """X (B, H, T, d) as the configuration's layout stores it."""
    return np.ascontiguousarray(X if c.layout == "bhsd" else X.transpose(0, 2, 1, 3))


def parameter(c, name, X):
    """The parameter of X in the layout and its (B, H, T, d) node."""
    stored = placed(c, X)
    node = ops.parameter(list(stored.shape), ov.Type.f32, name=name)
    return node, (node if c.layout == "bhsd" else ops.transpose(node, [0, 2, 1, 3]))


def constant(values):
    return ops.constant(np.array(values, dtype=np.int64))


def build(c, Q, K, V, mask, form):
    """The model: SDPA on q, k, v (and the mask), out as (B, NH, Tq, hs_v)."""
    q_param, q = parameter(c, "q", Q)
    k_param, k = parameter(c, "k", K)
    v_param, v = parameter(c, "v", V)
    params = [q_param, k_param, v_param]
    group = c.NH // c.NH_kv
    if form == "repeat" and group > 1:
        def repeat(node, d):
            wide = ops.broadcast(ops.unsqueeze(node, constant([2])),
                                 constant([c.B, c.NH_kv, group, c.Tk, d]))
            return ops.reshape(wide, constant([c.B, c.NH, c.Tk, d]), False)
        k, v = repeat(k, c.hs), repeat(v, c.hs_v)
    elif form == "broadcast":
        q = ops.reshape(q, constant([c.B, c.NH_kv, group, c.Tq, c.hs]), False)
        k, v = (ops.unsqueeze(node, constant([2])) for node in (k, v))
    scale = ops.constant(np.float32(1.0 / c.hs ** 0.5))
    causal = engine.plain_causal(c)
    if mask is not None:
        m_param = ops.parameter(list(mask.shape), ov.Type.f32, name="mask")
        params.append(m_param)
        m = m_param if form != "broadcast" else ops.reshape(
            m_param, constant([mask.shape[0], mask.shape[1] if mask.shape[1] == 1 else c.NH_kv,
                               1 if mask.shape[1] == 1 else group, mask.shape[2], c.Tk]), False)
        out = ops.scaled_dot_product_attention(q, k, v, m, scale, causal=False)
    else:
        out = ops.scaled_dot_product_attention(q, k, v, None, scale, causal=causal)
    if form == "broadcast":
        out = ops.reshape(out, constant([c.B, c.NH, c.Tq, c.hs_v]), False)
    return ov.Model([out], params, "attention")


def main():
    args = peer_common.parse_arguments(__doc__.split("\n\n")[0],
                                       sdpa_peer_protocol.add_arguments)
    threads = max(1, args.threads)
    core = ov.Core()
    config = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads,
              "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}

    def candidate(c, inputs, form):
        Q, K, V, bias = inputs
        mask = None if engine.plain_causal(c) else engine.additive_mask(c, bias)
        compiled = core.compile_model(build(c, Q, K, V, mask, form), "CPU", config)
        request = compiled.create_infer_request()
        arrays = [placed(c, X) for X in (Q, K, V)] + ([mask] if mask is not None else [])
        for i, array in enumerate(arrays):
            request.set_input_tensor(i, ov.Tensor(array, shared_memory=True))

        def call():
            request.infer()
            return request.get_output_tensor(0).data
        call.keep = (compiled, request, arrays)
        words = "causal" if mask is None and engine.plain_causal(c) else engine.mask_text(
            "float32", mask)
        return engine.Candidate(f"ScaledDotProductAttention-{form}", words, call)

    def candidates_of(c, inputs):
        forms = ["repeat", "broadcast"] if c.NH_kv < c.NH else ["heads"]
        return [candidate(c, inputs, form) for form in forms]

    probe = core.compile_model(build(sdpa_peer_protocol.Config(
        "f32 forward 1 1 1 2 2 8 8 1 0 none full warm bhsd call 0 1/1".split()),
        *(np.zeros((1, 1, 2, 8), np.float32),) * 3, None, "heads"), "CPU", config)
    threads_used = int(probe.get_property("INFERENCE_NUM_THREADS"))
    precision = str(probe.get_property("INFERENCE_PRECISION_HINT")).replace(
        "<Type: '", "").replace("'>", "")
    impl = ("OpenVINO ScaledDotProductAttention (opset 13) compiled for CPU, f32 precision hint; "
            "grouped heads: the faster of K/V repeated in the model and 5-D broadcast heads "
            "(KERNEL per row); causal flag for causal squares, else an additive mask; "
            "decode: the stateless form (the cache an input; no ReadValue/Assign state)")
    lines = [f"info openvino={ov.__version__} python={sys.version.split()[0]} "
             f"numpy={np.__version__}",
             f"blas CPU plugin ({core.get_property('CPU', 'FULL_DEVICE_NAME')}); "
             f"INFERENCE_PRECISION_HINT={precision} INFERENCE_NUM_THREADS={threads_used} "
             f"NUM_STREAMS=1; threads={threads_used}",
             f"impl {impl}"]
    engine.serve_engine(lines, candidates_of, args, threads_used)


if __name__ == "__main__":
    main()
