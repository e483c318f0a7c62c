"""Half precision (bfloat16, float16): attn.sdpa and attn.SdpaPlan on NumPy
arrays, and the PyTorch drop-in, forward and gradients.

The reference is always float64 computed from the same half inputs (each
16-bit value widened exactly), so only attn's own arithmetic and its final
rounding are measured. u is the unit roundoff of the storage type: 2^-8
(bfloat16, 8 significant bits) and 2^-11 (float16, 11 bits); any result
stored in that type is off by up to u of its magnitude, whatever computed it.

Tolerances, each justified where it is used:
  - the forward (NumPy and PyTorch) against attn.h's own error bound for the
    half calls, element by element: |out - x| <= u |x| + (u_P + 4 g) max_j
    |V_j| (u_P = u for bfloat16, 0 for float16; g from the row's dot
    products, see out_bound), and lse within 4 g + 2^-23 |lse|;
  - gradients: largest error <= 2 u of the largest |gradient|. Each gradient
    element is rounded once from float (<= u of its own magnitude); float
    arithmetic adds about 2^-24 relative; the backward reads out as stored
    (rounded), which moves the row sums rowsum(dout * out) by up to u of
    their size. Measured: at most 1.05 u on these shapes;
  - the issue's comparison with PyTorch (torch >= 2): attn's largest
    absolute error against the float64 reference at most 1.5 times that of
    torch.nn.functional.scaled_dot_product_attention on the same half
    inputs in the same dtype, for the output and each of dq, dk, dv, over
    causal, GQA (enable_gqa, or repeat_interleave where PyTorch lacks it),
    masks, L != S and a decode step (L = 1, S = 2048). Both round each
    element once from float, so the ratio is about 1 (measured 0.2-1.3 over
    8 seeds where PyTorch runs its flash kernel).
NumPy bfloat16 needs ml_dtypes (not in Debian 12; `./attn.sh peers` puts it
into .venv-peers): those cases skip without it. The PyTorch cases skip
without torch; the comparison with PyTorch's own SDPA without torch >= 2
(Debian's 1.13 has none; the bound checks still run there). No timing.
"""

import math

import numpy as np
import pytest

import attn
import attn._arrays as arrays
import reference as ref
from attn import _lib, _plans
from conftest import randn

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

try:
    import torch
except ImportError:
    torch = None

NO_ML_DTYPES = ("ml_dtypes is not installed: NumPy bfloat16 is not tested here "
                "(pip install ml_dtypes; ./attn.sh peers puts it into .venv-peers)")
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")


def unit_roundoff(name):
    return 2.0 ** -8 if name == "bf16" else 2.0 ** -11


@pytest.fixture(params=["f16", "bf16"])
def half(request):
    """(name, NumPy dtype) of a half type."""
    if request.param == "f16":
        return "f16", np.dtype(np.float16)
    if ml_dtypes is None:
        pytest.skip(NO_ML_DTYPES)
    return "bf16", np.dtype(ml_dtypes.bfloat16)


