"""Cached sdpa plans, and the forward and backward calls made on them.

attn.sdpa and attn.torch.scaled_dot_product_attention run each call on an
sdpa plan (attn_sdpa_plan_create) of its signature: dtype, shape (B, NH,
NH_kv, Tq, Tk, hs, hs_v), flags, scale and window, a PlanKey. A C plan is
used by one thread at a time, so every thread keeps its own plans: the
last few signatures it ran (set_plan_cache_size, 8 by default; a plan holds
the scratch of attn's threads, about 1 MB, plus memory that grows with the
shape, attn.h). A call allocates nothing in C and takes no lock. A thread's
plans are destroyed when it ends, when they are evicted (oldest first), or
by clear_plan_cache().

Two ways to call:
  forward(), backward()  pack every field of a per-thread argument struct;
  slot(call)             the fast path: an argument struct per (thread,
                         call signature) with everything but the five
                         addresses filled in once (call.template), and a
                         size_t view of it, so that a call stores q, k, v,
                         out and lse and calls C (attn/torch.py, _sdpa.py).

The C functions are looked up in this module's globals at every call
(``_forward_f32`` and the like: f32, f64, bf16, f16), so tests can wrap
them to see the pointers and strides C receives (SdpaArgs.from_address).
"""

import ctypes
import threading

from . import _lib
from .errors import ArgumentError, check

__all__ = ["PlanKey", "plan_key", "slot", "template", "forward", "backward", "set_plan_cache_size",
           "clear_plan_cache", "ALIASING", "Q", "K", "V", "OUT", "LSE"]

_fns = _lib.lib
_PACK = _lib.ARGS.pack_into
_create = _fns.attn_sdpa_plan_create
_destroy = _fns.attn_plan_destroy
_set_dropout = _fns.attn_plan_set_dropout
_set_threads = _fns.attn_plan_set_threads
_forward_f32 = _fns.attn_sdpa_forward_f32
_forward_f64 = _fns.attn_sdpa_forward_f64
_backward_f32 = _fns.attn_sdpa_backward_f32
_backward_f64 = _fns.attn_sdpa_backward_f64
_forward_bf16 = _fns.attn_sdpa_forward_bf16
_forward_f16 = _fns.attn_sdpa_forward_f16
_backward_bf16 = _fns.attn_sdpa_backward_bf16
_backward_f16 = _fns.attn_sdpa_backward_f16
#: attn_dtype code -> the suffix of its C calls (attn.h: ATTN_F32 = 1, ATTN_F64,
#: ATTN_BF16, ATTN_F16).
SUFFIX = {1: "f32", 2: "f64", 3: "bf16", 4: "f16"}
ALIASING = 7  # ATTN_ERR_ALIASING
OFF = (0.0, 0, 0)  # dropout off: (p, seed, offset)
# Indices of the addresses in SdpaArgs read as 22 size_t (every field is a
# pointer or a size_t).
Q, K, V, OUT, LSE = 0, 2, 4, 11, 13

_limit = 8
_keys = {}  # (code, dims, flags, scale, window) -> its one PlanKey
_tls = threading.local()


class PlanKey:
    """One plan signature; interned by plan_key, so compared and hashed by
    identity (cheaper than a tuple of eleven numbers at every call).
    threads: None for the plan's default engine (attn.h: ATTN_THREADS_AUTO
    on a SIMD kernel set), 1 for the calling thread alone."""

    __slots__ = ("code", "is_f32", "forward_name", "backward_name", "dims", "flags", "scale",
                 "window", "threads", "__weakref__")

    def __init__(self, code, dims, flags, scale, window, threads=None):
        self.code, self.dims, self.flags, self.scale, self.window = (
            code, dims, flags, scale, window)
        self.threads = threads
        self.is_f32 = code == _lib.ATTN_F32
        # this module's names of its C calls (looked up at each call)
        self.forward_name = "_forward_" + SUFFIX[code]
        self.backward_name = "_backward_" + SUFFIX[code]


def plan_key(code, dims, flags, scale, window, threads=None):
    """The PlanKey of a signature: code the attn_dtype (1 f32, 2 f64, 3 bf16,
    4 f16), dims = (B, NH, NH_kv, Tq, Tk, hs, hs_v); threads as PlanKey's."""
    sig = (code, dims, flags, scale, window, threads)
    key = _keys.get(sig)
    if key is None:
        if len(_keys) >= 1024:
            _keys.clear()
        key = _keys[sig] = PlanKey(*sig)
    return key


