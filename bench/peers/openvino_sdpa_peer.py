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
in the model (as a converted model does; OpenVINO fuses the transposes). An
f16 row's model has f16 parameters, mask and output (computed at the same
f32 hint), and its stateful form an f16 cache only; a bf16 row's has bf16
ones, compiled at the f32 hint and at the bf16 hint (two candidates), and
no stateful form; decode loops are run for f32 rows only.
Grouped heads (NH_kv < NH), the candidates (engine_sdpa_cases.py: each
checked against the float64 reference before any timing, the fastest kept):
  repeat     K and V repeated to NH heads in the model (Broadcast, Reshape),
             4-D SDPA
  broadcast  Q as (B, NH_kv, NH/NH_kv, Tq, hs) against K, V as
             (B, NH_kv, 1, Tk, d): 5-D SDPA, the heads broadcast
causal=True for causal squares (Tq == Tk, every key, no window), otherwise
an additive float attention_mask (0 / -inf, plus the bias).
A decode step (Tq = 1 seeing every key, no mask) has two more candidates, the
stateful form that OpenVINO's LLM pipelines use: the past K and V are
variables of the model (ReadValue, Gather by beam_idx, Concat with the
step's k and v, Assign), which the CPU plugin fuses into its SDPA with a KV
cache, kept in f32 or in f16 (KV_CACHE_PRECISION; the f16 cache is checked
against the half tolerance, as ggml's F16 K/V). The cache starts with the
first Tk - 1 keys (set before the check, untimed), so the checked call sees
exactly Tk; each timed call appends one key, and the untimed work before a
call (Candidate.before) restarts the cache (Tk - 1 keys and one untimed
step: the plugin repacks a state set from outside) once it holds Tk +
max(1, Tk/128) - 1 keys, so timed calls see Tk .. Tk + Tk/128 keys. The
stateless form (the cache an input of every call) stays a candidate.
A decode loop (SCENARIO decode-loop) runs on the stateful model alone:
LoopCase.
"""
import copy
import os
import sys
import time

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


def compile_config(threads):
    """The CPU plugin's settings of every model of the peers (openvino_peer.py's too)."""
    return {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads,
            "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}


def header_lines(core, impl, precision, threads):
    """The info, blas and impl lines of an OpenVINO peer."""
    return [f"info openvino={ov.__version__} python={sys.version.split()[0]} "
            f"numpy={np.__version__}",
            f"blas CPU plugin ({core.get_property('CPU', 'FULL_DEVICE_NAME')}); "
            f"INFERENCE_PRECISION_HINT={precision} INFERENCE_NUM_THREADS={threads} "
            f"NUM_STREAMS=1; threads={threads}",
            f"impl {impl}"]


def placed(c, X):
    """X (B, H, T, d) as the configuration's layout stores it."""
    return np.ascontiguousarray(X if c.layout == "bhsd" else X.transpose(0, 2, 1, 3))


def float_type(c):
    """The models' float element type for the row: f16, bf16 or f32."""
    return {"f16": ov.Type.f16, "bf16": ov.Type.bf16}.get(c.dtype, ov.Type.f32)


def tensor_of(c, array):
    """An input tensor of the row's type: the array's memory shared, or for
    a bf16 row (float32 arrays holding bfloat16 values) a bf16 copy."""
    if c.dtype != "bf16":
        return ov.Tensor(array, shared_memory=True)
    tensor = ov.Tensor(ov.Type.bf16, list(array.shape))
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32) >> 16
    tensor.data.view(np.uint16)[...] = bits.astype(np.uint16)
    return tensor


