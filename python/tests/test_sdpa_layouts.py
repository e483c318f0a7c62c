"""attn.sdpa and attn.SdpaPlan read NumPy arrays of any strides in place.

q, k, v in attn's axis order (B, T, H, d) but laid out otherwise in memory:
a (B, H, T, d) array with swapped axes, a slice of a larger (B, H_kv, S_max,
d) cache, head views of one fused (B, T, 3*C) projection. No copy is made
(attn._arrays._copy is the package's only input copy, counted), the
addresses and strides C receives are the arrays' own, and values and
gradients match the float64 reference (tests/reference.py) to 1e-5 (f32)
and 1e-12 (f64) of the largest magnitude (gradients 3e-5 and 1e-11, as
test_sdpa: the backward recomputes the weights from the log-sum-exp).
"""

import numpy as np
import pytest

import attn
import attn._arrays as arrays
import reference as ref
from attn import _lib, _plans
from conftest import assert_close, randn


@pytest.fixture
def copies(monkeypatch):
    seen = []
    real = arrays._copy
    monkeypatch.setattr(arrays, "_copy", lambda x, dtype: seen.append(np.shape(x)) or
                        real(x, dtype))
    return seen


@pytest.fixture
def c_args(monkeypatch):
    """The argument structs of the sdpa forwards C receives, as dicts."""
    seen = []
    for name in ("_forward_f32", "_forward_f64", "_forward_bf16", "_forward_f16"):
        real = getattr(_plans, name)

        def call(plan, args, real=real):
            a = _lib.SdpaArgs.from_address(args)
            seen.append({f: getattr(a, f) or 0 for f, _ in a._fields_})
            return real(plan, args)
        monkeypatch.setattr(_plans, name, call)
    return seen


def layout(rng, name, dtype, B=2, NH=4, NH_kv=2, Tq=5, Tk=7, hs=8):
    """q, k, v of shapes (B,Tq,NH,hs), (B,Tk,NH_kv,hs), (B,Tk,NH_kv,hs)."""
    if name == "bhsd":  # PyTorch's layout, axes swapped to attn's order
        return (randn(rng, (B, NH, Tq, hs), dtype).swapaxes(1, 2),
                randn(rng, (B, NH_kv, Tk, hs), dtype).swapaxes(1, 2),
                randn(rng, (B, NH_kv, Tk, hs), dtype).swapaxes(1, 2))
    if name == "cache":
        q = randn(rng, (B, Tq, NH, hs), dtype)
        kc = randn(rng, (B, NH_kv, 3 * Tk, hs), dtype)
        vc = randn(rng, (B, NH_kv, 3 * Tk, hs), dtype)
        return q, kc[:, :, :Tk].swapaxes(1, 2), vc[:, :, 2:Tk + 2].swapaxes(1, 2)
    C = NH * hs
    x = randn(rng, (B, Tq, 3 * C), dtype)
    return tuple(x[:, :, i * C:(i + 1) * C].reshape(B, Tq, NH, hs) for i in range(3))


def element_strides(a):
    B, T, H, _ = a.shape
    sb, st, sh, _ = (s // a.itemsize for s in a.strides)
    return (st if T > 1 else 0, sh if H > 1 else 0, sb if B > 1 else 0)


@pytest.mark.parametrize("name", ["bhsd", "cache", "fused"])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_reads_in_place(rng, dtype, copies, c_args, name, causal):
    q, k, v = layout(rng, name, dtype)
    assert not (q.flags.c_contiguous and k.flags.c_contiguous)
    out, lse = attn.sdpa(q, k, v, causal=causal, return_lse=True)
    ref_out, ref_lse = ref.sdpa(q, k, v, causal=causal)
    assert_close(out, ref_out, dtype, what="out")
    assert_close(lse, ref_lse, dtype, what="lse")
    assert copies == []
    [f] = c_args
    for a, ptr, ld, sh, sb in ((q, "Q", "ldq", "shq", "sbq"), (k, "K", "ldk", "shk", "sbk"),
                               (v, "V", "ldv", "shv", "sbv")):
        assert f[ptr] == a.ctypes.data
        assert (f[ld], f[sh], f[sb]) == element_strides(a)


def test_sdpa_writes_a_strided_out_in_place(rng, dtype):
    q, k, v = layout(rng, "bhsd", dtype)
    buf = np.zeros((2, 4, 5, 8), dtype)  # (B, NH, Tq, hs): PyTorch's order
    target = buf.swapaxes(1, 2)
    assert attn.sdpa(q, k, v, out=target) is target
    assert_close(buf.swapaxes(1, 2), ref.sdpa(q, k, v)[0], dtype)
    isz = np.dtype(dtype).itemsize
    overlapping = np.lib.stride_tricks.as_strided(  # all heads on one address range
        np.zeros((2, 5, 8), dtype), (2, 5, 4, 8), (40 * isz, 8 * isz, 0, isz), writeable=True)
    with pytest.raises(attn.ArgumentError, match="distinct"):
        attn.sdpa(q, k, v, out=overlapping)


def test_sdpa_copies_what_c_cannot_read(rng, copies):
    q, k, v = layout(rng, "bhsd", np.float64)
    k_strided_last = np.ascontiguousarray(k)[..., ::-1]  # last axis not contiguous
    out = attn.sdpa(q, k_strided_last, v)
    assert copies == [k.shape]
    assert_close(out, ref.sdpa(q, k_strided_last, v)[0])


@pytest.mark.parametrize("name", ["bhsd", "cache", "fused"])
def test_sdpa_plan_backward_in_place(rng, dtype, copies, name):
    q, k, v = layout(rng, name, dtype, NH_kv=4 if name == "fused" else 2,
                     Tk=5 if name == "fused" else 7)
    B, Tq, NH, hs = q.shape
    Tk, NH_kv = k.shape[1], k.shape[2]
    with attn.SdpaPlan(B, NH, Tq, Tk, hs, NH_kv=NH_kv, dtype=dtype, causal=True) as plan:
        out, lse = plan.forward(q, k, v, return_lse=True)
        dout = randn(rng, out.shape, dtype)
        dq, dk, dv = plan.backward(q, k, v, out, lse, dout)
    assert copies == []
    rtol = 3e-5 if dtype == np.float32 else 1e-11
    for label, got, want in zip(("dq", "dk", "dv"), (dq, dk, dv),
                                ref.sdpa_backward(q, k, v, dout, causal=True)):
        assert_close(got, want, rtol=rtol, what=label)
    for g, a in zip((dq, dk, dv), (q, k, v)):
        assert g.strides == a.strides  # C writes dQ with Q's strides
    if name == "fused":  # one buffer, the projection's layout
        assert dk.ctypes.data - dq.ctypes.data == NH * hs * q.itemsize
        assert dv.ctypes.data - dk.ctypes.data == NH * hs * q.itemsize


def test_sdpa_plan_backward_of_q_is_k(rng):
    """One non-dense array as q, k and v: the gradients cannot share a buffer
    (C refuses aliasing outputs), so each gets its own."""
    x = randn(rng, (1, 4, 6, 8), np.float64).swapaxes(1, 2)[:, :, :3]
    with attn.SdpaPlan(1, 3, 6, 6, 8, dtype=np.float64) as plan:
        out, lse = plan.forward(x, x, x, return_lse=True)
        dout = randn(rng, out.shape, np.float64)
        grads = plan.backward(x, x, x, out, lse, dout)
    for got, want in zip(grads, ref.sdpa_backward(x, x, x, dout)):
        assert_close(got, want, rtol=1e-11)
