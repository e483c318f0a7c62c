"""The PyTorch drop-in passes tensors to C in place, whatever their layout.

For each layout (PyTorch's (B, NH, L, E) contiguous, a transposed (B, L, NH,
E) view, a slice of a larger (B, NH_kv, S_max, E) cache with grouped-query
heads, head views of one fused QKV projection), in float32 and float64, the
addresses and strides C receives are recorded (the C functions of
attn._plans wrapped): the forward gets query's, key's and value's own data
pointers and strides (no copy), the output it writes is the tensor returned,
and the backward gets the same inputs, grad_out itself when it has the
output's layout, and writes the gradients autograd returns. Values and
gradients are compared with PyTorch's own SDPA (torch >= 2; the composed
math on 1.13) within test_torch's tolerances: 2e-5 (float32) and 1e-12
(float64) of the largest reference magnitude (float32 sums of a few dozen
products of unit-size numbers differ in the last bits between two correct
orders of summation; float64 alike, 1e-12 leaves room for exp/log).
"""

import pytest

torch = pytest.importorskip("torch")

import attn.torch as at  # noqa: E402
from attn import _lib, _plans  # noqa: E402
from test_torch import close  # noqa: E402
from torch_reference import pytorch_sdpa  # noqa: E402

FIELDS = [name for name, _ in _lib.SdpaArgs._fields_]


@pytest.fixture(params=[torch.float32, torch.float64], ids=["f32", "f64"])
def tdtype(request):
    return request.param


@pytest.fixture
def c_calls(monkeypatch):
    """Every sdpa forward and backward C call of the test: ("forward" or
    "backward", the argument struct's fields (NULL as 0), and for a backward
    the dout, dQ, dK, dV addresses and the status). A backward may be refused
    (ATTN_ERR_ALIASING, nothing written) and made again with the gradients
    placed otherwise (attn._layout.grad_placements)."""
    seen = []

    def fields(addr):
        a = _lib.SdpaArgs.from_address(addr)
        return {name: getattr(a, name) or 0 for name in FIELDS}

    def wrap(name):
        real = getattr(_plans, name)
        if name.startswith("_forward"):
            def call(plan, args):
                seen.append(("forward", fields(args), None))
                return real(plan, args)
        else:
            def call(plan, args, dout, dq, dk, dv):
                status = real(plan, args, dout, dq, dk, dv)
                seen.append(("backward", fields(args), (dout, dq, dk, dv, status)))
                return status
        monkeypatch.setattr(_plans, name, call)

    for sfx in ("f32", "f64", "bf16", "f16"):
        wrap("_forward_" + sfx)
        wrap("_backward_" + sfx)
    return seen


def c_strides(t):
    """(ld, sh, sb) of a 4-D (B, H, T, d) tensor as C should receive it (0 for
    a dimension of one entry)."""
    B, H, T, _ = t.shape
    sb, sh, st, _ = t.stride()
    return (st if T > 1 else 0, sh if H > 1 else 0, sb if B > 1 else 0)


def received(fields, name, ld, sh, sb):
    return fields[name], (fields[ld], fields[sh], fields[sb])


def layouts(dtype, B=2, NH=4, NH_kv=2, L=6, S=6, E=8):
    """name -> (query, key, value) leaves-or-views that require grad, and the
    leaves to differentiate."""
    g = torch.Generator().manual_seed(1)

    def rand(*shape):
        return torch.randn(shape, generator=g, dtype=dtype).requires_grad_()

    out = {}
    q, k, v = rand(B, NH, L, E), rand(B, NH_kv, S, E), rand(B, NH_kv, S, E)
    out["bhsd"] = (q, k, v), (q, k, v)
    qt, kt, vt = rand(B, L, NH, E), rand(B, S, NH_kv, E), rand(B, S, NH_kv, E)
    out["bshd"] = (qt.transpose(1, 2), kt.transpose(1, 2), vt.transpose(1, 2)), (qt, kt, vt)
    kc, vc = rand(B, NH_kv, 3 * S + 1, E), rand(B, NH_kv, 3 * S + 1, E)
    out["cache"] = (q, kc[:, :, :S], vc[:, :, :S]), (q, kc, vc)
    x = rand(B, L, 3 * NH * E)
    fused = tuple(t.view(B, L, NH, E).transpose(1, 2) for t in x.split(NH * E, dim=-1))
    out["fused"] = fused, (x,)
    return out


LAYOUTS = ["bhsd", "bshd", "cache", "fused"]


