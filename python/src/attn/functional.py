"""The course's functions on NumPy arrays: softmax, soft lookup, one head, multi-head.

Shapes (PyTorch-style, dense, row-major): B batch, T sequence length, C model
width, hs head size, NH heads, Tq/Tk query/key counts, d key width, dv value
width. float32 inputs compute in float32, everything else in float64 (see
attn._arrays). Each call is one C call with the GIL released.
"""

import collections
import math

import numpy as np

from . import _lib
from ._arrays import F32, address, as_array, as_input, check_shape, compute_dtype, output
from .errors import ArgumentError, check

__all__ = ["softmax_rows", "lookup", "self_attention", "mha_forward", "mha_backward",
           "Gradients"]

_lib_fn = _lib.lib

Gradients = collections.namedtuple("Gradients", "dX dWq dWk dWv dWo")
Gradients.__doc__ = """Gradients of sum(out * dout): dX (B,T,C), dWq, dWk, dWv (C,D), dWo (D,C) or None."""


def _suffix(dtype):
    return "f32" if dtype is F32 else "f64"


def _scale_value(scale, default_name):
    """The C scale argument: 0.0 (the library's default) for None, else scale > 0."""
    if scale is None:
        return 0.0
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        raise ArgumentError("scale must be a number or None, not %r" % (scale,)) from None
    if scale <= 0.0:
        raise ArgumentError("scale must be positive (None means %s), got %r"
                            % (default_name, scale))
    return scale  # NaN and inf go to the library, which answers BAD_SCALE


def _dims(x, name, ndims):
    if x.ndim not in ndims:
        raise ArgumentError("%s must have %s dimensions, got shape %s"
                            % (name, " or ".join(map(str, ndims)), x.shape))


def softmax_rows(x, out=None):
    """Softmax over the last axis: ``exp(x - max) / sum(exp(x - max))``.

    x: any shape (..., n), n >= 1. Returns a new array (or writes `out`, which
    may be x itself for an in-place softmax). Masked entries are -inf; a row
    of only -inf gives zeros.
    """
    x = as_array(x, "x")
    dtype = compute_dtype(x, "x")
    if x.ndim == 0:
        raise ArgumentError("x must have at least one dimension")
    if out is None:
        out = np.array(x, dtype=dtype, order="C", copy=True)
    else:
        out = output(out, x.shape, dtype)
        if out is not x:
            np.copyto(out, x, casting="unsafe")
    cols = x.shape[-1]
    rows = out.size // cols if cols else 0
    fn = getattr(_lib_fn, "attn_softmax_rows_" + _suffix(dtype))
    check(fn(address(out), rows, cols, cols), "attn_softmax_rows_" + _suffix(dtype))
    return out


def lookup(q, k, v, scale=1.0, return_weights=False, *, out=None, weights=None):
    """Soft lookup (lesson "weighted lookup"): ``w = softmax(scale * q k^T)``, ``out = w v``.

    q (Tq,d) or (d,) for one query; k (Tk,d); v (Tk,dv) or (Tk,).
    scale: 1.0 is the lesson's unscaled lookup; None means 1/sqrt(d).
    Returns out (Tq,dv) (with the leading/trailing axis dropped for a 1-D q
    or v), and the weights (Tq,Tk) too when return_weights (or `weights`,
    an array to write them to, is given).
    """
    q = as_array(q, "q")
    dtype = compute_dtype(q, "q")
    q = as_input(q, dtype, "q")
    k = as_input(k, dtype, "k")
    v = as_input(v, dtype, "v")
    _dims(q, "q", (1, 2))
    _dims(k, "k", (2,))
    _dims(v, "v", (1, 2))
    one_query = q.ndim == 1
    one_value = v.ndim == 1
    Tq, d = (1, q.shape[0]) if one_query else q.shape
    Tk = k.shape[0]
    check_shape(k, (Tk, d), "k", "(Tk, d) with d from q")
    dv = 1 if one_value else v.shape[1]
    if v.shape[0] != Tk:
        raise ArgumentError("v has %d rows, k has %d: they must pair up" % (v.shape[0], Tk))
    out_shape = tuple(s for s, keep in ((Tq, not one_query), (dv, not one_value)) if keep)
    out = output(out, out_shape, dtype)
    want_w = return_weights or weights is not None
    w_ptr = None
    if want_w:
        weights = output(weights, (Tk,) if one_query else (Tq, Tk), dtype, "weights")
        w_ptr = address(weights)
    name = "attn_lookup_" + _suffix(dtype)
    status = getattr(_lib_fn, name)(Tq, Tk, d, dv, _scale_value(scale, "1/sqrt(d)"),
                                    address(q), address(k), address(v), address(out), w_ptr)
    check(status, name)
    return (out, weights) if want_w else out


def _batched(X, name):
    """X (B,T,C) or (T,C) -> (X as 3-D, whether a batch axis was added)."""
    _dims(X, name, (2, 3))
    if X.ndim == 2:
        return X.reshape((1,) + X.shape), True
    return X, False


