"""The PyTorch drop-in runs a small decode step on the calling thread alone
where attn runs on its own threads.

A decode step (one query row) whose keys and values span at most
attn._torch_call.DECODE_ALONE_BYTES runs on a plan set to one thread
(attn_plan_set_threads(plan, 1)) while attn runs on its own threads: inside
a PyTorch program that was measured faster than waking a worker that shares
a core with PyTorch's still-polling thread pool (the constant's comment).
On PyTorch's OpenMP threads (attn.torch.use_openmp_threads) every step
takes the plan's default engine. Checked here through the C plans the
forward receives (attn_plan_get_threads): on attn's own threads one thread
at and below the limit, in float32 and float64 (the limit is in bytes), the
default engine above it and for more than one query row; on PyTorch's
threads, where this PyTorch runs OpenMP, the default engine for all. Every
output is compared with PyTorch's own SDPA within test_torch's tolerances,
so the thread count changes no result beyond them (attn.h: the same bits
on any thread count).
"""

import ctypes

import pytest

torch = pytest.importorskip("torch")

import attn.torch as at  # noqa: E402
from attn import _lib, _openmp, _plans, _torch_call  # noqa: E402
from test_torch import close  # noqa: E402
from torch_reference import pytorch_sdpa  # noqa: E402


@pytest.fixture
def plan_threads(monkeypatch):
    """The thread setting (attn_plan_get_threads) of the plan of every sdpa
    forward of the test, in order."""
    seen = []

    def wrap(name):
        real = getattr(_plans, name)

        def call(plan, args):
            n = ctypes.c_uint(12345)
            assert _lib.lib.attn_plan_get_threads(plan, ctypes.byref(n)) == 0
            seen.append(n.value)
            return real(plan, args)
        monkeypatch.setattr(_plans, name, call)

    for sfx in ("f32", "f64"):
        wrap("_forward_" + sfx)
    return seen


def default_threads(dtype):
    """attn_plan_get_threads of a new plan left at its default."""
    shape = _lib.SdpaShape(1, 2, 1, 1, 8, 4, 4)
    handle, n = ctypes.c_void_p(), ctypes.c_uint(12345)
    code = _lib.ATTN_F32 if dtype == torch.float32 else _lib.ATTN_F64
    assert _lib.lib.attn_sdpa_plan_create(ctypes.byref(handle), code, ctypes.byref(shape),
                                          0.0, 0, 0) == 0
    try:
        assert _lib.lib.attn_plan_get_threads(handle, ctypes.byref(n)) == 0
    finally:
        _lib.lib.attn_plan_destroy(handle)
    return n.value


def keys_for(dtype, E, NH_kv, at_most):
    """The most keys whose K and V span at most `at_most` bytes."""
    item = torch.finfo(dtype).bits // 8
    return at_most // (NH_kv * 2 * E * item)


@pytest.fixture(params=["own", "pytorch"])
def runtime(request):
    """attn on its own threads or on PyTorch's OpenMP ones (skipped where
    PyTorch's runtime cannot be used); the previous setting restored."""
    before = _openmp.current()
    hosted = at.use_openmp_threads(request.param == "pytorch")
    try:
        if request.param == "pytorch" and hosted is None:
            pytest.skip("attn cannot run on this PyTorch's threads (not OpenMP)")
        yield request.param
    finally:
        at.use_openmp_threads(before is not None)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_small_decode_steps_run_alone(plan_threads, runtime, dtype):
    NH, NH_kv, E = 8, 2, 32
    limit = _torch_call.DECODE_ALONE_BYTES
    S_alone = keys_for(dtype, E, NH_kv, limit)
    g = torch.Generator().manual_seed(7)
    default = default_threads(dtype)
    alone = 1 if runtime == "own" else default
    cases = [(1, S_alone, alone), (1, 40, alone), (1, S_alone + 1, default), (2, 40, default)]
    for L, S, want in cases:
        q = torch.randn(1, NH, L, E, generator=g, dtype=dtype)
        k, v = (torch.randn(1, NH_kv, S, E, generator=g, dtype=dtype) for _ in range(2))
        with torch.no_grad():
            out = at.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        close(out, pytorch_sdpa(q, k, v, enable_gqa=True), dtype, "L %d S %d" % (L, S))
        assert plan_threads[-1] == want, (L, S, plan_threads, want)
