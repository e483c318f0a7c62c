#!/usr/bin/env python3
"""PyTorch peer of attn-bench sdpa.

Times a function with the signature of
torch.nn.functional.scaled_dot_product_attention on the configurations
attn-bench sdpa sends, in one process per thread count (torch.set_num_threads),
with attn-bench's repeat policy (peer_common.time_samples's, plus the
cold-cache read), in the rounds attn-bench interleaves with its own. The
process is started and read as the run command's peers are
(bench/peers/peer_process.c: info/blas/impl lines, then "ready").

--function torch (the default): torch.nn.functional.scaled_dot_product_attention.
--function attn: attn.torch.scaled_dot_product_attention, attn's drop-in (the
peer python of attn-bench sdpa --peers python): imported from the
interpreter's attn package, else from --attn-source (the source tree's
python/src); ATTN_LIBRARY set to --attn-library first, so that it runs on the
libattn of the attn-bench beside it.

Protocol: one configuration and round per line on stdin (or as arguments,
the fields joined by colons), answered and flushed before the next is read:
  DTYPE OP B NH NH_KV TQ TK HS HS_V CAUSAL WINDOW MASK LENGTHS CACHE LAYOUT
  SCENARIO STEPS ROUND/ROUNDS
e.g. "f32 forward 4 32 8 1 8192 128 128 1 0 none 1000/3000/5000/8192 warm
bhsd call 0 1/1"; LENGTHS is "full" or one length per sequence joined by
"/"; MASK none, padding or full; CACHE warm or cold; LAYOUT bshd or bhsd;
SCENARIO call (STEPS 0) or decode-loop (STEPS steps); ROUND/ROUNDS, 1-based,
the round of the configuration (1/1: one block, the whole repeat policy).
Answers:
  pending LINE                      rounds 1 .. ROUNDS-1: this round's block timed
  result LINE MEDIAN_S MIN_S REPEATS OUT_DTYPE CHECK_ERROR MASK
                                    the last round: over every round's samples
  unsupported LINE REASON / error LINE MESSAGE   (no more rounds of it)
MASK says what the function got (is_causal, none, or the attn_mask's type
and shape); CHECK_ERROR is the case's own check (sdpa_peer_cases.py): the
proof that the mask it got is attn's.

Which keys query t of sequence b sees (attn.h; bench/sdpa/sdpa_config.h): with
L_b its length and A_b = L_b (MASK none: attn gets key_lengths) or Tk
(MASK padding/full: the lengths are in the mask), p = A_b - Tq + t, key j is
visible when j < L_b, and if causal j <= p, and if WINDOW > 0 j > p - WINDOW.
is_causal=True (top-left aligned in PyTorch) is used only when Tq == Tk,
every L_b = Tk and WINDOW = 0, where both alignments agree; with MASK none
and every key visible to every query (a causal decode step) the function gets
no mask; otherwise an equivalent attn_mask: boolean (True = attend) for MASK
none, additive float (0 / -inf, plus the bias) for padding and full --
(B,1,1,Tk) when visibility does not depend on the query, else (B,1,Tq,Tk)
(full: (B,NH,Tq,Tk)). A decode loop (SCENARIO decode-loop): Tk filled slots
at the start, one token appended per step, the query over the S filled
slots, no mask.

Tensors and cases: sdpa_peer_cases.py (the layouts, the call, the loop);
enable_gqa=True when NH_kv < NH (PyTorch >= 2.5; older ones get K and V
repeated to NH heads before the timing, and say so; a decode loop needs it).
A round's block: peer_common.block_policy (a decode loop: one pass, after
--warmup untimed passes in the first round). CACHE=cold reads a --flush-mib
buffer (a NumPy sum, untimed) before every call.
"""
import inspect
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.use_thread_count_from_argv()  # before PyTorch sizes its thread pools

np, torch, F = peer_common.import_or_unavailable("torch", "numpy", "torch", "torch.nn.functional")

if not hasattr(F, "scaled_dot_product_attention"):
    print(f"unavailable torch {torch.__version__} has no scaled_dot_product_attention "
          "(PyTorch >= 2.0 needed)", flush=True)
    sys.exit(0)

import sdpa_peer_cases  # noqa: E402
import torch_peer  # noqa: E402  (its header lines; it imports nothing new)

sdpa_peer_cases.bind(np, torch)

FIELDS = ("dtype op B NH NH_kv Tq Tk hs hs_v causal window mask lengths cache layout "
          "scenario steps round").split()


