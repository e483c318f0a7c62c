"""SdpaPlan: an sdpa plan (attention on given q, k, v) fixed once, run many times.

    with attn.SdpaPlan(B, NH, Tq, Tk, hs, NH_kv=2) as plan:
        out, lse = plan.forward(q, k, v, return_lse=True)
        dq, dk, dv = plan.backward(q, k, v, out, lse, dout)

Life cycle, closing and threads as attn.Plan (attn/plan.py). dtype float32,
float64, float16 or bfloat16 (ml_dtypes.bfloat16, or the string "bfloat16"
when ml_dtypes is installed); a half plan's lse and mask are float32.
"""

import ctypes

import numpy as np

from . import _lib
from ._arrays import F16, address, as_input, bfloat16, check_shape, code_of, output
from ._layout import extent, grad_placements
from ._plans import ALIASING, SUFFIX
from ._sdpa import (check_scale, check_window, inputs, mask_dtype, out_strides,
                    prepare_key_lengths, prepare_mask, strided)
from .errors import ArgumentError, DTypeError, check
from .plan import _PlanBase, _plan_dtype, _size

__all__ = ["SdpaPlan"]

_fns = _lib.lib
_ARGS_PACK = _lib.ARGS.pack_into
_ndarray = np.ndarray
_empty = np.empty


