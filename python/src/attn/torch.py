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

Dropout: dropout_p in [0, 1) is applied as given (PyTorch's functional
call too drops whenever dropout_p > 0: pass 0 in eval). Each call with
dropout_p > 0 draws a 64-bit seed and a 64-bit offset from PyTorch's default
CPU generator (torch.randint), so torch.manual_seed makes runs reproducible;
attn's Philox-4x32-10 draws (attn.h, attn_plan_set_dropout) then drop each
weight P[b,h,t,j] with probability dropout_p and scale the kept ones by
1/(1-dropout_p). The backward regenerates the same mask (nothing stored).
The masks are attn's own, not the ones PyTorch would draw.

Dtypes: float32, float64, and the half types bfloat16 and float16 (attn.h
"half precision": float arithmetic on the 16-bit values, each element of
the output and of the gradients rounded once to the input dtype); a float
attn_mask of a half dtype is converted to float32 for C (the mask and the
saved log-sum-exp of a half call are float32).

Not supported (each raises, never silently): dropout_p outside [0, 1)
(ArgumentError), tensors off the CPU or nested (NotImplementedError),
dtypes other than float32, float64, bfloat16, float16, or mixed dtypes
(TypeError), a float attn_mask that requires grad (NotImplementedError: its
gradient is not computed), scale <= 0 (NotImplementedError), double
backward.

Layouts: query, key and value are read in place, with no copy, whatever the
order of their dimensions, whenever their last dimension is contiguous
(stride 1) and their batch dimensions can be read as one: PyTorch's (B, NH,
L, E) contiguous tensors, transposed (B, L, NH, E) views, a slice of a
larger (B, NH_kv, S_max, E) cache, head views of a fused QKV projection.
Others are copied (``contiguous()``, which autograd differentiates). The
output is allocated as PyTorch's CPU SDPA allocates it: empty_like(query)
(its flash kernel: E == Ev, at most 4 dimensions, no mask or one of 2 or 4
dimensions), else contiguous (its math path). The backward reads grad_out
in place when it has the output's layout (else copies it once into it) and
writes dq, dk, dv in place with the strides of query, key and value (C's
contract): empty_like for a dense input, and q, k, v split from one fused
projection get their gradients side by side in one buffer of its layout.

Threads: importing this module runs attn's shared threads (the default
engine) on PyTorch's own OpenMP threads (``use_openmp_threads``; C's
attn_openmp.h), unless the environment sets ``ATTN_TORCH_OPENMP=0``: the
threads PyTorch leaves polling after each operator then do attn's work
instead of competing with it for the cores. Results are the same bit for bit.

Cost per call: everything about a call but the tensors' data (shapes,
strides, dtypes, is_causal, scale, enable_gqa) is checked and prepared once
and kept in a dictionary (attn/_torch_call.py); each call then runs on a
cached sdpa plan of its shape (attn/_plans.py: a few per thread).
"""

try:
    import torch as _torch
except ImportError as _exc:  # pragma: no cover - exercised only without torch
    raise ImportError("attn.torch needs PyTorch (pip install torch); "
                      "the rest of attn works without it") from _exc

import ctypes
import os
import threading

import numpy as np

from . import _openmp, _plans
from ._layout import grad_placements
from .errors import ArgumentError, check
from ._torch_call import (EMPTY, NORMAL, check_tensors, grown_call, layout, math_reference,
                          new_call, prepare_mask)

__all__ = ["scaled_dot_product_attention", "use_openmp_threads"]

torch = _torch
_entries = {}
_families = {}  # the last NORMAL call of each signature but key/value lengths
_empty = torch.empty
_empty_like = torch.empty_like
_grad_enabled = torch.is_grad_enabled
_np_empty = np.empty
_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
_empty_strided = torch.empty_strided
_slot = _plans.slot
_Q, _K, _V, _OUT, _LSE = _plans.Q, _plans.K, _plans.V, _plans.OUT, _plans.LSE
_handoff = threading.local()
_drawn = threading.local()  # a dropout setting drawn before a copy (_unusual)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention computed by attn (see the module).

    query (..., NH, L, E), key (..., NH_kv, S, E), value (..., NH_kv, S, Ev)
    -> (..., NH, L, Ev); CPU float32, float64, bfloat16 or float16 (one dtype
    for all three; the result and gradients in it); differentiable in q, k, v.
    """
    # The common call (a known signature, no mask) in a few steps; any other
    # goes to attention(), which checks and prepares what it must.
    try:
        call = _entries[(query.shape, query.stride(), key.shape, key.stride(), value.shape,
                         value.stride(), query.dtype, key.dtype, value.dtype, is_causal, scale,
                         enable_gqa, False)]
    except Exception:
        call = None
    if (call is None or call.kind or attn_mask is not None or dropout_p
            or not (query.is_cpu and key.is_cpu and value.is_cpu)):
        return attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                         enable_gqa, False)
    if (query.requires_grad or key.requires_grad or value.requires_grad) and _grad_enabled():
        _handoff.args = (call, None, None)
        return _Attention.apply(query, key, value)
    return _forward(call, query, key, value, False)[0]


def attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, bshd):
    """scaled_dot_product_attention; with bshd the result is a (B, L, NH, Ev)
    tensor in attn's dense layout instead (4-D inputs only)."""
    drop = None
    if dropout_p:
        drop = getattr(_drawn, "value", None) or _dropout(dropout_p)
    if scale is not None:
        scale = float(scale)
    try:
        sig = (query.shape, query.stride(), key.shape, key.stride(), value.shape,
               value.stride(), query.dtype, key.dtype, value.dtype, is_causal, scale,
               enable_gqa, bshd)
        call = _entries[sig]
    except KeyError:
        # a KV cache one key longer than a known call's: derived from it
        family = (query.shape, query.stride(), key.shape[:-2], key.shape[-1],
                  value.shape[:-2], value.shape[-1], query.dtype, key.dtype, value.dtype,
                  is_causal, scale, enable_gqa, bshd)
        prev = _families.get(family)
        call = None if prev is None else grown_call(prev, key, value, is_causal, scale)
        if call is None:
            call = new_call(query, key, value, is_causal, scale, enable_gqa, bshd)
        if len(_entries) >= 256:
            _entries.clear()
            _families.clear()
        _entries[sig] = call
        if call.kind == NORMAL:
            _families[family] = call
    except (AttributeError, RuntimeError, TypeError):  # not plain strided tensors
        check_tensors(query, key, value)
        raise
    if not (query.is_cpu and key.is_cpu and value.is_cpu):
        check_tensors(query, key, value)
    if call.kind:
        return _unusual(call, query, key, value, attn_mask, is_causal, scale, enable_gqa,
                        bshd, drop)
    mask = None
    if attn_mask is not None:
        if is_causal:
            raise ArgumentError("attn_mask must be None when is_causal=True (as in PyTorch)")
        mask = prepare_mask(attn_mask, call)
    if (query.requires_grad or key.requires_grad or value.requires_grad) and _grad_enabled():
        _handoff.args = (call, mask, drop)
        return _Attention.apply(query, key, value)
    if drop is not None:
        return _forward_masked(call, query, key, value, mask, False, drop)[0]
    if mask is None:
        return _forward(call, query, key, value, False)[0]
    return _forward_masked(call, query, key, value, mask, False)[0]


def _dropout(dropout_p):
    """(p, seed, offset) of a call with dropout_p > 0: seed and offset two
    64-bit draws of PyTorch's default CPU generator (torch.manual_seed makes
    them reproducible; every call draws new ones)."""
    p = float(dropout_p)
    if not 0.0 <= p < 1.0:
        raise ArgumentError("dropout_p must be in [0, 1), got %r" % (dropout_p,))
    seed, offset = torch.randint(-2 ** 63, 2 ** 63 - 1, (2,), dtype=torch.int64).tolist()
    return (p, seed & 0xFFFFFFFFFFFFFFFF, offset & 0xFFFFFFFFFFFFFFFF)


