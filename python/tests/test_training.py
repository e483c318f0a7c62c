"""A few SGD steps of a small model with attn's attention follow PyTorch's loss curve."""

import pytest

torch = pytest.importorskip("torch")

import attn.torch as at  # noqa: E402
import training  # noqa: E402
from torch_reference import pytorch_sdpa  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
def test_loss_curve_matches_pytorch(dtype):
    ours, theirs, rel = training.compare(at.scaled_dot_product_attention, pytorch_sdpa, dtype)
    assert len(ours) == 8 and ours[-1] < ours[0]  # it learns
    assert max(rel) <= 1e-5, list(zip(ours, theirs, rel))