def out_bound(q, k, v, name, key_lengths=None, causal=False, window=0, scale=None,
              mask=None):
    """(x, lse, bound of |out - x|, bound of |lse - lse_x|): x and lse_x the
    float64 results of the same half inputs, the bounds attn.h states for the
    half calls. Per row: n visible keys, d = hs,
    g = 2^-24 (n + d + 16) + 2^-23 d scale max_j sum_i |q_i k_ji| (bf16: plus
    2^-24 (n + 16), the bf16 products' exp), and for
    out column c the bound u |x| + (u_P + 4 g) max_j |v_jc| over the visible
    keys j (attn's visibility: key lengths, causal, window; keys only a
    mask hides count too, which can only widen the bound)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    x, lse = ref.sdpa(q, k, v, mask=mask, key_lengths=key_lengths, causal=causal,
                      scale=scale, window=window)
    B, Tq, NH, hs = q.shape
    Tk, NH_kv = k.shape[1], k.shape[2]
    group = NH // NH_kv
    s = 1.0 / math.sqrt(hs) if scale is None else scale
    u = unit_roundoff(name)
    u_p = u if name == "bf16" else 0.0
    bound = np.zeros_like(x)
    lse_bound = np.zeros_like(lse)
    for b in range(B):
        vis = ref._visible(b, Tq, Tk, key_lengths, causal, window)
        n = vis.sum(1)
        for h in range(NH):
            g_kv = h // group
            prod = np.abs(q[b, :, h, :]) @ np.abs(k[b, :, g_kv, :]).T  # (Tq, Tk)
            g = 2.0 ** -24 * (n + hs + 16) + 2.0 ** -23 * hs * s * np.where(vis, prod, 0).max(1)
            if name == "bf16":  # bf16 products: the exp adds 2^-24 (n + 16) (attn_half.h)
                g = g + 2.0 ** -24 * (n + 16)
            vmax = np.where(vis[:, :, None], np.abs(v[b, :, g_kv, :])[None], 0).max(1)
            bound[b, :, h, :] = u * np.abs(x[b, :, h, :]) + (u_p + 4 * g)[:, None] * vmax
            with np.errstate(invalid="ignore"):
                lse_bound[b, h] = 4 * g + 2.0 ** -23 * np.abs(lse[b, h])
    return x, lse, bound, lse_bound


def assert_within(got, want, bound, what):
    """|got - want| <= bound elementwise; infinities (empty rows) must match."""
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape, what
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf]), what + ": -inf rows"
    err = np.abs(got[~inf] - want[~inf])
    worst = int(np.argmax(err - bound[~inf])) if err.size else 0
    assert np.all(err <= bound[~inf]), "%s: error %.3g > bound %.3g" % (
        what, err[worst], bound[~inf][worst])


def assert_grad(got, want, name, what):
    """Largest error <= 2 u of the largest |gradient| (see the module)."""
    got = np.asarray(got, np.float64)
    scale = max(float(np.max(np.abs(want))), 1e-30)
    err = float(np.max(np.abs(got - want)))
    assert err <= 2 * unit_roundoff(name) * scale, "%s: %.3g > 2u * %.3g" % (what, err, scale)


# ---------------------------------------------------------------- NumPy

SHAPES = [  # B, Tq, Tk, NH, NH_kv, hs, hs_v
    (1, 1, 1, 1, 1, 1, 1),
    (2, 9, 9, 4, 4, 16, 16),
    (2, 5, 13, 4, 2, 8, 6),      # GQA, Tq < Tk, hs_v != hs
    (1, 1, 700, 8, 2, 32, 32),   # a decode step on a long cache (tiled, split keys)
    (1, 130, 130, 2, 1, 64, 64),  # more than one block of 128 queries
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_forward_within_the_documented_bound(rng, half, shape, causal):
    name, dt = half
    B, Tq, Tk, NH, NH_kv, hs, hs_v = shape
    q = randn(rng, (B, Tq, NH, hs), dt)
    k = randn(rng, (B, Tk, NH_kv, hs), dt)
    v = randn(rng, (B, Tk, NH_kv, hs_v), dt)
    out, lse = attn.sdpa(q, k, v, causal=causal, return_lse=True)
    assert out.dtype == dt and lse.dtype == np.float32
    x, lse_x, bound, lse_bound = out_bound(q, k, v, name, causal=causal)
    assert_within(out, x, bound, "out")
    assert_within(lse, lse_x, lse_bound, "lse")


@pytest.mark.parametrize("kind", ["bool", "float32", "half"])
def test_sdpa_masks_key_lengths_window(rng, half, kind):
    """A mask (bool; additive float32; additive in the inputs' half dtype,
    which is converted to float32) with key lengths and a window."""
    name, dt = half
    q, k, v = randn(rng, (3, 4, 2, 8), dt), randn(rng, (3, 11, 1, 8), dt), \
        randn(rng, (3, 11, 1, 8), dt)
    if kind == "bool":
        mask = rng.random((3, 1, 4, 11)) < 0.7
    else:
        mask = randn(rng, (3, 1, 4, 11), np.float32)
        mask[rng.random(mask.shape) < 0.2] = -np.inf
        if kind == "half":
            mask = mask.astype(dt)
    kl = [11, 6, 1]
    out, lse = attn.sdpa(q, k, v, mask=mask, key_lengths=kl, window=5, causal=True,
                         return_lse=True)
    assert out.dtype == dt and lse.dtype == np.float32
    x, lse_x, bound, lse_bound = out_bound(q, k, v, name, key_lengths=kl, causal=True,
                                           window=5, mask=np.asarray(mask, np.float64)
                                           if kind != "bool" else mask)
    assert_within(out, x, bound, "out")
    assert_within(lse, lse_x, lse_bound, "lse")
    # the converted mask gives what a float32 mask of the same values gives
    if kind == "half":
        same = attn.sdpa(q, k, v, mask=mask.astype(np.float32), key_lengths=kl, window=5,
                         causal=True)
        assert np.array_equal(out.view(np.uint16), same.view(np.uint16))


def test_sdpa_3d_scale_and_out(rng, half):
    name, dt = half
    q, k, v = (randn(rng, (6, 3, 8), dt) for _ in range(3))
    out = attn.sdpa(q, k, v, scale=0.3)
    assert out.shape == (6, 3, 8) and out.dtype == dt
    x, _, bound, _ = out_bound(q[None], k[None], v[None], name, scale=0.3)
    assert_within(out[None], x, bound, "out")
    target = np.zeros((3, 6, 8), dt).swapaxes(0, 1)  # a strided out, written in place
    assert attn.sdpa(q, k, v, scale=0.3, out=target) is target
    assert np.array_equal(target.view(np.uint16), out.view(np.uint16))
    with pytest.raises(attn.DTypeError):  # out must have the inputs' dtype
        attn.sdpa(q, k, v, out=np.zeros((6, 3, 8), np.float32))


def test_sdpa_layouts_read_in_place(rng, half, monkeypatch):
    """(B, H, T, d) arrays seen as (B, T, H, d), a cache slice and fused QKV
    views: passed to C as they are (no copy), at their own addresses."""
    name, dt = half
    copies = []
    real_copy = arrays._copy
    monkeypatch.setattr(arrays, "_copy", lambda x, d: copies.append(x.shape) or real_copy(x, d))
    seen = []
    real = getattr(_plans, "_forward_" + name)

    def c_call(plan, args):
        a = _lib.SdpaArgs.from_address(args)
        seen.append((a.Q, a.K, a.V))
        return real(plan, args)
    monkeypatch.setattr(_plans, "_forward_" + name, c_call)
    B, T, NH, hs = 2, 7, 4, 8
    bhsd = tuple(randn(rng, (B, NH, T, hs), dt).swapaxes(1, 2) for _ in range(3))
    kc, vc = randn(rng, (B, 2, 3 * T, hs), dt), randn(rng, (B, 2, 3 * T, hs), dt)
    cache = (randn(rng, (B, T, NH, hs), dt), kc[:, :, :T].swapaxes(1, 2),
             vc[:, :, 1:T + 1].swapaxes(1, 2))
    x = randn(rng, (B, T, 3 * NH * hs), dt)
    fused = tuple(x[:, :, i * NH * hs:(i + 1) * NH * hs].reshape(B, T, NH, hs)
                  for i in range(3))
    for q, k, v in (bhsd, cache, fused):
        out = attn.sdpa(q, k, v, causal=True)
        x64, _, bound, _ = out_bound(q, k, v, name, causal=True)
        assert_within(out, x64, bound, "out")
        assert seen[-1] == (q.ctypes.data, k.ctypes.data, v.ctypes.data)
    assert copies == []


def test_mixed_dtypes_are_refused(rng, half):
    _, dt = half
    q = randn(rng, (1, 3, 2, 4), dt)
    for other in (np.float32, np.float64, np.float16 if dt != np.float16 else np.float32):
        with pytest.raises(attn.DTypeError, match="one dtype"):
            attn.sdpa(q, q.astype(other), q)
        with pytest.raises(attn.DTypeError, match="one dtype"):
            attn.sdpa(q.astype(other), q, q)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_plan_forward_backward(rng, half, causal):
    """SdpaPlan(dtype=half): out, lse (float32) and the gradients in the half
    dtype against float64 (dk, dv summed over the heads of a group)."""
    name, dt = half
    B, Tq, Tk, NH, NH_kv, hs, hs_v = 2, 6, 9, 4, 2, 16, 8
    q = randn(rng, (B, Tq, NH, hs), dt)
    k = randn(rng, (B, Tk, NH_kv, hs), dt)
    v = randn(rng, (B, Tk, NH_kv, hs_v), dt)
    dout = randn(rng, (B, Tq, NH, hs_v), dt)
    mask = randn(rng, (Tq, Tk), np.float32)
    with attn.SdpaPlan(B, NH, Tq, Tk, hs, NH_kv=NH_kv, hs_v=hs_v, dtype=dt,
                       causal=causal) as plan:
        assert plan.dtype == dt
        out, lse = plan.forward(q, k, v, mask=mask, return_lse=True)
        grads = plan.backward(q, k, v, out, lse, dout, mask=mask)
    assert out.dtype == dt and lse.dtype == np.float32
    x, lse_x, bound, lse_bound = out_bound(q, k, v, name, causal=causal, mask=mask)
    assert_within(out, x, bound, "out")
    assert_within(lse, lse_x, lse_bound, "lse")
    want = ref.sdpa_backward(q, k, v, dout, mask=mask, causal=causal)
    for label, got, w in zip(("dq", "dk", "dv"), grads, want):
        assert got.dtype == dt
        assert_grad(got, w, name, label)


def test_sdpa_plan_dtype_names():
    with attn.SdpaPlan(1, 1, 2, 2, 4, dtype=np.float16) as plan:
        assert plan.dtype == np.float16 and "float16" in repr(plan)
    if ml_dtypes is not None:
        with attn.SdpaPlan(1, 1, 2, 2, 4, dtype="bfloat16") as plan:
            assert plan.dtype == ml_dtypes.bfloat16
    with pytest.raises(attn.DTypeError):
        attn.SdpaPlan(1, 1, 2, 2, 4, dtype=np.int16)


def test_other_functions_still_compute_float16_in_float64(rng):
    """Only attention on given q, k, v computes in half precision; the
    course's functions keep widening float16 to float64."""
    x = randn(rng, (3, 4), np.float16)
    assert attn.softmax_rows(x).dtype == np.float64