def _unusual(call, query, key, value, attn_mask, is_causal, scale, enable_gqa, bshd, drop):
    """Calls whose tensors must be copied first, or have a zero-sized
    dimension (no weight to drop)."""
    check_tensors(query, key, value)
    if call.kind == EMPTY:
        if attn_mask is not None and is_causal:
            raise ArgumentError("attn_mask must be None when is_causal=True (as in PyTorch)")
        out = math_reference(query, key, value, attn_mask, is_causal, scale, enable_gqa)
        return out.transpose(1, 2) if bshd else out
    copies = tuple(t.contiguous() if copy else t
                   for t, copy in zip((query, key, value), call.copy))
    if all(c is t for c, t in zip(copies, (query, key, value))):
        raise ArgumentError("query, key, value have a layout attn cannot read (shapes %s, %s, "
                            "%s)" % (tuple(query.shape), tuple(key.shape), tuple(value.shape)))
    query, key, value = copies
    return _attention_drawn(query, key, value, attn_mask, is_causal, scale, enable_gqa, bshd,
                            drop)


def _attention_drawn(query, key, value, attn_mask, is_causal, scale, enable_gqa, bshd, drop):
    """attention() of copied tensors with the dropout already drawn."""
    if drop is None:
        return attention(query, key, value, attn_mask, 0.0, is_causal, scale, enable_gqa, bshd)
    _drawn.value = drop
    try:
        return attention(query, key, value, attn_mask, drop[0], is_causal, scale, enable_gqa,
                         bshd)
    finally:
        _drawn.value = None


def _forward(call, q, k, v, want_lse):
    """(out, lse) without a mask: attn_sdpa_forward on call's cached plan, its
    slot holding all but the addresses; lse a NumPy (B, NH, L) array when
    want_lse (what the backward needs), else None."""
    if call.like_q:
        out = _empty_like(q)
    else:
        out = _empty_strided(call.out_shape, call.out_stride, dtype=call.dtype)
    ptr, addr, mv, _ = _slot(call)
    mv[_Q] = q.data_ptr()
    mv[_K] = k.data_ptr()
    mv[_V] = v.data_ptr()
    mv[_OUT] = out.data_ptr()
    lse = None
    if want_lse:
        lse = _np_empty(call.lse_shape, call.np_dtype)
        mv[_LSE] = _addressof(_from_buffer(lse))
    else:
        mv[_LSE] = 0
    if call.is_f32:
        status = _plans._forward_f32(ptr, addr)
    else:
        status = getattr(_plans, call.fwd.forward_name)(ptr, addr)
    if status:
        check(status, "attn_sdpa" + call.fwd.forward_name)
    return out, lse


def _forward_masked(call, q, k, v, mask, want_lse, drop=None):
    """_forward with a mask from prepare_mask (PyTorch's output layout depends
    on its number of dimensions) or None (call's own mask arguments), and
    with dropout drop = (p, seed, offset) or None: a call with dropout runs
    on call's training plan (an inference plan has no dropout)."""
    if mask is None:
        m, mld, msb, msh = call.cmask_args
        like_q = True
    else:
        m, mld, msb, msh, like_q = mask
        m = m.data_ptr()
    if like_q and call.like_q:
        out = _empty_like(q)
        ldo, sho, sbo = call.out_strides
    else:
        out = _empty_strided(call.out_shape, call.out_stride, dtype=call.dtype)
        ldo, sho, sbo = call.dense_out_strides
    lse = None
    lse_ptr = 0
    if want_lse:
        lse = _np_empty(call.lse_shape, call.np_dtype)
        lse_ptr = _addressof(_from_buffer(lse))
    ldq, shq, sbq, ldk, shk, sbk, ldv, shv, sbv = call.strides
    key, kl = (call.fwd, call.fwd_kl) if drop is None else (call.bwd, call.kl_ptr)
    _plans.forward(key, q.data_ptr(), ldq, shq, sbq, k.data_ptr(), ldk, shk, sbk,
                   v.data_ptr(), ldv, shv, sbv, out.data_ptr(), ldo, sho, sbo, lse_ptr, m, mld,
                   msb, msh, kl, dropout=drop)
    return out, lse