@pytest.mark.parametrize("name", LAYOUTS)
@pytest.mark.parametrize("is_causal", [False, True])
def test_forward_in_place(c_calls, tdtype, name, is_causal):
    (q, k, v), _ = layouts(tdtype)[name]
    gqa = q.shape[1] != k.shape[1]
    with torch.no_grad():
        out = at.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=gqa)
        expected = pytorch_sdpa(q, k, v, is_causal=is_causal, enable_gqa=gqa)
    close(out, expected, tdtype, name)
    [(kind, f, _)] = c_calls
    assert kind == "forward"
    assert received(f, "Q", "ldq", "shq", "sbq") == (q.data_ptr(), c_strides(q))
    assert received(f, "K", "ldk", "shk", "sbk") == (k.data_ptr(), c_strides(k))
    assert received(f, "V", "ldv", "shv", "sbv") == (v.data_ptr(), c_strides(v))
    assert received(f, "out", "ldo", "sho", "sbo") == (out.data_ptr(), c_strides(out))
    # PyTorch's CPU SDPA allocates empty_like(query)
    assert out.stride() == torch.empty_like(q).stride()


@pytest.mark.parametrize("name", LAYOUTS)
def test_backward_in_place(c_calls, tdtype, name):
    (q, k, v), leaves = layouts(tdtype)[name]
    gqa = q.shape[1] != k.shape[1]
    out = at.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
    expected = pytorch_sdpa(q, k, v, is_causal=True, enable_gqa=gqa)
    close(out, expected, tdtype, name)
    dout = torch.randn(out.shape, dtype=tdtype, generator=torch.Generator().manual_seed(5))
    dout = torch.empty_like(out).copy_(dout)  # the output's layout: read in place
    grads = torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
    want = torch.autograd.grad(expected, (q, k, v), dout, retain_graph=True)
    for label, a, b in zip(("dq", "dk", "dv"), grads, want):
        close(a, b, tdtype, name + " " + label)
    assert [(kind, extra and extra[4]) for kind, _, extra in c_calls] == [
        ("forward", None), ("backward", 0)]  # accepted at once, fused gradients included
    _, f, (dout_ptr, dq, dk, dv, _) = c_calls[-1]
    assert received(f, "Q", "ldq", "shq", "sbq") == (q.data_ptr(), c_strides(q))
    assert received(f, "K", "ldk", "shk", "sbk") == (k.data_ptr(), c_strides(k))
    assert received(f, "V", "ldv", "shv", "sbv") == (v.data_ptr(), c_strides(v))
    assert received(f, "out", "ldo", "sho", "sbo") == (out.data_ptr(), c_strides(out))
    assert dout_ptr == dout.data_ptr()
    # C writes dQ, dK, dV with the strides of Q, K, V: the tensors autograd returns
    assert (dq, dk, dv) == tuple(g.data_ptr() for g in grads)
    for g, t in zip(grads, (q, k, v)):
        assert c_strides(g) == c_strides(t)
    if name == "fused":  # side by side in one buffer of the projection's layout
        isz = q.element_size()
        assert (dk - dq, dv - dk) == (q.shape[1] * q.shape[3] * isz,) * 2
    # the leaves' gradients through the views, against PyTorch's
    for leaf, a, b in zip(leaves, torch.autograd.grad(out, leaves, dout),
                          torch.autograd.grad(expected, leaves, dout)):
        close(a, b, tdtype, name + " leaf")


def test_overlapping_inputs_get_gradients_apart(c_calls):
    """q and k overlapping head views of one tensor: their gradients cannot
    share a buffer laid out like the inputs (C refuses, writing nothing), so
    each gets its own; the gradients are still right."""
    dtype = torch.float64
    base = torch.randn(2, 6, 5, 8, dtype=dtype).requires_grad_()  # (B, L, NH + 1, E)
    q = base[:, :, 0:4].transpose(1, 2)
    k = base[:, :, 1:5].transpose(1, 2)
    v = torch.randn(2, 4, 6, 8, dtype=dtype).requires_grad_()
    out = at.scaled_dot_product_attention(q, k, v)
    expected = pytorch_sdpa(q, k, v)
    dout = torch.randn(out.shape, dtype=dtype)
    for a, b in zip(torch.autograd.grad(out, (base, v), dout),
                    torch.autograd.grad(expected, (base, v), dout)):
        close(a, b, dtype)
    assert [extra[4] for kind, _, extra in c_calls if kind == "backward"] == [
        _plans.ALIASING, 0]


