"""What the PyTorch drop-in finds once per call signature (attn/torch.py).

A signature is everything about a call but the tensors' data: the shapes
and strides of query, key and value, their dtypes, is_causal, scale,
enable_gqa and the output's layout. For each, new_call checks the arguments
once, reads the tensors' layouts as attn_sdpa_args strides (or decides
which must be copied), chooses the output's allocation and the plans,
and builds the causal key lengths or mask: a Call, which every later call
of that signature reuses from a dictionary.
"""

import math
import threading

import numpy as np
import torch

from . import _lib, _openmp, _plans
from ._layout import c_strides, extent, merge_batch
from .errors import ArgumentError, DTypeError

__all__ = ["Call", "new_call", "layout", "prepare_mask", "check_tensors", "math_reference"]

_CAUSAL = _lib.ATTN_CAUSAL
_INFERENCE = _lib.ATTN_INFERENCE
# Per dtype attn computes in: (attn_dtype code, NumPy dtype of lse, torch
# dtype of the mask). Half precision (attn.h): q, k, v, out and the gradients
# in 16 bits, lse and the mask float32.
DTYPES = {torch.float32: (_lib.ATTN_F32, np.dtype(np.float32), torch.float32),
          torch.float64: (_lib.ATTN_F64, np.dtype(np.float64), torch.float64),
          torch.bfloat16: (_lib.ATTN_BF16, np.dtype(np.float32), torch.float32),
          torch.float16: (_lib.ATTN_F16, np.dtype(np.float32), torch.float32)}
NORMAL, COPY, EMPTY = 0, 1, 2
_tls = threading.local()
# A decode step (one query row) whose keys and values span at most this many
# bytes runs on the calling thread alone (PlanKey threads 1) where attn runs
# on its own threads. Inside a
# PyTorch program the thread pool that ran the previous op (the projections
# before attention) keeps polling for a while after it, on the other cores;
# a worker of attn's sharing a core with it gets a fraction of that core, and
# the step waits for the item it claimed; and attn's own worker, idle since
# the last attention call, must be woken. Measured in a transformers Llama
# generating (python/benchmarks/transformers_generate.py, 16/4 heads, hs 64,
# f32, 2 threads; Intel Xeon model 167, bench/results/intel-xeon-model167/),
# per step, alone against two threads, runs in both orders: K and V of
# 2.1 MB 167-174 us against 237-435 us; 4.2 MB 287-305 against 332-480 us;
# 6.3 MB 386-394 against 304-544 us; 8.5 MB 483-545 against 401-561 us
# (no clear winner from 6 MB on: the default engine there). Where calls
# follow each other with no PyTorch op between (attn-bench's decode loop on
# a 1024-key cache), two threads are faster: 0.116-0.126 ms a step alone
# against 0.091-0.098. Results are the same bits on any thread count (attn.h).
# On PyTorch's OpenMP threads (attn.torch.use_openmp_threads, the default
# where PyTorch runs OpenMP) no worker needs waking: the step takes the
# default engine. Measured in the same model on an AMD EPYC Zen 5 (2 threads,
# bench/results/amd-epyc-zen5/python/), the 252 decode steps of a generate:
# on PyTorch's threads 0.0265-0.027 s on two against 0.031-0.036 s alone
# (attention 2.25-2.36x PyTorch's SDPA against 1.95-2.16x; generate 1.02-1.04x
# either way, the time outside attention unchanged); on attn's own threads
# 0.122 s on two against 0.027-0.030 s alone. An earlier measurement on an
# AMD EPYC Zen 3 had kept hosted steps alone too (the step faster on two,
# 126 us against 138-157, but the generate's time outside attention 2.5-4%
# longer in four runs on a busy host; runs alone and on two threads spread
# over the same 0.97-1.07x generate there).
DECODE_ALONE_BYTES = 6 << 20
# True: small steps run alone on PyTorch's threads too (the rule before;
# python/benchmarks/transformers_generate.py --alone-ab measures both).
DECODE_ALONE_ON_OPENMP = False
# A call of at most this many query rows (a decode step, or a few
# speculative tokens), masked or not, runs on a plan made for a capacity:
# S rounded up to a multiple of CAPACITY_STEP, told S as key lengths
# (attn.h: a forward judges K, V and the mask by the keys that exist). A
# generation's cache grows by one key a step, and with it the signature;
# one plan then serves CAPACITY_STEP steps of every layer instead of a plan
# per step. Measured
# (Intel Xeon model 167, f32, 16/4 heads, hs 64, one call per cache size
# from 1088 keys on, median of 640 calls, two runs each): 171-173 us a call
# with a plan per size, 141-144 us on the capacity plan; in C a plan of Tk
# 1088, 1280, 2048 or 4096 runs a step of 1088 keys in the same 92-95 us.
CAPACITY_MAX_QUERIES = 16
CAPACITY_STEP = 256


