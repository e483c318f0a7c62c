"""PyTorch drop-in: ``attn.torch.scaled_dot_product_attention``.

Same signature, layout and semantics as
``torch.nn.functional.scaled_dot_product_attention``, computed by libattn::

    query (..., NH, L, E)   key (..., NH_kv, S, E)   value (..., NH_kv, S, Ev)
    -> (..., NH, L, Ev)

(``...`` any number of batch dimensions, the same for all three, also none:
3-D (NH, L, E) and 2-D (L, E) work). ``attn_mask`` broadcasts to
(..., NH, L, S): bool (True = takes part) or additive float. ``is_causal`` is
PyTorch's top-left alignment (query t sees keys j <= t, also for L != S;
libattn's own causal mask is bottom-right aligned, so for L < S the call
passes key lengths of L and for L > S a (L, S) mask). ``scale`` None means
1/sqrt(E). ``enable_gqa`` lets NH be a multiple of NH_kv (query head h uses
key/value head h // (NH // NH_kv), as repeat_interleave does). A row whose
keys are all masked gives 0 (as PyTorch >= 2.5; older versions gave NaN).

Autograd: gradients for query, key and value through attn_sdpa_backward,
which recomputes the weights from the forward's log-sum-exp: no L x S
buffer. The forward keeps its out and lse; inputs are saved, not copied.

Not supported (each raises, never silently): dropout_p > 0
(NotImplementedError), tensors off the CPU or nested (NotImplementedError),
dtypes other than float32 / float64 or mixed dtypes (TypeError), a float
attn_mask that requires grad (NotImplementedError: its gradient is not
computed), scale <= 0 (NotImplementedError), double backward.

Tensors are read in place when their (B, L, NH, E) view has attn's row
layout (as q, k, v split from one fused projection and viewed as heads
have); others are copied into it. The output is a (B, NH, L, Ev) view of a
(B, L, NH, Ev) buffer, as PyTorch's own CPU kernels return.
"""

import math

try:
    import torch as _torch
except ImportError as _exc:  # pragma: no cover - exercised only without torch
    raise ImportError("attn.torch needs PyTorch (pip install torch); "
                      "the rest of attn works without it") from _exc

import numpy as np

from . import _lib
from ._arrays import row_stride
from .errors import ArgumentError, DTypeError
from .sdpa_plan import SdpaPlan
from ._sdpa import call_one_shot

__all__ = ["scaled_dot_product_attention"]

torch = _torch
_CAUSAL = _lib.ATTN_CAUSAL
_DTYPES = {torch.float32: True, torch.float64: False}  # dtype -> is float32


class _Spec:
    """Everything about one call but the tensors q, k, v (kept for the backward)."""

    __slots__ = ("dims", "is_f32", "dtype", "c_scale", "flags", "mask", "mask_strides",
                 "key_lengths")


def _check_tensors(query, key, value):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s must be a torch.Tensor, not %s" % (name, type(t).__name__))
        if t.device.type != "cpu":
            raise NotImplementedError("attn computes on the CPU; %s is on %s" % (name, t.device))
        if t.layout != torch.strided or getattr(t, "is_nested", False):
            raise NotImplementedError("%s must be a dense (strided) tensor, not %s"
                                      % (name, "nested" if getattr(t, "is_nested", False)
                                         else t.layout))
        if t.dtype not in _DTYPES:
            raise DTypeError("attn computes in float32 or float64; %s is %s" % (name, t.dtype))
        if t.dim() < 2:
            raise ArgumentError("%s must have at least 2 dimensions (L, E), got shape %s"
                                % (name, tuple(t.shape)))
    if not (query.dtype == key.dtype == value.dtype):
        raise DTypeError("query, key and value must have one dtype, got %s, %s, %s"
                         % (query.dtype, key.dtype, value.dtype))


def _rows(t, name):
    """(t as (B, T, H, d) in attn's row layout, ld): a view when t's strides allow,
    else a contiguous copy. t is (B, H, T, d)."""
    view = t.transpose(1, 2)
    ld = row_stride(tuple(view.shape), view.stride(), 1)
    if ld is None:
        return view.contiguous(), 0
    return view, ld


def _grad_rows(ld, shape, dtype):
    """An uninitialised (B, T, H, d) gradient whose rows have stride ld (0: dense)."""
    B, T, H, d = shape
    if not ld or ld == H * d:
        return torch.empty(shape, dtype=dtype)
    return torch.empty((B, T, ld), dtype=dtype)[:, :, :H * d].view(shape)