def test_grad_out_of_another_layout_is_copied_once(c_calls, tdtype):
    """C reads dout with the output's strides; grad_out in another layout is
    copied into it (values unchanged)."""
    (q, k, v), _ = layouts(tdtype)["bshd"]
    out = at.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert not out.is_contiguous()
    dout = torch.randn(out.shape, dtype=tdtype)  # contiguous: not out's layout
    grads = torch.autograd.grad(out, (q, k, v), dout)
    _, _, (dout_ptr, _, _, _, _) = c_calls[-1]
    assert dout_ptr != dout.data_ptr()
    want = torch.autograd.grad(pytorch_sdpa(q, k, v, enable_gqa=True), (q, k, v), dout)
    for a, b in zip(grads, want):
        close(a, b, tdtype)


@pytest.mark.parametrize("case", ["last dim strided", "expanded heads", "batch dims apart"])
def test_layouts_c_cannot_read_are_copied(c_calls, case):
    """Fallbacks: a last dimension that is not contiguous, overlapping heads (an
    expand), batch dimensions that cannot be read as one: copied, still right."""
    dtype = torch.float64
    g = torch.Generator().manual_seed(2)
    q = torch.randn(2, 3, 5, 4, generator=g, dtype=dtype)
    k = torch.randn(2, 3, 5, 4, generator=g, dtype=dtype)
    v = torch.randn(2, 3, 5, 4, generator=g, dtype=dtype)
    if case == "last dim strided":
        k = torch.randn(2, 3, 5, 8, generator=g, dtype=dtype)[..., ::2]
    elif case == "expanded heads":
        k = k[:, :1].expand(2, 3, 5, 4)
    else:
        q, k, v = (torch.randn(3, 2, 3, 5, 4, generator=g, dtype=dtype).transpose(0, 1)
                   for _ in range(3))
    for t in (q, k, v):
        t.requires_grad_()
    out = at.scaled_dot_product_attention(q, k, v)
    expected = pytorch_sdpa(q, k, v)
    close(out, expected, dtype)
    dout = torch.randn(out.shape, dtype=dtype, generator=g)
    for a, b in zip(torch.autograd.grad(out, (q, k, v), dout),
                    torch.autograd.grad(expected, (q, k, v), dout)):
        close(a, b, dtype)
    f = c_calls[0][1]
    copied = {"Q": f["Q"] != q.data_ptr(), "K": f["K"] != k.data_ptr(),
              "V": f["V"] != v.data_ptr()}
    want = {"last dim strided": {"Q": False, "K": True, "V": False},
            "expanded heads": {"Q": False, "K": True, "V": False},
            "batch dims apart": {"Q": True, "K": True, "V": True}}[case]
    assert copied == want


def test_batch_dims_read_as_one_in_place(c_calls):
    """(b1, b2, NH, L, E) with batch dimensions that merge: no copy."""
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 3, 4, 5, 8, generator=g) for _ in range(3))
    qt = torch.randn(2, 3, 5, 4, 8, generator=g).transpose(2, 3)
    with torch.no_grad():
        out = at.scaled_dot_product_attention(qt, k, v)
    close(out, pytorch_sdpa(qt, k, v), torch.float32)
    f = c_calls[0][1]
    assert (f["Q"], f["K"], f["V"]) == (qt.data_ptr(), k.data_ptr(), v.data_ptr())
    assert (f["sbq"], f["shq"], f["ldq"]) == (4 * 5 * 8, 8, 4 * 8)


def test_signatures_are_prepared_once(tdtype):
    """A second call of one signature reuses its prepared call and its plan."""
    q, k, v = (torch.randn(1, 2, 3, 4, dtype=tdtype) for _ in range(3))
    with torch.no_grad():
        a = at.scaled_dot_product_attention(q, k, v)
        calls = dict(at._entries)
        b = at.scaled_dot_product_attention(q * 1.0, k, v)
    assert dict(at._entries) == calls
    assert torch.equal(a, b)


def test_dimensions_of_one_entry_have_any_stride(c_calls):
    """A decode step's query (1 sequence, 1 token) cut from larger tensors: its
    dimensions of one entry keep odd strides in PyTorch and are passed in
    place, C given 0 (the dense default) for them."""
    g = torch.Generator().manual_seed(4)
    q = torch.randn(3, 4, 5, 16, generator=g)[1:2, :, 2:3]  # (1, 4, 1, 16)
    k = torch.randn(2, 4, 9, 16, generator=g)[1:]
    v = torch.randn(2, 4, 9, 16, generator=g)[1:]
    with torch.no_grad():
        out = at.scaled_dot_product_attention(q, k, v)
    close(out, pytorch_sdpa(q, k, v), torch.float32)
    f = c_calls[0][1]
    assert (f["Q"], f["K"], f["V"]) == (q.data_ptr(), k.data_ptr(), v.data_ptr())
    assert (f["ldq"], f["shq"], f["sbq"]) == (0, q.stride(1), 0)
    assert f["sbk"] == 0 and (f["ldk"], f["shk"]) == (16, 9 * 16)