class SdpaPlan(_PlanBase):
    """An sdpa plan (attn_sdpa_plan_create): attention on given q, k, v.

    Layout and semantics as attn.sdpa: q (B,Tq,NH,hs), k (B,Tk,NH_kv,hs),
    v (B,Tk,NH_kv,hs_v), out (B,Tq,NH,hs_v), lse (B,NH,Tq), each of any
    strides whose last axis is contiguous (read or written in place); causal
    is bottom-right aligned. dtype: np.float32, np.float64, np.float16 or
    ml_dtypes.bfloat16 (half precision: q, k, v, out and the gradients of
    that dtype, lse and the mask float32; inputs of other dtypes are
    converted to the plan's). NH_kv defaults to NH, hs_v to hs; scale None means
    1/sqrt(hs); window 0 means none. inference=True: no backward. dropout: p
    or (p, seed, offset), see set_dropout; the backward uses the plan's
    setting at its call, so keep the forward's (lse is the undropped one).

    The plan keeps one argument struct and reuses it, so a forward on
    C-contiguous arrays of the plan's dtype costs a few microseconds of
    Python on top of the C call.
    """

    def __init__(self, B, NH, Tq, Tk, hs, *, NH_kv=None, hs_v=None, dtype=np.float32,
                 scale=None, causal=False, window=0, inference=False, threads=None,
                 dropout=None):
        self.dtype = _sdpa_plan_dtype(dtype)
        self._lse_dtype = mask_dtype(self.dtype)
        NH_kv = NH if NH_kv is None else NH_kv
        hs_v = hs if hs_v is None else hs_v
        dims = tuple(_size(x, n) for x, n in ((B, "B"), (NH, "NH"), (NH_kv, "NH_kv"),
                                              (Tq, "Tq"), (Tk, "Tk"), (hs, "hs"),
                                              (hs_v, "hs_v")))
        self.B, self.NH, self.NH_kv, self.Tq, self.Tk, self.hs, self.hs_v = dims
        self.dims = dims
        self.causal, self.inference = bool(causal), bool(inference)
        self.window = check_window(window)
        flags = (_lib.ATTN_CAUSAL if causal else 0) | (_lib.ATTN_INFERENCE if inference else 0)
        shape = _lib.SdpaShape(*dims)
        self._create(_fns.attn_sdpa_plan_create, code_of(self.dtype),
                     ctypes.addressof(shape), check_scale(scale), flags, self.window)
        self.scale = check_scale(scale) or 1.0 / float(np.sqrt(self.hs))
        B, NH, NH_kv, Tq, Tk, hs, hs_v = dims
        self._q_shape = (B, Tq, NH, hs)
        self._k_shape = (B, Tk, NH_kv, hs)
        self._v_shape = (B, Tk, NH_kv, hs_v)
        self._out_shape = (B, Tq, NH, hs_v)
        self._lse_shape = (B, NH, Tq)
        self._args = _lib.SdpaArgs()
        self._args_addr = ctypes.addressof(self._args)
        sfx = self._suffix()
        self._fwd = getattr(_fns, "attn_sdpa_forward_" + sfx)
        self._fwd_name = "attn_sdpa_forward_" + sfx
        self._bwd = getattr(_fns, "attn_sdpa_backward_" + sfx)
        self._bwd_name = "attn_sdpa_backward_" + sfx
        if threads is not None:
            self.set_threads(threads)
        if dropout is not None:
            self.dropout = dropout

    def _suffix(self):
        return SUFFIX[code_of(self.dtype)]

    def __repr__(self):
        return ("attn.SdpaPlan(B=%d, NH=%d, Tq=%d, Tk=%d, hs=%d, NH_kv=%d, hs_v=%d, dtype=%s%s%s)"
                % (self.B, self.NH, self.Tq, self.Tk, self.hs, self.NH_kv, self.hs_v,
                   self.dtype.name, ", causal=True" if self.causal else "",
                   ", closed" if self.closed else ""))

    def _qkv(self, q, k, v):
        """(q, k, v, strides) checked against the plan's shape; strides as
        attn._sdpa.inputs returns them."""
        if getattr(q, "ndim", 4) != 4:
            raise ArgumentError("a plan takes 4-D q, k, v (B, T, heads, head size)")
        _, _, dims, q, k, v, strides = inputs(q, k, v, self.dtype)
        if dims != self.dims:
            raise ArgumentError("q %s, k %s, v %s do not match the plan's %s"
                                % (q.shape, k.shape, v.shape, self))
        return q, k, v, strides

    def _extras(self, mask, key_lengths):
        """(mask address, mask_ld, mask_sb, mask_sh, key_lengths address, keep):
        keep holds the arrays while C reads them."""
        if mask is None and key_lengths is None:
            return 0, 0, 0, 0, 0, None
        B, NH, _, Tq, Tk, _, _ = self.dims
        m, mld, msb, msh = prepare_mask(mask, B, NH, Tq, Tk, self._lse_dtype)
        kl = prepare_key_lengths(key_lengths, B)
        return (0 if m is None else address(m), mld, msb, msh,
                0 if kl is None else address(kl), (m, kl))

    def forward(self, q, k, v, *, mask=None, key_lengths=None, out=None, lse=None,
                return_lse=False):
        """attn_sdpa_forward: returns out (and lse (B,NH,Tq) when asked; a
        backward needs it). out= may have any strides with a contiguous last
        axis (written in place)."""
        dt = self.dtype
        if (type(q) is _ndarray and type(k) is _ndarray and type(v) is _ndarray
                and q.dtype is dt and k.dtype is dt and v.dtype is dt
                and q.shape == self._q_shape and k.shape == self._k_shape
                and v.shape == self._v_shape
                and q.flags.carray and k.flags.carray and v.flags.carray):
            # The common case: dense, writeable arrays of the plan's dtype
            # (address: bfloat16 arrays export no buffer, they take a.ctypes).
            qp, kp, vp = address(q), address(k), address(v)
            ldq = shq = sbq = ldk = shk = sbk = ldv = shv = sbv = 0
        else:
            q, k, v, (ldq, shq, sbq, ldk, shk, sbk, ldv, shv, sbv) = self._qkv(q, k, v)
            qp, kp, vp = address(q), address(k), address(v)
        mp, mld, msb, msh, klp, keep = self._extras(mask, key_lengths)
        if out is None:
            out = _empty(self._out_shape, dt)
            op, ldo, sho, sbo = address(out), 0, 0, 0
        elif (type(out) is _ndarray and out.dtype is dt and out.shape == self._out_shape
              and out.flags.carray):
            op, ldo, sho, sbo = address(out), 0, 0, 0
        else:
            ldo, sho, sbo = out_strides(out, self._out_shape, dt, "out")
            op = out.ctypes.data
        lse_ptr = 0
        if return_lse or lse is not None:
            lse = output(lse, self._lse_shape, self._lse_dtype, "lse")
            lse_ptr = address(lse)
        with self._lock:
            ptr = self._ptr
            if ptr is None:
                self._handle()
            _ARGS_PACK(self._args, 0, qp, ldq, kp, ldk, vp, ldv, mp, mld, msb, msh, klp,
                       op, ldo, lse_ptr, sbq, shq, sbk, shk, sbv, shv, sbo, sho)
            status = self._fwd(ptr, self._args_addr)
        if status:
            check(status, self._fwd_name)
        return (out, lse) if lse_ptr else out

    def backward(self, q, k, v, out, lse, dout, *, mask=None, key_lengths=None):
        """attn_sdpa_backward: (dq, dk, dv) of sum(out * dout), from the forward's
        out and lse for the same q, k, v, mask and key_lengths. dk, dv are summed
        over the query heads sharing them; the mask gets no gradient. Each
        gradient has the strides of its input (C writes dQ with Q's strides):
        dense for a dense input, and q, k, v views of one fused buffer get
        their gradients in one buffer of that layout."""
        dt = self.dtype
        q, k, v, strides = self._qkv(q, k, v)
        mp, mld, msb, msh, klp, keep = self._extras(mask, key_lengths)
        out, so = _readable(out, self._out_shape, dt, "out")
        dout, sd = _readable(dout, self._out_shape, dt, "dout")
        if so != sd:  # dout must have out's strides
            out, so = as_input(out, dt, "out"), (0, 0, 0)
            dout = as_input(dout, dt, "dout")
        lse = as_input(lse, self._lse_dtype, "lse")
        check_shape(lse, self._lse_shape, "lse", "(B, NH, Tq)")
        ldq, shq, sbq, ldk, shk, sbk, ldv, shv, sbv = strides
        args = _lib.SdpaArgs()
        _ARGS_PACK(args, 0, address(q), ldq, address(k), ldk, address(v), ldv,
                   mp, mld, msb, msh, klp, address(out), so[0], address(lse),
                   sbq, shq, sbk, shk, sbv, shv, so[2], so[1])
        sizes = _sizes(self.dims, strides, dt.itemsize, (q, k, v))
        for placing in grad_placements([(a, n, dense) for _, _, a, n, dense in sizes]):
            grads = gradients(sizes, placing, dt)
            with self._lock:
                status = self._bwd(self._handle(), ctypes.addressof(args), address(dout),
                                   *(address(g) for g in grads))
            if status != ALIASING:
                break
        if status:
            check(status, self._bwd_name)
        return grads


