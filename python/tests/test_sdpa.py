"""attn.sdpa and attn.SdpaPlan against the float64 reference: GQA, masks,
key lengths, causal (bottom-right for Tq != Tk), windows, lse, strided rows."""

import numpy as np
import pytest

import attn
import reference as ref
from conftest import assert_close, randn

SHAPES = [  # B, NH, NH_kv, Tq, Tk, hs, hs_v
    (1, 1, 1, 1, 1, 1, 1),
    (2, 4, 4, 5, 5, 8, 8),
    (2, 4, 2, 3, 9, 8, 5),     # grouped-query, Tq < Tk, hs_v != hs
    (1, 6, 1, 9, 4, 4, 4),     # multi-query, Tq > Tk
    (2, 2, 2, 130, 140, 16, 16),  # more than one block of 128 queries
]


def qkv(rng, shape, dtype):
    B, NH, NH_kv, Tq, Tk, hs, hs_v = shape
    return (randn(rng, (B, Tq, NH, hs), dtype), randn(rng, (B, Tk, NH_kv, hs), dtype),
            randn(rng, (B, Tk, NH_kv, hs_v), dtype))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_plain(rng, dtype, shape, causal):
    q, k, v = qkv(rng, shape, dtype)
    out, lse = attn.sdpa(q, k, v, causal=causal, return_lse=True)
    ref_out, ref_lse = ref.sdpa(q, k, v, causal=causal)
    assert out.dtype == dtype and lse.dtype == dtype
    assert_close(out, ref_out, dtype, what="out")
    assert_close(lse, ref_lse, dtype, what="lse")


@pytest.mark.parametrize("mask_shape", [(5, 7), (1, 5, 7), (2, 1, 5, 7), (2, 4, 1, 7),
                                        (4, 5, 1), (7,)])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_masks(rng, dtype, mask_shape, kind):
    q, k, v = qkv(rng, (2, 4, 2, 5, 7, 8, 8), dtype)
    if kind == "bool":
        mask = rng.random(mask_shape) < 0.7
        mask[..., 0] = True  # no row fully masked for every broadcast
    else:
        mask = randn(rng, mask_shape, dtype)
        mask[rng.random(mask_shape) < 0.2] = -np.inf
        mask[..., 0] = 0.0
    out, lse = attn.sdpa(q, k, v, mask=mask, return_lse=True)
    ref_out, ref_lse = ref.sdpa(q, k, v, mask=mask)
    assert_close(out, ref_out, dtype)
    assert_close(lse, ref_lse, dtype)


