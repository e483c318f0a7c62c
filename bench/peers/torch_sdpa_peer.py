#!/usr/bin/env python3
"""PyTorch peer of attn-bench sdpa.

Times torch.nn.functional.scaled_dot_product_attention on the configurations
attn-bench sdpa sends, in one process per thread count (torch.set_num_threads),
with attn-bench's repeat policy (peer_common.time_calls's, plus the cold-cache
read). The process is started and read as the run command's peers are
(bench/peers/peer_process.c: info/blas/impl lines, then "ready").

Protocol: one configuration per line on stdin (or as arguments, the fields
joined by colons), answered and flushed before the next is read:
  DTYPE OP B NH NH_KV TQ TK HS HS_V CAUSAL WINDOW MASK LENGTHS CACHE
e.g. "f32 forward 4 32 8 1 8192 128 128 1 0 none 1000/3000/5000/8192 warm";
LENGTHS is "full" or one length per sequence joined by "/"; MASK none,
padding or full; CACHE warm or cold. Answers:
  result LINE MEDIAN_S MIN_S REPEATS OUT_DTYPE CHECK_ERROR MASK
  unsupported LINE REASON / error LINE MESSAGE
MASK says what torch got (is_causal, none, or the attn_mask's type and
shape); CHECK_ERROR is max|torch - ref| / max|ref| over a few rows of out
against float64 NumPy loops over each query's visible keys, the visibility
rule written out below independently of the mask tensors: the proof that
the mask torch got is attn's.

Which keys query t of sequence b sees (attn.h; bench/sdpa/sdpa_config.h): with
L_b its length and A_b = L_b (MASK none: attn gets key_lengths) or Tk
(MASK padding/full: the lengths are in the mask), p = A_b - Tq + t, key j is
visible when j < L_b, and if causal j <= p, and if WINDOW > 0 j > p - WINDOW.
is_causal=True (top-left aligned in PyTorch) is used only when Tq == Tk,
every L_b = Tk and WINDOW = 0, where both alignments agree; with MASK none
and every key visible to every query (a causal decode step) torch gets no
mask; otherwise an equivalent attn_mask: boolean (True = attend) for MASK
none, additive float (0 / -inf, plus the bias) for padding and full --
(B,1,1,Tk) when visibility does not depend on the query, else (B,1,Tq,Tk)
(full: (B,NH,Tq,Tk)).

Inputs: numpy.random.default_rng((seed, B, NH, NH_KV, TQ, TK, HS, HS_V)):
Q (B,NH,Tq,hs), K (B,NH_kv,Tk,hs), V (B,NH_kv,Tk,hs_v), dout (B,NH,Tq,hs_v)
uniform on [-sqrt 3, sqrt 3] (attn-bench's distribution, not its numbers),
contiguous; enable_gqa=True when NH_kv < NH (PyTorch >= 2.5; older ones get
K and V repeated to NH heads before the timing, and say so). OP=forward
runs under torch.inference_mode(); OP=backward times the forward and
torch.autograd.grad(out, (Q, K, V), dout) together. CACHE=cold reads a
--flush-mib buffer (torch.sum on the same threads) before every call,
untimed.
"""
import inspect
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()  # before PyTorch sizes its thread pools

np, torch, F = peer_common.import_or_unavailable("torch", "numpy", "torch", "torch.nn.functional")

if not hasattr(F, "scaled_dot_product_attention"):
    print(f"unavailable torch {torch.__version__} has no scaled_dot_product_attention "
          "(PyTorch >= 2.0 needed)", flush=True)
    sys.exit(0)

import torch_peer  # noqa: E402  (its header lines; it imports nothing new)

try:
    HAS_GQA = "enable_gqa" in inspect.signature(F.scaled_dot_product_attention).parameters
except (TypeError, ValueError):  # a builtin without a signature: try it
    HAS_GQA = True

FIELDS = "dtype op B NH NH_kv Tq Tk hs hs_v causal window mask lengths cache".split()


