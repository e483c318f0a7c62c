"""A KV cache that grows by one key a step (transformers' DynamicCache
concatenates: every decode step is a new signature): the drop-in derives
each step's call from the previous one's (attn._torch_call.grown_call)
instead of preparing it anew.

Checked, for caches in PyTorch's (B, NH_kv, S, E) layout made anew each
step (torch.cat), sliced from a larger preallocated cache (strides fixed),
and transposed (B, S, NH_kv, E) views, causal or not, one query row or
three, float32 and float64: every step's output within test_torch's
tolerances of PyTorch's own SDPA; new_call runs once per family (the first
step), the rest derived; gradients through a derived call against
PyTorch's; and a step whose value length differs from the key's still gets
new_call's error.
"""

import pytest

torch = pytest.importorskip("torch")

import attn.torch as at  # noqa: E402
from attn.errors import ArgumentError  # noqa: E402
from test_torch import close  # noqa: E402
from torch_reference import pytorch_sdpa  # noqa: E402

NH, NH_KV, E, S0, STEPS = 8, 2, 16, 40, 6


@pytest.fixture
def new_calls(monkeypatch):
    """How many times the drop-in prepared a call from scratch."""
    count = [0]
    real = at.new_call

    def counting(*args):
        count[0] += 1
        return real(*args)
    monkeypatch.setattr(at, "new_call", counting)
    at._entries.clear()
    at._families.clear()
    return count


def caches(kind, dtype, g):
    """(k, v) of S0 + s keys for s = 0 .. STEPS-1, in the layout `kind`."""
    total = S0 + STEPS
    k = torch.randn(1, NH_KV, total, E, generator=g, dtype=dtype)
    v = torch.randn(1, NH_KV, total, E, generator=g, dtype=dtype)
    for s in range(STEPS):
        S = S0 + s
        if kind == "cat":  # a new contiguous tensor each step
            yield k[:, :, :S].clone(), v[:, :, :S].clone()
        elif kind == "slice":  # a view of the preallocated cache
            yield k[:, :, :S], v[:, :, :S]
        else:  # (B, S, NH_kv, E) storage, viewed as (B, NH_kv, S, E)
            yield (k[:, :, :S].transpose(1, 2).contiguous().transpose(1, 2),
                   v[:, :, :S].transpose(1, 2).contiguous().transpose(1, 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("kind", ["cat", "slice", "bshd"])
@pytest.mark.parametrize("L,is_causal", [(1, False), (1, True), (3, True)])
def test_growing_cache_steps_derived(new_calls, dtype, kind, L, is_causal):
    g = torch.Generator().manual_seed(3)
    q = torch.randn(1, NH, L, E, generator=g, dtype=dtype)
    with torch.no_grad():
        for k, v in caches(kind, dtype, g):
            out = at.scaled_dot_product_attention(q, k, v, is_causal=is_causal,
                                                  enable_gqa=True)
            close(out, pytorch_sdpa(q, k, v, is_causal=is_causal, enable_gqa=True), dtype,
                  "%s S %d" % (kind, k.shape[2]))
    assert new_calls[0] == 1, new_calls[0]


def test_gradients_through_a_derived_call(new_calls):
    g = torch.Generator().manual_seed(5)
    dtype = torch.float64
    q = torch.randn(1, NH, 2, E, generator=g, dtype=dtype, requires_grad=True)
    for k, v in caches("cat", dtype, g):
        k, v = k.requires_grad_(True), v.requires_grad_(True)
        out = at.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        dout = torch.randn(out.shape, generator=g, dtype=dtype)
        got = torch.autograd.grad(out, (q, k, v), dout)
        ref_out = pytorch_sdpa(q, k, v, is_causal=True, enable_gqa=True)
        want = torch.autograd.grad(ref_out, (q, k, v), dout)
        close(out, ref_out, dtype, "out")
        for name, a, b in zip(("dq", "dk", "dv"), got, want):
            close(a, b, dtype, name)
    assert new_calls[0] == 1, new_calls[0]


def test_a_mismatched_step_still_gets_its_error(new_calls):
    q = torch.randn(1, NH, 1, E)
    k, v = torch.randn(1, NH_KV, 10, E), torch.randn(1, NH_KV, 10, E)
    with torch.no_grad():
        at.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        with pytest.raises(ArgumentError):
            at.scaled_dot_product_attention(q, torch.randn(1, NH_KV, 11, E),
                                            torch.randn(1, NH_KV, 12, E), enable_gqa=True)
    assert new_calls[0] == 2, new_calls[0]
