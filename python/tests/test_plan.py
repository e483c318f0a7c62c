"""attn.Plan (projected) and the life cycle of both kinds of plan: context manager,
close, use after close, threads (identical results for every count), state errors."""

import threading

import numpy as np
import pytest

import attn
import reference as ref
from conftest import assert_close, randn


def weights(rng, C, D, dtype, with_wo=True):
    Ws = [randn(rng, (C, D), dtype, C ** -0.5) for _ in range(3)]
    Ws.append(randn(rng, (D, C), dtype, D ** -0.5) if with_wo else None)
    return Ws


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("with_wo", [True, False])
def test_plan_forward_backward(rng, dtype, causal, with_wo):
    B, T, C, NH = 2, 9, 12, 3
    X = randn(rng, (B, T, C), dtype)
    Wq, Wk, Wv, Wo = weights(rng, C, C, dtype, with_wo)
    with attn.Plan(B, T, C, NH, dtype=dtype, causal=causal) as plan:
        out, w = plan.forward(X, Wq, Wk, Wv, Wo, return_weights=True)
        assert_close(out, ref.mha_forward(X, Wq, Wk, Wv, Wo, NH, causal), dtype)
        assert w.shape == (B, NH, T, T)
        hs = C // NH
        for h in range(NH):
            c = slice(h * hs, (h + 1) * hs)
            assert_close(w[:, h], ref.self_attention(X, Wq[:, c], Wk[:, c], Wv[:, c], causal)[1],
                         dtype)
        dout = randn(rng, out.shape, dtype)
        g = plan.backward(X, Wq, Wk, Wv, Wo, dout)
    expected = ref.mha_backward(X, Wq, Wk, Wv, Wo, dout, NH, causal)
    rtol = 4e-5 if dtype == np.float32 else 1e-11
    for name, got, want in zip(g._fields, g, expected):
        if want is None:
            assert got is None
        else:
            assert_close(got, want, rtol=rtol, what=name)


def test_plan_head_size_not_c_over_nh(rng):
    B, T, C, NH, hs = 1, 5, 6, 2, 5
    D = NH * hs
    X = rng.standard_normal((B, T, C))
    Wq, Wk, Wv = (rng.standard_normal((C, D)) for _ in range(3))
    with attn.Plan(B, T, C, NH, hs, dtype=np.float64, inference=True) as plan:
        out = plan.forward(X, Wq, Wk, Wv)
    assert out.shape == (B, T, D)
    heads = [ref.self_attention(X, Wq[:, h * hs:(h + 1) * hs], Wk[:, h * hs:(h + 1) * hs],
                                Wv[:, h * hs:(h + 1) * hs])[0] for h in range(NH)]
    assert_close(out, np.concatenate(heads, -1))


@pytest.mark.parametrize("path", ["materialized", "tiled"])
def test_plan_paths_agree(rng, path):
    B, T, C, NH = 1, 40, 8, 2
    X = rng.standard_normal((B, T, C))
    Ws = weights(rng, C, C, np.float64)
    with attn.Plan(B, T, C, NH, dtype=np.float64, inference=True, path=path) as plan:
        assert_close(plan.forward(X, *Ws), ref.mha_forward(X, *Ws, NH))


def test_threads_identical_results(rng):
    B, T, C, NH = 2, 64, 32, 4
    X = rng.standard_normal((B, T, C)).astype(np.float32)
    Ws = weights(rng, C, C, np.float32)
    results = []
    with attn.Plan(B, T, C, NH, dtype=np.float32) as plan:
        for n in (1, 2, 3):
            plan.threads = n
            assert plan.threads == n
            results.append(plan.forward(X, *Ws))
        plan.threads = 0
        assert plan.threads == 0
        plan.set_threads("auto")
        assert plan.threads >= 0
    assert np.array_equal(results[0], results[1]) and np.array_equal(results[0], results[2])


def test_plan_threads_at_creation():
    with attn.SdpaPlan(1, 2, 4, 4, 8, threads=2) as plan:
        assert plan.threads == 2
    with pytest.raises(attn.ArgumentError) as info:
        attn.SdpaPlan(1, 2, 4, 4, 8, threads=100000)
    assert info.value.name == "ATTN_ERR_BAD_THREADS"


