"""SdpaPlan: an sdpa plan (attention on given q, k, v) fixed once, run many times.

    with attn.SdpaPlan(B, NH, Tq, Tk, hs, NH_kv=2) as plan:
        out, lse = plan.forward(q, k, v, return_lse=True)
        dq, dk, dv = plan.backward(q, k, v, out, lse, dout)

Life cycle, closing and threads as attn.Plan (attn/plan.py).
"""

import ctypes

import numpy as np

from . import _lib
from ._arrays import F32, address, as_input, check_shape, output
from ._sdpa import (check_scale, check_window, inputs, out_rows, prepare_key_lengths,
                    prepare_mask, rows)
from .errors import ArgumentError, check
from .plan import _PlanBase, _plan_dtype, _size

__all__ = ["SdpaPlan"]

_fns = _lib.lib
_ARGS_PACK = _lib.ARGS.pack_into
_ndarray = np.ndarray
_empty = np.empty
_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


class SdpaPlan(_PlanBase):
    """An sdpa plan (attn_sdpa_plan_create): attention on given q, k, v.

    Layout and semantics as attn.sdpa: q (B,Tq,NH,hs), k (B,Tk,NH_kv,hs),
    v (B,Tk,NH_kv,hs_v), out (B,Tq,NH,hs_v), lse (B,NH,Tq); causal is
    bottom-right aligned. NH_kv defaults to NH, hs_v to hs; scale None means
    1/sqrt(hs); window 0 means none. inference=True: no backward.

    The plan keeps one argument struct and reuses it, so a forward on
    C-contiguous arrays of the plan's dtype costs a few microseconds of
    Python on top of the C call.
    """

    def __init__(self, B, NH, Tq, Tk, hs, *, NH_kv=None, hs_v=None, dtype=np.float32,
                 scale=None, causal=False, window=0, inference=False, threads=None):
        self.dtype = _plan_dtype(dtype)
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
        self._create(_fns.attn_sdpa_plan_create, 1 if self.dtype is F32 else 2,
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

    def __repr__(self):
        return ("attn.SdpaPlan(B=%d, NH=%d, Tq=%d, Tk=%d, hs=%d, NH_kv=%d, hs_v=%d, dtype=%s%s%s)"
                % (self.B, self.NH, self.Tq, self.Tk, self.hs, self.NH_kv, self.hs_v,
                   self.dtype.name, ", causal=True" if self.causal else "",
                   ", closed" if self.closed else ""))

    def _qkv(self, q, k, v):
        """(q, ldq, k, ldk, v, ldv) checked against the plan's shape."""
        if getattr(q, "ndim", 4) != 4:
            raise ArgumentError("a plan takes 4-D q, k, v (B, T, heads, head size)")
        _, _, dims, q, ldq, k, ldk, v, ldv = inputs(q, k, v, self.dtype)
        if dims != self.dims:
            raise ArgumentError("q %s, k %s, v %s do not match the plan's %s"
                                % (q.shape, k.shape, v.shape, self))
        return q, ldq, k, ldk, v, ldv

    def _extras(self, mask, key_lengths):
        B, NH, _, Tq, Tk, _, _ = self.dims
        m, mld, msb, msh = prepare_mask(mask, B, NH, Tq, Tk, self.dtype)
        kl = prepare_key_lengths(key_lengths, B)
        return m, mld, msb, msh, kl

    def forward(self, q, k, v, *, mask=None, key_lengths=None, out=None, lse=None,
                return_lse=False):
        """attn_sdpa_forward: returns out (and lse (B,NH,Tq) when asked; a
        backward needs it)."""
        dt = self.dtype
        if (type(q) is _ndarray and type(k) is _ndarray and type(v) is _ndarray
                and q.dtype is dt and k.dtype is dt and v.dtype is dt
                and q.shape == self._q_shape and k.shape == self._k_shape
                and v.shape == self._v_shape
                and q.flags.carray and k.flags.carray and v.flags.carray):
            # The common case: dense, writeable arrays of the plan's dtype.
            qp, kp, vp = (_addressof(_from_buffer(q)), _addressof(_from_buffer(k)),
                          _addressof(_from_buffer(v)))
            ldq = ldk = ldv = 0
        else:
            q, ldq, k, ldk, v, ldv = self._qkv(q, k, v)
            qp, kp, vp = address(q), address(k), address(v)
        if mask is None and key_lengths is None:
            mp = klp = mld = msb = msh = 0
        else:
            m, mld, msb, msh, kl = self._extras(mask, key_lengths)
            mp = 0 if m is None else address(m)
            klp = 0 if kl is None else address(kl)
        if out is None:
            out = _empty(self._out_shape, dt)
            op, ldo = _addressof(_from_buffer(out)), 0
        elif (type(out) is _ndarray and out.dtype is dt and out.shape == self._out_shape
              and out.flags.carray):
            op, ldo = _addressof(_from_buffer(out)), 0
        else:
            out, ldo = out_rows(out, self._out_shape, dt, "out")
            op = address(out)
        lse_ptr = 0
        if return_lse or lse is not None:
            lse = output(lse, self._lse_shape, dt, "lse")
            lse_ptr = address(lse)
        with self._lock:
            ptr = self._ptr
            if ptr is None:
                self._handle()
            _ARGS_PACK(self._args, 0, qp, ldq, kp, ldk, vp, ldv, mp, mld, msb, msh, klp,
                       op, ldo, lse_ptr)
            status = self._fwd(ptr, self._args_addr)
        if status:
            check(status, self._fwd_name)
        return (out, lse) if lse_ptr else out

    def backward(self, q, k, v, out, lse, dout, *, mask=None, key_lengths=None):
        """attn_sdpa_backward: (dq, dk, dv) of sum(out * dout), from the forward's
        out and lse for the same q, k, v, mask and key_lengths. dk, dv are summed
        over the query heads sharing them; the mask gets no gradient."""
        dt = self.dtype
        q, ldq, k, ldk, v, ldv = self._qkv(q, k, v)
        m, mld, msb, msh, kl = self._extras(mask, key_lengths)
        out, ldo = _readable_rows(out, self._out_shape, dt, "out")
        dout, ldd = _readable_rows(dout, self._out_shape, dt, "dout")
        width = self.NH * self.hs_v
        if (ldo or width) != (ldd or width):  # out and dout share one row stride
            out, ldo = as_input(out, dt, "out"), 0
            dout, ldd = as_input(dout, dt, "dout"), 0
        lse = as_input(lse, dt, "lse")
        check_shape(lse, self._lse_shape, "lse", "(B, NH, Tq)")
        B, NH, NH_kv, Tq, Tk, hs, hs_v = self.dims
        dq = _grad_rows(ldq, (B, Tq, NH, hs), dt)
        dk = _grad_rows(ldk, (B, Tk, NH_kv, hs), dt)
        dv = _grad_rows(ldv, (B, Tk, NH_kv, hs_v), dt)
        args = _lib.SdpaArgs()
        _ARGS_PACK(args, 0, address(q), ldq, address(k), ldk, address(v), ldv,
                   0 if m is None else address(m), mld, msb, msh,
                   0 if kl is None else address(kl), address(out), ldo, address(lse))
        with self._lock:
            status = self._bwd(self._handle(), ctypes.addressof(args), address(dout),
                               address(dq), address(dk), address(dv))
        if status:
            check(status, self._bwd_name)
        return dq, dk, dv


    def backward_pointers(self, pointers, dout, dq, dk, dv):
        """attn_sdpa_backward on raw pointers (the PyTorch drop-in's backward):
        `pointers` as for attn.sdpa.call_one_shot (out and lse set), dout, dq,
        dk, dv addresses whose row strides are ldo, ldq, ldk, ldv."""
        args = _lib.SdpaArgs()
        _ARGS_PACK(args, 0, *pointers)
        with self._lock:
            status = self._bwd(self._handle(), ctypes.addressof(args), dout, dq, dk, dv)
        if status:
            check(status, self._bwd_name)


def _readable_rows(a, shape, dtype, name):
    a = a if isinstance(a, np.ndarray) else np.asarray(a)
    check_shape(a, shape, name)
    return rows(a, dtype, name)


def _grad_rows(ld, shape, dtype):
    """A gradient array of `shape` (B,T,H,d) whose rows have stride ld (0: dense)."""
    B, T, H, d = shape
    if not ld or ld == H * d:
        return np.empty(shape, dtype)
    return np.empty((B, T, ld), dtype)[:, :, :H * d].reshape(shape)