def _prepare_mask(attn_mask, batch, B, NH, L, S, dtype):
    """(tensor, (mask_ld, mask_sb, mask_sh)) in the smallest broadcast form."""
    if attn_mask.device.type != "cpu":
        raise NotImplementedError("attn_mask is on %s; attn computes on the CPU"
                                  % attn_mask.device)
    if attn_mask.dtype != torch.bool and not attn_mask.dtype.is_floating_point:
        raise DTypeError("attn_mask must be bool or floating point, got %s" % attn_mask.dtype)
    full = tuple(batch) + (NH, L, S)
    try:
        m = attn_mask.expand(full)
    except RuntimeError:
        raise ArgumentError("attn_mask of shape %s does not broadcast to %s"
                            % (tuple(attn_mask.shape), full)) from None
    if len(full) != 4:
        m = m.reshape(B, NH, L, S)
    for dim in range(3):
        if m.shape[dim] == 1 or m.stride(dim) == 0:
            m = m.narrow(dim, 0, 1)
    if m.dtype == torch.bool:
        m = torch.zeros(m.shape, dtype=dtype).masked_fill_(m.logical_not(), -math.inf)
    else:
        m = m.detach().to(dtype).contiguous()
    b1, h1, t1 = m.shape[:3]
    return m, (S if t1 > 1 else 0, h1 * t1 * S if b1 > 1 else 0, t1 * S if h1 > 1 else 0)


def _pointers(spec, qv, ldq, kv, ldk, vv, ldv, out, lse):
    m = spec.mask
    mask_ld, mask_sb, mask_sh = spec.mask_strides
    kl = spec.key_lengths
    return (qv.data_ptr(), ldq, kv.data_ptr(), ldk, vv.data_ptr(), ldv,
            0 if m is None else m.data_ptr(), mask_ld, mask_sb, mask_sh,
            0 if kl is None else kl.ctypes.data, out.data_ptr(), 0,
            0 if lse is None else lse.data_ptr())


def _forward(q4, k4, v4, spec, want_lse):
    """out (B, NH, L, Ev) (a view of a (B, L, NH, Ev) buffer) and lse (B, NH, L) or None."""
    B, NH, NH_kv, L, S, E, Ev = spec.dims
    qv, ldq = _rows(q4, "query")
    kv, ldk = _rows(k4, "key")
    vv, ldv = _rows(v4, "value")
    out = torch.empty((B, L, NH, Ev), dtype=spec.dtype)
    lse = torch.empty((B, NH, L), dtype=spec.dtype) if want_lse else None
    call_one_shot(spec.is_f32, spec.dims, spec.c_scale, spec.flags, 0,
                  _pointers(spec, qv, ldq, kv, ldk, vv, ldv, out, lse))
    return out.transpose(1, 2), lse


class _Attention(torch.autograd.Function):
    """out = sdpa(q, k, v); backward through attn_sdpa_backward from out and lse."""

    @staticmethod
    def forward(ctx, q4, k4, v4, spec):
        out, lse = _forward(q4, k4, v4, spec, True)
        ctx.save_for_backward(q4, k4, v4, out)
        ctx.spec = spec
        ctx.lse = lse
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        q4, k4, v4, out = ctx.saved_tensors
        spec, lse = ctx.spec, ctx.lse
        B, NH, NH_kv, L, S, E, Ev = spec.dims
        qv, ldq = _rows(q4, "query")
        kv, ldk = _rows(k4, "key")
        vv, ldv = _rows(v4, "value")
        dout = grad_out.transpose(1, 2)
        if dout.dtype != spec.dtype:
            dout = dout.to(spec.dtype)
        dout = dout.contiguous()
        out_rows = out.transpose(1, 2).contiguous()  # the forward's buffer: no copy
        dq = _grad_rows(ldq, (B, L, NH, E), spec.dtype)
        dk = _grad_rows(ldk, (B, S, NH_kv, E), spec.dtype)
        dv = _grad_rows(ldv, (B, S, NH_kv, Ev), spec.dtype)
        plan = SdpaPlan(B, NH, L, S, E, NH_kv=NH_kv, hs_v=Ev,
                        dtype=np.float32 if spec.is_f32 else np.float64,
                        scale=spec.c_scale or None, causal=bool(spec.flags & _CAUSAL))
        try:
            plan.backward_pointers(_pointers(spec, qv, ldq, kv, ldk, vv, ldv, out_rows, lse),
                                   dout.data_ptr(), dq.data_ptr(), dk.data_ptr(),
                                   dv.data_ptr())
        finally:
            plan.close()
        return dq.transpose(1, 2), dk.transpose(1, 2), dv.transpose(1, 2), None


