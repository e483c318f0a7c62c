"""attn.torch.scaled_dot_product_attention against PyTorch: values, gradients
(against PyTorch's and by finite differences), GQA, masks, causal alignment,
leading dimensions, and the clear refusals."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import attn  # noqa: E402
import attn.torch as at  # noqa: E402
from attn import _torch_call  # noqa: E402
from torch_reference import HAS_SDPA, TORCH_MAJOR, composed, pytorch_sdpa  # noqa: E402

TOL = {torch.float32: 2e-5, torch.float64: 1e-12}


@pytest.fixture(params=[torch.float32, torch.float64], ids=["f32", "f64"])
def tdtype(request):
    return request.param


def close(a, b, dtype, what=""):
    a, b = a.detach().double(), b.detach().double()
    assert a.shape == b.shape, (what, a.shape, b.shape)
    scale = max(b.abs().max().item(), 1e-30)
    err = (a - b).abs().max().item()
    assert err <= TOL[dtype] * scale, "%s: %.3g > %.1g * %.3g" % (what, err, TOL[dtype], scale)


def tensors(shapes, dtype, seed=0, grad=True):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g, dtype=dtype).requires_grad_(grad) for s in shapes]


def compare(q, k, v, dtype, **kw):
    """Forward and q, k, v gradients of attn against PyTorch."""
    out = at.scaled_dot_product_attention(q, k, v, **kw)
    expected = pytorch_sdpa(q, k, v, **kw)
    close(out, expected, dtype, "out")
    dout = torch.randn(out.shape, dtype=dtype, generator=torch.Generator().manual_seed(9))
    got = torch.autograd.grad(out, (q, k, v), dout)
    want = torch.autograd.grad(expected, (q, k, v), dout)
    for name, a, b in zip("qkv", got, want):
        close(a, b, dtype, "d" + name)
    return out


@pytest.mark.parametrize("B,NH,L,S,E,Ev", [(1, 1, 1, 1, 1, 1), (2, 4, 6, 6, 8, 8),
                                           (2, 3, 5, 9, 4, 7), (1, 2, 9, 4, 8, 8),
                                           (1, 2, 140, 150, 16, 16)])
@pytest.mark.parametrize("is_causal", [False, True])
def test_matches_pytorch(tdtype, B, NH, L, S, E, Ev, is_causal):
    q, k, v = tensors([(B, NH, L, E), (B, NH, S, E), (B, NH, S, Ev)], tdtype)
    compare(q, k, v, tdtype, is_causal=is_causal)


@pytest.mark.parametrize("NH,NH_kv", [(4, 2), (6, 1), (4, 4)])
@pytest.mark.parametrize("is_causal", [False, True])
def test_gqa(tdtype, NH, NH_kv, is_causal):
    q, k, v = tensors([(2, NH, 5, 8), (2, NH_kv, 7, 8), (2, NH_kv, 7, 8)], tdtype)
    compare(q, k, v, tdtype, is_causal=is_causal, enable_gqa=True)


@pytest.mark.parametrize("mask_shape", [(5, 7), (2, 1, 5, 7), (1, 3, 1, 7), (3, 5, 7),
                                        (2, 3, 5, 7), (1, 7)])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_masks(tdtype, mask_shape, kind):
    q, k, v = tensors([(2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8)], tdtype)
    g = torch.Generator().manual_seed(3)
    if kind == "bool":
        mask = torch.rand(mask_shape, generator=g) < 0.7
        mask[..., 0] = True
    else:
        mask = torch.randn(mask_shape, generator=g, dtype=tdtype)
        mask[torch.rand(mask_shape, generator=g) < 0.2] = float("-inf")
        mask[..., 0] = 0.0
    compare(q, k, v, tdtype, attn_mask=mask)


def test_mask_prepared_once_and_again_after_a_change(tdtype):
    """The layers of a model pass one mask tensor: it is converted once; an
    in-place change (its version counter) makes it converted again."""
    q, k, v = tensors([(2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8)], tdtype, grad=False)
    mask = torch.ones(2, 1, 5, 7, dtype=torch.bool)
    mask[0, 0, :, 3:] = False
    first = at.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    prepared = _torch_call._tls.mask[3][0]
    again = at.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert _torch_call._tls.mask[3][0] is prepared and torch.equal(first, again)
    close(again, pytorch_sdpa(q, k, v, attn_mask=mask), tdtype)
    mask[1, 0, :, :2] = False
    changed = at.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert _torch_call._tls.mask[3][0] is not prepared
    close(changed, pytorch_sdpa(q, k, v, attn_mask=mask), tdtype)


def test_scale_and_head_sizes(tdtype):
    q, k, v = tensors([(2, 2, 4, 6), (2, 2, 5, 6), (2, 2, 5, 3)], tdtype)
    compare(q, k, v, tdtype, scale=0.37)


@pytest.mark.parametrize("lead", [(), (3,), (2, 3), (2, 2, 3)])
def test_leading_dimensions(tdtype, lead):
    q, k, v = tensors([lead + (5, 4), lead + (6, 4), lead + (6, 2)], tdtype)
    out = compare(q, k, v, tdtype)
    assert out.shape == lead + (5, 2)


def test_fused_projection_views(tdtype):
    """q, k, v split from one projection and viewed as heads are read in place."""
    B, T, NH, hs = 2, 6, 4, 8
    C = NH * hs
    x, = tensors([(B, T, 3 * C)], tdtype)
    q, k, v = (t.view(B, T, NH, hs).transpose(1, 2) for t in x.split(C, dim=-1))
    out = at.scaled_dot_product_attention(q, k, v, is_causal=True)
    expected = pytorch_sdpa(q, k, v, is_causal=True)
    close(out, expected, tdtype)
    dout = torch.randn(out.shape, dtype=tdtype)
    close(torch.autograd.grad(out, x, dout)[0], torch.autograd.grad(expected, x, dout)[0],
          tdtype, "dx")


@pytest.mark.parametrize("L,S,is_causal,mask,gqa", [
    (4, 4, True, None, False), (3, 6, True, None, False), (6, 3, True, None, False),
    (4, 5, False, "float", False), (4, 5, False, "bool", True), (5, 5, True, None, True)])
def test_gradcheck(L, S, is_causal, mask, gqa):
    NH_kv = 1 if gqa else 2
    q, k, v = tensors([(2, 2, L, 3), (2, NH_kv, S, 3), (2, NH_kv, S, 2)], torch.float64)
    m = None
    if mask == "float":
        m = torch.randn(2, 1, L, S, dtype=torch.float64)
    elif mask == "bool":
        m = torch.ones(L, S, dtype=torch.bool).triu(-1)

    def fn(q_, k_, v_):
        return at.scaled_dot_product_attention(q_, k_, v_, attn_mask=m, is_causal=is_causal,
                                               enable_gqa=gqa)

    assert torch.autograd.gradcheck(fn, (q, k, v), eps=1e-6, atol=1e-8, rtol=1e-6)


def test_causal_is_top_left_for_unequal_lengths():
    """PyTorch's causal mask keeps j <= t even when L != S (attn's own is bottom-right)."""
    for L, S in [(2, 5), (5, 2)]:
        q, k, v = tensors([(1, 1, L, 4), (1, 1, S, 4), (1, 1, S, 4)], torch.float64, grad=False)
        out = at.scaled_dot_product_attention(q, k, v, is_causal=True)
        close(out, composed(q, k, v, is_causal=True), torch.float64)
        # row 0 sees key 0 alone
        close(out[0, 0, 0], v[0, 0, 0], torch.float64)


def test_fully_masked_rows_give_zero():
    q, k, v = tensors([(1, 1, 2, 4), (1, 1, 3, 4), (1, 1, 3, 4)], torch.float64)
    mask = torch.tensor([[True, False, True], [False, False, False]])
    out = at.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert torch.all(out[0, 0, 1] == 0)
    out.sum().backward()
    assert torch.isfinite(q.grad).all() and torch.isfinite(k.grad).all()


def test_no_grad_and_inference(tdtype):
    q, k, v = tensors([(1, 2, 4, 8)] * 3, tdtype)
    with_grad = at.scaled_dot_product_attention(q, k, v)
    with torch.no_grad():
        without = at.scaled_dot_product_attention(q, k, v)
    assert not without.requires_grad
    assert torch.equal(with_grad.detach(), without)
    with torch.inference_mode():
        assert torch.equal(at.scaled_dot_product_attention(q, k, v), without)


def test_output_layout():
    """The output is allocated as PyTorch's CPU SDPA allocates it (torch 2.x):
    empty_like(query) where its flash kernel runs (E == Ev, a mask of 2 or 4
    dimensions or none), contiguous where its math path does."""
    q, k, v = tensors([(2, 3, 4, 8)] * 3, torch.float32, grad=False)
    out = at.scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 3, 4, 8) and out.dtype == torch.float32
    assert out.is_contiguous()
    qt = q.transpose(1, 2).contiguous().transpose(1, 2)  # (B, L, NH, E) memory
    assert at.scaled_dot_product_attention(qt, k, v).stride() == qt.stride()
    assert at.scaled_dot_product_attention(qt, k, v[..., :5]).is_contiguous()
    mask3 = torch.ones(3, 4, 4, dtype=torch.bool)
    assert at.scaled_dot_product_attention(qt, k, v, attn_mask=mask3).is_contiguous()
    mask2 = torch.ones(4, 4, dtype=torch.bool)
    assert at.scaled_dot_product_attention(qt, k, v, attn_mask=mask2).stride() == qt.stride()
    if HAS_SDPA and TORCH_MAJOR >= 2:
        for query, value, mask in ((qt, v, None), (qt, v[..., :5], None), (qt, v, mask3),
                                   (qt, v, mask2), (q, v, None)):
            ours = at.scaled_dot_product_attention(query, k, value, attn_mask=mask)
            theirs = torch.nn.functional.scaled_dot_product_attention(query, k, value,
                                                                      attn_mask=mask)
            assert ours.stride() == theirs.stride()


def test_empty_shapes():
    q, k, v = tensors([(2, 3, 0, 4), (2, 3, 5, 4), (2, 3, 5, 6)], torch.float32)
    assert at.scaled_dot_product_attention(q, k, v).shape == (2, 3, 0, 6)
    q, k, v = tensors([(2, 3, 4, 4), (2, 3, 0, 4), (2, 3, 0, 6)], torch.float32)
    out = at.scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 3, 4, 6) and torch.all(out == 0)


def test_refusals():
    q, k, v = tensors([(1, 2, 3, 4)] * 3, torch.float32)
    sdpa = at.scaled_dot_product_attention
    with pytest.raises(ValueError):  # dropout_p in [0, 1) only
        sdpa(q, k, v, dropout_p=1.0)
    with pytest.raises(NotImplementedError):
        sdpa(q.detach().to("meta"), k, v)
    with pytest.raises(TypeError):  # bfloat16 and float16 work (test_half.py), not others
        sdpa(q.to(torch.int32), k.to(torch.int32), v.to(torch.int32))
    with pytest.raises(TypeError):
        sdpa(q.half(), k.half(), v.bfloat16())
    with pytest.raises(TypeError):
        sdpa(q, k.double(), v)
    with pytest.raises(TypeError):
        sdpa(q.detach().numpy(), k, v)
    with pytest.raises(TypeError):
        sdpa(q, k, v, attn_mask=torch.ones(3, 3, dtype=torch.int64))
    learned = torch.zeros(3, 3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="attn_mask"):
        sdpa(q, k, v, attn_mask=learned)
    with torch.no_grad():
        sdpa(q, k, v, attn_mask=learned)  # no gradient asked: fine
    sdpa(q, k, v, attn_mask=learned.detach())
    with pytest.raises(ValueError):
        sdpa(q, k, v, attn_mask=torch.ones(3, 3, dtype=torch.bool), is_causal=True)
    kv1 = torch.randn(1, 1, 3, 4)
    with pytest.raises(ValueError, match="enable_gqa"):
        sdpa(q, kv1, kv1)
    with pytest.raises(ValueError):
        sdpa(torch.randn(1, 3, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4),
             enable_gqa=True)
    with pytest.raises(ValueError):
        sdpa(q, torch.randn(1, 2, 3, 5), v)
    with pytest.raises(ValueError):
        sdpa(q, k, torch.randn(1, 2, 4, 4))
    with pytest.raises(ValueError):
        sdpa(q, k, v, attn_mask=torch.ones(4, 3))
    with pytest.raises(NotImplementedError):
        sdpa(q, k, v, scale=0.0)
    with pytest.raises(ValueError):
        sdpa(q, k, v, scale=float("inf"))
    with pytest.raises(ValueError):
        sdpa(torch.randn(4), torch.randn(4), torch.randn(4))
    assert issubclass(attn.ArgumentError, ValueError)


def test_double_backward_is_refused():
    q, k, v = tensors([(1, 1, 3, 2)] * 3, torch.float64)
    out = at.scaled_dot_product_attention(q, k, v)
    (gq,) = torch.autograd.grad(out.sum(), q, create_graph=True)
    with pytest.raises(RuntimeError):
        gq.sum().backward()


def test_in_place_change_of_saved_input_is_caught():
    q, k, v = tensors([(1, 1, 3, 2)] * 3, torch.float64)
    q2 = q * 1.0
    out = at.scaled_dot_product_attention(q2, k, v)
    with torch.no_grad():
        q2.add_(1.0)
    with pytest.raises(RuntimeError):
        out.sum().backward()


def test_numpy_and_torch_agree():
    q, k, v = tensors([(2, 3, 4, 8), (2, 1, 6, 8), (2, 1, 6, 8)], torch.float64, grad=False)
    out = at.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    np_out = attn.sdpa(q.transpose(1, 2).numpy(), k.transpose(1, 2).numpy(),
                       v.transpose(1, 2).numpy())
    assert np.array_equal(out.transpose(1, 2).numpy(), np_out)