class Call:
    """One signature's prepared call (see the module).

    kind: NORMAL, COPY (copy[i] tells which of query, key, value must be
    made contiguous first) or EMPTY (a zero-sized shape: PyTorch's math).
    Plans: fwd the forward's (its slot's, template), for a few query rows
    made for a capacity (CAPACITY_STEP) and then told S by fwd_kl, the key
    lengths it takes (else kl_ptr, the causal ones); bwd the training
    plan's (backward, dropout), of exactly S keys, with kl_ptr.
    """

    __slots__ = ("kind", "copy", "dims", "dtype", "np_dtype", "mask_dtype", "itemsize",
                 "is_f32", "fwd", "fwd_kl", "bwd", "strides", "capacity_lengths", "like_q",
                 "out_strides", "out_shape",
                 "out_stride", "dense_out_strides", "bshd", "lse_shape", "key_lengths",
                 "kl_ptr", "cmask", "cmask_args", "extents", "batch", "template")


def layout(shape, stride, bshd=False):
    """(ld, sh, sb) of a (..., H, T, d) tensor, or of a (B, T, H, d) one when
    bshd, as C reads it in place; None when it must be copied first."""
    if bshd:
        B, T, H, d = shape
        sb, st, sh, si = stride
    elif len(shape) == 4:
        B, H, T, d = shape
        sb, sh, st, si = stride
    else:
        n = len(shape)
        d, T = shape[-1], shape[-2]
        si, st = stride[-1], stride[-2]
        H, sh = (shape[-3], stride[-3]) if n >= 3 else (1, 0)
        B, sb = (1, 0)
        if n > 3:
            merged = merge_batch(shape[:-3], stride[:-3])
            if merged is None:
                return None
            B, sb = merged
    if d > 1 and si != 1:
        return None
    return c_strides(d, T, st, H, sh, B, sb)


def check_tensors(query, key, value):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s must be a torch.Tensor, not %s" % (name, type(t).__name__))
        if not t.is_cpu:
            raise NotImplementedError("attn computes on the CPU; %s is on %s" % (name, t.device))
        if t.layout != torch.strided or getattr(t, "is_nested", False):
            raise NotImplementedError("%s must be a dense (strided) tensor, not %s"
                                      % (name, "nested" if getattr(t, "is_nested", False)
                                         else t.layout))
        if t.dtype not in DTYPES:
            raise DTypeError("attn computes in float32, float64, bfloat16 or float16; %s is %s"
                             % (name, t.dtype))
        if t.dim() < 2:
            raise ArgumentError("%s must have at least 2 dimensions (L, E), got shape %s"
                                % (name, tuple(t.shape)))
    if not (query.dtype == key.dtype == value.dtype):
        raise DTypeError("query, key and value must have one dtype, got %s, %s, %s"
                         % (query.dtype, key.dtype, value.dtype))


