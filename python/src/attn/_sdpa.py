"""Attention on given Q, K, V (attn_sdpa_*) on NumPy arrays, in attn's layout.

Layout (B batch, Tq queries, Tk keys, NH query heads, NH_kv key/value
heads, hs head size of q and k, hs_v of v and the output)::

    q   (B, Tq, NH,    hs)        or (Tq, NH, hs) for one sequence
    k   (B, Tk, NH_kv, hs)
    v   (B, Tk, NH_kv, hs_v)
    out (B, Tq, NH,    hs_v)
    lse (B, NH, Tq)               log-sum-exp of each row's scaled, masked scores

NH must be a multiple of NH_kv (grouped-query attention: query head h reads
key/value head h // (NH // NH_kv)). Arrays are read in place through their
strides, whatever the order of their first three axes, as long as the last
axis is contiguous (a transposed (B, H, T, d) array, a slice of a larger
cache, head views of a fused QKV projection); others are copied once.

Semantics (attn.h): for sequence b with L = key_lengths[b] (or Tk), query t
sits at position p = L - Tq + t (bottom-right alignment, as in a decode
step); key j is visible when j < L, and with causal j <= p, and with
window > 0 j > p - window. A row with no visible key gives out 0 and lse
-inf.

Dtypes: float32 and float64 arrays compute in their precision; q, k, v all
float16, or all bfloat16 (ml_dtypes.bfloat16, when ml_dtypes is installed),
in half precision (attn.h "half precision": float arithmetic on the 16-bit
values, each output element rounded once): out has their dtype, lse is
float32 and a mask is converted to float32 (its dtype for float32 and
float64 inputs). A half q, k or v mixed with another dtype raises
DTypeError; other real dtypes compute in float64 (attn/_arrays.py).

Each call runs on a cached sdpa plan of its signature (attn/_plans.py).
"""

import ctypes

import numpy as np

from . import _lib, _plans
from ._arrays import (F32, address, as_array, as_input, code_of, is_bfloat16,
                      sdpa_dtype)
from ._layout import c_strides
from .errors import ArgumentError, DTypeError, check

__all__ = ["sdpa", "prepare_mask", "prepare_key_lengths"]

_CAUSAL = _lib.ATTN_CAUSAL
_INFERENCE = _lib.ATTN_INFERENCE
_ndarray = np.ndarray
_empty = np.empty
_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
_entries = {}
_Q, _K, _V, _OUT, _LSE = _plans.Q, _plans.K, _plans.V, _plans.OUT, _plans.LSE


