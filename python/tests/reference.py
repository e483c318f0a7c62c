"""Naive NumPy references in float64 (loops over batch and heads; obviously right).

Shapes follow the package: lookup q (Tq,d) k (Tk,d) v (Tk,dv); one head X
(B,T,C), W (C,hs); multi-head W (C,C); sdpa q (B,Tq,NH,hs), k (B,Tk,NH_kv,hs),
v (B,Tk,NH_kv,hs_v), mask broadcast to (B,NH,Tq,Tk), lse (B,NH,Tq).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tests", "fixtures"))
import gen_fixtures  # noqa: E402


def softmax(x):
    """Row softmax; a row of only -inf gives zeros (as attn)."""
    x = np.asarray(x, np.float64)
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    s = e.sum(axis=-1, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


# The lessons' softmax and self_attention, verbatim, as the fixture generator
# of the C tests holds them (tests/fixtures/gen_fixtures.py: one copy).
seed_softmax = gen_fixtures.softmax
seed_self_attention = gen_fixtures.self_attention


def lookup(q, k, v, scale):
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    w = softmax(scale * (q @ k.T))
    return w @ v, w


def self_attention(X, Wq, Wk, Wv, causal=False):
    X, Wq, Wk, Wv = (np.asarray(a, np.float64) for a in (X, Wq, Wk, Wv))
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    hs = Q.shape[-1]
    T = X.shape[-2]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(hs)
    if causal:
        S = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, S)
    P = softmax(S)
    return P @ V, P


def mha_forward(X, Wq, Wk, Wv, Wo, NH, causal=False):
    X = np.asarray(X, np.float64)
    C = X.shape[-1]
    hs = C // NH
    heads = []
    for h in range(NH):
        cols = slice(h * hs, (h + 1) * hs)
        heads.append(self_attention(X, Wq[:, cols], Wk[:, cols], Wv[:, cols], causal)[0])
    Y = np.concatenate(heads, axis=-1)
    return Y if Wo is None else Y @ np.asarray(Wo, np.float64)


def mha_backward(X, Wq, Wk, Wv, Wo, dout, NH, causal=False):
    """(dX, dWq, dWk, dWv, dWo) of sum(out * dout), per head by the chain rule."""
    X, Wq, Wk, Wv, dout = (np.asarray(a, np.float64) for a in (X, Wq, Wk, Wv, dout))
    B, T, C = X.shape
    hs = C // NH
    scale = 1.0 / np.sqrt(hs)
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    dQ, dK, dV = np.zeros_like(Q), np.zeros_like(K), np.zeros_like(V)
    Y = np.zeros_like(Q)
    for b in range(B):
        for h in range(NH):
            c = slice(h * hs, (h + 1) * hs)
            S = scale * Q[b][:, c] @ K[b][:, c].T
            if causal:
                S = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, S)
            Y[b][:, c] = softmax(S) @ V[b][:, c]
    if Wo is None:
        dY, dWo = dout, None
    else:
        Wo = np.asarray(Wo, np.float64)
        dY = dout @ Wo.T
        dWo = Y.reshape(-1, C).T @ dout.reshape(-1, C)
    for b in range(B):
        for h in range(NH):
            c = slice(h * hs, (h + 1) * hs)
            S = scale * Q[b][:, c] @ K[b][:, c].T
            if causal:
                S = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, S)
            P = softmax(S)
            dV[b][:, c] = P.T @ dY[b][:, c]
            dP = dY[b][:, c] @ V[b][:, c].T
            dS = P * (dP - (dP * P).sum(-1, keepdims=True))
            dQ[b][:, c] = scale * dS @ K[b][:, c]
            dK[b][:, c] = scale * dS.T @ Q[b][:, c]
    X2 = X.reshape(-1, C)
    dWq = X2.T @ dQ.reshape(-1, C)
    dWk = X2.T @ dK.reshape(-1, C)
    dWv = X2.T @ dV.reshape(-1, C)
    dX = dQ @ Wq.T + dK @ Wk.T + dV @ Wv.T
    return dX, dWq, dWk, dWv, dWo


def _visible(b, Tq, Tk, key_lengths, causal, window):
    """(Tq, Tk) bool: which keys each query of sequence b sees (attn's rules)."""
    L = Tk if key_lengths is None else int(key_lengths[b])
    t = np.arange(Tq)[:, None]
    j = np.arange(Tk)[None, :]
    p = L - Tq + t
    vis = j < L
    if causal:
        vis = vis & (j <= p)
    if window:
        vis = vis & (j > p - window)
    return vis


def _scores(q, k, mask, key_lengths, causal, scale, window):
    """Per (b, h): the (Tq, Tk) scores with -inf where not visible."""
    B, Tq, NH, hs = q.shape
    Tk, NH_kv = k.shape[1], k.shape[2]
    group = NH // NH_kv
    scale = 1.0 / np.sqrt(hs) if scale is None else scale
    m = None if mask is None else np.broadcast_to(_additive(mask), (B, NH, Tq, Tk))
    out = {}
    for b in range(B):
        vis = _visible(b, Tq, Tk, key_lengths, causal, window)
        for h in range(NH):
            g = h // group
            s = scale * (q[b, :, h, :] @ k[b, :, g, :].T)
            if m is not None:
                s = s + m[b, h]
            out[b, h] = np.where(vis, s, -np.inf)
    return out, scale


def _additive(mask):
    mask = np.asarray(mask)
    if mask.dtype == bool:
        return np.where(mask, 0.0, -np.inf)
    return mask.astype(np.float64)


def sdpa(q, k, v, mask=None, key_lengths=None, causal=False, scale=None, window=0):
    """(out (B,Tq,NH,hs_v), lse (B,NH,Tq)) with attn's semantics (bottom-right causal)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    B, Tq, NH, hs = q.shape
    NH_kv, hs_v = v.shape[2], v.shape[3]
    group = NH // NH_kv
    S, _ = _scores(q, k, mask, key_lengths, causal, scale, window)
    out = np.zeros((B, Tq, NH, hs_v))
    lse = np.empty((B, NH, Tq))
    for (b, h), s in S.items():
        P = softmax(s)
        out[b, :, h, :] = P @ v[b, :, h // group, :]
        mx = s.max(-1)
        fin = np.isfinite(mx)
        safe = np.where(fin, mx, 0.0)
        with np.errstate(divide="ignore"):
            lse[b, h] = np.where(fin, safe + np.log(np.exp(s - safe[:, None]).sum(-1)), mx)
    return out, lse


def sdpa_backward(q, k, v, dout, mask=None, key_lengths=None, causal=False, scale=None,
                  window=0):
    """(dq, dk, dv) of sum(out * dout); dk, dv summed over the heads of a group."""
    q, k, v, dout = (np.asarray(a, np.float64) for a in (q, k, v, dout))
    NH, NH_kv = q.shape[2], k.shape[2]
    group = NH // NH_kv
    S, scale = _scores(q, k, mask, key_lengths, causal, scale, window)
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for (b, h), s in S.items():
        g = h // group
        P = softmax(s)
        do = dout[b, :, h, :]
        dv[b, :, g, :] += P.T @ do
        dP = do @ v[b, :, g, :].T
        dS = P * (dP - (dP * P).sum(-1, keepdims=True))
        dq[b, :, h, :] = scale * dS @ k[b, :, g, :]
        dk[b, :, g, :] += scale * dS.T @ q[b, :, h, :]
    return dq, dk, dv
