#!/usr/bin/env python3
"""ggml peer of attn-bench sdpa.

Times ggml_flash_attn_ext, the attention of llama.cpp, on ggml's CPU backend
for the configurations attn-bench sdpa sends (the protocol:
sdpa_peer_protocol.py), through bench/peers/ggml/ggml_sdpa_shim.c (loaded
with ctypes; ./attn.sh peers builds it and ggml's CPU library from the
source the llama-cpp-python sdist on PyPI ships: bench/peers/ggml/
build_ggml.sh). The graph is built once per configuration and computed on
--threads threads per call (ggml_graph_compute with a plan of n_threads).
Q is F32; K and V are stored as F32 or as F16 (the KV cache llama.cpp keeps
by default), two candidates (engine_sdpa_cases.py: each checked against the
float64 reference before any timing, the F16 one to a half-precision
tolerance; the faster kept, KERNEL says which); an f16 row's Q is F32
holding its float16 values and K and V are F16 alone (out F32). Tensors in the
configuration's layout (bshd storage viewed permuted, as llama.cpp's cache);
grouped heads natively; the mask an F16 (B, 1 or NH, Tq, Tk) additive one
(0 / -inf, plus the bias) unless every key is visible.

--shim PATH: the shim library (default: <venv>/ggml/lib/libattn_ggml_shim.so
beside the interpreter's venv, the place ./attn.sh peers builds it).
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()

(np,) = peer_common.import_or_unavailable("ggml", "numpy")

import engine_sdpa_cases as engine  # noqa: E402
import sdpa_peer_protocol  # noqa: E402

I64, INT, PTR = ctypes.c_int64, ctypes.c_int, ctypes.c_void_p


def load_shim(path):
    """The shim with its functions typed, or the 'unavailable' line and exit."""
    if not os.path.exists(path):
        print(f"unavailable ggml: {path} not built (./attn.sh peers builds it)", flush=True)
        sys.exit(0)
    try:
        shim = ctypes.CDLL(path)
    except OSError as exc:
        print(f"unavailable ggml: {exc}", flush=True)
        sys.exit(0)
    typed(shim, "attn_ggml_shim", [I64] * 7 + [INT] * 4, "set", [PTR] * 5)
    if hasattr(shim, "attn_ggml_projected_create"):  # not in a shim built before them
        typed(shim, "attn_ggml_projected", [I64] * 5 + [INT] * 2 + [PTR] * 4, "set_x", [PTR] * 2)
    return shim


def typed(shim, prefix, create_args, setter, setter_args):
    """Types one of the shim's APIs: PREFIX_create(create_args) -> handle,
    PREFIX_destroy, PREFIX_SETTER(setter_args), PREFIX_run -> status,
    PREFIX_out -> float *."""
    def function(name):
        return getattr(shim, f"{prefix}_{name}")
    function("create").restype, function("create").argtypes = PTR, create_args
    function("destroy").argtypes = [PTR]
    function(setter).argtypes = setter_args
    function("run").restype, function("run").argtypes = INT, [PTR]
    function("out").restype, function("out").argtypes = ctypes.POINTER(ctypes.c_float), [PTR]


def add_shim_argument(parser):
    """--shim PATH (default: <venv>/ggml/lib/libattn_ggml_shim.so beside the
    interpreter's venv, where ./attn.sh peers builds it)."""
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    parser.add_argument("--shim", default=os.path.join(venv, "ggml", "lib",
                                                       "libattn_ggml_shim.so"),
                        help="the shim library")


def header_lines(shim_path, impl, threads):
    """The info, blas and impl lines of a ggml peer (ggml_peer.py's too):
    ggml's version and source as build_ggml.sh recorded them."""
    cache = os.path.dirname(os.path.dirname(shim_path))
    source, version = "unknown-source", "unknown"
    try:
        with open(os.path.join(cache, "ggml-version")) as f:
            source = "-".join(f.read().split())
        with open(os.path.join(cache, "cmake.log")) as f:
            version = next((line.split(":")[1].strip() for line in f
                            if line.startswith("-- ggml version:")), version)
    except OSError:
        pass
    return [f"info ggml={version} source={source} python={sys.version.split()[0]} "
            f"numpy={np.__version__}",
            f"blas ggml CPU backend, {shim_path}; n_threads={threads}; threads={threads}",
            f"impl {impl}"]


class Graph:
    """One ggml graph of the configuration: K/V F32 or F16."""

    def __init__(self, shim, c, inputs, kv_f16, threads):
        Q, K, V, bias = inputs
        self.shim = shim
        self.mask = engine.additive_mask(c, bias)
        mask_heads = 0 if self.mask is None else (2 if self.mask.shape[1] > 1 else 1)
        if self.mask is not None:  # (B, 1 or NH, Tq, Tk) dense, every query a row
            self.mask = np.ascontiguousarray(np.broadcast_to(
                self.mask, (c.B, self.mask.shape[1], c.Tq, c.Tk)), dtype=np.float32)
        self.handle = shim.attn_ggml_shim_create(c.B, c.NH, c.NH_kv, c.Tq, c.Tk, c.hs, c.hs_v,
                                                 int(kv_f16), mask_heads,
                                                 int(c.layout == "bshd"), threads)
        if not self.handle:
            raise MemoryError("ggml_init failed")
        arrays = [np.ascontiguousarray(X, dtype=np.float32) for X in (Q, K, V)]
        shim.attn_ggml_shim_set(self.handle, *(a.ctypes.data for a in arrays),
                                self.mask.ctypes.data if self.mask is not None else None)
        count = c.B * c.Tq * c.NH * c.hs_v
        out = np.ctypeslib.as_array(shim.attn_ggml_shim_out(self.handle), shape=(count,))
        self.out = out.reshape(c.B, c.Tq, c.NH, c.hs_v).transpose(0, 2, 1, 3)

    def __call__(self):
        status = self.shim.attn_ggml_shim_run(self.handle)
        if status != 0:
            raise RuntimeError(f"ggml_graph_compute returned {status}")
        return self.out

    def __del__(self):
        if getattr(self, "handle", None):
            self.shim.attn_ggml_shim_destroy(self.handle)


def main():
    def add_arguments(parser):
        sdpa_peer_protocol.add_arguments(parser)
        add_shim_argument(parser)

    args = peer_common.parse_arguments(__doc__.split("\n\n")[0], add_arguments)
    threads = max(1, args.threads)
    shim = load_shim(args.shim)

    def candidates_of(c, inputs):
        made = []
        kv_types = (True,) if c.dtype == "f16" else (False, True)  # F16 K/V alone for f16 rows
        for kv_f16 in kv_types:
            name = "ggml_flash_attn_ext-KV-F16" if kv_f16 else "ggml_flash_attn_ext-KV-F32"
            graph = Graph(shim, c, inputs, kv_f16, threads)
            mask = engine.mask_text("f16", graph.mask)
            made.append(engine.Candidate(name, mask, graph, half=kv_f16))
        return made

    impl = ("ggml_flash_attn_ext on ggml's CPU backend (Q F32; the faster of K/V F32 and F16, "
            "KERNEL per row; f16 rows: K/V F16), the graph built once, computed with "
            "n_threads; F16 additive mask unless every key is visible; scale 1/sqrt(hs), "
            "accumulation F32")
    engine.serve_engine(header_lines(args.shim, impl, threads), candidates_of, args, threads)


if __name__ == "__main__":
    main()