def _check_shapes(qs, ks, vs, enable_gqa, bshd):
    """(batch dims, NH, NH_kv, L, S, E, Ev) from the shapes of query, key,
    value, or raises."""
    if len(qs) != len(ks) or len(ks) != len(vs):
        raise ArgumentError("query, key, value must have the same number of dimensions, got "
                            "shapes %s, %s, %s" % (tuple(qs), tuple(ks), tuple(vs)))
    if bshd and len(qs) != 4:
        raise ArgumentError("query, key, value must be 4-D (B, NH, L, E)")
    L, E = qs[-2:]
    S, Ek = ks[-2:]
    Sv, Ev = vs[-2:]
    if Ek != E or Sv != S or ks[:-2] != vs[:-2]:
        raise ArgumentError("shapes do not match: query %s (..., NH, L, E), key %s must be "
                            "(..., NH_kv, S, E), value %s (..., NH_kv, S, Ev)"
                            % (tuple(qs), tuple(ks), tuple(vs)))
    if len(qs) < 3:
        return (), 1, 1, L, S, E, Ev
    batch, NH, NH_kv = tuple(qs[:-3]), qs[-3], ks[-3]
    if tuple(ks[:-3]) != batch:
        raise ArgumentError("query and key batch dimensions differ: %s vs %s"
                            % (batch, tuple(ks[:-3])))
    if NH != NH_kv:
        if not enable_gqa:
            raise ArgumentError("query has %d heads and key %d: pass enable_gqa=True for "
                                "grouped-query attention" % (NH, NH_kv))
        if NH_kv == 0 or NH % NH_kv:
            raise ArgumentError("query heads (%d) must be a multiple of key/value heads "
                                "(%d)" % (NH, NH_kv))
    return batch, NH, NH_kv, L, S, E, Ev


def new_call(query, key, value, is_causal, scale, enable_gqa, bshd):
    """The Call of this signature (raising on bad arguments); see the module.

    bshd: the output is a (B, L, NH, Ev) tensor in attn's dense layout (the
    transformers integration); else it is (..., NH, L, Ev), allocated as
    PyTorch's CPU kernels allocate it.
    """
    check_tensors(query, key, value)
    if not isinstance(is_causal, (bool, int)):
        raise TypeError("is_causal must be a bool, not %s" % type(is_causal).__name__)
    if scale is not None and not scale > 0.0:
        raise NotImplementedError("attn needs a positive scale (None: 1/sqrt(E)), got %r"
                                  % (scale,))
    qs, ks, vs = query.shape, key.shape, value.shape
    batch, NH, NH_kv, L, S, E, Ev = _check_shapes(qs, ks, vs, enable_gqa, bshd)
    call = Call()
    call.kind, call.copy, call.batch = NORMAL, None, batch
    # np_dtype: lse's (float32 for the half types); mask_dtype: the mask's
    code, call.np_dtype, call.mask_dtype = DTYPES[query.dtype]
    call.dtype = query.dtype
    if 0 in qs or 0 in ks or 0 in vs:
        call.kind = EMPTY
        return call
    lays = [layout(qs, query.stride()), layout(ks, key.stride()), layout(vs, value.stride())]
    if None in lays:
        call.kind, call.copy = COPY, tuple(lay is None for lay in lays)
        return call
    B = 1
    for n in batch:
        B *= n
    dims = (B, NH, NH_kv, L, S, E, Ev)
    call.dims, call.itemsize, call.bshd = dims, query.element_size(), bool(bshd)
    call.strides = lays[0] + lays[1] + lays[2]
    call.extents = tuple(_extent(lay, (B, H, T, d))
                         for lay, (H, T, d) in zip(lays, ((NH, L, E), (NH_kv, S, E),
                                                           (NH_kv, S, Ev))))
    call.lse_shape = (B, NH, L)
    _choose_output(call, query, batch, NH, L, E, Ev)
    call.is_f32 = call.dtype == torch.float32
    _plan_keys(call, code, is_causal, scale)
    return call