# --------------------------------------------------------------- PyTorch

if torch is not None:
    from torch_reference import HAS_SDPA, composed
    TORCH_HALF = {"bf16": torch.bfloat16, "f16": torch.float16}
    F = torch.nn.functional
else:
    HAS_SDPA = False


def torch_inputs(dt, shapes, seed):
    """Leaves of dtype dt (drawn in float32, then rounded: older torch has no
    float16 randn on the CPU)."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g).to(dt).requires_grad_() for s in shapes]


def float64_reference(q, k, v, dout, **kw):
    """out and (dq, dk, dv) in float64 from the same half values (detached
    float64 leaves: autograd would round gradients through .double() back to
    the half dtype)."""
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    mask = kw.get("attn_mask")
    if mask is not None and mask.dtype != torch.bool:
        kw = dict(kw, attn_mask=mask.double())
    out = composed(*leaves, **kw)
    return out.detach(), torch.autograd.grad(out, leaves, dout.double())


def max_err(a, b):
    return (a.detach().double() - b).abs().max().item()


TORCH_CASES = {  # name: (B, NH, NH_kv, L, S, E, Ev), keywords
    "plain": ((2, 4, 4, 64, 64, 32, 32), {}),
    "causal": ((1, 4, 4, 128, 128, 64, 64), {"is_causal": True}),
    "causal L<S": ((2, 4, 4, 16, 48, 64, 64), {"is_causal": True}),
    "gqa causal": ((2, 4, 2, 33, 40, 16, 16), {"is_causal": True, "enable_gqa": True}),
    "decode": ((2, 8, 2, 1, 2048, 64, 64), {"enable_gqa": True}),
    "bool mask": ((2, 4, 4, 24, 40, 32, 32), {"mask": "bool"}),
    "float mask": ((2, 4, 4, 24, 40, 32, 32), {"mask": "float"}),
    "Ev != E": ((2, 3, 3, 20, 20, 16, 8), {"is_causal": True}),
    # 128 queries and more: bf16 products on the amx and avx512-bf16 sets
    "prefill gqa": ((1, 8, 2, 300, 300, 64, 64), {"is_causal": True, "enable_gqa": True}),
}


# Where PyTorch's CPU SDPA takes its math path (Ev != E: its flash kernel
# needs E == Ev), it differentiates through float intermediates of its
# forward; attn's half backward recomputes out in float for the row sums
# rowsum(dout * out) (attn_half.h), so it meets the same criterion there
# (with the rounded out it was 1.9-3.8x PyTorch's error on dq, dk). Where
# attn's products are bf16 (128 queries and more on its amx and avx512-bf16
# sets, "prefill gqa") it reads out as given, as PyTorch's flash kernel does.


def torch_case(case, dt, seed=0):
    (B, NH, NH_kv, L, S, E, Ev), kw = TORCH_CASES[case]
    q, k, v = torch_inputs(dt, [(B, NH, L, E), (B, NH_kv, S, E), (B, NH_kv, S, Ev)], seed)
    kw = dict(kw)
    kind = kw.pop("mask", None)
    g = torch.Generator().manual_seed(seed + 1)
    if kind == "bool":
        mask = torch.rand((B, 1, L, S), generator=g) < 0.7
        mask[..., 0] = True
        kw["attn_mask"] = mask
    elif kind == "float":  # additive, in the inputs' dtype (PyTorch requires that)
        mask = torch.randn((L, S), generator=g)
        mask[torch.rand((L, S), generator=g) < 0.2] = -math.inf
        mask[:, 0] = 0.0
        kw["attn_mask"] = mask.to(dt)
    dout = torch.randn((B, NH, L, Ev), generator=g).to(dt)
    return (q, k, v), dout, kw


def run_attn(q, k, v, dout, **kw):
    import attn.torch as at
    out = at.scaled_dot_product_attention(q, k, v, **kw)
    return out, torch.autograd.grad(out, (q, k, v), dout)


@needs_torch
@pytest.mark.parametrize("case", list(TORCH_CASES))
@pytest.mark.parametrize("tname", ["bf16", "f16"])
def test_drop_in_against_float64(tname, case):
    """Forward within attn.h's bound and gradients within 2 u, in the input
    dtype (runs on Debian's torch 1.13 too)."""
    dt = TORCH_HALF[tname]
    (q, k, v), dout, kw = torch_case(case, dt)
    out, grads = run_attn(q, k, v, dout, **kw)
    assert out.dtype == dt and all(g.dtype == dt for g in grads)
    want, want_grads = float64_reference(q, k, v, dout, **kw)
    if not kw.get("is_causal") or q.shape[-2] == k.shape[-2]:
        # attn.h's bound, in attn's (B, T, H, d) order (PyTorch's causal is
        # attn's for L == S; the bound's visibility ignores masks, which only
        # widens it)
        qn, kn, vn = (t.detach().transpose(1, 2).float().numpy() for t in (q, k, v))
        mask = kw.get("attn_mask")
        if mask is not None:
            mask = mask.numpy() if mask.dtype == torch.bool else mask.double().numpy()
        x, _, bound, _ = out_bound(qn, kn, vn, tname, causal=kw.get("is_causal", False),
                                   mask=mask)
        assert_within(out.detach().transpose(1, 2).double().numpy(), x, bound, "out")
    assert max_err(out, want) <= unit_roundoff(tname) * 2 * want.abs().max().item()
    for label, got, w in zip(("dq", "dk", "dv"), grads, want_grads):
        assert_grad(got.double().numpy(), w.numpy(), tname, label)


@needs_torch
@pytest.mark.skipif(not HAS_SDPA, reason="PyTorch's own SDPA needs torch >= 2")
@pytest.mark.parametrize("case", list(TORCH_CASES))
@pytest.mark.parametrize("tname", ["bf16", "f16"])
def test_drop_in_at_least_as_accurate_as_pytorch(tname, case):
    """The issue's criterion: attn's largest error against float64 at most
    1.5 times PyTorch's own SDPA's, output and each gradient (see the module)."""
    dt = TORCH_HALF[tname]
    (q, k, v), dout, kw = torch_case(case, dt)
    out, grads = run_attn(q, k, v, dout, **kw)
    theirs_kw = dict(kw)
    if kw.get("enable_gqa"):
        try:
            theirs = F.scaled_dot_product_attention(q, k, v, **theirs_kw)
        except TypeError:  # before enable_gqa (torch < 2.5): PyTorch repeats the heads
            theirs_kw.pop("enable_gqa")
            rep = q.shape[1] // k.shape[1]
            theirs = F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1),
                                                    v.repeat_interleave(rep, 1), **theirs_kw)
    else:
        theirs = F.scaled_dot_product_attention(q, k, v, **theirs_kw)
    assert theirs.dtype == dt
    theirs_grads = torch.autograd.grad(theirs, (q, k, v), dout)
    want, want_grads = float64_reference(q, k, v, dout, **kw)
    worse = []
    for label, a, b, w in zip(("out", "dq", "dk", "dv"), (out,) + grads,
                              (theirs,) + theirs_grads, (want,) + want_grads):
        ours_err, theirs_err = max_err(a, w), max_err(b, w)
        if not (ours_err <= 1.5 * theirs_err or ours_err == 0.0):
            worse.append("%s: attn's error %.3g, PyTorch's %.3g" % (label, ours_err, theirs_err))
    assert not worse, case + ": " + "; ".join(worse)


