"""attn on PyTorch's OpenMP threads (attn.torch.use_openmp_threads; C's
attn_openmp.h).

Importing attn.torch points attn's shared threads at the OpenMP runtime
PyTorch's operators run on, when PyTorch's parallel backend is OpenMP and
ATTN_TORCH_OPENMP is not 0. Checked: the runtime found is an OpenMP library
loaded in this process (libgomp, libomp or libiomp5) and the one attn
reports; switching it off and on; and a causal GQA prefill large enough to
be split over the threads, forward and backward, gives the same bits on
PyTorch's threads as on attn's own, within test_torch's tolerances of
PyTorch's own SDPA.
"""

import os

import pytest

torch = pytest.importorskip("torch")

import attn.torch as at  # noqa: E402
from attn import _openmp  # noqa: E402
from test_torch import close  # noqa: E402
from torch_reference import pytorch_sdpa  # noqa: E402

OPENMP = "parallel backend: OpenMP" in torch.__config__.parallel_info()


@pytest.fixture
def restore():
    before = _openmp.current()
    yield
    at.use_openmp_threads(before is not None)


@pytest.mark.skipif(not OPENMP, reason="PyTorch's parallel backend is not OpenMP")
def test_runtime_found_and_switched(restore):
    path = at.use_openmp_threads()
    assert path is not None and path == _openmp.current()
    assert os.path.basename(path).startswith(("libgomp", "libomp", "libiomp5")), path
    loaded = open("/proc/self/maps").read()
    assert path in loaded
    assert at.use_openmp_threads(False) is None and _openmp.current() is None
    assert at.use_openmp_threads(True) == path


def prefill(dtype):
    g = torch.Generator().manual_seed(11)
    q = torch.randn(2, 8, 256, 64, generator=g, dtype=dtype, requires_grad=True)
    k, v = (torch.randn(2, 2, 256, 64, generator=g, dtype=dtype, requires_grad=True)
            for _ in range(2))
    out = at.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    dout = torch.randn(out.shape, generator=g, dtype=dtype)
    out.backward(dout)
    return q, k, v, dout, [out.detach(), q.grad, k.grad, v.grad]


@pytest.mark.skipif(not OPENMP, reason="PyTorch's parallel backend is not OpenMP")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_same_bits_on_either_threads(restore, dtype):
    at.use_openmp_threads(False)
    q, k, v, dout, own = prefill(dtype)
    assert at.use_openmp_threads() is not None
    _, _, _, _, hosted = prefill(dtype)
    for name, a, b in zip(("out", "dq", "dk", "dv"), own, hosted):
        assert torch.equal(a, b), name
    qr, kr, vr = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    ref = pytorch_sdpa(qr, kr, vr, is_causal=True, enable_gqa=True)
    ref.backward(dout)
    for name, a, b in zip(("out", "dq", "dk", "dv"), hosted,
                          (ref.detach(), qr.grad, kr.grad, vr.grad)):
        close(a, b, dtype, name)
