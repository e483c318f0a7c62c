"""A small character model trained with SGD, once with attn's attention and once
with PyTorch's, from the same initial weights: their loss curves must agree.

The model: token and position embeddings, one causal self-attention block
(a fused QKV projection split into heads, the attention function under
test, an output projection, a residual), a linear head; cross-entropy of
the next character of the lessons' Lantern Bay corpus.
"""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

CORPUS = (
    "the lamp keeper walks the shore at dusk. "
    "the lamp keeper lights the lantern when the fog rolls in. "
    "the boats come home when the lantern glows. "
    "the boats wait outside the bay when the fog is thick. "
    "a small boat drifts near the rocks at dawn. "
    "the keeper rings the bell when a boat drifts near the rocks. "
)


class TinyModel(nn.Module):
    def __init__(self, vocab, C, NH, T, attention):
        super().__init__()
        self.NH, self.attention = NH, attention
        self.tok = nn.Embedding(vocab, C)
        self.pos = nn.Embedding(T, C)
        self.qkv = nn.Linear(C, 3 * C, bias=False)
        self.proj = nn.Linear(C, C)
        self.head = nn.Linear(C, vocab)

    def forward(self, idx):
        B, T = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(T))
        C = x.shape[-1]
        q, k, v = (t.view(B, T, self.NH, C // self.NH).transpose(1, 2)
                   for t in self.qkv(x).split(C, dim=-1))
        y = self.attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        return self.head(x)


def batches(dtype_unused, steps, B, T, seed=0):
    chars = sorted(set(CORPUS))
    data = torch.tensor([chars.index(c) for c in CORPUS])
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        starts = torch.randint(0, len(data) - T - 1, (B,), generator=g)
        yield (torch.stack([data[s:s + T] for s in starts]),
               torch.stack([data[s + 1:s + T + 1] for s in starts]))


def train(attention, dtype, steps=8, B=4, T=16, C=32, NH=4, lr=0.5, model=None):
    """Loss before each SGD step (a list of floats) and the trained model."""
    vocab = len(set(CORPUS))
    if model is None:
        torch.manual_seed(0)
        model = TinyModel(vocab, C, NH, T, attention).to(dtype)
    model.attention = attention
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for x, y in batches(dtype, steps, B, T):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


def compare(attn_attention, torch_attention, dtype, **kw):
    """(losses with attn, losses with PyTorch, max relative difference per step)."""
    torch.manual_seed(0)
    vocab = len(set(CORPUS))
    base = TinyModel(vocab, kw.get("C", 32), kw.get("NH", 4), kw.get("T", 16),
                     torch_attention).to(dtype)
    ours, _ = train(attn_attention, dtype, model=copy.deepcopy(base), **kw)
    theirs, _ = train(torch_attention, dtype, model=copy.deepcopy(base), **kw)
    rel = [abs(a - b) / abs(b) for a, b in zip(ours, theirs)]
    return ours, theirs, rel