class Config:
    def __init__(self, fields):
        if len(fields) != len(FIELDS):
            raise ValueError(f"not a configuration ({' '.join(FIELDS)})")
        self.text = " ".join(fields)  # as it came, for the answer
        self.key = " ".join(fields[:-1])  # the configuration, whatever the round
        (self.dtype, self.op, B, NH, NH_kv, Tq, Tk, hs, hs_v, causal, window, self.mask,
         lengths, self.cache, self.layout, self.scenario, steps, round_text) = fields
        if (self.dtype not in ("f32", "f64") or self.op not in ("forward", "backward")
                or causal not in ("0", "1") or self.mask not in ("none", "padding", "full")
                or self.cache not in ("warm", "cold") or self.layout not in ("bshd", "bhsd")
                or self.scenario not in ("call", "decode-loop")):
            raise ValueError("bad dtype, op, causal, mask, cache, layout or scenario")
        self.B, self.NH, self.NH_kv, self.Tq, self.Tk, self.hs, self.hs_v, self.steps = (
            int(v) for v in (B, NH, NH_kv, Tq, Tk, hs, hs_v, steps))
        self.round, self.rounds = (int(v) for v in round_text.split("/"))
        self.causal, self.window = causal == "1", int(window)
        if min(self.B, self.NH, self.NH_kv, self.Tq, self.Tk, self.hs, self.hs_v) < 1:
            raise ValueError("sizes must be positive")
        if not 1 <= self.round <= self.rounds:
            raise ValueError("ROUND/ROUNDS needs 1 <= ROUND <= ROUNDS")
        if self.NH % self.NH_kv:
            raise ValueError("NH is not a multiple of NH_kv")
        self.full_lengths = lengths == "full"
        self.lengths = ([self.Tk] * self.B if self.full_lengths
                        else [int(v) for v in lengths.split("/")])
        if len(self.lengths) != self.B or max(self.lengths) > self.Tk:
            raise ValueError("LENGTHS needs B lengths <= Tk")
        self.loop = self.scenario == "decode-loop"
        if self.loop and (self.steps < 1 or self.Tq != 1 or not self.full_lengths
                          or self.mask != "none" or self.window or self.op != "forward"):
            raise ValueError("a decode loop is a forward of Tq = 1, STEPS >= 1, full "
                             "lengths, no mask, no window")

    def visible_range(self, b, t):
        """[lo, hi) of the keys query t of sequence b sees (the rule above)."""
        length = self.lengths[b]
        aligned = length if self.mask == "none" else self.Tk
        p = aligned - self.Tq + t
        hi = min(length, p + 1) if self.causal else length
        lo = max(0, p - self.window + 1) if self.window > 0 else 0
        hi = max(hi, 0)
        return min(lo, hi), hi


def has_gqa(fn):
    try:
        return "enable_gqa" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature: try it
        return True


def attn_function(args):
    """attn.torch.scaled_dot_product_attention and the header lines' words,
    or the 'unavailable' line and exit."""
    if args.attn_library:
        os.environ["ATTN_LIBRARY"] = args.attn_library
    try:
        import attn.torch as attn_torch
    except ImportError as first:
        if not args.attn_source:
            print(f"unavailable attn cannot be imported: {first}", flush=True)
            sys.exit(0)
        sys.path.insert(0, args.attn_source)
        try:
            import attn.torch as attn_torch
        except ImportError as exc:
            print(f"unavailable attn cannot be imported (nor from {args.attn_source}): {exc}",
                  flush=True)
            sys.exit(0)
    import attn
    where = os.path.dirname(os.path.dirname(os.path.abspath(attn.__file__)))
    return attn_torch.scaled_dot_product_attention, (
        f"attn={attn.__version__} from {where}, libattn {attn._lib.library_path}")


def main():
    def add_arguments(parser):
        parser.add_argument("--flush-mib", type=int, default=256,
                            help="MiB read before every call of a cold configuration")
        parser.add_argument("--function", choices=("torch", "attn"), default="torch",
                            help="torch: F.scaled_dot_product_attention; attn: "
                                 "attn.torch.scaled_dot_product_attention")
        parser.add_argument("--attn-library", help="the libattn for --function attn")
        parser.add_argument("--attn-source", help="python/src, if attn is not installed")

    args = peer_common.parse_arguments(__doc__.split("\n\n")[0], add_arguments)
    torch.set_num_threads(args.threads)
    if args.function == "attn":
        fn, attn_words = attn_function(args)
        name = "attn.torch.scaled_dot_product_attention (attn's drop-in)"
    else:
        fn, attn_words = F.scaled_dot_product_attention, ""
        name = "F.scaled_dot_product_attention"
    fn_has_gqa = has_gqa(fn)
    flushes = {}
    in_progress = {}  # key -> (case, samples) of a configuration measured in rounds

    def measure(c):
        if c.round == 1:
            in_progress.pop(c.key, None)
            flush = flushes.setdefault(c.cache, sdpa_peer_cases.Flush(args.flush_mib,
                                                                      c.cache == "cold"))
            kind = sdpa_peer_cases.LoopCase if c.loop else sdpa_peer_cases.CallCase
            in_progress[c.key] = (kind(c, fn, fn_has_gqa, args.seed, flush), [])
        elif c.key not in in_progress:
            raise ValueError(f"round {c.round} of a configuration whose round 1 did not run")
        case, samples = in_progress[c.key]
        policy = peer_common.block_policy(args, c.round - 1, c.rounds)
        samples.extend(case.block(policy, c.round == 1))
        if c.round < c.rounds:
            return None
        del in_progress[c.key]
        with torch.no_grad():
            error, out_dtype = case.check()
        return (statistics.median(samples), min(samples), len(samples), out_dtype,
                f"{error:.3e}", case.description)

    gqa_text = ("enable_gqa=True when NH_kv < NH" if fn_has_gqa else
                "K, V repeated to NH heads untimed (no enable_gqa)")
    impl = (f"{name}, tensors in the configuration's layout (bhsd contiguous (B,NH,T,hs); "
            f"bshd (B,T,NH,hs) viewed transposed), {gqa_text}; is_causal only if Tq == Tk "
            "without lengths or window, else an equivalent attn_mask (none when all visible); "
            "decode loops on caches preallocated in the layout; backward: autograd.grad")
    lines = torch_peer.header_lines(impl)
    if attn_words:
        lines[0] += " " + attn_words
    peer_common.serve(lines, measure, args, parse=Config, text_of=lambda c: c.text)


if __name__ == "__main__":
    main()