def widened(data):
    """A bf16 output (OpenVINO shows its bits as a float16 array) as float32."""
    return (np.asarray(data).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def parameter(c, name, X):
    """The parameter of X in the layout and its (B, H, T, d) node."""
    stored = placed(c, X)
    node = ops.parameter(list(stored.shape), float_type(c), name=name)
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
    scale = ops.convert(ops.constant(np.float32(1.0 / c.hs ** 0.5)), float_type(c))
    causal = engine.plain_causal(c)
    if mask is not None:
        m_param = ops.parameter(list(mask.shape), float_type(c), name="mask")
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


def decode_step(c):
    """Whether the stateful form computes the configuration: one query that
    sees every key (causal or not), no mask, no window, every length Tk."""
    return (c.Tq == 1 and c.Tk > 1 and c.mask == "none" and c.full_lengths
            and c.window == 0)


def build_stateful(c):
    """The decode step with the past K and V as variables, in the layout's
    order (seq axis 2 for bhsd, 1 for bshd), grouped heads repeated after the
    Concat (Unsqueeze, bidirectional Broadcast, Reshape): the pattern the CPU
    plugin fuses."""
    bhsd = c.layout == "bhsd"

    def rows(H, d, T):
        return [c.B, H, T, d] if bhsd else [c.B, T, H, d]
    group = c.NH // c.NH_kv
    kind = float_type(c)
    q = ops.parameter(rows(c.NH, c.hs, 1), kind, name="q")
    beam = ops.parameter([c.B], ov.Type.i32, name="beam_idx")
    params, sinks, variables, kv = [q], [], [], []
    for name, d in (("k", c.hs), ("v", c.hs_v)):
        new = ops.parameter(rows(c.NH_kv, d, 1), kind, name=name)
        info = ov.op.util.VariableInfo()
        info.data_shape = ov.PartialShape(rows(c.NH_kv, d, -1))
        info.data_type, info.variable_id = kind, "past_" + name
        variable = ov.op.util.Variable(info)
        past = ops.read_value(ops.constant(np.zeros(rows(c.NH_kv, d, 0), engine.element(c))),
                              variable)
        present = ops.concat([ops.gather(past, beam, constant(0)), new], 2 if bhsd else 1)
        sinks.append(ops.assign(present, variable))
        if group > 1:
            ones = [1] * 5
            ones[2 if bhsd else 3] = group
            wide = ops.broadcast(ops.unsqueeze(present, constant([2 if bhsd else 3])),
                                 constant(ones), broadcast_spec="BIDIRECTIONAL")
            present = ops.reshape(wide, constant(rows(c.NH, d, -1)), False)
        params.append(new)
        variables.append(variable)
        kv.append(present)
    k, v = kv
    if not bhsd:
        q, k, v = (ops.transpose(node, constant([0, 2, 1, 3])) for node in (q, k, v))
    out = ops.scaled_dot_product_attention(q, k, v, causal=False)
    return ov.Model([out.output(0)], sinks, params + [beam], variables, "decode step")


class CacheStart:
    """A stateful request's starting point: the past K and V (every key of K
    and V but the last) as its variables, and the step of Q, the last key's
    k and v and beam_idx as its inputs; the arrays made once, in the layout."""

    def __init__(self, c, Q, K, V):
        self.past = {"past_k": placed(c, K[:, :, :-1]), "past_v": placed(c, V[:, :, :-1])}
        self.feeds = [placed(c, Q), placed(c, K[:, :, -1:]), placed(c, V[:, :, -1:]),
                      np.arange(c.B, dtype=np.int32)]

    def apply(self, request):
        for variable in request.query_state():
            variable.state = ov.Tensor(self.past[variable.name])
        for i, array in enumerate(self.feeds):
            request.set_input_tensor(i, ov.Tensor(array, shared_memory=True))


class LoopCase:
    """A decode loop (SCENARIO decode-loop) on the stateful model: the cache
    holds the configuration's Tk keys, then each step feeds its query and
    its token's k and v, which the model appends, as a client's generate
    does (the inputs set and the step run, timed). A pass brings the cache
    back first, untimed: Tk - 1 keys set from outside and one step adding
    key Tk - 1 (the plugin repacks a state set from outside). The f32 and
    f16 caches each run one untimed pass whose first and last steps are
    checked against float64 (f16: the half tolerance); the faster of those
    that pass is timed."""

    def __init__(self, c, compile_for, seed, flush, threads):
        self.c, self.flush, self.threads = c, flush, threads
        inputs = sdpa_peer_protocol.Inputs(c, seed)
        K0, V0 = inputs.draw(c.B, c.NH_kv, c.Tk, c.hs), inputs.draw(c.B, c.NH_kv, c.Tk, c.hs_v)
        self.queries = [inputs.draw(c.B, c.NH, 1, c.hs) for _ in range(c.steps)]
        tokens = [(inputs.draw(c.B, c.NH_kv, 1, c.hs), inputs.draw(c.B, c.NH_kv, 1, c.hs_v))
                  for _ in range(c.steps)]
        self.K = np.concatenate([K0] + [k for k, _ in tokens], axis=2)
        self.V = np.concatenate([V0] + [v for _, v in tokens], axis=2)
        self.start = CacheStart(c, self.queries[0], K0, V0)
        beam = np.arange(c.B, dtype=np.int32)
        self.steps = [[ov.Tensor(placed(c, X), shared_memory=True) for X in (q, k, v)]
                      + [ov.Tensor(beam, shared_memory=True)]
                      for q, (k, v) in zip(self.queries, tokens)]
        kept, notes = [], []
        for cache in ("f32", "f16"):
            request = compile_for(cache).create_infer_request()
            outs, seconds = self.one_pass(request, timed=True)
            error = max(self.error(step, out) for step, out in outs.items())
            tolerance = engine.HALF_TOLERANCE if cache != "f32" else engine.TOLERANCE
            if not error <= tolerance:
                notes.append(f"{cache} cache: check error {error:.2e} > {tolerance:.0e}")
                continue
            kept.append((sum(seconds), cache, request, error))
        if not kept:
            raise RuntimeError("no cache passed the check: " + "; ".join(notes))
        _, cache, self.request, self.check_error = min(kept, key=lambda k: k[0])
        self.kernel = f"ScaledDotProductAttention-stateful-{cache}-cache"
        self.description = "none"

    def error(self, step, out):
        """The check of a step's output: its S keys, every one visible."""
        view = copy.copy(self.c)
        S = self.c.Tk + step + 1
        view.Tk, view.lengths, view.full_lengths, view.loop = S, [S] * view.B, True, False
        return sdpa_peer_protocol.reference_error(view, self.queries[step], self.K[:, :, :S],
                                                  self.V[:, :, :S], None, out, times=[0])

    def one_pass(self, request, timed):
        """({first and last step: out}, the steps' seconds) of a pass."""
        self.start.apply(request)
        request.infer()
        before = self.flush.before()
        outs, seconds, last = {}, [], self.c.steps - 1
        for step, tensors in enumerate(self.steps):
            if before:
                before()
            start = time.perf_counter()
            for i, tensor in enumerate(tensors):
                request.set_input_tensor(i, tensor)
            request.infer()
            elapsed = time.perf_counter() - start
            if timed:
                seconds.append(elapsed)
            if step in (0, last):
                outs[step] = request.get_output_tensor(0).data.copy()
        return outs, seconds

    def block(self, policy, first):
        """A pass (after --warmup untimed ones in the first round)."""
        for _ in range(policy.warmup if first else 0):
            self.one_pass(self.request, False)
        return self.one_pass(self.request, True)[1]

    def check(self):
        return self.check_error, "float32"


def main():
    args = peer_common.parse_arguments(__doc__.split("\n\n")[0],
                                       sdpa_peer_protocol.add_arguments)
    threads = max(1, args.threads)
    core = ov.Core()
    config = compile_config(threads)

    def candidate(c, inputs, form, hint="f32"):
        Q, K, V, bias = inputs
        mask = None if engine.plain_causal(c) else engine.additive_mask(c, bias)
        compiled = core.compile_model(build(c, Q, K, V, mask, form), "CPU",
                                      dict(config, INFERENCE_PRECISION_HINT=hint))
        request = compiled.create_infer_request()
        arrays = [placed(c, X) for X in (Q, K, V)] + ([mask] if mask is not None else [])
        tensors = [tensor_of(c, array) for array in arrays]
        for i, tensor in enumerate(tensors):
            request.set_input_tensor(i, tensor)

        def call():
            request.infer()
            return request.get_output_tensor(0).data
        call.keep = (compiled, request, arrays, tensors)
        words = "causal" if mask is None and engine.plain_causal(c) else engine.mask_text(
            "bf16" if c.dtype == "bf16" else np.dtype(engine.element(c)).name, mask)
        named = "" if c.dtype != "bf16" else f",{hint}-hint"
        return engine.Candidate(f"ScaledDotProductAttention-{form}{named}", words, call,
                                out_dtype="bfloat16" if c.dtype == "bf16" else None,
                                widen=widened if c.dtype == "bf16" else None)

    def stateful_candidate(c, inputs, cache):
        Q, K, V, _ = inputs
        compiled = core.compile_model(build_stateful(c), "CPU",
                                      dict(config, KV_CACHE_PRECISION=cache))
        request = compiled.create_infer_request()
        start = CacheStart(c, Q, K, V)
        drift = max(1, c.Tk // 128)
        held = [c.Tk - 1]  # the keys in the cache

        def restart():
            start.apply(request)
            held[0] = c.Tk - 1
        restart()

        def before():
            if held[0] >= c.Tk - 1 + drift:
                restart()
                call()

        def call():
            request.infer()
            held[0] += 1
            return request.get_output_tensor(0).data
        call.keep = (compiled, request, start)
        return engine.Candidate(f"ScaledDotProductAttention-stateful-{cache}-cache", "none",
                                call, half=cache != "f32", before=before)

    def loop_case_of(c, flush):
        if c.dtype != "f32":
            raise peer_common.Unsupported("decode loops of f32 rows only")

        def compile_for(cache):
            return core.compile_model(build_stateful(c), "CPU",
                                      dict(config, KV_CACHE_PRECISION=cache))
        return LoopCase(c, compile_for, args.seed, flush, threads_used)

    def candidates_of(c, inputs):
        forms = ["repeat", "broadcast"] if c.NH_kv < c.NH else ["heads"]
        hints = ("f32", "bf16") if c.dtype == "bf16" else ("f32",)
        found = [candidate(c, inputs, form, hint) for form in forms for hint in hints]
        if decode_step(c) and c.dtype != "bf16":
            caches = ("f32", "f16") if c.dtype == "f32" else ("f16",)  # never wider than the row
            found += [stateful_candidate(c, inputs, cache) for cache in caches]
        return found

    probe = core.compile_model(build(sdpa_peer_protocol.Config(
        "f32 forward 1 1 1 2 2 8 8 1 0 none full warm bhsd call 0 1/1".split()),
        *(np.zeros((1, 1, 2, 8), np.float32),) * 3, None, "heads"), "CPU", config)
    threads_used = int(probe.get_property("INFERENCE_NUM_THREADS"))
    precision = str(probe.get_property("INFERENCE_PRECISION_HINT")).replace(
        "<Type: '", "").replace("'>", "")
    impl = ("OpenVINO ScaledDotProductAttention (opset 13) compiled for CPU, f32 precision hint; "
            "grouped heads: the faster of K/V repeated in the model and 5-D broadcast heads "
            "(KERNEL per row); causal flag for causal squares, else an additive mask; "
            "f16 and bf16 rows: models of f16 or bf16 tensors (bf16: also the bf16 hint, "
            "and no stateful form); "
            "decode steps: also the stateful form (ReadValue/Assign KV cache, f32 or f16, "
            "fused by the CPU plugin), the fastest checked candidate timed; decode loops: "
            "that stateful form, each step appending its k and v in the model")
    engine.serve_engine(header_lines(core, impl, precision, threads_used), candidates_of, args,
                        threads_used, loop_case_of, half_types=("f16", "bf16"))


if __name__ == "__main__":
    main()
