#!/usr/bin/env python3
"""The course's attention experiments, redone from Python with attn.

    python python/examples/course_experiments.py --out experiments.png

Three experiments, each a section below that prints its table:

 1. The sqrt(hs) saturation. Dot products of random unit-variance vectors of
    size hs have variance hs, so unscaled scores grow with the head size and
    the softmax saturates onto one key (max weight -> 1, entropy -> 0, and
    the softmax's gradient sum_j w_j (1 - w_j) -> 0); dividing by sqrt(hs)
    keeps them at unit variance. attn.lookup with scale=1.0 (unscaled)
    against scale=None (1/sqrt(hs)).
 2. The rank of Q K^T. Scores S = Q K^T / sqrt(hs) of T positions are a T x T
    matrix of rank at most hs. The weights attn.self_attention returns are
    P = softmax_rows(S), so log P = S - lse (a constant per row), and
    centering each row of log P gives S (I - 11^T / T), of rank <= hs too;
    numpy.linalg.svd of it shows exactly hs nonzero singular values.
 3. Orthogonal against Gaussian initialisation of Wq, Wk. Both have entries
    of variance 1/C; orthonormal columns keep every projected direction at
    the same scale, Gaussian ones scatter their norms, so the score matrix
    is better conditioned (smaller sigma_1 / sigma_hs) with orthogonal
    initialisation, at the same attention entropy.

A figure of the three (matplotlib, if it can be imported; otherwise the
script says so and skips it) goes to --out.
"""

import argparse
import math
import sys

import numpy as np

import attn


def entropy(w):
    """Mean over rows of the entropy (nats) of each weight row."""
    return float(np.mean(-np.sum(np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0),
                                 axis=-1)))


# %% 1. The sqrt(hs) saturation -------------------------------------------------
def saturation(head_sizes=(4, 16, 64, 256, 1024), T=64, seed=0):
    """Rows (hs, scaled?, max weight, entropy, softmax gradient) of random lookups."""
    rng = np.random.default_rng(seed)
    rows = []
    for hs in head_sizes:
        q = rng.standard_normal((T, hs))
        k = rng.standard_normal((T, hs))
        v = np.eye(T)
        for scaled in (False, True):
            _, w = attn.lookup(q, k, v, scale=None if scaled else 1.0, return_weights=True)
            rows.append((hs, scaled, float(w.max(-1).mean()), entropy(w),
                         float(np.mean(np.sum(w * (1 - w), -1)))))
    return rows


def print_saturation(rows, T=64):
    print("1. sqrt(hs) saturation: %d queries x %d keys, q, k ~ N(0, 1); uniform entropy "
          "log T = %.3f" % (T, T, math.log(T)))
    print("   %6s  %-10s %10s %9s %14s" % ("hs", "scores", "max weight", "entropy",
                                          "sum w(1-w)"))
    for hs, scaled, mx, ent, grad in rows:
        print("   %6d  %-10s %10.3f %9.3f %14.3f" % (hs, "/sqrt(hs)" if scaled else "unscaled",
                                                    mx, ent, grad))