def test_sdpa_fully_masked_rows_are_zero(dtype):
    q = np.ones((1, 2, 1, 4), dtype)
    mask = np.array([[True, True, True], [False, False, False]])
    out, lse = attn.sdpa(q, np.ones((1, 3, 1, 4), dtype), np.ones((1, 3, 1, 2), dtype),
                         mask=mask, return_lse=True)
    assert np.all(out[0, 1] == 0) and lse[0, 0, 1] == -np.inf
    assert np.allclose(out[0, 0], 1.0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("window", [0, 1, 3])
def test_sdpa_key_lengths_causal_window(rng, dtype, causal, window):
    q, k, v = qkv(rng, (3, 2, 1, 4, 10, 8, 6), dtype)
    key_lengths = np.array([10, 6, 0])
    k[1, 6:] = np.nan  # slots past a key length are never read
    v[1, 6:] = np.nan
    k[2], v[2] = np.nan, np.nan
    out, lse = attn.sdpa(q, k, v, key_lengths=key_lengths, causal=causal, window=window,
                         return_lse=True)
    ref_out, ref_lse = ref.sdpa(q, np.nan_to_num(k), np.nan_to_num(v), key_lengths=key_lengths,
                                causal=causal, window=window)
    assert_close(out, ref_out, dtype)
    assert_close(lse, ref_lse, dtype)
    assert np.all(out[2] == 0) and np.all(lse[:, :, :][2] == -np.inf)


def test_sdpa_scale_and_3d(rng, dtype):
    q, k, v = qkv(rng, (1, 3, 3, 4, 6, 5, 5), dtype)
    out = attn.sdpa(q[0], k[0], v[0], scale=0.7)
    out4, lse = attn.sdpa(q, k, v, scale=0.7, return_lse=True)
    assert out.shape == (4, 3, 5)
    assert_close(out, out4[0], dtype)
    assert_close(out4, ref.sdpa(q, k, v, scale=0.7)[0], dtype)
    out3, lse3 = attn.sdpa(q[0], k[0], v[0], scale=0.7, return_lse=True)
    assert lse3.shape == (3, 4)
    assert_close(lse3, lse[0], dtype)


def test_sdpa_fused_qkv_rows_read_in_place(rng, dtype):
    """q, k, v as head views of one (B, T, 3C) projection: read through ld = 3C."""
    B, T, NH, hs = 2, 6, 4, 8
    C = NH * hs
    qkv_rows = randn(rng, (B, T, 3 * C), dtype)
    q = qkv_rows[:, :, :C].reshape(B, T, NH, hs)
    k = qkv_rows[:, :, C:2 * C].reshape(B, T, NH, hs)
    v = qkv_rows[:, :, 2 * C:].reshape(B, T, NH, hs)
    assert np.shares_memory(q, qkv_rows)  # views, not copies
    copies = []
    import attn._arrays as arrays
    real_copy = arrays._copy
    arrays._copy = lambda x, dt: copies.append(x.shape) or real_copy(x, dt)
    try:
        out = attn.sdpa(q, k, v, causal=True)
    finally:
        arrays._copy = real_copy
    assert copies == []
    assert_close(out, ref.sdpa(q, k, v, causal=True)[0], dtype)
    # writing into rows of a wider output buffer, in place
    wide = np.zeros((B, T, 2 * C), dtype)
    target = wide[:, :, C:].reshape(B, T, NH, hs)
    res = attn.sdpa(q, k, v, causal=True, out=target)
    assert res is target and np.shares_memory(res, wide)
    assert_close(wide[:, :, C:].reshape(B, T, NH, hs), out, dtype)
    assert np.all(wide[:, :, :C] == 0)


def test_sdpa_out_in_place(rng, dtype):
    q, k, v = qkv(rng, (1, 2, 2, 3, 3, 4, 4), dtype)
    out = np.empty((1, 3, 2, 4), dtype)
    lse = np.empty((1, 2, 3), dtype)
    r_out, r_lse = attn.sdpa(q, k, v, out=out, lse=lse)
    assert r_out is out and r_lse is lse
    assert_close(out, ref.sdpa(q, k, v)[0], dtype)


@pytest.mark.parametrize("shape", SHAPES[1:4], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("window", [0, 2])
def test_sdpa_plan_forward_backward(rng, dtype, shape, causal, window):
    B, NH, NH_kv, Tq, Tk, hs, hs_v = shape
    q, k, v = qkv(rng, shape, dtype)
    mask = randn(rng, (NH, Tq, Tk), dtype, 0.5)
    kl = np.minimum(Tk, np.arange(B) + Tk - 1)
    with attn.SdpaPlan(B, NH, Tq, Tk, hs, NH_kv=NH_kv, hs_v=hs_v, dtype=dtype, causal=causal,
                       window=window) as plan:
        out, lse = plan.forward(q, k, v, mask=mask, key_lengths=kl, return_lse=True)
        ref_out, ref_lse = ref.sdpa(q, k, v, mask=mask, key_lengths=kl, causal=causal,
                                    window=window)
        assert_close(out, ref_out, dtype)
        assert_close(lse, ref_lse, dtype)
        dout = randn(rng, out.shape, dtype)
        dq, dk, dv = plan.backward(q, k, v, out, lse, dout, mask=mask, key_lengths=kl)
    expected = ref.sdpa_backward(q, k, v, dout, mask=mask, key_lengths=kl, causal=causal,
                                 window=window)
    rtol = 3e-5 if dtype == np.float32 else 1e-11
    for name, got, want in zip("dq dk dv".split(), (dq, dk, dv), expected):
        assert got.dtype == dtype
        assert_close(got, want, rtol=rtol, what=name)


def test_sdpa_plan_backward_strided_inputs(rng):
    """Gradients of strided q, k, v come back with the same row strides."""
    B, T, NH, hs = 2, 5, 2, 4
    C = NH * hs
    rows = rng.standard_normal((B, T, 3 * C))
    q, k, v = (rows[:, :, i * C:(i + 1) * C].reshape(B, T, NH, hs) for i in range(3))
    with attn.SdpaPlan(B, NH, T, T, hs, dtype=np.float64, causal=True) as plan:
        out, lse = plan.forward(q, k, v, return_lse=True)
        dout = rng.standard_normal(out.shape)
        dq, dk, dv = plan.backward(q, k, v, out, lse, dout)
    assert dq.strides == q.strides
    for got, want in zip((dq, dk, dv), ref.sdpa_backward(q, k, v, dout, causal=True)):
        assert_close(got, want)


def test_sdpa_plan_matches_one_shot(rng, dtype):
    q, k, v = qkv(rng, (2, 4, 2, 6, 6, 8, 8), dtype)
    with attn.SdpaPlan(2, 4, 6, 6, 8, NH_kv=2, dtype=dtype, inference=True) as plan:
        for _ in range(3):
            assert np.array_equal(plan.forward(q, k, v), attn.sdpa(q, k, v))
