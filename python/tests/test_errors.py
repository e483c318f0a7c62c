"""Bad inputs: each raises its documented exception, nothing reaches C wrongly."""

import numpy as np
import pytest

import attn
from attn import errors


def test_exception_hierarchy():
    assert issubclass(attn.ArgumentError, attn.Error) and issubclass(attn.ArgumentError, ValueError)
    assert issubclass(attn.DTypeError, TypeError) and issubclass(attn.DTypeError, attn.Error)
    assert issubclass(attn.OutOfMemoryError, MemoryError)
    assert issubclass(attn.PlanError, RuntimeError)
    assert issubclass(attn.ClosedPlanError, attn.PlanError)


def test_every_status_has_a_name_and_text():
    for status, name in errors.STATUS_NAMES.items():
        assert attn.status_name(status) == name
        assert attn.status_string(status)
        if status:
            with pytest.raises(attn.Error) as info:
                errors.check(status, "attn_test")
            assert info.value.status == status and info.value.name == name
            assert name in str(info.value) and info.value.text in str(info.value)
    assert attn.status_string(999) == "unknown attn_status"
    assert errors.check(0, "attn_test") is None
    with pytest.raises(attn.OutOfMemoryError):
        errors.check(8, "attn_test")


def test_scale_errors():
    q = np.ones((2, 3))
    with pytest.raises(attn.ArgumentError) as info:
        attn.lookup(q, q, q, scale=float("nan"))
    assert info.value.name == "ATTN_ERR_BAD_SCALE" and "attn_lookup_f64" in str(info.value)
    with pytest.raises(attn.ArgumentError) as info:
        attn.lookup(q.astype(np.float32), q, q, scale=1e300)
    assert info.value.name == "ATTN_ERR_BAD_SCALE"
    for bad in (0.0, -1.0):
        with pytest.raises(attn.ArgumentError):
            attn.lookup(q, q, q, scale=bad)
    with pytest.raises(attn.ArgumentError):
        attn.lookup(q, q, q, scale="big")
    q4 = np.ones((1, 2, 1, 3))
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q4, q4, q4, scale=-2.0)
    with pytest.raises(attn.ArgumentError) as info:
        attn.sdpa(q4, q4, q4, scale=float("inf"))
    assert info.value.name == "ATTN_ERR_BAD_SCALE"


def test_shape_errors():
    X = np.ones((2, 3, 4))
    W = np.ones((4, 2))
    with pytest.raises(attn.ArgumentError):
        attn.self_attention(X, W, np.ones((5, 2)), W)
    with pytest.raises(attn.ArgumentError):
        attn.self_attention(X, W, W, np.ones((4, 3)))
    with pytest.raises(attn.ArgumentError):
        attn.self_attention(np.ones((1, 2, 3, 4)), W, W, W)
    with pytest.raises(attn.ArgumentError):
        attn.self_attention(X, np.ones(4), W, W)
    with pytest.raises(attn.ArgumentError):
        attn.lookup(np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 1)))
    with pytest.raises(attn.ArgumentError):
        attn.lookup(np.ones((2, 3)), np.ones((4, 3)), np.ones((5, 1)))
    Wc = np.ones((4, 4))
    with pytest.raises(attn.ArgumentError):
        attn.mha_forward(X, Wc, Wc, Wc)  # NH missing
    with pytest.raises(attn.ArgumentError):
        attn.mha_forward(X, Wc, Wc, Wc, NH=3)  # 4 % 3
    with pytest.raises(attn.ArgumentError):
        attn.mha_forward(X, Wc, Wc, Wc, NH=0)
    with pytest.raises(attn.ArgumentError):
        attn.mha_forward(X, Wc, Wc, W, NH=2)


def test_sdpa_argument_errors():
    q = np.ones((2, 3, 4, 8))
    k = np.ones((2, 5, 2, 8))
    v = np.ones((2, 5, 2, 6))
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, np.ones((2, 5, 2, 7)), v)  # head sizes differ
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, k, np.ones((2, 4, 2, 6)))  # Tk differs
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, k[0], v)  # ranks differ
    with pytest.raises(attn.ArgumentError) as info:
        attn.sdpa(q, np.ones((2, 5, 3, 8)), np.ones((2, 5, 3, 6)))  # 4 % 3
    assert info.value.name == "ATTN_ERR_BAD_SHAPE"
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, k, v, mask=np.ones((3, 5, 5)))  # does not broadcast
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, k, v, mask=np.ones((1, 1, 1, 3, 5)))
    with pytest.raises(attn.DTypeError):
        attn.sdpa(q, k, v, mask=np.ones((3, 5), complex))
    with pytest.raises(attn.ArgumentError) as info:
        attn.sdpa(q, k, v, key_lengths=[5, 6])
    assert info.value.name == "ATTN_ERR_BAD_LENGTH"
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, k, v, key_lengths=[5, -1])
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, k, v, key_lengths=[5])
    with pytest.raises(attn.DTypeError):
        attn.sdpa(q, k, v, key_lengths=[5.0, 2.0])
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, k, v, window=-1)
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, k, v, window=1.5)
    with pytest.raises(attn.ArgumentError) as info:
        attn.sdpa(np.ones((1, 0, 1, 8)), np.ones((1, 2, 1, 8)), np.ones((1, 2, 1, 8)))
    assert info.value.name == "ATTN_ERR_ZERO_DIMENSION"


