#!/usr/bin/env python3
"""PyTorch peer of attn-bench.

Times attention in PyTorch on the shapes attn-bench sends, with
attn-bench's repeat policy, in one process per thread count
(torch.set_num_threads). The protocol, the inputs (made with NumPy, then
torch.from_numpy) and the repeat policy are described in peer_common.py.

The computation, in torch ops on CPU tensors of the shape's dtype:
  Q, K, V = X @ Wq, X @ Wk, X @ Wv, split into NH heads (B, NH, T, hs)
  Y = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal,
                                                       dropout_p=P)
      (PyTorch >= 2.0; older PyTorch has no such function, and the peer then
      composes it: softmax(Q K^T / sqrt(hs), masked with -inf) @ V; the
      'impl' line and the CSV column torch_impl say which ran)
  out = Y (B, T, D) @ Wo, or Y
P is the shape's attention dropout (attn-bench --dropout: a training shape's
tenth field "dropout=P"), 0 otherwise; the composed attention drops the
weights with torch.nn.functional.dropout(p=P).
OP=forward runs under torch.inference_mode(); OP=backward times the forward
and torch.autograd.grad(out, (X, Wq, Wk, Wv[, Wo]), dout) together.

The 'info' line gives the versions (torch, python, numpy), the 'blas' line
the build: BLAS_INFO, the MKL and oneDNN (MKL-DNN) versions, the CPU
capability (the ISA its kernels dispatch to here), the parallel backend and
the thread count. PyTorch 2.x from PyPI (./attn.sh peers) is the reference.
"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()  # before PyTorch sizes its thread pools

np, torch, F = peer_common.import_or_unavailable("torch", "numpy", "torch", "torch.nn.functional")

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


def heads(Z, NH):
    """(B, T, D) -> (B, NH, T, hs)"""
    B, T, D = Z.shape
    return Z.view(B, T, NH, D // NH).transpose(1, 2)


def composed_attention(Q, K, V, causal, dropout):
    T, hs = Q.shape[-2], Q.shape[-1]
    scores = (Q @ K.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
    if causal:
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (F.dropout(weights, p=dropout) if dropout else weights) @ V


def attention(X, Wq, Wk, Wv, Wo, NH, causal, dropout=0.0):
    B, T, _ = X.shape
    Q, K, V = heads(X @ Wq, NH), heads(X @ Wk, NH), heads(X @ Wv, NH)
    if HAS_SDPA:
        Y = F.scaled_dot_product_attention(Q, K, V, is_causal=causal, dropout_p=dropout)
    else:
        Y = composed_attention(Q, K, V, causal, dropout)
    Y = Y.transpose(1, 2).reshape(B, T, -1)
    return Y @ Wo if Wo is not None else Y


def build_description():
    """PyTorch's CPU build, for the 'blas' line: its BLAS (BLAS_INFO), the MKL
    and oneDNN (MKL-DNN) it was built with, the CPU capability its kernels
    dispatch to on this machine, its parallel backend, and any BLAS library
    it loaded as a shared library (NumPy's own left out)."""
    config = torch.__config__.show()

    def found(pattern, text=config):
        match = re.search(pattern, text)
        return match.group(1) if match else "none"

    mkl = found(r"Math Kernel Library Version ([\w.]+)")
    onednn = found(r"MKL-DNN (v[\w.]+)")
    if mkl != "none" and not torch.backends.mkl.is_available():
        mkl += " (not available)"
    if onednn != "none" and not torch.backends.mkldnn.is_available():
        onednn += " (not available)"
    blas = found(r"BLAS_INFO=(\w+)")
    capability = found(r"CPU capability usage: (\w+)")
    backend = found(r"ATen parallel backend: (\w+)", torch.__config__.parallel_info())
    parts = [f"BLAS_INFO={blas}", f"MKL {mkl}", f"oneDNN (MKL-DNN) {onednn}",
             f"CPU capability {capability}", f"parallel backend {backend}"]
    try:
        with open("/proc/self/maps") as maps:
            libraries = sorted({line.split()[-1] for line in maps
                                if re.search(r"lib(open)?blas|libmkl", line)
                                and "numpy" not in line and "scipy_openblas" not in line})
        if libraries:
            parts.append("loaded " + " ".join(libraries))
    except OSError:
        pass
    return "; ".join(parts)


def header_lines(impl):
    """The info line (the versions), the blas line (the build, the threads)
    and the impl line; torch_sdpa_peer.py's too."""
    return [
        f"info torch={torch.__version__} python={sys.version.split()[0]} numpy={np.__version__}",
        f"blas {build_description()}; threads={torch.get_num_threads()}",
        f"impl {impl}",
    ]


def main():
    args = peer_common.parse_arguments(__doc__.split("\n\n")[0])
    torch.set_num_threads(args.threads)

    def make_case(shape):
        arrays = peer_common.make_inputs(np, shape, args.seed)
        X, Wq, Wk, Wv, Wo, dout = (None if a is None else torch.from_numpy(a) for a in arrays)
        causal = bool(shape.causal)
        if shape.op == "forward":
            def call():
                with torch.inference_mode():
                    return attention(X, Wq, Wk, Wv, Wo, shape.NH, causal)
        else:
            inputs = [a.requires_grad_() for a in (X, Wq, Wk, Wv, Wo) if a is not None]

            def call():
                out = attention(X, Wq, Wk, Wv, Wo, shape.NH, causal, shape.dropout)
                torch.autograd.grad(out, inputs, dout)
                return out
        return peer_common.TimedCase(call, lambda out: str(out.dtype).replace("torch.", ""))

    impl = ("torch.nn.functional.scaled_dot_product_attention" if HAS_SDPA else
            f"composed (torch {torch.__version__} has no scaled_dot_product_attention): "
            "matmul, masked_fill(-inf), softmax, matmul")
    peer_common.serve_in_rounds(header_lines(impl), make_case, args)


if __name__ == "__main__":
    main()