class Config:
    def __init__(self, fields):
        if len(fields) != len(FIELDS):
            raise ValueError(f"not a configuration ({' '.join(FIELDS)})")
        self.text = " ".join(fields)  # as it came, for the answer
        (self.dtype, self.op, B, NH, NH_kv, Tq, Tk, hs, hs_v, causal, window, self.mask,
         lengths, self.cache) = fields
        if (self.dtype not in ("f32", "f64") or self.op not in ("forward", "backward")
                or causal not in ("0", "1") or self.mask not in ("none", "padding", "full")
                or self.cache not in ("warm", "cold")):
            raise ValueError("bad dtype, op, causal, mask or cache")
        self.B, self.NH, self.NH_kv, self.Tq, self.Tk, self.hs, self.hs_v = (
            int(v) for v in (B, NH, NH_kv, Tq, Tk, hs, hs_v))
        self.causal, self.window = causal == "1", int(window)
        if min(self.B, self.NH, self.NH_kv, self.Tq, self.Tk, self.hs, self.hs_v) < 1:
            raise ValueError("sizes must be positive")
        if self.NH % self.NH_kv:
            raise ValueError("NH is not a multiple of NH_kv")
        self.full_lengths = lengths == "full"
        self.lengths = ([self.Tk] * self.B if self.full_lengths
                        else [int(v) for v in lengths.split("/")])
        if len(self.lengths) != self.B or max(self.lengths) > self.Tk:
            raise ValueError("LENGTHS needs B lengths <= Tk")

    def visible_range(self, b, t):
        """[lo, hi) of the keys query t of sequence b sees (the rule above)."""
        length = self.lengths[b]
        aligned = length if self.mask == "none" else self.Tk
        p = aligned - self.Tq + t
        hi = min(length, p + 1) if self.causal else length
        lo = max(0, p - self.window + 1) if self.window > 0 else 0
        hi = max(hi, 0)
        return min(lo, hi), hi


def visibility(c):
    """bool (B, 1, Tq or 1, Tk): True where the key is visible."""
    lengths = torch.tensor(c.lengths)
    aligned = lengths if c.mask == "none" else torch.full((c.B,), c.Tk)
    j = torch.arange(c.Tk)
    per_query = c.causal or c.window > 0
    if not per_query:
        return (j[None, :] < lengths[:, None])[:, None, None, :]
    p = aligned[:, None] - c.Tq + torch.arange(c.Tq)[None, :]          # (B, Tq)
    seen = j[None, None, :] < lengths[:, None, None]                    # (B, Tq, Tk)
    if c.causal:
        seen = seen & (j[None, None, :] <= p[:, :, None])
    if c.window > 0:
        seen = seen & (j[None, None, :] > p[:, :, None] - c.window)
    return seen[:, None, :, :]


def torch_mask(c, dtype, bias):
    """(attn_mask, is_causal, description) for the configuration."""
    if c.mask == "none":
        if c.full_lengths and c.window == 0:
            if not c.causal:
                return None, False, "none"
            if c.Tq == c.Tk:
                return None, True, "is_causal"
        seen = visibility(c)
        if bool(seen.all()):  # e.g. a causal decode step: every key visible
            return None, False, "none"
        return seen, False, "bool" + str(tuple(seen.shape)).replace(" ", "")
    seen = visibility(c)
    additive = torch.zeros(seen.shape, dtype=dtype).masked_fill(~seen, float("-inf"))
    if c.mask == "full":
        additive = bias + additive  # (B, NH, Tq, Tk)
    kind = "float32" if dtype == torch.float32 else "float64"
    return additive, False, kind + str(tuple(additive.shape)).replace(" ", "")