def grown_call(prev, key, value, is_causal, scale):
    """The Call of prev's signature with key and value of another length S
    (a KV cache one step longer: transformers' DynamicCache concatenates, so
    every decode step is a new signature), or None where new_call must judge
    (S of 0, key and value of other lengths, a layout C cannot read). The
    caller has checked that all else matches prev's: query's shape and
    strides, key's and value's other dimensions, dtypes, is_causal, scale,
    enable_gqa, bshd. Only what depends on S is made again: about a third of
    new_call's time."""
    S = key.shape[-2]
    if prev.kind != NORMAL or S == 0 or value.shape[-2] != S:
        return None
    lk, lv = layout(key.shape, key.stride()), layout(value.shape, value.stride())
    if lk is None or lv is None:
        return None
    call = Call()
    for name in Call.__slots__:
        setattr(call, name, getattr(prev, name))
    B, NH, NH_kv, L, _, E, Ev = prev.dims
    call.dims = (B, NH, NH_kv, L, S, E, Ev)
    call.strides = prev.strides[:3] + lk + lv
    call.extents = (prev.extents[0], _extent(lk, (B, NH_kv, S, E)),
                    _extent(lv, (B, NH_kv, S, Ev)))
    _plan_keys(call, DTYPES[call.dtype][0], is_causal, scale)
    return call