def test_close_and_use_after_close(rng):
    X = rng.standard_normal((1, 3, 4))
    Ws = weights(rng, 4, 4, np.float64)
    plan = attn.Plan(1, 3, 4, 2, dtype=np.float64)
    with plan as p:
        assert p is plan and not plan.closed
        p.forward(X, *Ws)
    assert plan.closed
    plan.close()  # idempotent
    with pytest.raises(attn.ClosedPlanError):
        plan.forward(X, *Ws)
    with pytest.raises(attn.PlanError):
        plan.backward(X, *Ws, np.ones((1, 3, 4)))
    with pytest.raises(attn.ClosedPlanError):
        plan.threads = 1
    with pytest.raises(attn.ClosedPlanError):
        with plan:
            pass
    sp = attn.SdpaPlan(1, 1, 2, 2, 4, dtype=np.float64)
    sp.close()
    with pytest.raises(attn.ClosedPlanError):
        sp.forward(np.ones((1, 2, 1, 4)), np.ones((1, 2, 1, 4)), np.ones((1, 2, 1, 4)))
    assert "closed" in repr(sp)


def test_plan_state_errors(rng):
    X = rng.standard_normal((1, 3, 4))
    Wq, Wk, Wv, Wo = weights(rng, 4, 4, np.float64)
    dout = np.ones((1, 3, 4))
    with attn.Plan(1, 3, 4, 2, dtype=np.float64) as plan:
        with pytest.raises(attn.PlanError) as info:
            plan.backward(X, Wq, Wk, Wv, Wo, dout)
        assert info.value.name == "ATTN_ERR_NO_FORWARD"
        plan.forward(X, Wq, Wk, Wv, Wo)
        with pytest.raises(attn.PlanError) as info:
            plan.backward(X, Wq, Wk, Wv, None, dout)
        assert info.value.name == "ATTN_ERR_FORWARD_MISMATCH"
        # other arrays than the forward's, even of the same values
        for i in range(5):
            args = [X, Wq, Wk, Wv, Wo]
            args[i] = args[i].copy()
            with pytest.raises(attn.PlanError) as info:
                plan.backward(*args, dout)
            assert info.value.name == "ATTN_ERR_FORWARD_MISMATCH"
        plan.backward(X, Wq, Wk, Wv, Wo, dout)
    with attn.Plan(1, 3, 4, 2, dtype=np.float64, inference=True) as plan:
        plan.forward(X, Wq, Wk, Wv, Wo)
        with pytest.raises(attn.PlanError) as info:
            plan.backward(X, Wq, Wk, Wv, Wo, dout)
        assert info.value.name == "ATTN_ERR_INFERENCE_PLAN"
        assert isinstance(info.value, RuntimeError)
    q = np.ones((1, 2, 1, 4))
    with attn.SdpaPlan(1, 1, 2, 2, 4, dtype=np.float64, inference=True) as plan:
        out, lse = plan.forward(q, q, q, return_lse=True)
        with pytest.raises(attn.PlanError) as info:
            plan.backward(q, q, q, out, lse, out)
        assert info.value.name == "ATTN_ERR_INFERENCE_PLAN"


def test_plan_converts_dtype(rng):
    X = rng.standard_normal((1, 3, 4))  # float64 into a float32 plan: converted
    Ws = weights(rng, 4, 4, np.float64)
    with attn.Plan(1, 3, 4, 2, dtype="float32", inference=True) as plan:
        out = plan.forward(X, *Ws)
    assert out.dtype == np.float32
    assert_close(out, ref.mha_forward(X.astype(np.float32), *[W.astype(np.float32) for W in Ws],
                                      2), np.float32)


def test_plan_shared_between_threads(rng):
    """Calls from several threads on one plan are serialized (no crash, right results)."""
    q, k, v = (rng.standard_normal((1, 16, 2, 8)) for _ in range(3))
    expected = attn.sdpa(q, k, v)
    errors = []
    with attn.SdpaPlan(1, 2, 16, 16, 8, dtype=np.float64, inference=True) as plan:
        def work():
            try:
                for _ in range(50):
                    if not np.array_equal(plan.forward(q, k, v), expected):
                        errors.append("mismatch")
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def test_garbage_collected_plan_is_destroyed():
    import gc
    for _ in range(50):
        attn.SdpaPlan(1, 1, 4, 4, 4)
        attn.Plan(1, 4, 4, 1)
    gc.collect()


