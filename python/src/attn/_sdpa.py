"""Attention on given Q, K, V (attn_sdpa_*) on NumPy arrays, in attn's layout.

Layout (B batch, Tq queries, Tk keys, NH query heads, NH_kv key/value
heads, hs head size of q and k, hs_v of v and the output)::

    q   (B, Tq, NH,    hs)        or (Tq, NH, hs) for one sequence
    k   (B, Tk, NH_kv, hs)
    v   (B, Tk, NH_kv, hs_v)
    out (B, Tq, NH,    hs_v)
    lse (B, NH, Tq)               log-sum-exp of each row's scaled, masked scores

NH must be a multiple of NH_kv (grouped-query attention: query head h reads
key/value head h // (NH // NH_kv)). Arrays are read in place through row
strides: a dense array, or a (B, T, H, d) view of wider rows (a slice of a
fused QKV projection), is not copied.

Semantics (attn.h): for sequence b with L = key_lengths[b] (or Tk), query t
sits at position p = L - Tq + t (bottom-right alignment, as in a decode
step); key j is visible when j < L, and with causal j <= p, and with
window > 0 j > p - window. A row with no visible key gives out 0 and lse
-inf.
"""

import ctypes
import threading

import numpy as np

from . import _lib
from ._arrays import F32, F64, address, as_array, as_input, compute_dtype, row_stride
from .errors import ArgumentError, DTypeError, check

__all__ = ["sdpa", "prepare_mask", "prepare_key_lengths"]

_fns = _lib.lib
_SHAPE_PACK = _lib.SHAPE.pack_into
_ARGS_PACK = _lib.ARGS.pack_into
_CAUSAL = _lib.ATTN_CAUSAL
_tls = threading.local()
_ndarray = np.ndarray
_empty = np.empty
_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
_sdpa_f32 = _fns.attn_sdpa_f32
_sdpa_f64 = _fns.attn_sdpa_f64


def _call_buffers():
    """This thread's (shape struct, args struct) and their addresses."""
    try:
        return _tls.buffers
    except AttributeError:
        shape, args = _lib.SdpaShape(), _lib.SdpaArgs()
        _tls.buffers = (shape, ctypes.addressof(shape), args, ctypes.addressof(args))
        return _tls.buffers


def _one_shot(dtype):
    if dtype is F32:
        return _fns.attn_sdpa_f32, "attn_sdpa_f32"
    return _fns.attn_sdpa_f64, "attn_sdpa_f64"


def rows(a, dtype, name):
    """(a, ld): a readable in attn's row layout (ld 0 = dense), copied only if not."""
    if a.dtype is dtype or a.dtype == dtype:
        flags = a.flags
        if flags.aligned:
            if flags.c_contiguous:
                return a, 0
            ld = row_stride(a.shape, a.strides, dtype.itemsize)
            if ld is not None:
                return a, ld
    return as_input(a, dtype, name), 0


def prepare_mask(mask, B, NH, Tq, Tk, dtype):
    """(array or None, mask_ld, mask_sb, mask_sh) for a mask broadcastable to (B,NH,Tq,Tk).

    A bool mask means True = the key takes part (False becomes -inf); any
    other real mask is added to the scaled scores (-inf masks). The mask is
    kept in its smallest broadcast form (a (Tq,Tk) mask is one (Tq,Tk)
    array read with stride 0 over batch and heads); an additive mask of the
    right dtype that is already C-contiguous in that form is not copied.
    """
    if mask is None:
        return None, 0, 0, 0
    m = as_array(mask, "mask")
    if m.ndim > 4:
        raise ArgumentError("mask has %d dimensions; it must broadcast to (B, NH, Tq, Tk) = %s"
                            % (m.ndim, (B, NH, Tq, Tk)))
    try:
        m = np.broadcast_to(m, (B, NH, Tq, Tk))
    except ValueError:
        raise ArgumentError("mask of shape %s does not broadcast to (B, NH, Tq, Tk) = %s"
                            % (np.shape(mask), (B, NH, Tq, Tk))) from None
    keep = tuple(slice(0, 1) if (m.shape[i] == 1 or m.strides[i] == 0) else slice(None)
                 for i in range(3))
    m = m[keep]
    if m.dtype == np.bool_:
        m = np.where(m, dtype.type(0), dtype.type(-np.inf))
    elif m.dtype.kind not in "fiu":
        raise DTypeError("mask has dtype %s; it must be bool or real" % m.dtype)
    else:
        m = as_input(m, dtype, "mask")
    b1, h1, t1 = m.shape[:3]
    return (m, Tk if t1 > 1 else 0, h1 * t1 * Tk if b1 > 1 else 0, t1 * Tk if h1 > 1 else 0)