def _plan_keys(call, code, is_causal, scale):
    """What call.dims, strides and output decide: the causal key lengths or
    mask, the plans' keys, the capacity lengths and the slot's template."""
    B, _, NH_kv, L, S, E, Ev = dims = call.dims
    _causal(call, bool(is_causal), B, L, S)
    flags = _CAUSAL if call.key_lengths is not None or (is_causal and L == S) else 0
    c_scale = 0.0 if scale is None else scale
    alone = L == 1 and B * S * NH_kv * (E + Ev) * call.itemsize <= DECODE_ALONE_BYTES \
        and (DECODE_ALONE_ON_OPENMP or _openmp.current() is None)
    threads = 1 if alone else None
    call.bwd = _plans.plan_key(code, dims, flags, c_scale, 0, threads)
    fwd_dims, call.fwd_kl, call.capacity_lengths = dims, call.kl_ptr, None
    if L <= CAPACITY_MAX_QUERIES and call.key_lengths is None and call.cmask is None:
        call.capacity_lengths = np.full(B, S, dtype=np.uintp)
        call.fwd_kl = call.capacity_lengths.ctypes.data
        fwd_dims = dims[:4] + (-(-S // CAPACITY_STEP) * CAPACITY_STEP,) + dims[5:]
    call.fwd = _plans.plan_key(code, fwd_dims, flags | _INFERENCE, c_scale, 0, threads)
    call.template = _plans.template(
        call.strides, call.out_strides if call.like_q else call.dense_out_strides,
        call.cmask_args, call.fwd_kl)


def _extent(lay, sizes):
    """(extent, dense) of an input laid out by lay = (ld, sh, sb)."""
    B, H, T, d = sizes
    ld, sh, sb = lay
    n = extent(d, T, ld, H, sh, B, sb)
    return n, n == B * H * T * d


def _choose_output(call, query, batch, NH, L, E, Ev):
    """PyTorch's CPU SDPA (torch 2.x) returns torch.empty_like(query) from its
    flash kernel (E == Ev, 2- to 4-D, masks of 2 or 4 dimensions), a
    contiguous tensor from its math path otherwise; the drop-in allocates
    alike. bshd: a (B, L, NH, Ev) tensor, attn's dense layout."""
    B = call.dims[0]
    call.like_q, call.out_strides = False, None
    if call.bshd:
        call.out_shape, call.dense_out_strides = (B, L, NH, Ev), (0, 0, 0)
    else:
        call.out_shape = tuple(query.shape[:-1]) + (Ev,)
        call.dense_out_strides = c_strides(Ev, L, Ev, NH, L * Ev, B, NH * L * Ev)
    stride, n = [], 1
    for size in reversed(call.out_shape):
        stride.append(n)
        n *= size
    call.out_stride = tuple(reversed(stride))
    if not call.bshd and E == Ev and query.dim() <= 4:
        if call.extents[0][1]:  # dense: empty_like keeps query's strides
            lay = call.strides[:3]
        else:
            probe = torch.empty_like(query, device="meta")
            lay = layout(probe.shape, probe.stride())
        if lay is not None:
            call.like_q, call.out_strides = True, lay


def _causal(call, is_causal, B, L, S):
    """PyTorch's causal mask is top-left aligned (query t sees keys j <= t),
    attn's bottom-right: equal for L == S; for L < S key lengths of L make
    them agree (keys j >= L are masked for every row anyway); for L > S a
    (L, S) mask."""
    call.key_lengths, call.kl_ptr = None, 0
    call.cmask, call.cmask_args = None, (0, 0, 0, 0)
    if not is_causal or L == S:
        return
    if L < S:
        call.key_lengths = np.full(B, L, dtype=np.uintp)
        call.kl_ptr = call.key_lengths.ctypes.data
    else:
        tril = torch.ones(L, S, dtype=torch.bool).tril()
        call.cmask = torch.zeros(L, S, dtype=call.mask_dtype).masked_fill_(
            tril.logical_not(), -math.inf)
        call.cmask_args = (call.cmask.data_ptr(), S, 0, 0)


def prepare_mask(attn_mask, call):
    """(tensor, mask_ld, mask_sb, mask_sh, like_q) for attn_mask broadcast to
    (..., NH, L, S), in its smallest broadcast form; like_q False where
    PyTorch would take its math path (a mask of 1 or 3 dimensions).

    The last mask prepared in each thread is kept with the tensor it came
    from and that tensor's version counter: a model's layers all receive
    one mask tensor, converted (bool to additive, another dtype) once."""
    if not isinstance(attn_mask, torch.Tensor):
        raise TypeError("attn_mask must be a torch.Tensor or None, not %s"
                        % type(attn_mask).__name__)
    memo = getattr(_tls, "mask", None)
    if (memo is not None and memo[0] is attn_mask and memo[1] == attn_mask._version
            and memo[2] is call):
        prepared = memo[3]
    else:
        prepared = _prepare_mask(attn_mask, call)
        _tls.mask = (attn_mask, attn_mask._version, call, prepared)
    if attn_mask.requires_grad and torch.is_grad_enabled():
        raise NotImplementedError("attn gives no gradient for attn_mask; pass "
                                  "attn_mask.detach() (or a mask that does not require grad)")
    return prepared


def _prepare_mask(attn_mask, call):
    if attn_mask.device.type != "cpu":
        raise NotImplementedError("attn_mask is on %s; attn computes on the CPU"
                                  % attn_mask.device)
    if attn_mask.dtype != torch.bool and not attn_mask.dtype.is_floating_point:
        raise DTypeError("attn_mask must be bool or floating point, got %s" % attn_mask.dtype)
    B, NH, _, L, S, _, _ = call.dims
    full = call.batch + (NH, L, S)
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
        m = torch.zeros(m.shape, dtype=call.mask_dtype).masked_fill_(m.logical_not(), -math.inf)
    else:  # float32 for half-precision q, k, v (attn.h: the mask stays float)
        m = m.detach().to(call.mask_dtype).contiguous()
    b1, h1, t1 = m.shape[:3]
    return (m, S if t1 > 1 else 0, h1 * t1 * S if b1 > 1 else 0, t1 * S if h1 > 1 else 0,
            attn_mask.dim() in (2, 4))


def math_reference(query, key, value, attn_mask, is_causal, scale, enable_gqa):
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