def reference_error(c, Q, K, V, bias, out):
    """max|out - ref| / max|ref| over a few rows, in float64 from the rule."""
    group = c.NH // c.NH_kv
    scale = 1.0 / math.sqrt(c.hs)
    worst = biggest = 0.0
    for b in sorted({0, c.B - 1}):
        for h in sorted({0, c.NH - 1}):
            for t in sorted({0, c.Tq // 2, c.Tq - 1}):
                lo, hi = c.visible_range(b, t)
                want = np.zeros(c.hs_v)
                if hi > lo:
                    q = Q[b, h, t].double().numpy()
                    k = K[b, h // group, lo:hi].double().numpy()
                    v = V[b, h // group, lo:hi].double().numpy()
                    s = k @ q * scale
                    if bias is not None:
                        s = s + bias[b, h, t, lo:hi].double().numpy()
                    w = np.exp(s - s.max())
                    want = (w / w.sum()) @ v
                got = out[b, h, t].double().numpy()
                worst = max(worst, float(np.max(np.abs(got - want))))
                biggest = max(biggest, float(np.max(np.abs(want))))
    return worst / biggest if biggest > 0 else worst


def main():
    def add_arguments(parser):
        parser.add_argument("--flush-mib", type=int, default=256,
                            help="MiB read before every call of a cold configuration")

    args = peer_common.parse_arguments(__doc__.split("\n\n")[0], add_arguments)
    torch.set_num_threads(args.threads)
    flush = {}

    def read_flush_buffer():
        """The cold-cache read: the --flush-mib buffer summed on the peer's threads."""
        flush["sum"] = int(flush["buffer"].sum())

    def measure(c):
        np_dtype = np.float32 if c.dtype == "f32" else np.float64
        dtype = torch.float32 if c.dtype == "f32" else torch.float64
        rng = np.random.default_rng((args.seed, c.B, c.NH, c.NH_kv, c.Tq, c.Tk, c.hs, c.hs_v))
        half = math.sqrt(3.0)

        def uniform(*shape):
            return torch.from_numpy(rng.uniform(-half, half, shape).astype(np_dtype))

        Q, K, V = uniform(c.B, c.NH, c.Tq, c.hs), uniform(c.B, c.NH_kv, c.Tk, c.hs), \
            uniform(c.B, c.NH_kv, c.Tk, c.hs_v)
        bias = uniform(c.B, c.NH, c.Tq, c.Tk) if c.mask == "full" else None
        mask, is_causal, description = torch_mask(c, dtype, bias)
        gqa = c.NH_kv < c.NH
        Kt, Vt = K, V
        if gqa and not HAS_GQA:
            group = c.NH // c.NH_kv
            Kt = K.repeat_interleave(group, dim=1).contiguous()
            Vt = V.repeat_interleave(group, dim=1).contiguous()
            description += ",KV-repeated"
        options = {"attn_mask": mask, "is_causal": is_causal}
        if gqa and HAS_GQA:
            options["enable_gqa"] = True
        if c.op == "forward":
            def call():
                with torch.inference_mode():
                    return F.scaled_dot_product_attention(Q, Kt, Vt, **options)
        else:
            dout = uniform(c.B, c.NH, c.Tq, c.hs_v)
            leaves = [Q.requires_grad_(), Kt.requires_grad_(), Vt.requires_grad_()]

            def call():
                out = F.scaled_dot_product_attention(*leaves, **options)
                torch.autograd.grad(out, leaves, dout)
                return out
        cold = c.cache == "cold"
        if cold and "buffer" not in flush:
            flush["buffer"] = torch.ones(max(1, args.flush_mib) << 17, dtype=torch.int64)
        median, fastest, repeats, out = peer_common.time_calls(
            call, args, read_flush_buffer if cold else None)
        with torch.no_grad():
            error = reference_error(c, Q.detach(), K.detach(), V.detach(), bias, out.detach())
        return (median, fastest, repeats, str(out.dtype).replace("torch.", ""), f"{error:.3e}",
                description)

    gqa_text = ("enable_gqa=True when NH_kv < NH" if HAS_GQA else
                "K, V repeated to NH heads untimed (no enable_gqa)")
    impl = ("F.scaled_dot_product_attention, contiguous (B,NH,T,hs) tensors, "
            f"{gqa_text}; is_causal only if Tq == Tk without lengths or window, else an "
            "equivalent attn_mask (none when all visible); backward: autograd.grad")
    peer_common.serve(torch_peer.header_lines(impl), measure, args, parse=Config,
                      text_of=lambda c: c.text)


if __name__ == "__main__":
    main()
