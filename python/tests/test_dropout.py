"""Attention dropout (attn.h, attn_plan_set_dropout) from Python.

- attn.Plan / attn.SdpaPlan: the dropout setting (property, constructor,
  set_dropout), its errors (inference plans, p outside [0, 1), NaN), and
  that a forward with p > 0 drops and the same (seed, offset) repeats it.
- attn.torch.scaled_dot_product_attention(dropout_p=p), against PyTorch:
  the keep rate of p = 0.1, 0.5, 0.9 read through a probe (q = 0: every
  weight 1/S; v = the identity: out = the dropped weights) within 5
  binomial sigmas of 1 - p, as torch.nn.functional.dropout's is; the
  mean of 2000 dropped calls is torch's undropped output within 5 standard
  errors per element; torch.manual_seed repeats a call bit for bit;
  gradcheck in float64 with the seed fixed inside the function.
"""

import math

import numpy as np
import pytest

import attn

torch = pytest.importorskip("torch")
import attn.torch as at  # noqa: E402


def test_plan_dropout_setting():
    plan = attn.SdpaPlan(1, 2, 4, 6, 8, dtype=np.float64)
    assert plan.dropout == (0.0, 0, 0)
    plan.set_dropout(0.25, 7, 3)
    assert plan.dropout == (0.25, 7, 3)
    for bad in (-0.1, 1.0, 2.0, float("nan")):
        with pytest.raises(attn.Error, match="ATTN_ERR_BAD_DROPOUT|dropout"):
            plan.set_dropout(bad, 1, 2)
    assert plan.dropout == (0.25, 7, 3)
    with pytest.raises(attn.Error):
        attn.SdpaPlan(1, 2, 4, 6, 8, inference=True).set_dropout(0.1)
    with pytest.raises(attn.Error):
        attn.Plan(1, 4, 8, 2, inference=True, dropout=0.1)
    p = attn.Plan(2, 5, 8, 2, dtype=np.float64, dropout=(0.5, 1, 2))
    assert p.dropout == (0.5, 1, 2)


def test_sdpa_plan_drops_and_repeats():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 2, 5, 3, 8))
    v = rng.standard_normal((2, 5, 3, 8))
    plan = attn.SdpaPlan(2, 3, 5, 5, 8, dtype=np.float64)
    plain = plan.forward(q, k, v)[0].copy()
    plan.dropout = (0.5, 11, 0)
    a = plan.forward(q, k, v)[0].copy()
    b = plan.forward(q, k, v)[0].copy()
    plan.dropout = (0.5, 11, 1)
    c = plan.forward(q, k, v)[0].copy()
    assert np.array_equal(a, b) and not np.array_equal(a, plain) and not np.array_equal(a, c)
    projected = attn.Plan(2, 6, 8, 2, dtype=np.float64, causal=True)
    X, Wq, Wk, Wv = (rng.standard_normal(s) for s in ((2, 6, 8), (8, 8), (8, 8), (8, 8)))
    out0, P0 = projected.forward(X, Wq, Wk, Wv, return_weights=True)
    out0, P0 = out0.copy(), P0.copy()
    projected.set_dropout(0.3, 5, 6)
    out1, P1 = projected.forward(X, Wq, Wk, Wv, return_weights=True)
    assert np.array_equal(P0, P1)  # the weights returned are the undropped ones
    assert not np.array_equal(out0, out1)


def probe_keep(dropout_p, S=256, L=128, B=2, NH=4):
    q = torch.zeros(B, NH, L, 4, dtype=torch.float64)
    k = torch.randn(B, NH, S, 4, dtype=torch.float64)
    v = torch.eye(S, dtype=torch.float64).expand(B, NH, S, S).contiguous()
    out = at.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)
    return out != 0


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_keep_rate_against_torch(p):
    torch.manual_seed(1)
    ours = probe_keep(p)
    theirs = torch.nn.functional.dropout(torch.ones(ours.shape), p) != 0  # torch's dropout
    n = ours.numel()
    sigma = math.sqrt(n * p * (1 - p))
    for keep in (ours, theirs):
        assert abs(keep.sum().item() - n * (1 - p)) <= 5 * sigma


def test_mean_is_undropped():
    torch.manual_seed(3)
    q, k, v = (torch.randn(1, 2, 5, 4, dtype=torch.float64) for _ in range(3))
    p, runs = 0.4, 2000
    mean = sum(at.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
               for _ in range(runs)) / runs
    weights = torch.softmax((q @ k.transpose(-1, -2) / 2).masked_fill(
        torch.ones(5, 5, dtype=torch.bool).triu(1), -math.inf), -1)
    ref = weights @ v  # torch's undropped attention (PyTorch's math reference)
    se = torch.sqrt((weights ** 2 @ v ** 2) * p / (1 - p) / runs)
    assert torch.all((mean - ref).abs() <= 5 * se + 1e-12)


def test_manual_seed_repeats_and_masks_differ():
    q, k, v = (torch.randn(2, 3, 7, 8) for _ in range(3))
    torch.manual_seed(5)
    a = at.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
    b = at.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
    torch.manual_seed(5)
    c = at.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
    assert torch.equal(a, c) and not torch.equal(a, b)
    with pytest.raises(ValueError):
        at.scaled_dot_product_attention(q, k, v, dropout_p=1.0)


@pytest.mark.parametrize("causal,gqa", [(False, False), (True, True)])
def test_gradcheck_fixed_seed(causal, gqa):
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, 5, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    kv_heads = 2 if gqa else 4
    k = torch.randn(2, kv_heads, 6, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    v = torch.randn(2, kv_heads, 6, 2, dtype=torch.float64, generator=gen, requires_grad=True)

    def fn(q, k, v):
        torch.manual_seed(123)  # the same mask on every evaluation
        return at.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=causal,
                                               enable_gqa=gqa)

    assert torch.autograd.gradcheck(fn, (q, k, v))


def test_mask_and_no_grad_paths():
    q, k, v = (torch.randn(1, 2, 4, 8) for _ in range(3))
    mask = torch.rand(1, 2, 4, 4) > 0.3
    mask[..., 0] = True
    torch.manual_seed(9)
    a = at.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.5)
    torch.manual_seed(9)
    with torch.no_grad():
        b = at.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.5)
    assert torch.equal(a, b)