def test_dtype_errors():
    X = np.ones((1, 2, 3), complex)
    W = np.ones((3, 2))
    with pytest.raises(attn.DTypeError):
        attn.self_attention(X, W, W, W)
    with pytest.raises(attn.DTypeError):
        attn.self_attention(np.ones((1, 2, 3)), W.astype(complex), W, W)
    with pytest.raises(attn.DTypeError):
        attn.lookup(np.array([["a", "b"]]), W.T, W.T)
    with pytest.raises(attn.ArgumentError):
        attn.lookup([[1.0, 2.0], [3.0]], W.T, W.T)  # ragged
    with pytest.raises(attn.DTypeError):
        attn.Plan(1, 2, 3, dtype=np.int32)
    with pytest.raises(attn.DTypeError):
        attn.SdpaPlan(1, 1, 2, 2, 3, dtype="complex64")


def test_out_errors():
    X = np.ones((1, 2, 3))
    W = np.ones((3, 2))
    with pytest.raises(attn.DTypeError):
        attn.self_attention(X, W, W, W, out=np.empty((1, 2, 2), np.float32))
    with pytest.raises(attn.ArgumentError):
        attn.self_attention(X, W, W, W, out=np.empty((1, 2, 3)))
    with pytest.raises(attn.ArgumentError):
        attn.self_attention(X, W, W, W, out=np.empty((1, 2, 4))[:, :, ::2])
    ro = np.empty((1, 2, 2))
    ro.flags.writeable = False
    with pytest.raises(attn.ArgumentError):
        attn.self_attention(X, W, W, W, out=ro)
    with pytest.raises(attn.ArgumentError):
        attn.self_attention(X, W, W, W, out=[0.0])
    q = np.ones((1, 2, 1, 3))
    with pytest.raises(attn.ArgumentError) as info:
        attn.sdpa(q, q, q, out=q)  # the output overlaps an input
    assert info.value.name == "ATTN_ERR_ALIASING"
    with pytest.raises(attn.ArgumentError):
        attn.sdpa(q, q, q, lse=np.empty((1, 1)))


def test_plan_argument_errors():
    for args in [(0, 2, 3), (1, -2, 3), (1, 2, 3.5), (True, 2, 3)]:
        with pytest.raises(attn.ArgumentError):
            attn.Plan(*args)
    with pytest.raises(attn.ArgumentError):
        attn.Plan(1, 2, 5, 2)  # C % NH without hs
    with pytest.raises(attn.ArgumentError):
        attn.Plan(1, 2, 4, 2, path="fast")
    with pytest.raises(attn.ArgumentError) as info:
        attn.Plan(1, 2, 4, 2, scale=float("nan"))
    assert info.value.name == "ATTN_ERR_BAD_SCALE"
    with pytest.raises(attn.ArgumentError) as info:
        attn.SdpaPlan(1, 3, 2, 2, 4, NH_kv=2)
    assert info.value.name == "ATTN_ERR_BAD_SHAPE"
    with attn.Plan(1, 2, 4, 2, dtype=np.float64) as plan:
        W = np.ones((4, 4))
        with pytest.raises(attn.ArgumentError):
            plan.forward(np.ones((1, 3, 4)), W, W, W)
        with pytest.raises(attn.ArgumentError):
            plan.forward(np.ones((1, 2, 4)), W, W, np.ones((4, 3)))
        with pytest.raises(attn.ArgumentError):
            plan.threads = -1
    with attn.SdpaPlan(1, 2, 3, 3, 4, dtype=np.float64) as plan:
        with pytest.raises(attn.ArgumentError):
            plan.forward(np.ones((1, 3, 2, 4)), np.ones((1, 4, 2, 4)), np.ones((1, 4, 2, 4)))
        with pytest.raises(attn.ArgumentError):
            plan.forward(np.ones((3, 2, 4)), np.ones((3, 2, 4)), np.ones((3, 2, 4)))


def test_nothing_crashes_on_odd_inputs():
    """A sweep of odd inputs: every one either works or raises attn.Error."""
    odd = [np.ones((1, 2, 1, 3)), np.ones((1, 2, 1, 3))[:, ::-1], np.ones((1, 2, 1, 3), np.int8),
           np.ones((1, 2, 1, 3), np.float16), np.ones((1, 2, 1, 6))[..., ::2],
           np.zeros((1, 0, 1, 3)), np.full((1, 2, 1, 3), np.nan), [[[[1.0, 2.0, 3.0]]]],
           np.ones((1, 2, 1, 3), ">f8")]
    for q in odd:
        for k in odd:
            try:
                attn.sdpa(q, k, k)
            except attn.Error:
                pass