def _sdpa_plan_dtype(dtype):
    """An sdpa plan's dtype: a Plan's (float32, float64), or float16, or
    bfloat16 (ml_dtypes.bfloat16 or "bfloat16")."""
    if isinstance(dtype, str) and dtype == "bfloat16":
        return bfloat16()
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is not None:
        if dt == F16:
            return F16
        if code_of(dt) == 3:
            return dt
    try:
        return _plan_dtype(dtype)
    except DTypeError:
        raise DTypeError("an sdpa plan computes in float32, float64, float16 or bfloat16, "
                         "not %r" % (dtype,)) from None


def _readable(a, shape, dtype, name):
    """(a, its (ld, sh, sb)): a checked to have `shape`, readable by C."""
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    check_shape(a, shape, name)
    return strided(a, dtype, name)


def _sizes(dims, strides, itemsize, arrays):
    """Per input (q, k, v): (shape, element strides, address in elements,
    extent, dense), the strides with C's dense defaults filled in."""
    B, NH, NH_kv, Tq, Tk, hs, hs_v = dims
    out = []
    for i, ((T, H, d), a) in enumerate(zip(((Tq, NH, hs), (Tk, NH_kv, hs), (Tk, NH_kv, hs_v)),
                                           arrays)):
        ld, sh, sb = strides[3 * i:3 * i + 3]
        ld = ld or H * d
        sh = sh or d
        sb = sb or T * ld
        size = extent(d, T, ld, H, sh, B, sb)
        out.append(((B, T, H, d), (sb, ld, sh, 1), address(a) // itemsize, size,
                    size == B * T * H * d))
    return out


def gradients(sizes, placing, dtype):
    """dq, dk, dv as strided views of new buffers, each with its input's strides,
    placed as attn._layout.grad_placements says."""
    buffers, places = placing
    isz = dtype.itemsize
    mem = [np.empty(n, dtype) for n in buffers]
    grads = []
    for (shape, strides, _, size, _), place in zip(sizes, places):
        base = np.empty(size, dtype) if place is None else mem[place[0]][place[1]:]
        grads.append(np.lib.stride_tricks.as_strided(
            base, shape, tuple(s * isz for s in strides), writeable=True))
    return grads