def self_attention(X, Wq, Wk, Wv, causal=False, return_weights=False, *, out=None,
                   weights=None):
    """One projected head, the course's ``self_attention``.

    X (B,T,C) or (T,C); Wq, Wk, Wv (C,hs)::

        Q, K, V = X Wq, X Wk, X Wv                       (B,T,hs)
        S = Q K^T / sqrt(hs); causal: S[b,t,j] = -inf for j > t
        weights = softmax(S)                              (B,T,T)
        out = weights V                                   (B,T,hs)

    Returns out (and weights when return_weights); 2-D X gives 2-D results.
    """
    X = as_array(X, "X")
    dtype = compute_dtype(X, "X")
    X = as_input(X, dtype, "X")
    X3, squeeze = _batched(X, "X")
    B, T, C = X3.shape
    Wq = as_input(Wq, dtype, "Wq")
    _dims(Wq, "Wq", (2,))
    hs = Wq.shape[1]
    Wk = as_input(Wk, dtype, "Wk")
    Wv = as_input(Wv, dtype, "Wv")
    for W, n in ((Wq, "Wq"), (Wk, "Wk"), (Wv, "Wv")):
        check_shape(W, (C, hs), n, "(C, hs) with C from X and hs from Wq")
    lead = (T,) if squeeze else (B, T)
    out = output(out, lead + (hs,), dtype)
    want_w = return_weights or weights is not None
    w_ptr = None
    if want_w:
        weights = output(weights, lead + (T,), dtype, "weights")
        w_ptr = address(weights)
    name = "attn_self_attention_" + _suffix(dtype)
    status = getattr(_lib_fn, name)(B, T, C, hs, 1 if causal else 0, address(X), address(Wq),
                                    address(Wk), address(Wv), address(out), w_ptr)
    check(status, name)
    return (out, weights) if want_w else out


def _mha_inputs(X, Wq, Wk, Wv, Wo, NH):
    if NH is None:
        raise ArgumentError("NH (the number of heads) is required")
    if not isinstance(NH, (int, np.integer)) or isinstance(NH, bool) or NH < 1:
        raise ArgumentError("NH must be a positive integer, got %r" % (NH,))
    X = as_array(X, "X")
    dtype = compute_dtype(X, "X")
    X = as_input(X, dtype, "X")
    X3, squeeze = _batched(X, "X")
    C = X3.shape[2]
    if C % NH:
        raise ArgumentError("C = %d is not a multiple of NH = %d" % (C, NH))
    Ws = []
    for W, n in ((Wq, "Wq"), (Wk, "Wk"), (Wv, "Wv"), (Wo, "Wo")):
        if W is None and n == "Wo":
            Ws.append(None)
            continue
        W = as_input(W, dtype, n)
        check_shape(W, (C, C), n, "(C, C) stored (in, out)")
        Ws.append(W)
    return dtype, X, X3, squeeze, Ws


def mha_forward(X, Wq, Wk, Wv, Wo=None, NH=None, causal=False, *, out=None):
    """Multi-head attention: NH heads of hs = C/NH, concatenated, times Wo.

    X (B,T,C) or (T,C); Wq, Wk, Wv, Wo (C,C) stored (in,out), head h in
    columns [h*hs, (h+1)*hs); Wo None means no output projection.
    Returns out (B,T,C) (2-D for 2-D X).
    """
    dtype, X, X3, squeeze, (Wq, Wk, Wv, Wo) = _mha_inputs(X, Wq, Wk, Wv, Wo, NH)
    B, T, C = X3.shape
    out = output(out, X.shape, dtype)
    name = "attn_mha_forward_" + _suffix(dtype)
    status = getattr(_lib_fn, name)(B, T, C, int(NH), 1 if causal else 0, address(X),
                                    address(Wq), address(Wk), address(Wv),
                                    None if Wo is None else address(Wo), address(out))
    check(status, name)
    return out


def mha_backward(X, Wq, Wk, Wv, Wo, dout, NH=None, causal=False):
    """Gradients of ``sum(mha_forward(X, ...) * dout)``.

    dout has X's shape (the loss gradient with respect to out). Returns
    Gradients(dX, dWq, dWk, dWv, dWo) with dX shaped like X, the others
    (C,C), dWo None when Wo is None.
    """
    dtype, X, X3, squeeze, (Wq, Wk, Wv, Wo) = _mha_inputs(X, Wq, Wk, Wv, Wo, NH)
    B, T, C = X3.shape
    dout = as_input(dout, dtype, "dout")
    check_shape(dout, X.shape, "dout", "(like X)")
    dX = np.empty(X.shape, dtype)
    dWq, dWk, dWv = (np.empty((C, C), dtype) for _ in range(3))
    dWo = None if Wo is None else np.empty((C, C), dtype)
    name = "attn_mha_backward_" + _suffix(dtype)
    status = getattr(_lib_fn, name)(
        B, T, C, int(NH), 1 if causal else 0, address(X), address(Wq), address(Wk),
        address(Wv), None if Wo is None else address(Wo), address(dout), address(dX),
        address(dWq), address(dWk), address(dWv), None if dWo is None else address(dWo))
    check(status, name)
    return Gradients(dX, dWq, dWk, dWv, dWo)


def default_scale(d):
    """1/sqrt(d), the default scale of a head of size d."""
    return 1.0 / math.sqrt(d)