@needs_torch
@pytest.mark.parametrize("tname", ["bf16", "f16"])
def test_drop_in_reads_half_tensors_in_place(tname, monkeypatch):
    """(B, NH, L, E) tensors, transposed (B, L, NH, E) views and cache slices
    go to C at their own addresses, forward and backward; the gradients are
    the arrays C wrote, in the input dtype."""
    import attn.torch as at
    dt = TORCH_HALF[tname]
    seen = []
    for kind in ("forward", "backward"):
        real = getattr(_plans, "_%s_%s" % (kind, tname))

        def c_call(plan, args, *rest, real=real, kind=kind):
            a = _lib.SdpaArgs.from_address(args)
            seen.append((kind, a.Q, a.K, a.V, a.out, rest[1:4] if rest else None))
            return real(plan, args, *rest)
        monkeypatch.setattr(_plans, "_%s_%s" % (kind, tname), c_call)
    g = torch.Generator().manual_seed(3)

    def rand(*shape):
        return torch.randn(shape, generator=g).to(dt).requires_grad_()
    B, NH, NH_kv, L, E = 2, 4, 2, 6, 8
    bhsd = (rand(B, NH, L, E), rand(B, NH_kv, L, E), rand(B, NH_kv, L, E))
    bshd = tuple(rand(B, L, h, E).transpose(1, 2) for h in (NH, NH_kv, NH_kv))
    kc, vc = rand(B, NH_kv, 3 * L, E), rand(B, NH_kv, 3 * L, E)
    cache = (bhsd[0], kc[:, :, :L], vc[:, :, :L])
    for q, k, v in (bhsd, bshd, cache):
        seen.clear()
        out = at.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        assert out.dtype == dt
        grads = torch.autograd.grad(out, (q, k, v), torch.ones_like(out))
        ptrs = (q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr())
        assert [s[:5] for s in seen] == [("forward",) + ptrs, ("backward",) + ptrs]
        assert seen[1][5] == tuple(t.data_ptr() for t in grads)
        assert all(t.dtype == dt for t in grads)
        want, want_grads = float64_reference(q, k, v, torch.ones_like(out), is_causal=True,
                                             enable_gqa=True)
        assert max_err(out, want) <= 2 * unit_roundoff(tname) * want.abs().max().item()
        for label, got, w in zip(("dq", "dk", "dv"), grads, want_grads):
            assert_grad(got.double().numpy(), w.numpy(), tname, label)


