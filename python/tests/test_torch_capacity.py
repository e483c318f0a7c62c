"""The PyTorch drop-in runs a generation's decode steps on one plan.

A call of at most attn._torch_call.CAPACITY_MAX_QUERIES query rows runs
on a plan made for S rounded up to a multiple of CAPACITY_STEP and told S
as key lengths (attn.h: a forward judges K, V and the mask by the keys
that exist), so a cache that grows by one key a step, a new
(B, NH_kv, S, E) tensor each time as transformers' DynamicCache makes it,
creates a plan once per CAPACITY_STEP steps instead of once per step.
Checked through the C plans created (attn_sdpa_plan_create, counted and
their shapes recorded): one for S = 300 ... 330, one more at 513; one for
masked steps (a padded batch's boolean mask, an additive one; attn.h
judges the mask's columns as the keys too); more query rows, or a causal
mask of L > S query rows, plans of exactly S keys. Every output
(and, with autograd, every gradient) is compared with PyTorch: its own
SDPA within test_torch's tolerances in float32 and float64, and a float64
evaluation of the half inputs within 8u of the largest output (u = 2^-8,
2^-11) in bfloat16 and float16, far below what a wrong key range gives.
"""

import pytest

torch = pytest.importorskip("torch")

import attn.torch as at  # noqa: E402
from attn import _plans, _torch_call  # noqa: E402
from test_torch import close  # noqa: E402
from torch_reference import composed, pytorch_sdpa  # noqa: E402

U = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


@pytest.fixture
def created(monkeypatch):
    """(Tq, Tk) of every sdpa plan created from here on (the cache emptied first)."""
    _plans.clear_plan_cache()
    shapes = []
    real = _plans._create

    def create(handle, code, shape, *rest):
        s = _plans._lib.SdpaShape.from_address(shape)
        shapes.append((s.Tq, s.Tk))
        return real(handle, code, shape, *rest)
    monkeypatch.setattr(_plans, "_create", create)
    yield shapes
    _plans.clear_plan_cache()


def check(out, q, k, v, dtype, what, **kw):
    if dtype in U:
        want = composed(q.double(), k.double(), v.double(), **kw)
        err = (out.double() - want).abs().max().item()
        assert err <= 8 * U[dtype] * want.abs().max().item(), (what, err)
    else:
        close(out, pytorch_sdpa(q, k, v, **kw), dtype, what)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64", "bf16", "f16"])
def test_growing_cache_runs_on_one_plan(created, dtype):
    NH, NH_kv, E = 8, 2, 32
    g = torch.Generator().manual_seed(11)
    K = torch.randn(1, NH_kv, 600, E, generator=g).to(dtype)
    V = torch.randn(1, NH_kv, 600, E, generator=g).to(dtype)
    for S in list(range(300, 331)) + [513]:
        q = torch.randn(1, NH, 1, E, generator=g).to(dtype)
        k, v = K[:, :, :S].contiguous(), V[:, :, :S].contiguous()  # heads S rows apart
        with torch.no_grad():
            out = at.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        check(out, q, k, v, dtype, "S %d" % S, enable_gqa=True)
    step = _torch_call.CAPACITY_STEP
    assert created == [(1, -(-300 // step) * step), (1, -(-513 // step) * step)], created


def test_masked_steps_share_the_capacity_plan(created):
    """A decode step with a mask (a padded batch's boolean (B, 1, 1, S) one,
    or an additive (B, NH, 1, S) one) takes the capacity plan too (attn.h:
    the mask's columns are judged as the keys that exist)."""
    dtype = torch.float32
    g = torch.Generator().manual_seed(12)
    K, V = (torch.randn(2, 2, 300, 16, generator=g, dtype=dtype) for _ in range(2))
    for S in range(280, 290):
        q = torch.randn(2, 4, 1, 16, generator=g, dtype=dtype)
        k, v = K[:, :, :S].contiguous(), V[:, :, :S].contiguous()
        pad = torch.ones(2, 1, 1, S, dtype=torch.bool)
        pad[1, :, :, :7] = False  # the second sequence left-padded
        bias = torch.randn(2, 4, 1, S, generator=g, dtype=dtype)
        for mask in (pad, bias):
            with torch.no_grad():
                out = at.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
            check(out, q, k, v, dtype, "S %d mask %s" % (S, mask.dtype), attn_mask=mask,
                  enable_gqa=True)
    assert created == [(1, _torch_call.CAPACITY_STEP * 2)], created


def test_many_queries_or_a_causal_mask_take_exact_plans(created):
    dtype = torch.float32
    g = torch.Generator().manual_seed(13)
    k, v = (torch.randn(1, 2, 45, 16, generator=g, dtype=dtype) for _ in range(2))
    L = _torch_call.CAPACITY_MAX_QUERIES + 1
    q = torch.randn(1, 4, L, 16, generator=g, dtype=dtype)
    with torch.no_grad():
        out = at.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    check(out, q, k, v, dtype, "%d queries" % L, enable_gqa=True)
    q = torch.randn(1, 4, 5, 16, generator=g, dtype=dtype)  # causal L > S: a (L, S) mask
    with torch.no_grad():
        out = at.scaled_dot_product_attention(q, k[:, :, :3], v[:, :, :3], is_causal=True,
                                              enable_gqa=True)
    check(out, q, k[:, :, :3], v[:, :, :3], dtype, "causal L > S", is_causal=True,
          enable_gqa=True)
    assert created == [(L, 45), (5, 3)], created


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_gradients_of_steps_on_a_capacity_plan(created, dtype):
    """The forward on the capacity plan gives the backward (a training plan
    of exactly S keys: it writes every row of dK and dV) its out and lse."""
    for S in (40, 41):
        g = torch.Generator().manual_seed(S)
        q = torch.randn(2, 4, 1, 16, generator=g, dtype=dtype).requires_grad_()
        k, v = (torch.randn(2, 2, S, 16, generator=g, dtype=dtype).requires_grad_()
                for _ in range(2))
        out = at.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        want = pytorch_sdpa(q, k, v, enable_gqa=True)
        close(out, want, dtype, "out S %d" % S)
        dout = torch.randn(out.shape, generator=g, dtype=dtype)
        got = torch.autograd.grad(out, (q, k, v), dout)
        ref = torch.autograd.grad(want, (q, k, v), dout)
        for name, a, b in zip("qkv", got, ref):
            close(a, b, dtype, "d%s S %d" % (name, S))
    step = _torch_call.CAPACITY_STEP
    assert created == [(1, step), (1, 40), (1, 41)], created