class _Attention(torch.autograd.Function):
    """out = sdpa(q, k, v); backward through attn_sdpa_backward from out and lse.

    The call and the mask come through _handoff, set right before apply (which
    runs forward at once, in this thread): non-tensor arguments of apply cost
    about 0.3 us each."""

    @staticmethod
    def forward(ctx, q, k, v):
        call, mask, drop = _handoff.args
        _handoff.args = None
        if drop is not None:
            out, lse = _forward_masked(call, q, k, v, mask, True, drop)
        elif mask is None:
            out, lse = _forward(call, q, k, v, True)
        else:
            out, lse = _forward_masked(call, q, k, v, mask, True)
        ctx.save_for_backward(q, k, v, out)
        ctx.state = (call, lse, mask, drop)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        q, k, v, out = ctx.saved_tensors
        call, lse, mask, drop = ctx.state
        return _backward(call, q, k, v, out, lse, mask, grad_out, drop)


def _backward(call, q, k, v, out, lse, mask, grad_out, drop=None):
    """(dq, dk, dv) by attn_sdpa_backward on call's cached training plan."""
    so = layout(out.shape, out.stride(), call.bshd)
    g = grad_out if grad_out.dtype == call.dtype else grad_out.to(call.dtype)
    if g.stride() != out.stride() and layout(g.shape, g.stride(), call.bshd) != so:
        g = _empty_like(out).copy_(g)  # C reads dout with out's strides
    mp, mld, msb, msh = call.cmask_args if mask is None else (mask[0].data_ptr(),) + mask[1:4]
    ldq, shq, sbq, ldk, shk, sbk, ldv, shv, sbv = call.strides
    isz = call.itemsize
    inputs = (q, k, v)
    arrays = [(t.data_ptr() // isz, n, dense) for t, (n, dense) in zip(inputs, call.extents)]
    placings = list(grad_placements(arrays))
    for placing in placings:
        grads = _gradients(inputs, placing, call.dtype)
        status = _plans.backward(call.bwd, q.data_ptr(), ldq, shq, sbq, k.data_ptr(), ldk, shk,
                                 sbk, v.data_ptr(), ldv, shv, sbv, out.data_ptr(), so[0], so[1],
                                 so[2], lse.ctypes.data, mp, mld, msb, msh, call.kl_ptr,
                                 g.data_ptr(), *(t.data_ptr() for t in grads),
                                 retry=placing is not placings[-1], dropout=drop)
        if not status:
            return grads


def _gradients(inputs, placing, dtype):
    """dq, dk, dv with the strides of q, k, v, placed as
    attn._layout.grad_placements says."""
    buffers, places = placing
    mem = [_empty(n, dtype=dtype) for n in buffers]
    return tuple(_empty_like(t) if at is None else
                 mem[at[0]].as_strided(t.shape, t.stride(), at[1])
                 for t, at in zip(inputs, places))


def use_openmp_threads(enable=True):
    """Runs attn's shared threads (the default engine, ATTN_THREADS_AUTO) on
    PyTorch's OpenMP threads (enable True; importing attn.torch does so
    unless ATTN_TORCH_OPENMP=0) or on attn's own (False). Returns the path
    of the runtime attn runs on, or None: on its own threads, also when
    PyTorch's parallel backend is not OpenMP or the runtime is not found.
    The calls known so far are forgotten: where attn runs decides how a
    small decode step runs (attn/_torch_call.py, DECODE_ALONE_BYTES)."""
    _entries.clear()
    _families.clear()
    if not enable:
        _openmp.use(None)
        return None
    if "parallel backend: OpenMP" not in torch.__config__.parallel_info():
        return _openmp.current()
    path = _openmp.loaded_runtime(os.path.dirname(os.path.abspath(torch.__file__)))
    if path is not None and _openmp.use(path):
        return path
    return _openmp.current()


if os.environ.get("ATTN_TORCH_OPENMP", "1") != "0":
    use_openmp_threads(True)
