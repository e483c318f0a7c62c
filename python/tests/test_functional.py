"""softmax_rows, lookup, self_attention, mha_forward/backward against float64 references."""

import numpy as np
import pytest

import attn
import reference as ref
from conftest import assert_close, randn


def test_softmax_rows(rng, dtype):
    x = randn(rng, (3, 4, 7), dtype, 3.0)
    x[0, 0] = -np.inf
    x[1, 2, :3] = -np.inf
    y = attn.softmax_rows(x)
    assert y.dtype == dtype and y.shape == x.shape and y is not x
    assert_close(y, ref.softmax(x.astype(np.float64)), dtype)
    assert np.all(y[0, 0] == 0.0)
    z = x.copy()
    assert attn.softmax_rows(z, out=z) is z
    assert_close(z, y, dtype)


@pytest.mark.parametrize("Tq,Tk,d,dv", [(1, 1, 1, 1), (5, 7, 3, 4), (16, 33, 8, 5)])
@pytest.mark.parametrize("scale", [1.0, None, 0.3])
def test_lookup(rng, dtype, Tq, Tk, d, dv, scale):
    q, k, v = randn(rng, (Tq, d), dtype), randn(rng, (Tk, d), dtype), randn(rng, (Tk, dv), dtype)
    out, w = attn.lookup(q, k, v, scale=scale, return_weights=True)
    s = 1.0 / np.sqrt(d) if scale is None else scale
    ref_out, ref_w = ref.lookup(q, k, v, s)
    assert out.dtype == dtype and w.dtype == dtype
    assert_close(out, ref_out, dtype)
    assert_close(w, ref_w, dtype)
    assert_close(attn.lookup(q, k, v, scale=scale), ref_out, dtype)


def test_lookup_vector_value(rng):
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((6, 4)), rng.standard_normal(6)
    out = attn.lookup(q, k, v)
    assert out.shape == (3,)
    assert_close(out, ref.lookup(q, k, v[:, None], 1.0)[0][:, 0])


@pytest.mark.parametrize("B,T,C,hs", [(1, 1, 1, 1), (2, 6, 16, 4), (3, 17, 12, 5)])
@pytest.mark.parametrize("causal", [False, True])
def test_self_attention(rng, dtype, B, T, C, hs, causal):
    X = randn(rng, (B, T, C), dtype)
    Wq, Wk, Wv = (randn(rng, (C, hs), dtype, C ** -0.5) for _ in range(3))
    out, w = attn.self_attention(X, Wq, Wk, Wv, causal=causal, return_weights=True)
    ref_out, ref_w = ref.self_attention(X, Wq, Wk, Wv, causal)
    assert out.shape == (B, T, hs) and w.shape == (B, T, T)
    assert_close(out, ref_out, dtype)
    assert_close(w, ref_w, dtype)
    assert_close(attn.self_attention(X, Wq, Wk, Wv, causal), ref_out, dtype)


def test_self_attention_2d(rng, dtype):
    X = randn(rng, (9, 8), dtype)
    Wq, Wk, Wv = (randn(rng, (8, 3), dtype) for _ in range(3))
    out, w = attn.self_attention(X, Wq, Wk, Wv, return_weights=True)
    assert out.shape == (9, 3) and w.shape == (9, 9)
    assert_close(out, ref.self_attention(X[None], Wq, Wk, Wv)[0][0], dtype)


def test_dtype_follows_X(rng):
    X = rng.standard_normal((2, 4, 6)).astype(np.float32)
    W = rng.standard_normal((6, 3))  # float64 weights are converted to float32
    assert attn.self_attention(X, W, W, W).dtype == np.float32
    assert attn.self_attention(X.astype(np.float64), W, W, W).dtype == np.float64
    assert attn.self_attention(X.astype(np.float16), W, W, W).dtype == np.float64
    assert attn.lookup([[1, 0]], [[1, 0], [0, 1]], [[1.0], [2.0]]).dtype == np.float64


@pytest.mark.parametrize("NH", [1, 2, 4])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("with_wo", [True, False])
def test_mha_forward_backward(rng, dtype, NH, causal, with_wo):
    B, T, C = 2, 7, 8
    X = randn(rng, (B, T, C), dtype)
    Wq, Wk, Wv, Wo = (randn(rng, (C, C), dtype, C ** -0.5) for _ in range(4))
    Wo = Wo if with_wo else None
    out = attn.mha_forward(X, Wq, Wk, Wv, Wo, NH=NH, causal=causal)
    assert out.shape == (B, T, C) and out.dtype == dtype
    assert_close(out, ref.mha_forward(X, Wq, Wk, Wv, Wo, NH, causal), dtype)
    dout = randn(rng, (B, T, C), dtype)
    g = attn.mha_backward(X, Wq, Wk, Wv, Wo, dout, NH=NH, causal=causal)
    expected = ref.mha_backward(X, Wq, Wk, Wv, Wo, dout, NH, causal)
    rtol = 4e-5 if dtype == np.float32 else 1e-11
    for name, got, want in zip(g._fields, g, expected):
        if want is None:
            assert got is None
        else:
            assert_close(got, want, rtol=rtol, what=name)


def test_mha_backward_finite_differences(rng):
    B, T, C, NH = 1, 4, 4, 2
    X = rng.standard_normal((B, T, C))
    Ws = [rng.standard_normal((C, C)) * 0.5 for _ in range(4)]
    dout = rng.standard_normal((B, T, C))
    g = attn.mha_backward(X, *Ws, dout, NH=NH, causal=True)
    h = 1e-6

    def loss(X_, Ws_):
        return float(np.sum(attn.mha_forward(X_, *Ws_, NH=NH, causal=True) * dout))

    for idx in [(0, 0, 0), (0, 2, 3), (0, 3, 1)]:
        Xp, Xm = X.copy(), X.copy()
        Xp[idx] += h
        Xm[idx] -= h
        fd = (loss(Xp, Ws) - loss(Xm, Ws)) / (2 * h)
        assert abs(fd - g.dX[idx]) < 1e-7 * max(1.0, abs(fd))
    for w, grad in enumerate([g.dWq, g.dWk, g.dWv, g.dWo]):
        for idx in [(0, 0), (1, 3), (3, 2)]:
            Wp = [W.copy() for W in Ws]
            Wm = [W.copy() for W in Ws]
            Wp[w][idx] += h
            Wm[w][idx] -= h
            fd = (loss(X, Wp) - loss(X, Wm)) / (2 * h)
            assert abs(fd - grad[idx]) < 1e-7 * max(1.0, abs(fd))