# %% 2. The rank of Q K^T --------------------------------------------------------
def score_ranks(head_sizes=(2, 4, 8, 16), T=32, C=64, seed=1):
    """Rows (hs, rank, singular values / sigma_1) of the row-centered log-weights."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((1, T, C))
    rows = []
    for hs in head_sizes:
        Wq, Wk, Wv = (rng.standard_normal((C, hs)) / math.sqrt(C) for _ in range(3))
        _, P = attn.self_attention(X, Wq, Wk, Wv, return_weights=True)
        logP = np.log(P[0])
        centered = logP - logP.mean(axis=1, keepdims=True)  # = S (I - 11^T/T)
        sv = np.linalg.svd(centered, compute_uv=False)
        rank = int(np.sum(sv > 1e-10 * sv[0]))
        rows.append((hs, rank, sv / sv[0]))
    return rows


def print_ranks(rows, T=32, C=64):
    print("2. rank of Q K^T: T = %d, C = %d; singular values of the row-centered log "
          "weights from attn.self_attention" % (T, C))
    print("   %4s %5s %14s %16s" % ("hs", "rank", "sigma_hs/sig_1", "sigma_hs+1/sig_1"))
    for hs, rank, sv in rows:
        print("   %4d %5d %14.3e %16.3e" % (hs, rank, sv[hs - 1], sv[hs] if hs < len(sv) else 0))


# %% 3. Orthogonal vs Gaussian initialisation of Wq, Wk -----------------------------
def orthogonal(rng, C, hs):
    """A (C, hs) matrix with orthonormal columns (entries of variance 1/C)."""
    q, r = np.linalg.qr(rng.standard_normal((C, hs)))
    return q * np.sign(np.diag(r))


def initialisations(head_sizes=(8, 16, 32, 64), T=128, C=64, seeds=5):
    """Rows (init, hs, entropy, max weight, cond of scores), averaged over seeds."""
    rows = []
    for init in ("gaussian", "orthogonal"):
        for hs in head_sizes:
            ents, mxs, conds = [], [], []
            for seed in range(seeds):
                rng = np.random.default_rng(100 + seed)
                X = rng.standard_normal((1, T, C))
                if init == "gaussian":
                    Wq, Wk = (rng.standard_normal((C, hs)) / math.sqrt(C) for _ in range(2))
                else:
                    Wq, Wk = orthogonal(rng, C, hs), orthogonal(rng, C, hs)
                Wv = rng.standard_normal((C, hs)) / math.sqrt(C)
                # X W has entries of variance 1, the scaled scores too
                _, P = attn.self_attention(X, Wq, Wk, Wv, return_weights=True)
                logP = np.log(P[0])
                sv = np.linalg.svd(logP - logP.mean(1, keepdims=True), compute_uv=False)
                ents.append(entropy(P[0]))
                mxs.append(float(P[0].max(-1).mean()))
                conds.append(float(sv[0] / sv[hs - 1]))
            rows.append((init, hs, float(np.mean(ents)), float(np.mean(mxs)),
                         float(np.mean(conds))))
    return rows


def print_initialisations(rows, T=128, C=64):
    print("3. orthogonal vs Gaussian Wq, Wk (entries of variance 1/C): T = %d, C = %d, "
          "mean of 5 seeds" % (T, C))
    print("   %-10s %4s %9s %10s %18s" % ("init", "hs", "entropy", "max weight",
                                          "sigma_1/sigma_hs"))
    for init, hs, ent, mx, cond in rows:
        print("   %-10s %4d %9.3f %10.3f %18.2f" % (init, hs, ent, mx, cond))


# %% The figure ---------------------------------------------------------------------
def plot(path, sat, ranks, inits):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not importable: skipping the plot (%s not written)" % path)
        return False
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for scaled, style in ((False, "o-"), (True, "s-")):
        pts = [(hs, mx) for hs, s, mx, _, _ in sat if s == scaled]
        axes[0].plot(*zip(*pts), style, label="scores / sqrt(hs)" if scaled else "unscaled")
    axes[0].set_xscale("log", base=2)
    axes[0].set_xlabel("head size hs")
    axes[0].set_ylabel("mean max weight")
    axes[0].set_title("softmax saturation")
    axes[0].legend()
    for hs, rank, sv in ranks:
        axes[1].semilogy(np.arange(1, len(sv) + 1), np.maximum(sv, 1e-17), ".-",
                         label="hs = %d (rank %d)" % (hs, rank))
    axes[1].set_xlabel("index")
    axes[1].set_ylabel("sigma_i / sigma_1")
    axes[1].set_title("spectrum of the centered scores")
    axes[1].legend()
    for init, style in (("gaussian", "o-"), ("orthogonal", "s-")):
        pts = [(hs, cond) for i, hs, _, _, cond in inits if i == init]
        axes[2].plot(*zip(*pts), style, label=init)
    axes[2].set_yscale("log")
    axes[2].set_xlabel("head size hs")
    axes[2].set_ylabel("sigma_1 / sigma_hs of the scores")
    axes[2].set_title("initialisation of Wq, Wk")
    axes[2].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print("plot written to %s" % path)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description="The course's experiments with attn.")
    ap.add_argument("--out", default="course_experiments.png", help="where the plot goes")
    args = ap.parse_args(argv)
    print("attn %s (%s kernel), NumPy %s" % (attn.__version__, attn.simd, np.__version__))
    sat = saturation()
    print_saturation(sat)
    ranks = score_ranks()
    print_ranks(ranks)
    inits = initialisations()
    print_initialisations(inits)
    plot(args.out, sat, ranks, inits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