def _math(query, key, value, attn_mask, is_causal, scale, enable_gqa):
    """PyTorch's documented reference, for shapes with a zero dimension only."""
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    bias = torch.zeros(L, S, dtype=query.dtype)
    if is_causal:
        bias.masked_fill_(torch.ones(L, S, dtype=torch.bool).tril().logical_not(), -math.inf)
    if attn_mask is not None:
        bias = bias.masked_fill(attn_mask.logical_not(), -math.inf) \
            if attn_mask.dtype == torch.bool else bias + attn_mask
    if enable_gqa and query.dim() >= 3 and key.shape[-3] and query.shape[-3] != key.shape[-3]:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], -3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], -3)
    weights = torch.softmax(query @ key.transpose(-2, -1) * scale + bias, dim=-1)
    return weights @ value


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention computed by attn (see the module).

    query (..., NH, L, E), key (..., NH_kv, S, E), value (..., NH_kv, S, Ev)
    -> (..., NH, L, Ev); CPU float32/float64; differentiable in q, k, v.
    """
    _check_tensors(query, key, value)
    if dropout_p != 0.0:
        raise NotImplementedError("attn has no attention dropout: call it with dropout_p=0.0 "
                                  "(got %r)" % (dropout_p,))
    if is_causal and attn_mask is not None:
        raise ArgumentError("attn_mask must be None when is_causal=True (as in PyTorch)")
    if scale is not None:
        scale = float(scale)
        if not scale > 0.0:
            raise NotImplementedError("attn needs a positive scale (None: 1/sqrt(E)), got %r"
                                      % (scale,))
    if query.dim() != key.dim() or key.dim() != value.dim():
        raise ArgumentError("query, key, value must have the same number of dimensions, got "
                            "shapes %s, %s, %s" % (tuple(query.shape), tuple(key.shape),
                                                   tuple(value.shape)))
    L, E = query.shape[-2:]
    S, Ek = key.shape[-2:]
    Sv, Ev = value.shape[-2:]
    if Ek != E or Sv != S or key.shape[:-2] != value.shape[:-2]:
        raise ArgumentError("shapes do not match: query %s (..., NH, L, E), key %s must be "
                            "(..., NH_kv, S, E), value %s (..., NH_kv, S, Ev)"
                            % (tuple(query.shape), tuple(key.shape), tuple(value.shape)))
    if query.dim() >= 3:
        batch, NH, NH_kv = tuple(query.shape[:-3]), query.shape[-3], key.shape[-3]
        if tuple(key.shape[:-3]) != batch:
            raise ArgumentError("query and key batch dimensions differ: %s vs %s"
                                % (batch, tuple(key.shape[:-3])))
        if NH != NH_kv:
            if not enable_gqa:
                raise ArgumentError("query has %d heads and key %d: pass enable_gqa=True for "
                                    "grouped-query attention" % (NH, NH_kv))
            if NH_kv == 0 or NH % NH_kv:
                raise ArgumentError("query heads (%d) must be a multiple of key/value heads "
                                    "(%d)" % (NH, NH_kv))
    else:
        batch, NH, NH_kv = (), 1, 1
    if attn_mask is not None and attn_mask.requires_grad and torch.is_grad_enabled():
        raise NotImplementedError("attn gives no gradient for attn_mask; pass "
                                  "attn_mask.detach() (or a mask that does not require grad)")
    if query.numel() == 0 or key.numel() == 0 or value.numel() == 0:
        return _math(query, key, value, attn_mask, is_causal, scale, enable_gqa)

    B = 1
    for n in batch:
        B *= n
    q4 = query.reshape(B, NH, L, E)
    k4 = key.reshape(B, NH_kv, S, E)
    v4 = value.reshape(B, NH_kv, S, Ev)
    dtype = query.dtype
    spec = _Spec()
    spec.dims = (B, NH, NH_kv, L, S, E, Ev)
    spec.is_f32 = _DTYPES[dtype]
    spec.dtype = dtype
    spec.c_scale = 0.0 if scale is None else scale
    spec.flags = 0
    spec.mask, spec.mask_strides, spec.key_lengths = None, (0, 0, 0), None
    if attn_mask is not None:
        spec.mask, spec.mask_strides = _prepare_mask(attn_mask, batch, B, NH, L, S, dtype)
    elif is_causal:
        if L == S:
            spec.flags = _CAUSAL
        elif L < S:
            # attn's causal row t sees j <= L_b - L + t; with key lengths L_b = L that is
            # PyTorch's j <= t, and keys j >= L are masked for every row anyway.
            spec.flags = _CAUSAL
            spec.key_lengths = np.full(B, L, dtype=np.uintp)
        else:
            tril = torch.ones(L, S, dtype=torch.bool).tril()
            spec.mask = torch.zeros(L, S, dtype=dtype).masked_fill_(tril.logical_not(),
                                                                   -math.inf)
            spec.mask_strides = (S, 0, 0)
    if torch.is_grad_enabled() and (q4.requires_grad or k4.requires_grad or v4.requires_grad):
        out = _Attention.apply(q4, k4, v4, spec)
    else:
        out = _forward(q4.detach(), k4.detach(), v4.detach(), spec, False)[0]
    return out if query.dim() == 4 else out.reshape(tuple(query.shape[:-1]) + (Ev,))
