"""The lessons' printed numbers, reproduced through attn.lookup / attn.self_attention.

Each test rebuilds the lesson's inputs with NumPy exactly as the lesson does,
checks attn against the lesson's own NumPy code (1e-12) and against the
numbers the lesson prints (at the precision it prints them).
"""

import numpy as np

import attn
import reference as ref
from conftest import assert_close

KEYS = np.eye(4)
VALUES = np.array([[10.0, 0.0], [0.0, 10.0], [5.0, 5.0], [-5.0, -5.0]])


def test_weighted_lookup_sharp_query():
    out, w = attn.lookup(np.array([3.0, 0.0, 0.0, 0.0]), KEYS, VALUES, return_weights=True)
    assert np.array_equal(np.round(w, 4), [0.87, 0.0433, 0.0433, 0.0433])
    assert abs(w.sum() - 1.0) < 1e-15
    assert np.array_equal(np.round(out, 4), [8.7005, 0.4332])
    scores = np.array([3.0, 0.0, 0.0, 0.0]) @ KEYS.T
    assert_close(w, ref.seed_softmax(scores))
    assert_close(out, ref.seed_softmax(scores) @ VALUES)


def test_weighted_lookup_blend():
    out, w = attn.lookup([2.0, 2.0, 0.0, 0.0], KEYS, VALUES, return_weights=True)
    assert np.array_equal(np.round(w, 4), [0.4404, 0.4404, 0.0596, 0.0596])
    assert round(float(w.sum()), 6) == 1.0
    assert np.array_equal(np.round(out, 4), [4.404, 4.404])
    # a convex combination: each component within its value column's range
    assert np.all(out >= VALUES.min(0)) and np.all(out <= VALUES.max(0))


def test_weighted_lookup_exercises():
    for q in ([6.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0]):
        q = np.array(q)
        out, w = attn.lookup(q, KEYS, VALUES, return_weights=True)
        expected_w = ref.seed_softmax(q @ KEYS.T)
        assert_close(w, expected_w)
        assert_close(out, expected_w @ VALUES)
    # the sharper query gives key 0 more weight; the middle key lands near [5, 5]
    w6 = attn.lookup([6.0, 0, 0, 0], KEYS, VALUES, return_weights=True)[1]
    assert w6[0] > 0.99
    out2 = attn.lookup([0.0, 0, 3.0, 0], KEYS, VALUES)
    assert np.all(np.abs(out2 - 5.0) < 1.0)


def test_lookup_batched_queries():
    Q = np.array([[3.0, 0, 0, 0], [2.0, 2.0, 0, 0]])
    out = attn.lookup(Q, KEYS, VALUES)
    assert np.array_equal(np.round(out, 4), [[8.7005, 0.4332], [4.404, 4.404]])


WEIGHTS_42 = np.array([
    [0.0, 0.004, 0.003, 0.988, 0.0, 0.005],
    [0.028, 0.138, 0.087, 0.002, 0.203, 0.541],
    [0.0, 0.002, 0.001, 0.003, 0.002, 0.993],
    [0.989, 0.0, 0.0, 0.007, 0.002, 0.002],
    [0.0, 0.001, 0.024, 0.009, 0.042, 0.923],
    [0.032, 0.004, 0.0, 0.511, 0.009, 0.445]])

WEIGHTS2_1 = np.array([
    [0.018, 0.004, 0.139, 0.038, 0.714, 0.087],
    [0.961, 0.026, 0.002, 0.002, 0.009, 0.0],
    [0.53, 0.001, 0.461, 0.0, 0.008, 0.0],
    [0.923, 0.036, 0.037, 0.0, 0.004, 0.0],
    [0.052, 0.002, 0.081, 0.677, 0.17, 0.018],
    [0.923, 0.002, 0.0, 0.071, 0.002, 0.001]])


def _lesson4_inputs():
    rng = np.random.default_rng(42)
    B, T, C, hs = 1, 6, 64, 16
    X = rng.standard_normal((B, T, C))
    Wq = rng.standard_normal((C, hs)) * 0.25
    Wk = rng.standard_normal((C, hs)) * 0.25
    Wv = rng.standard_normal((C, hs)) * 0.25
    return X, Wq, Wk, Wv