def array_strides(a, itemsize):
    """(ld, sh, sb) in elements of a (B, T, H, d) or (T, H, d) array for C, or
    None when it must be copied first (last axis not contiguous, strides C
    refuses, or not a multiple of the item size)."""
    shape, strides = a.shape, a.strides
    if len(shape) == 4:
        B, T, H, d = shape
        sb, st, sh, si = strides
    else:
        T, H, d = shape
        st, sh, si = strides
        B, sb = 1, 0
    if d > 1 and si != itemsize:
        return None
    if st % itemsize or sh % itemsize or sb % itemsize:
        return None
    return c_strides(d, T, st // itemsize, H, sh // itemsize, B, sb // itemsize)


def strided(a, dtype, name):
    """(a, (ld, sh, sb)): a readable by C as it is, or a copy in attn's layout."""
    if a.dtype is dtype or a.dtype == dtype:
        if a.flags.aligned:
            st = array_strides(a, dtype.itemsize)
            if st is not None:
                return a, st
    return as_input(a, dtype, name), (0, 0, 0)


def prepare_mask(mask, B, NH, Tq, Tk, dtype):
    """(array or None, mask_ld, mask_sb, mask_sh) for a mask broadcastable to (B,NH,Tq,Tk).

    dtype is the mask's C type: the computing dtype, float32 for half
    precision (mask_dtype). A bool mask means True = the key takes part
    (False becomes -inf); any other real mask (bfloat16 included) is
    converted to dtype and added to the scaled scores (-inf masks). The mask is
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
    elif m.dtype.kind not in "fiu" and not is_bfloat16(m.dtype):
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


def mask_dtype(dtype):
    """The C type of the mask and lse of a computation in dtype: float32 for
    the half types (attn.h), dtype itself for float32 and float64."""
    return dtype if dtype.itemsize >= 4 else F32


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
    """q, k, v checked, each readable by C (in place, or a copy).

    Returns (dtype, squeeze, dims, q, k, v, strides) with dims = (B, NH,
    NH_kv, Tq, Tk, hs, hs_v), strides = (ldq, shq, sbq, ldk, shk, sbk, ldv,
    shv, sbv) in elements, and squeeze telling that q was 3-D.
    """
    if type(q) is not np.ndarray:
        q = as_array(q, "q")
    if type(k) is not np.ndarray:
        k = as_array(k, "k")
    if type(v) is not np.ndarray:
        v = as_array(v, "v")
    if dtype is None:
        dtype = sdpa_dtype(q, k, v)
    squeeze = q.ndim == 3
    if not (q.ndim == k.ndim == v.ndim) or q.ndim not in (3, 4):
        raise ArgumentError("q, k, v must all be 4-D (B, T, heads, head size) or all 3-D "
                            "(T, heads, head size); got shapes %s, %s, %s"
                            % (q.shape, k.shape, v.shape))
    q4, k4, v4 = (x.shape if x.ndim == 4 else (1,) + x.shape for x in (q, k, v))
    B, Tq, NH, hs = q4
    Bk, Tk, NH_kv, hs_k = k4
    if Bk != B or hs_k != hs or v4[:3] != (B, Tk, NH_kv):
        raise ArgumentError("shapes do not match: q %s = (B,Tq,NH,hs), k %s must be "
                            "(B,Tk,NH_kv,hs), v %s must be (B,Tk,NH_kv,hs_v)"
                            % (q.shape, k.shape, v.shape))
    q, sq = strided(q, dtype, "q")
    k, sk = strided(k, dtype, "k")
    v, sv = strided(v, dtype, "v")
    return dtype, squeeze, (B, NH, NH_kv, Tq, Tk, hs, v4[3]), q, k, v, sq + sk + sv


def out_strides(out, shape, dtype, name):
    """The (ld, sh, sb) of a caller's output array, which C writes in place."""
    if not isinstance(out, np.ndarray):
        raise ArgumentError("%s must be a NumPy array, not %s" % (name, type(out).__name__))
    if out.dtype != dtype:
        raise DTypeError("%s has dtype %s; this call writes %s" % (name, out.dtype, dtype))
    if out.shape != shape:
        raise ArgumentError("%s has shape %s, expected %s" % (name, out.shape, shape))
    if out.flags.writeable and out.flags.aligned:
        st = array_strides(out, dtype.itemsize)
        if st is not None:
            return st
    raise ArgumentError("%s must be writeable, with a contiguous last axis and elements at "
                        "distinct addresses (it is written in place, never through a copy)"
                        % name)


class _Call:
    """What one signature of attn.sdpa needs, found once (see _call)."""

    __slots__ = ("fwd", "is_f32", "dtype", "lse_dtype", "dims", "strides", "itemsize",
                 "out_shape", "lse_shape", "template")


def _make_call(dtype, squeeze, dims, strides, causal, c_scale, window):
    call = _Call()
    call.dims, call.strides, call.itemsize = dims, strides, dtype.itemsize
    call.dtype, call.lse_dtype = dtype, mask_dtype(dtype)
    call.is_f32 = dtype is F32
    call.fwd = _plans.plan_key(code_of(dtype), dims,
                               _INFERENCE | (_CAUSAL if causal else 0), c_scale, window)
    call.template = _plans.template(strides, (0, 0, 0), (0, 0, 0, 0), 0)
    B, NH, _, Tq, _, _, hs_v = dims
    call.out_shape = (Tq, NH, hs_v) if squeeze else (B, Tq, NH, hs_v)
    call.lse_shape = (NH, Tq) if squeeze else (B, NH, Tq)
    return call


def _call(q, k, v, causal, c_scale, window):
    """The _Call of arrays of these shapes, strides and dtype (found once per
    signature), or None unless they are all of one dtype attn computes in
    (float32, float64, float16, bfloat16) and C reads them in place."""
    sig = (q.shape, q.strides, k.shape, k.strides, v.shape, v.strides, q.dtype, k.dtype,
           v.dtype, causal, c_scale, window)
    call = _entries.get(sig)
    if call is None:
        dtype = q.dtype
        if k.dtype is not dtype or v.dtype is not dtype or code_of(dtype) is None:
            return None
        if q.ndim not in (3, 4) or any(not x.flags.aligned or array_strides(x, dtype.itemsize)
                                       is None for x in (q, k, v)):
            return None  # inputs() copies
        dtype, squeeze, dims, q, k, v, strides = inputs(q, k, v, dtype)
        call = _make_call(dtype, squeeze, dims, strides, causal, c_scale, window)
        if len(_entries) >= 256:
            _entries.clear()
        _entries[sig] = call
    return call


def _address(a):
    try:
        return _addressof(_from_buffer(a))
    except (TypeError, ValueError, BufferError):  # read-only or strided
        return a.ctypes.data


def sdpa(q, k, v, mask=None, key_lengths=None, causal=False, scale=None, window=0,
         return_lse=False, *, out=None, lse=None):
    """Scaled dot-product attention on (B,T,heads,head size) arrays (see the module).

    mask: broadcastable to (B,NH,Tq,Tk), bool (True = take part) or additive.
    key_lengths: (B,) integers <= Tk, keys j >= key_lengths[b] do not exist.
    causal: bottom-right aligned (query t at position L - Tq + t).
    scale: None means 1/sqrt(hs). window: 0 none, else the sliding window.
    q, k, v of any strides whose last axis is contiguous are read in place.
    Returns out (B,Tq,NH,hs_v), and lse (B,NH,Tq) too when return_lse (or
    `lse` is given). 3-D q, k, v (one sequence) give 3-D out and 2-D lse.
    float16 or bfloat16 q, k, v (all three of one dtype): out of that dtype,
    lse float32, the mask converted to float32.
    out= may have any such strides too (written in place); lse= is dense.
    """
    c_scale = 0.0 if scale is None else check_scale(scale)
    window = check_window(window) if window else 0
    causal = bool(causal)
    call = None
    if type(q) is _ndarray and type(k) is _ndarray and type(v) is _ndarray:
        call = _call(q, k, v, causal, c_scale, window)
    if call is None:  # conversions or copies
        dtype, squeeze, dims, q, k, v, strides = inputs(q, k, v)
        call = _make_call(dtype, squeeze, dims, strides, causal, c_scale, window)
    qp, kp, vp = _address(q), _address(k), _address(v)
    isz = call.itemsize
    dtype = call.dtype
    if (qp | kp | vp) % isz:  # misaligned (a view at an odd byte offset)
        return sdpa(as_input(q, dtype, "q") if qp % isz else q,
                    as_input(k, dtype, "k") if kp % isz else k,
                    as_input(v, dtype, "v") if vp % isz else v, mask, key_lengths, causal,
                    scale, window, return_lse, out=out, lse=lse)
    if mask is None and key_lengths is None and out is None:
        # the common call: the slot of its signature holds all but addresses
        out = _empty(call.out_shape, dtype)
        ptr, addr, mv, _ = _plans.slot(call)
        mv[_Q], mv[_K], mv[_V], mv[_OUT] = qp, kp, vp, _address(out)
        mv[_LSE] = 0
        if return_lse or lse is not None:
            lse = _lse_output(lse, call.lse_shape, call.lse_dtype)
            mv[_LSE] = address(lse)
        if call.is_f32:
            status = _plans._forward_f32(ptr, addr)
        else:
            status = getattr(_plans, call.fwd.forward_name)(ptr, addr)
        if status:
            check(status, "attn_sdpa" + call.fwd.forward_name)
        return (out, lse) if mv[_LSE] else out
    B, NH, NH_kv, Tq, Tk, hs, hs_v = call.dims
    mp = mld = msb = msh = klp = 0
    if mask is not None:
        m, mld, msb, msh = prepare_mask(mask, B, NH, Tq, Tk, call.lse_dtype)
        mp = address(m)
    if key_lengths is not None:
        kl = prepare_key_lengths(key_lengths, B)
        klp = address(kl)
    if out is None:
        out = _empty(call.out_shape, dtype)
        op = _address(out)
        ldo = sho = sbo = 0
    else:
        ldo, sho, sbo = out_strides(out, call.out_shape, dtype, "out")
        op = out.ctypes.data
    lse_ptr = 0
    if return_lse or lse is not None:
        lse = _lse_output(lse, call.lse_shape, call.lse_dtype)
        lse_ptr = address(lse)
    ldq, shq, sbq, ldk, shk, sbk, ldv, shv, sbv = call.strides
    _plans.forward(call.fwd, qp, ldq, shq, sbq, kp, ldk, shk, sbk, vp, ldv, shv, sbv,
                   op, ldo, sho, sbo, lse_ptr, mp, mld, msb, msh, klp)
    return (out, lse) if lse_ptr else out


def _lse_output(lse, shape, dtype):
    if lse is None:
        return np.empty(shape, dtype)
    if not isinstance(lse, np.ndarray) or lse.dtype != dtype or lse.shape != shape \
            or not (lse.flags.c_contiguous and lse.flags.writeable and lse.flags.aligned):
        raise ArgumentError("lse must be a writeable C-contiguous %s array of shape %s"
                            % (dtype, shape))
    return lse