@needs_torch
@pytest.mark.parametrize("tname", ["bf16", "f16"])
def test_drop_in_half_mask_is_float32_for_c(tname, monkeypatch):
    """A float attn_mask of the half dtype reaches C as float32 (attn.h: the
    mask stays float): the same result, bit for bit, as that mask in float32."""
    import attn.torch as at
    dt = TORCH_HALF[tname]
    (q, k, v), _, kw = torch_case("float mask", dt)
    mask = kw["attn_mask"]
    with torch.no_grad():
        a = at.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        b = at.scaled_dot_product_attention(q, k, v, attn_mask=mask.float())
    assert a.dtype == dt and torch.equal(a, b)


@needs_torch
def test_drop_in_mixed_dtypes_are_refused():
    import attn.torch as at
    q = torch.randn(1, 2, 3, 4).to(torch.bfloat16)
    for k in (q.half(), q.float()):
        with pytest.raises(TypeError, match="one dtype"):
            at.scaled_dot_product_attention(q, k, q)


@needs_torch
@pytest.mark.parametrize("tname", ["bf16", "f16"])
def test_drop_in_dropout_draws_the_float32_masks(tname):
    """dropout_p > 0 on half tensors: the seed and offset come from PyTorch's
    generator as for float32, and attn's masks are a function of them and of
    the positions only, so after the same torch.manual_seed a half call drops
    the weights a float32 call of the same (widened) values drops: out and
    gradients agree with float32's within the half rounding (2 u of the
    largest magnitude, as above)."""
    import attn.torch as at
    dt = TORCH_HALF[tname]
    (q, k, v), dout, _ = torch_case("gqa causal", dt)
    q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
    results = []
    for args, g in (((q, k, v), dout), ((q32, k32, v32), dout.float())):
        torch.manual_seed(11)
        out = at.scaled_dot_product_attention(*args, dropout_p=0.3, is_causal=True,
                                              enable_gqa=True)
        results.append((out,) + torch.autograd.grad(out, args, g))
    u = unit_roundoff(tname)
    for label, half_t, f32_t in zip(("out", "dq", "dk", "dv"), *results):
        assert half_t.dtype == dt, label
        scale = f32_t.abs().max().item()
        assert max_err(half_t, f32_t.double()) <= 2 * u * scale, label
