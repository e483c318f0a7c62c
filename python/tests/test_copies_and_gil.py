"""No copies of arrays that are already right; outputs written in place; the GIL
released while C computes."""

import ctypes
import threading
import time

import numpy as np
import pytest

import attn
import attn._arrays as arrays
from attn import _lib


@pytest.fixture
def copies(monkeypatch):
    """The list of shapes the package copied during the test."""
    seen = []
    real = arrays._copy

    def counting(x, dtype):
        seen.append(np.shape(x))
        return real(x, dtype)

    monkeypatch.setattr(arrays, "_copy", counting)
    return seen


def test_no_copies_of_right_arrays(copies, dtype):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2, 5, 8)).astype(dtype)
    Wq, Wk, Wv, Wo = (rng.standard_normal((8, 8)).astype(dtype) for _ in range(4))
    attn.self_attention(X, Wq[:, :4].copy(), Wk[:, :4].copy(), Wv[:, :4].copy())
    attn.mha_forward(X, Wq, Wk, Wv, Wo, NH=2)
    attn.mha_backward(X, Wq, Wk, Wv, Wo, X, NH=2)
    attn.lookup(X[0], X[1], X[1])
    q = rng.standard_normal((2, 5, 4, 2)).astype(dtype)
    attn.sdpa(q, q, q, mask=np.zeros((5, 5), dtype), key_lengths=np.array([5, 3]),
              return_lse=True)
    with attn.Plan(2, 5, 8, 2, dtype=dtype) as plan:
        plan.forward(X, Wq, Wk, Wv, Wo)
        plan.backward(X, Wq, Wk, Wv, Wo, X)
    with attn.SdpaPlan(2, 4, 5, 5, 2, dtype=dtype) as plan:
        out, lse = plan.forward(q, q, q, return_lse=True)
        plan.backward(q, q, q, out, lse, out)
    assert copies == []


def test_copies_of_wrong_arrays(copies):
    X = np.ones((1, 4, 3), np.float32)
    W = np.ones((3, 2))  # float64 into a float32 call
    attn.self_attention(X, W, W, W)
    assert copies == [(3, 2)] * 3
    copies.clear()
    attn.self_attention(np.asfortranarray(np.ones((2, 4, 3))), W, W, W)
    assert copies == [(2, 4, 3)]
    copies.clear()
    q = np.ones((1, 3, 2, 8))[:, ::-1]
    attn.sdpa(q, np.ones((1, 3, 2, 8)), np.ones((1, 3, 2, 8)))
    assert copies == [(1, 3, 2, 8)]


def test_outputs_written_in_place(dtype):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((1, 4, 6)).astype(dtype)
    W = rng.standard_normal((6, 3)).astype(dtype)
    out = np.empty((1, 4, 3), dtype)
    weights = np.empty((1, 4, 4), dtype)
    r_out, r_w = attn.self_attention(X, W, W, W, out=out, weights=weights)
    assert r_out is out and r_w is weights and np.shares_memory(r_out, out)
    q = rng.standard_normal((1, 4, 2, 3)).astype(dtype)
    buf = np.empty((1, 4, 2, 3), dtype)
    assert attn.sdpa(q, q, q, out=buf) is buf
    with attn.SdpaPlan(1, 2, 4, 4, 3, dtype=dtype, inference=True) as plan:
        assert plan.forward(q, q, q, out=buf) is buf
    with attn.Plan(1, 4, 6, 2, dtype=dtype, inference=True) as plan:
        Wc = rng.standard_normal((6, 6)).astype(dtype)
        o = np.empty((1, 4, 6), dtype)
        assert plan.forward(X, Wc, Wc, Wc, Wc, out=o) is o
    x = rng.standard_normal((3, 5)).astype(dtype)
    assert attn.softmax_rows(x, out=x) is x


def test_library_is_loaded_with_cdll():
    # ctypes.CDLL (not PyDLL) releases the GIL around every foreign call.
    assert type(_lib.lib) is ctypes.CDLL


def _longest_pause_while_calling(lookup):
    """(longest pause of a Python loop in this thread, duration of one long C call
    made meanwhile by another thread through `lookup`)."""
    rng = np.random.default_rng(2)
    T, d = 4096, 64
    q, k, v = (rng.standard_normal((T, d)) for _ in range(3))
    state = {"inside": False, "call": None}

    def worker():
        state["inside"] = True
        t0 = time.perf_counter()
        lookup(q, k, v)
        state["call"] = time.perf_counter() - t0

    thread = threading.Thread(target=worker)
    longest, last = 0.0, time.perf_counter()
    thread.start()
    while state["call"] is None:
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    thread.join()
    return longest, state["call"]


def test_gil_released_during_computation():
    """While one thread is inside a long C call, another keeps running Python: the
    longest pause of its loop stays far below the call's duration (holding the
    GIL, as ctypes.PyDLL would, the loop stops for the whole call)."""
    for attempt in range(3):
        pause, call = _longest_pause_while_calling(attn.lookup)
        if call > 0.02 and pause < 0.5 * call:
            return
    pytest.fail("Python paused %.3f s during a %.3f s C call" % (pause, call))
