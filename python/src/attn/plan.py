"""Plans: a shape and options fixed once, executed many times without allocating.

    with attn.Plan(B, T, C, NH, dtype=np.float32, causal=True) as plan:
        out = plan.forward(X, Wq, Wk, Wv, Wo)          # (B,T,C)
        g = plan.backward(X, Wq, Wk, Wv, Wo, dout)     # Gradients(dX, dWq, ...)

(attn.SdpaPlan, in attn/sdpa_plan.py, is the other kind: attention on given
q, k, v.)

Closing a plan (``close()``, or leaving the ``with`` block) destroys its C
plan; any later call raises ClosedPlanError. A plan that is garbage
collected unclosed is destroyed then. The C library allows one thread at a
time on a plan: a Plan serializes its calls with a lock, so sharing one
between threads is safe (but runs them one after the other).
"""

import ctypes
import threading

import numpy as np

from . import _lib
from ._arrays import F32, F64, address, as_input, check_shape, output
from .errors import ArgumentError, ClosedPlanError, DTypeError, check
from ._sdpa import check_scale
from .functional import Gradients

__all__ = ["Plan"]

_fns = _lib.lib
_ndarray = np.ndarray
_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _dense_address(a):
    """The address of a dense, writeable array (as _ready accepts)."""
    return _addressof(_from_buffer(a))


def _ready(a, dtype, shape):
    """Whether a can go to C as it is, by the fast path: a dense, aligned,
    writeable ndarray of exactly dtype and shape (anything else takes the
    general path, which converts or refuses it with a message)."""
    return (type(a) is _ndarray and a.dtype is dtype and a.shape == shape
            and a.flags.carray)