def prepare_key_lengths(key_lengths, B):
    """key_lengths as a contiguous size_t (np.uintp) array of B entries, or None."""
    if key_lengths is None:
        return None
    kl = as_array(key_lengths, "key_lengths")
    if kl.ndim == 0:
        kl = kl.reshape(1)
    if kl.shape != (B,):
        raise ArgumentError("key_lengths has shape %s, expected (%d,) (one per sequence)"
                            % (kl.shape, B))
    if kl.dtype.kind not in "iu":
        raise DTypeError("key_lengths has dtype %s; it must hold integers" % kl.dtype)
    if kl.dtype.kind == "i" and (kl < 0).any():
        raise ArgumentError("key_lengths must be >= 0, got %s" % kl)
    if kl.dtype != np.uintp or not kl.flags.c_contiguous:
        kl = np.ascontiguousarray(kl, dtype=np.uintp)
    return kl


def check_window(window):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 0:
        raise ArgumentError("window must be an integer >= 0 (0: none), got %r" % (window,))
    return int(window)


def check_scale(scale):
    """The C scale: 0.0 (1/sqrt(hs)) for None, else a positive number."""
    if scale is None:
        return 0.0
    try:
        s = float(scale)
    except (TypeError, ValueError):
        raise ArgumentError("scale must be a number or None, not %r" % (scale,)) from None
    if s <= 0.0:
        raise ArgumentError("scale must be positive (None means 1/sqrt(hs)), got %r" % (scale,))
    return s


def inputs(q, k, v, dtype=None):
    """q, k, v checked, as 4-D arrays in attn's layout with their row strides.

    Returns (dtype, squeeze, dims, q, ldq, k, ldk, v, ldv) with dims =
    (B, NH, NH_kv, Tq, Tk, hs, hs_v); squeeze tells that q was 3-D.
    """
    if type(q) is not np.ndarray:
        q = as_array(q, "q")
    if dtype is None:
        dtype = compute_dtype(q, "q")
    if type(k) is not np.ndarray:
        k = as_array(k, "k")
    if type(v) is not np.ndarray:
        v = as_array(v, "v")
    squeeze = q.ndim == 3
    if not (q.ndim == k.ndim == v.ndim) or q.ndim not in (3, 4):
        raise ArgumentError("q, k, v must all be 4-D (B, T, heads, head size) or all 3-D "
                            "(T, heads, head size); got shapes %s, %s, %s"
                            % (q.shape, k.shape, v.shape))
    if squeeze:
        q, k, v = q[None], k[None], v[None]
    B, Tq, NH, hs = q.shape
    Bk, Tk, NH_kv, hs_k = k.shape
    if Bk != B or hs_k != hs or v.shape[:3] != (B, Tk, NH_kv):
        raise ArgumentError("shapes do not match: q %s = (B,Tq,NH,hs), k %s must be "
                            "(B,Tk,NH_kv,hs), v %s must be (B,Tk,NH_kv,hs_v)"
                            % (q.shape, k.shape, v.shape))
    q, ldq = rows(q, dtype, "q")
    k, ldk = rows(k, dtype, "k")
    v, ldv = rows(v, dtype, "v")
    return dtype, squeeze, (B, NH, NH_kv, Tq, Tk, hs, v.shape[3]), q, ldq, k, ldk, v, ldv


def out_rows(out, shape, dtype, name):
    """(array, ld) to write a (B,T,H,d) result to: new, or the caller's, in place."""
    if out is None:
        return np.empty(shape, dtype), 0
    if not isinstance(out, np.ndarray):
        raise ArgumentError("%s must be a NumPy array, not %s" % (name, type(out).__name__))
    if out.dtype != dtype:
        raise DTypeError("%s has dtype %s; this call writes %s" % (name, out.dtype, dtype))
    if out.shape != shape:
        raise ArgumentError("%s has shape %s, expected %s" % (name, out.shape, shape))
    flags = out.flags
    if flags.writeable and flags.aligned:
        if flags.c_contiguous:
            return out, 0
        ld = row_stride(out.shape, out.strides, dtype.itemsize)
        if ld is not None:
            return out, ld
    raise ArgumentError("%s must be writeable and C-contiguous (or rows of a wider array) "
                        "(it is written in place, never through a copy)" % name)