@pytest.mark.parametrize("with_wo", [True, False])
def test_plan_writes_given_outputs_in_place(rng, dtype, with_wo):
    """forward(out=) and backward(grads=) write the caller's arrays (the fast
    path of dense inputs) and agree with the reference; a transposed view of X
    (the general path, copied) gives the same numbers."""
    B, T, C, NH = 2, 7, 8, 2
    X = randn(rng, (B, T, C), dtype)
    Wq, Wk, Wv, Wo = weights(rng, C, C, dtype, with_wo)
    width = C
    out = np.full((B, T, width), np.nan, dtype)
    grads = attn.Gradients(np.full((B, T, C), np.nan, dtype),
                           *(np.full((C, C), np.nan, dtype) for _ in range(3)),
                           np.full((C, C), np.nan, dtype) if with_wo else None)
    dout = randn(rng, (B, T, width), dtype)
    with attn.Plan(B, T, C, NH, dtype=dtype, causal=True) as plan:
        assert plan.forward(X, Wq, Wk, Wv, Wo, out=out) is out
        got = plan.backward(X, Wq, Wk, Wv, Wo, dout, grads=grads)
        for mine, given in zip(got, grads):
            assert mine is given
        X_view = np.ascontiguousarray(X.transpose(1, 0, 2)).transpose(1, 0, 2)
        assert not X_view.flags.c_contiguous
        assert_close(plan.forward(X_view, Wq, Wk, Wv, Wo), out, dtype, what="strided X")
    assert_close(out, ref.mha_forward(X, Wq, Wk, Wv, Wo, NH, True), dtype)
    expected = ref.mha_backward(X, Wq, Wk, Wv, Wo, dout, NH, True)
    rtol = 4e-5 if dtype == np.float32 else 1e-11
    for name, g, want in zip(got._fields, got, expected):
        if want is not None:
            assert_close(g, want, rtol=rtol, what=name)


def test_plan_refuses_wrong_gradient_arrays(rng):
    B, T, C = 1, 4, 6
    X = rng.standard_normal((B, T, C))
    Wq, Wk, Wv, _ = weights(rng, C, C, np.float64, False)
    dout = rng.standard_normal((B, T, C))
    with attn.Plan(B, T, C, 1, dtype=np.float64) as plan:
        plan.forward(X, Wq, Wk, Wv)
        good = [np.empty((B, T, C)), np.empty((C, C)), np.empty((C, C)), np.empty((C, C))]
        with pytest.raises(attn.DTypeError):
            plan.backward(X, Wq, Wk, Wv, None, dout,
                          grads=attn.Gradients(np.empty((B, T, C), np.float32), *good[1:], None))
        with pytest.raises(attn.ArgumentError):
            plan.backward(X, Wq, Wk, Wv, None, dout,
                          grads=attn.Gradients(*good[:3], np.empty((C, C + 1)), None))
        with pytest.raises(attn.ArgumentError):
            plan.backward(X, Wq, Wk, Wv, None, dout, grads=attn.Gradients(*good, np.empty((C, C))))
        with pytest.raises(attn.ArgumentError):
            plan.backward(X, Wq, Wk, Wv, None, dout, grads=tuple(good) + (None,))


def test_plan_reuses_gradients_across_calls(rng):
    """A Gradients given again (its check kept from the first call) is written
    again with the new call's numbers; another Gradients works the same."""
    B, T, C, NH = 1, 6, 8, 2
    X = rng.standard_normal((B, T, C))
    Wq, Wk, Wv, Wo = weights(rng, C, C, np.float64, True)
    g = attn.Gradients(*(np.empty(a.shape) for a in (X, Wq, Wk, Wv, Wo)))
    with attn.Plan(B, T, C, NH, dtype=np.float64) as plan:
        for step in range(3):
            dout = rng.standard_normal((B, T, C))
            plan.forward(X, Wq, Wk, Wv, Wo)
            assert plan.backward(X, Wq, Wk, Wv, Wo, dout, grads=g) is g
            fresh = plan.backward(X, Wq, Wk, Wv, Wo, dout)
            for name, mine, want in zip(g._fields, g, fresh):
                np.testing.assert_array_equal(mine, want, err_msg="%s, step %d" % (name, step))
            X = X + 0.1


def test_backward_after_converting_forward(rng):
    # float64 and strided inputs to a float32 plan are copied by the forward;
    # the backward given the same objects uses those copies (the pointers
    # attn_backward checks) and equals a backward on ready arrays
    X = rng.standard_normal((2, 3, 4))
    Ws = weights(rng, 4, 4, np.float64)
    dout = rng.standard_normal((2, 3, 4)).astype(np.float32)
    Xs = np.asfortranarray(X.astype(np.float32))
    with attn.Plan(2, 3, 4, 2, dtype=np.float32) as plan:
        plan.forward(Xs, *Ws)
        got = plan.backward(Xs, *Ws, dout)
        ready = [X.astype(np.float32)] + [W.astype(np.float32) for W in Ws]
        plan.forward(*ready)
        want = plan.backward(*ready, dout)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
