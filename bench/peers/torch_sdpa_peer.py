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

Protocol, configurations, the visibility rule, inputs and the check:
sdpa_peer_protocol.py. is_causal=True (top-left aligned in PyTorch) is used
only when Tq == Tk, every L_b = Tk and WINDOW = 0, where both alignments
agree; with MASK none and every key visible to every query (a causal decode
step) the function gets no mask; otherwise an equivalent attn_mask: boolean
(True = attend) for MASK none, additive float (0 / -inf, plus the bias) for
padding and full -- (B,1,1,Tk) when visibility does not depend on the query,
else (B,1,Tq,Tk) (full: (B,NH,Tq,Tk)). A decode loop (SCENARIO decode-loop):
Tk filled slots at the start, one token appended per step, the query over
the S filled slots, no mask. The result line's THREADS is
torch.get_num_threads(), its KERNEL the function.

Tensors and cases: sdpa_peer_cases.py (the layouts, the call, the loop);
enable_gqa=True when NH_kv < NH (PyTorch >= 2.5; older ones get K and V
repeated to NH heads before the timing, and say so; a decode loop needs it).
A round's block: peer_common.block_policy (a decode loop: one pass, after
--warmup untimed passes in the first round). CACHE=cold reads a --flush-mib
buffer (a NumPy sum, untimed) before every call.
"""
import inspect
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

import sdpa_peer_cases  # noqa: E402
import sdpa_peer_protocol  # noqa: E402
import torch_peer  # noqa: E402  (its header lines; it imports nothing new)

sdpa_peer_cases.bind(np, torch)

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
        sdpa_peer_protocol.add_arguments(parser)
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
        kernel = "attn.torch.scaled_dot_product_attention"
    else:
        fn, attn_words = F.scaled_dot_product_attention, ""
        name = kernel = "F.scaled_dot_product_attention"
    fn_has_gqa = has_gqa(fn)
    flushes = {}

    def make_case(c):
        flush = flushes.setdefault(c.cache, sdpa_peer_protocol.Flush(args.flush_mib,
                                                                    c.cache == "cold"))
        kind = sdpa_peer_cases.LoopCase if c.loop else sdpa_peer_cases.CallCase
        case = kind(c, fn, fn_has_gqa, args.seed, flush)
        case.threads, case.kernel = torch.get_num_threads(), kernel
        return case

    gqa_text = ("enable_gqa=True when NH_kv < NH" if fn_has_gqa else
                "K, V repeated to NH heads untimed (no enable_gqa)")
    impl = (f"{name}, tensors in the configuration's layout (bhsd contiguous (B,NH,T,hs); "
            f"bshd (B,T,NH,hs) viewed transposed), {gqa_text}; is_causal only if Tq == Tk "
            "without lengths or window, else an equivalent attn_mask (none when all visible); "
            "decode loops on caches preallocated in the layout; backward: autograd.grad")
    lines = torch_peer.header_lines(impl)
    if attn_words:
        lines[0] += " " + attn_words
    sdpa_peer_protocol.serve_in_rounds(lines, make_case, args)


if __name__ == "__main__":
    main()