def sdpa(q, k, v, mask=None, key_lengths=None, causal=False, scale=None, window=0,
         return_lse=False, *, out=None, lse=None):
    """Scaled dot-product attention on (B,T,heads,head size) arrays (see the module).

    mask: broadcastable to (B,NH,Tq,Tk), bool (True = take part) or additive.
    key_lengths: (B,) integers <= Tk, keys j >= key_lengths[b] do not exist.
    causal: bottom-right aligned (query t at position L - Tq + t).
    scale: None means 1/sqrt(hs). window: 0 none, else the sliding window.
    Returns out (B,Tq,NH,hs_v), and lse (B,NH,Tq) too when return_lse (or
    `lse` is given). 3-D q, k, v (one sequence) give 3-D out and 2-D lse.
    """
    if (type(q) is _ndarray and type(k) is _ndarray and type(v) is _ndarray
            and mask is None and key_lengths is None and scale is None and not window
            and out is None and lse is None):
        result = _fast(q, k, v, causal, return_lse)
        if result is not None:
            return result
    dtype, squeeze, dims, q, ldq, k, ldk, v, ldv = inputs(q, k, v)
    B, NH, NH_kv, Tq, Tk, hs, hs_v = dims
    m, mask_ld, mask_sb, mask_sh = prepare_mask(mask, B, NH, Tq, Tk, dtype)
    kl = prepare_key_lengths(key_lengths, B)
    c_scale = check_scale(scale)
    window = check_window(window) if window else 0
    given_out, given_lse = out, lse
    if squeeze and isinstance(out, np.ndarray):
        out = out[None]
    out, ldo = out_rows(out, (B, Tq, NH, hs_v), dtype, "out")
    lse_ptr = 0
    if return_lse or lse is not None:
        if squeeze and isinstance(lse, np.ndarray):
            lse = lse[None]
        lse = _lse_output(lse, (B, NH, Tq), dtype)
        lse_ptr = address(lse)
    shape, shape_addr, args, args_addr = _call_buffers()
    _SHAPE_PACK(shape, 0, B, NH, NH_kv, Tq, Tk, hs, hs_v)
    _ARGS_PACK(args, 0, address(q), ldq, address(k), ldk, address(v), ldv,
               0 if m is None else address(m), mask_ld, mask_sb, mask_sh,
               0 if kl is None else address(kl), address(out), ldo, lse_ptr)
    fn, name = _one_shot(dtype)
    status = fn(shape_addr, c_scale, _CAUSAL if causal else 0, window, args_addr)
    if status:
        check(status, name)
    if squeeze:
        out = out[0] if given_out is None else given_out
        if lse_ptr:
            lse = lse[0] if given_lse is None else given_lse
    return (out, lse) if lse_ptr else out


def _fast(q, k, v, causal, return_lse):
    """attn.sdpa's path for dense 4-D arrays of one float dtype and no options;
    None when they are not that (the general path then takes the call)."""
    dtype = q.dtype
    if not (dtype is F32 or dtype is F64) or k.dtype is not dtype or v.dtype is not dtype:
        return None
    if not (q.flags.carray and k.flags.carray and v.flags.carray):
        return None
    try:
        B, Tq, NH, hs = q.shape
        Bk, Tk, NH_kv, hs_k = k.shape
        Bv, Tv, NH_v, hs_v = v.shape
    except ValueError:  # not 4-D
        return None
    if Bk != B or Bv != B or Tv != Tk or NH_v != NH_kv or hs_k != hs:
        return None
    out = _empty((B, Tq, NH, hs_v), dtype)
    try:
        qp, kp, vp, op = (_addressof(_from_buffer(q)), _addressof(_from_buffer(k)),
                          _addressof(_from_buffer(v)), _addressof(_from_buffer(out)))
    except ValueError:  # an empty array: the general path reports it
        return None
    lse = None
    lse_ptr = 0
    if return_lse:
        lse = _empty((B, NH, Tq), dtype)
        lse_ptr = _addressof(_from_buffer(lse))
    try:
        buffers = _tls.buffers
    except AttributeError:
        buffers = _call_buffers()
    _SHAPE_PACK(buffers[0], 0, B, NH, NH_kv, Tq, Tk, hs, hs_v)
    _ARGS_PACK(buffers[2], 0, qp, 0, kp, 0, vp, 0, 0, 0, 0, 0, 0, op, 0, lse_ptr)
    if dtype is F32:
        status = _sdpa_f32(buffers[1], 0.0, _CAUSAL if causal else 0, 0, buffers[3])
    else:
        status = _sdpa_f64(buffers[1], 0.0, _CAUSAL if causal else 0, 0, buffers[3])
    if status:
        check(status, "attn_sdpa_f32" if dtype is F32 else "attn_sdpa_f64")
    return (out, lse) if return_lse else out


def call_one_shot(is_f32, dims, c_scale, flags, window, pointers):
    """attn_sdpa_f32/_f64 on raw pointers (the PyTorch drop-in's forward).

    dims = (B, NH, NH_kv, Tq, Tk, hs, hs_v); pointers = (Q, ldq, K, ldk, V,
    ldv, mask, mask_ld, mask_sb, mask_sh, key_lengths, out, ldo, lse) as in
    attn_sdpa_args (addresses as ints, 0 for NULL). Raises on a nonzero status.
    """
    try:
        buffers = _tls.buffers
    except AttributeError:
        buffers = _call_buffers()
    _SHAPE_PACK(buffers[0], 0, *dims)
    _ARGS_PACK(buffers[2], 0, *pointers)
    fn = _sdpa_f32 if is_f32 else _sdpa_f64
    status = fn(buffers[1], c_scale, flags, window, buffers[3])
    if status:
        check(status, "attn_sdpa_f32" if is_f32 else "attn_sdpa_f64")


def _lse_output(lse, shape, dtype):
    if lse is None:
        return np.empty(shape, dtype)
    if not isinstance(lse, np.ndarray) or lse.dtype != dtype or lse.shape != shape \
            or not (lse.flags.c_contiguous and lse.flags.writeable and lse.flags.aligned):
        raise ArgumentError("lse must be a writeable C-contiguous %s array of shape %s"
                            % (dtype, shape))
    return lse
