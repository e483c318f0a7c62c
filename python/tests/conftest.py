"""Shared helpers: tolerances per dtype, random arrays, the tests' folder on sys.path."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Relative to the largest magnitude of the reference (norm-wise, so that
# entries near 0 do not demand an impossible elementwise precision).
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def assert_close(actual, expected, dtype=None, rtol=None, what=""):
    """max |actual - expected| <= rtol * max(|expected|, 1e-30); -inf/+inf/NaN must match."""
    actual = np.asarray(actual)
    expected = np.asarray(expected, np.float64)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    if rtol is None:
        rtol = RTOL[np.dtype(dtype if dtype is not None else actual.dtype)]
    a = actual.astype(np.float64)
    nonfinite = ~np.isfinite(expected)
    assert np.array_equal(np.isnan(a), np.isnan(expected)), what + ": NaN pattern"
    assert np.array_equal(a[nonfinite & ~np.isnan(expected)],
                          expected[nonfinite & ~np.isnan(expected)]), what + ": inf pattern"
    fin = ~nonfinite
    if not fin.any():
        return
    scale = max(float(np.max(np.abs(expected[fin]))), 1e-30)
    err = float(np.max(np.abs(a[fin] - expected[fin])))
    assert err <= rtol * scale, "%s: max abs error %.3g > %.1g * %.3g" % (what, err, rtol, scale)


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request):
    return np.dtype(request.param)


@pytest.fixture
def rng():
    return np.random.default_rng(2024)


def randn(rng, shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)
