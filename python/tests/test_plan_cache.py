"""The sdpa plans attn.sdpa keeps per thread (attn/_plans.py): bounded, per
thread, cleared on demand, and never changing a result."""

import threading

import numpy as np
import pytest

import attn
import reference as ref
from attn import _plans
from conftest import assert_close, randn


@pytest.fixture
def small_cache():
    attn.set_plan_cache_size(2)
    yield
    attn.set_plan_cache_size(8)


def test_size_is_bounded_and_results_unchanged(rng, small_cache):
    for Tk in (3, 4, 5, 6):
        q, k, v = (randn(rng, (1, T, 2, 4), np.float64) for T in (2, Tk, Tk))
        assert_close(attn.sdpa(q, k, v), ref.sdpa(q, k, v)[0])
        assert len(_plans._thread_plans().plans) <= 2
    attn.clear_plan_cache()
    assert _plans._thread_plans().plans == {} and _plans._thread_plans().slots == {}
    assert_close(attn.sdpa(q, k, v), ref.sdpa(q, k, v)[0])


def test_a_signature_reuses_its_plan(rng):
    q = randn(rng, (1, 3, 2, 4), np.float32)
    attn.sdpa(q, q, q)
    plans = dict(_plans._thread_plans().plans)
    attn.sdpa(q + 1, q, q)
    assert _plans._thread_plans().plans == plans


def test_bad_sizes_are_refused():
    for bad in (0, -1, 1.5, True, "8"):
        with pytest.raises(attn.ArgumentError):
            attn.set_plan_cache_size(bad)


def test_threads_have_plans_of_their_own(rng):
    """Two threads running one signature at once: each on its own C plan (a C
    plan is used by one thread at a time), both right."""
    q, k, v = (randn(rng, (2, 64, 4, 16), np.float64) for _ in range(3))
    want = ref.sdpa(q, k, v, causal=True)[0]
    seen, errors = {}, []
    both_done = threading.Barrier(2, timeout=60)  # no thread ends (freeing its plans) early

    def work(name):
        try:
            for _ in range(20):
                assert_close(attn.sdpa(q, k, v, causal=True), want)
            seen[name] = set(_plans._thread_plans().plans.values())
        except Exception as exc:  # reported by the main thread
            errors.append(exc)
        both_done.wait()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert seen[0] and seen[1] and not (seen[0] & seen[1])