def _plan_dtype(dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DTypeError("dtype must be float32 or float64, got %r" % (dtype,)) from None
    if dt == F32:
        return F32
    if dt == F64:
        return F64
    raise DTypeError("a plan computes in float32 or float64, not %s" % dt)


def _size(value, name, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ArgumentError("%s must be an integer >= %d, got %r" % (name, minimum, value))
    return int(value)


class _PlanBase:
    """What both kinds of plan share: the C handle, its lock, threads, closing."""

    _ptr = None

    def _create(self, create, *args):
        handle = ctypes.c_void_p()
        self._lock = threading.Lock()
        check(create(ctypes.addressof(handle), *args), create.__name__)
        self._ptr = handle.value

    def _handle(self):
        ptr = self._ptr
        if ptr is None:
            raise ClosedPlanError("the plan is closed (its C plan was destroyed)",
                                  function=type(self).__name__)
        return ptr

    @property
    def closed(self):
        """True once close() destroyed the C plan."""
        return self._ptr is None

    def close(self):
        """Destroys the C plan (waiting for a call in another thread); idempotent."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            ptr, self._ptr = self._ptr, None
            if ptr is not None:
                _fns.attn_plan_destroy(ptr)

    def __enter__(self):
        self._handle()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        ptr = self._ptr
        if ptr is not None:
            self._ptr = None
            _fns.attn_plan_destroy(ptr)

    @property
    def threads(self):
        """The engine: 0 for BLAS threads, n >= 1 for attn's own n threads."""
        n = ctypes.c_uint()
        with self._lock:
            check(_fns.attn_plan_get_threads(self._handle(), ctypes.addressof(n)),
                  "attn_plan_get_threads")
        return n.value

    @threads.setter
    def threads(self, threads):
        self.set_threads(threads)

    def set_threads(self, threads):
        """attn_plan_set_threads: None or "auto" (ATTN_THREADS_AUTO), 0 (BLAS
        threads) or n in 1..256 (the plan's own n threads; identical results for
        every n)."""
        if threads is None or threads == "auto":
            value = _lib.ATTN_THREADS_AUTO
        else:
            value = _size(threads, "threads", 0)
            if value > 0xFFFFFFFF:
                raise ArgumentError("threads = %d is out of range" % value)
        with self._lock:
            check(_fns.attn_plan_set_threads(self._handle(), value), "attn_plan_set_threads")

    @property
    def dropout(self):
        """The attention dropout (p, seed, offset) set by set_dropout
        ((0.0, 0, 0): off, every plan's start)."""
        return getattr(self, "_dropout", (0.0, 0, 0))

    @dropout.setter
    def dropout(self, setting):
        if isinstance(setting, (int, float)) and not isinstance(setting, bool):
            setting = (setting,)
        self.set_dropout(*setting)

    def set_dropout(self, p, seed=0, offset=0):
        """attn_plan_set_dropout (training plans): each forward from now on
        drops every attention weight P[b,h,t,j] with probability p in [0, 1)
        and scales the kept ones by 1/(1-p); the mask is a pure function of
        (seed, offset, b, h, t, j) (Philox-4x32-10, attn.h), regenerated by
        the backward, which must see the forward's setting (a Plan keeps it
        with its forward; an SdpaPlan's backward uses the setting of the
        moment). Give each forward that must draw new masks its own offset
        (e.g. the step count). p = 0 turns it off. Raises attn.Error:
        INFERENCE_PLAN on an inference plan, BAD_DROPOUT for p NaN or outside
        [0, 1) (the setting unchanged)."""
        seed, offset = (_size(x, n, 0) for x, n in ((seed, "seed"), (offset, "offset")))
        if seed > 0xFFFFFFFFFFFFFFFF or offset > 0xFFFFFFFFFFFFFFFF:
            raise ArgumentError("seed and offset must fit 64 bits, got %d and %d"
                                % (seed, offset))
        if isinstance(p, bool) or not isinstance(p, (int, float, np.floating, np.integer)):
            raise ArgumentError("the dropout probability must be a number, got %r" % (p,))
        with self._lock:
            check(_fns.attn_plan_set_dropout(self._handle(), float(p), seed, offset),
                  "attn_plan_set_dropout")
        self._dropout = (float(p), seed, offset)

    def _suffix(self):
        return "f32" if self.dtype is F32 else "f64"


class Plan(_PlanBase):
    """A projected attention plan (attn_plan_create): X and weights in, heads out.

    Shapes with D = NH*hs: X (B,T,C); Wq, Wk, Wv (C,D), head h in columns
    [h*hs, (h+1)*hs); Wo (D,C) or None; out (B,T,C) with Wo, else (B,T,D);
    weights (B,NH,T,T).

    hs defaults to C // NH. scale None means 1/sqrt(hs). causal masks key
    j > query t. inference=True keeps nothing for a backward. path None lets
    the plan choose; "materialized" or "tiled" forces the path of inference
    forwards without weights. threads: see set_threads. dropout: p or
    (p, seed, offset), see set_dropout (weights returned by a forward are the
    undropped ones). Inputs of another dtype than the plan's are converted
    (copied).
    """

    def __init__(self, B, T, C, NH=1, hs=None, *, dtype=np.float32, scale=None,
                 causal=False, inference=False, path=None, threads=None, dropout=None):
        self.dtype = _plan_dtype(dtype)
        B, T, C, NH = (_size(x, n) for x, n in ((B, "B"), (T, "T"), (C, "C"), (NH, "NH")))
        if hs is None:
            if C % NH:
                raise ArgumentError("C = %d is not a multiple of NH = %d: give hs" % (C, NH))
            hs = C // NH
        hs = _size(hs, "hs")
        flags = (_lib.ATTN_CAUSAL if causal else 0) | (_lib.ATTN_INFERENCE if inference else 0)
        if path not in (None, "auto", "materialized", "tiled"):
            raise ArgumentError("path must be None, 'materialized' or 'tiled', got %r" % (path,))
        flags |= {"materialized": _lib.ATTN_MATERIALIZED, "tiled": _lib.ATTN_TILED}.get(path, 0)
        self.B, self.T, self.C, self.NH, self.hs = B, T, C, NH, hs
        self.D = NH * hs
        self.causal, self.inference = bool(causal), bool(inference)
        self.scale = check_scale(scale) or 1.0 / float(np.sqrt(hs))
        self._create(_fns.attn_plan_create, 1 if self.dtype is F32 else 2, B, T, C, NH, hs,
                     check_scale(scale), flags)
        D = self.D
        self._x_shape, self._w_shape, self._wo_shape = (B, T, C), (C, D), (D, C)
        self._out_shapes = ((B, T, D), (B, T, C))  # without, with Wo
        sfx = self._suffix()
        self._fwd_name, self._bwd_name = "attn_forward_" + sfx, "attn_backward_" + sfx
        self._fwd, self._bwd = getattr(_fns, self._fwd_name), getattr(_fns, self._bwd_name)
        # The last caller's Gradients that passed the check. Its arrays' data
        # cannot move while this reference holds them (ndarray.resize refuses
        # a referenced array) and their bytes cannot shrink (a shape or dtype
        # set in place keeps the byte count), so a later backward writes them
        # without checking again.
        self._grads_seen, self._grads_at = None, None
        # The last training forward's inputs as the caller gave them and as
        # they were passed to C (the same arrays, or converted copies, which
        # this keeps alive): the backward passes those same arrays again,
        # since attn_backward refuses other pointers (FORWARD_MISMATCH).
        self._kept = None
        if threads is not None:
            self.set_threads(threads)
        if dropout is not None:
            self.dropout = dropout

    def __repr__(self):
        return ("attn.Plan(B=%d, T=%d, C=%d, NH=%d, hs=%d, dtype=%s%s%s%s)"
                % (self.B, self.T, self.C, self.NH, self.hs, self.dtype.name,
                   ", causal=True" if self.causal else "",
                   ", inference=True" if self.inference else "",
                   ", closed" if self.closed else ""))

    def _inputs(self, X, Wq, Wk, Wv, Wo):
        dt, C, D = self.dtype, self.C, self.D
        X = as_input(X, dt, "X")
        check_shape(X, (self.B, self.T, C), "X", "(B, T, C) of the plan")
        Ws = []
        for W, n, shape in ((Wq, "Wq", (C, D)), (Wk, "Wk", (C, D)), (Wv, "Wv", (C, D)),
                            (Wo, "Wo", (D, C))):
            if W is None and n == "Wo":
                Ws.append(None)
                continue
            W = as_input(W, dt, n)
            check_shape(W, shape, n)
            Ws.append(W)
        return X, Ws

    def _all_ready(self, X, Wq, Wk, Wv, Wo):
        dt, ws = self.dtype, self._w_shape
        return (_ready(X, dt, self._x_shape) and _ready(Wq, dt, ws) and _ready(Wk, dt, ws)
                and _ready(Wv, dt, ws) and (Wo is None or _ready(Wo, dt, self._wo_shape)))

    def forward(self, X, Wq, Wk, Wv, Wo=None, *, out=None, return_weights=False,
                weights=None):
        """attn_forward: returns out (and the weights (B,NH,T,T) when asked)."""
        if not return_weights and weights is None and self._all_ready(X, Wq, Wk, Wv, Wo):
            # The common case (dense arrays of the plan's dtype): no conversion,
            # no checks beyond these, about a microsecond on top of the C call.
            out_shape = self._out_shapes[Wo is not None]
            if out is None:
                out = np.empty(out_shape, self.dtype)
            elif not _ready(out, self.dtype, out_shape):
                out = output(out, out_shape, self.dtype)  # raises with the reason
            with self._lock:
                ptr = self._handle()
                status = self._fwd(ptr, _addressof(_from_buffer(X)), _addressof(_from_buffer(Wq)),
                                   _addressof(_from_buffer(Wk)), _addressof(_from_buffer(Wv)),
                                   None if Wo is None else _addressof(_from_buffer(Wo)),
                                   _addressof(_from_buffer(out)), None)
            if status:
                check(status, self._fwd_name)
            if not self.inference:
                given = (X, Wq, Wk, Wv, Wo)
                self._kept = (given, given)
            return out
        given = (X, Wq, Wk, Wv, Wo)
        X, (Wq, Wk, Wv, Wo) = self._inputs(X, Wq, Wk, Wv, Wo)
        out = output(out, (self.B, self.T, self.C if Wo is not None else self.D), self.dtype)
        want_w = return_weights or weights is not None
        if want_w:
            weights = output(weights, (self.B, self.NH, self.T, self.T), self.dtype, "weights")
        with self._lock:
            check(self._fwd(self._handle(), address(X), address(Wq), address(Wk), address(Wv),
                            None if Wo is None else address(Wo), address(out),
                            address(weights) if want_w else None), self._fwd_name)
        if not self.inference:
            self._kept = (given, (X, Wq, Wk, Wv, Wo))
        return (out, weights) if want_w else out

    def backward(self, X, Wq, Wk, Wv, Wo, dout, *, grads=None):
        """attn_backward for the last forward (same X and weights): Gradients.

        X, Wq, Wk, Wv and Wo must be the objects given to that forward (where
        it converted one, its copy is used again), holding the same values:
        other objects are ATTN_ERR_FORWARD_MISMATCH (PlanError); values
        changed in place between the two calls give wrong gradients.

        grads: a Gradients whose arrays (dX (B,T,C), dWq, dWk, dWv (C,D), dWo
        (D,C), or None without Wo) are written in place instead of new ones;
        each must be exactly right (dtype, shape, C-contiguous, writeable)."""
        dt = self.dtype
        kept = self._kept
        if kept is not None and kept[0] is not kept[1]:  # the forward converted: its copies
            X, Wq, Wk, Wv, Wo = (passed if arg is given else arg for arg, given, passed
                                 in zip((X, Wq, Wk, Wv, Wo), kept[0], kept[1]))
        out_shape = self._out_shapes[Wo is not None]
        if grads is None:
            ws = self._w_shape
            grads = Gradients(np.empty(self._x_shape, dt), np.empty(ws, dt), np.empty(ws, dt),
                              np.empty(ws, dt), None if Wo is None else np.empty(self._wo_shape, dt))
        elif grads is self._grads_seen and (grads.dWo is not None) == (Wo is not None):
            pass  # the Gradients of an earlier call: checked then (see _grads_seen)
        elif self._grads_ready(grads, Wo is not None):
            self._grads_seen = grads
            self._grads_at = tuple(None if g is None else _dense_address(g) for g in grads)
        else:
            grads = self._checked_grads(grads, Wo is not None)  # raises with the reason
        if self._all_ready(X, Wq, Wk, Wv, Wo) and _ready(dout, dt, out_shape):
            at = _dense_address  # the fast path: every array dense and writeable
        else:
            X, (Wq, Wk, Wv, Wo) = self._inputs(X, Wq, Wk, Wv, Wo)
            dout = as_input(dout, dt, "dout")
            check_shape(dout, out_shape, "dout", "(the forward's out)")
            at = address
        if grads is self._grads_seen:
            dX, dWq, dWk, dWv, dWo = self._grads_at
        else:
            dX, dWq, dWk, dWv, dWo = (None if g is None else _dense_address(g) for g in grads)
        with self._lock:
            ptr = self._handle()
            status = self._bwd(ptr, at(X), at(Wq), at(Wk), at(Wv),
                               None if Wo is None else at(Wo), at(dout), dX, dWq, dWk, dWv, dWo)
        if status:
            check(status, self._bwd_name)
        return grads

    def _grads_ready(self, grads, with_Wo):
        """Whether the caller's Gradients can be written as they are (fast check)."""
        if type(grads) is not Gradients:
            return False
        dt, ws = self.dtype, self._w_shape
        return (_ready(grads.dX, dt, self._x_shape) and _ready(grads.dWq, dt, ws)
                and _ready(grads.dWk, dt, ws) and _ready(grads.dWv, dt, ws)
                and (_ready(grads.dWo, dt, self._wo_shape) if with_Wo else grads.dWo is None))

    def _checked_grads(self, grads, with_Wo):
        """The caller's Gradients, each array checked to be written in place."""
        if not isinstance(grads, Gradients):
            raise ArgumentError("grads must be an attn.Gradients, not %s" % type(grads).__name__)
        dt, ws = self.dtype, self._w_shape
        checked = [output(grads.dX, self._x_shape, dt, "grads.dX")]
        checked += [output(g, ws, dt, "grads." + n)
                    for g, n in ((grads.dWq, "dWq"), (grads.dWk, "dWk"), (grads.dWv, "dWv"))]
        if with_Wo:
            checked.append(output(grads.dWo, self._wo_shape, dt, "grads.dWo"))
        elif grads.dWo is not None:
            raise ArgumentError("grads.dWo must be None: the forward had no Wo")
        else:
            checked.append(None)
        return Gradients(*checked)