def test_learned_attention_table_rng42():
    X, Wq, Wk, Wv = _lesson4_inputs()
    out, weights = attn.self_attention(X, Wq, Wk, Wv, return_weights=True)
    assert out.shape == (1, 6, 16) and weights.shape == (1, 6, 6)
    assert np.array_equal(np.round(weights.sum(-1), 6), [[1.0] * 6])
    assert np.array_equal(np.round(weights[0], 3), WEIGHTS_42)
    assert list(weights[0].argmax(-1)) == [3, 5, 5, 0, 5, 3]
    seed_out, seed_w = ref.seed_self_attention(X, Wq, Wk, Wv)
    assert_close(weights, seed_w)
    assert_close(out, seed_out)


def test_learned_attention_table_rng1_changes_pattern():
    X, Wq, Wk, Wv = _lesson4_inputs()
    Wq2 = np.random.default_rng(1).standard_normal((64, 16)) * 0.25
    out2, weights2 = attn.self_attention(X, Wq2, Wk, Wv, return_weights=True)
    assert np.array_equal(np.round(weights2[0], 3), WEIGHTS2_1)
    assert list(weights2[0].argmax(-1)) == [4, 0, 0, 0, 3, 0]
    weights = attn.self_attention(X, Wq, Wk, Wv, return_weights=True)[1]
    assert not np.allclose(weights, weights2)
    assert out2.shape == (1, 6, 16)
    assert_close(weights2, ref.seed_self_attention(X, Wq2, Wk, Wv)[1])


def test_learned_attention_causal_matches_seed():
    X, Wq, Wk, Wv = _lesson4_inputs()
    out, w = attn.self_attention(X, Wq, Wk, Wv, causal=True, return_weights=True)
    seed_out, seed_w = ref.seed_self_attention(X, Wq, Wk, Wv, causal=True)
    assert_close(w, seed_w)
    assert_close(out, seed_out)
    assert np.all(w[0][np.triu_indices(6, 1)] == 0.0)


CORPUS = ref.gen_fixtures.CORPUS


def _lesson_qkv_inputs():
    chars = sorted(set(CORPUS))
    stoi = {c: i for i, c in enumerate(chars)}
    np.random.seed(42)
    C = 8
    embed_table = np.random.randn(len(chars), C)
    ids = [stoi[c] for c in "the lamp"]
    X = embed_table[ids][None, :, :]
    hs = 4
    Wq = np.random.randn(C, hs) * 0.1
    Wk = np.random.randn(C, hs) * 0.1
    Wv = np.random.randn(C, hs) * 0.1
    return len(chars), ids, X, Wq, Wk, Wv


def scores_through_attn(Q, K):
    """S[t, j] = <Q_t, K_j> / sqrt(hs) from attn.sdpa alone: with only key j visible
    (an additive mask) a row's log-sum-exp is its one score."""
    T, hs = Q.shape
    q = np.broadcast_to(Q[None, :, None, :], (T, T, 1, hs)).copy()  # batch b = key b
    k = np.broadcast_to(K[None, :, None, :], (T, T, 1, hs)).copy()
    mask = np.full((T, 1, 1, T), -np.inf)
    mask[np.arange(T), 0, 0, np.arange(T)] = 0.0
    _, lse = attn.sdpa(q, k, k, mask=mask, return_lse=True)
    return lse[:, 0, :].T


def test_qkv_projections_asymmetric_scores():
    vocab_size, ids, X, Wq, Wk, Wv = _lesson_qkv_inputs()
    assert vocab_size == 24 and ids == [19, 9, 6, 0, 12, 2, 13, 16]
    Q, K = X @ Wq, X @ Wk
    assert np.array_equal(np.round(Q[0, 0], 4), [0.4591, 0.827, 0.179, 0.0736])
    assert np.array_equal(np.round(K[0, 0], 4), [-0.1142, -0.1084, 0.2109, 0.0254])
    S = scores_through_attn(Q[0], K[0])
    assert round(float(S[0, 1]), 4) == -0.1481
    assert round(float(S[1, 0]), 4) == -0.0016
    assert not np.allclose(S, S.T)
    assert_close(S, Q[0] @ K[0].T / np.sqrt(4))
    out, weights = attn.self_attention(X, Wq, Wk, Wv, return_weights=True)
    assert weights.shape == (1, 8, 8) and out.shape == (1, 8, 4)
    assert np.allclose(weights.sum(-1), 1.0)
    assert_close(weights, ref.seed_self_attention(X, Wq, Wk, Wv)[1])
    # sharing Wq as Wk makes the scores symmetric (the lesson's exercise 1)
    S_shared = scores_through_attn(Q[0], Q[0])
    assert_close(S_shared, S_shared.T)