class _ThreadPlans:
    """One thread's plans (PlanKey -> C plan, oldest first), its slots (call ->
    (plan, args address, size_t view, args)) and its scratch argument struct."""

    def __init__(self):
        self.plans = {}
        self.slots = {}
        self.args = _lib.SdpaArgs()
        self.args_addr = ctypes.addressof(self.args)
        self.dropout = {}  # plan -> its attn_plan_set_dropout setting, when not off

    def get(self, key):
        ptr = self.plans.get(key)
        if ptr is None:
            shape = _lib.SdpaShape(*key.dims)
            handle = ctypes.c_void_p()
            check(_create(ctypes.addressof(handle), key.code,
                          ctypes.addressof(shape), key.scale, key.flags, key.window),
                  "attn_sdpa_plan_create")
            if key.threads is not None:
                status = _set_threads(handle.value, key.threads)
                if status != 0:
                    _destroy(handle.value)
                    check(status, "attn_plan_set_threads")
            self.trim(_limit - 1)
            ptr = self.plans[key] = handle.value
        return ptr

    def new_slot(self, call):
        """call's slot: its forward plan and an argument struct holding
        call.template (strides, mask and key lengths; addresses 0)."""
        ptr = self.get(call.fwd)
        args = _lib.SdpaArgs()
        _PACK(args, 0, *call.template)
        if len(self.slots) >= 64:
            self.slots.clear()
        s = self.slots[call] = (ptr, ctypes.addressof(args),
                                memoryview(args).cast("B").cast("N"), args)
        return s

    def trim(self, n):
        """Destroys the oldest plans beyond n (and forgets every slot)."""
        if len(self.plans) > n:
            self.slots.clear()
            while len(self.plans) > n:
                ptr = self.plans.pop(next(iter(self.plans)))
                self.dropout.pop(ptr, None)
                _destroy(ptr)

    def set_dropout(self, key, ptr, dropout):
        """attn_plan_set_dropout on a training plan when its setting differs
        from dropout = (p, seed, offset)."""
        if self.dropout.get(ptr, OFF) != dropout:
            check(_set_dropout(ptr, *dropout), "attn_plan_set_dropout")
            if dropout == OFF:
                self.dropout.pop(ptr, None)
            else:
                self.dropout[ptr] = dropout

    def __del__(self):
        try:
            self.trim(0)
        except Exception:  # interpreter shutdown: the library may be gone
            pass


def _thread_plans():
    try:
        return _tls.plans
    except AttributeError:
        _tls.plans = _ThreadPlans()
        return _tls.plans


def slot(call):
    """(plan, args address, size_t view of args, args) of call in this thread;
    store the addresses at Q, K, V, OUT, LSE of the view, then call C."""
    try:
        s = _tls.plans.slots.get(call)
    except AttributeError:
        s = None
    if s is None:
        s = _thread_plans().new_slot(call)
    return s


def set_plan_cache_size(n):
    """How many sdpa plans each thread keeps for attn.sdpa and the PyTorch
    drop-in (default 8, at least 1). Applies to this thread's plans now and
    to every thread's next new plan."""
    global _limit
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError("the plan cache size must be an integer >= 1, got %r" % (n,))
    _limit = n
    _thread_plans().trim(n)


def clear_plan_cache():
    """Destroys this thread's cached sdpa plans (they are made again on demand)."""
    _thread_plans().trim(0)


def forward(key, q, ldq, shq, sbq, k, ldk, shk, sbk, v, ldv, shv, sbv,
            out, ldo, sho, sbo, lse, mask, mask_ld, mask_sb, mask_sh, key_lengths,
            dropout=None):
    """attn_sdpa_forward on key's plan: addresses (0 for NULL) and strides in
    elements as attn_sdpa_args; dropout (p, seed, offset) on a training
    plan, or None. Raises attn.Error on a nonzero status."""
    tp = _thread_plans()
    ptr = tp.get(key)
    if dropout is not None or ptr in tp.dropout:
        tp.set_dropout(key, ptr, OFF if dropout is None else dropout)
    _PACK(tp.args, 0, q, ldq, k, ldk, v, ldv, mask, mask_ld, mask_sb, mask_sh, key_lengths,
          out, ldo, lse, sbq, shq, sbk, shk, sbv, shv, sbo, sho)
    if key.is_f32:
        status = _forward_f32(ptr, tp.args_addr)
    else:
        status = globals()[key.forward_name](ptr, tp.args_addr)
    if status:
        check(status, "attn_sdpa" + key.forward_name)


def backward(key, q, ldq, shq, sbq, k, ldk, shk, sbk, v, ldv, shv, sbv,
             out, ldo, sho, sbo, lse, mask, mask_ld, mask_sb, mask_sh, key_lengths,
             dout, dq, dk, dv, retry=False, dropout=None):
    """attn_sdpa_backward on key's plan (a training plan): dout with out's
    strides, dq, dk, dv with those of q, k, v; dropout (p, seed, offset) of
    the forward, or None. Returns 0, or with retry the status
    ATTN_ERR_ALIASING (nothing was written: the caller may place the
    gradients apart and call again); raises attn.Error on any other."""
    tp = _thread_plans()
    ptr = tp.get(key)
    if dropout is not None or ptr in tp.dropout:
        tp.set_dropout(key, ptr, OFF if dropout is None else dropout)
    _PACK(tp.args, 0, q, ldq, k, ldk, v, ldv, mask, mask_ld, mask_sb, mask_sh, key_lengths,
          out, ldo, lse, sbq, shq, sbk, shk, sbv, shv, sbo, sho)
    fn = _backward_f32 if key.is_f32 else globals()[key.backward_name]
    status = fn(ptr, tp.args_addr, dout, dq, dk, dv)
    if status == ALIASING and retry:
        return status
    if status:
        check(status, "attn_sdpa" + key.backward_name)
    return 0


def template(strides, out_strides, mask_args, key_lengths):
    """The 22 fields of SdpaArgs with the addresses of q, k, v, out, lse 0:
    strides = (ldq, shq, sbq, ldk, shk, sbk, ldv, shv, sbv), out_strides =
    (ldo, sho, sbo), mask_args = (mask, mask_ld, mask_sb, mask_sh)."""
    ldq, shq, sbq, ldk, shk, sbk, ldv, shv, sbv = strides
    ldo, sho, sbo = out_strides
    return ((0, ldq, 0, ldk, 0, ldv) + tuple(mask_args) + (key_lengths, 0, ldo, 0)
            + (sbq, shq, sbk, shk, sbv, shv, sbo, sho))
