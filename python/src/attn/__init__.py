"""attn: scaled dot-product attention on CPUs (libattn), from Python.

NumPy functions (float32 in, float32 out; everything else in float64; attn.sdpa
also float16, and bfloat16 of ml_dtypes, in half precision):

    attn.lookup(q, k, v, scale=1.0)                 soft lookup (Tq,d),(Tk,d),(Tk,dv)
    attn.self_attention(X, Wq, Wk, Wv, causal)      one head, X (B,T,C) or (T,C)
    attn.mha_forward(X, Wq, Wk, Wv, Wo, NH=...)     multi-head, (C,C) weights
    attn.mha_backward(X, Wq, Wk, Wv, Wo, dout, NH)  its gradients
    attn.sdpa(q, k, v, mask, key_lengths, causal, scale, window, return_lse)
                                                    attention on (B,T,heads,hs)
    attn.softmax_rows(x)                            softmax over the last axis

Plans (shape fixed once, executed many times): attn.Plan, attn.SdpaPlan.
attn.sdpa and the PyTorch drop-in keep a few sdpa plans per thread, by
signature: attn.set_plan_cache_size(n), attn.clear_plan_cache().
PyTorch drop-in (torch imported only then): attn.torch.scaled_dot_product_attention.
Hugging Face transformers: ``import attn.transformers`` registers
attn_implementation="attn".
Errors: attn.Error and its subclasses (attn.ArgumentError is a ValueError).
"""

from . import _lib
from .errors import (ArgumentError, ClosedPlanError, DTypeError, Error, OutOfMemoryError,
                     PlanError, status_name, status_string)
from .functional import Gradients, lookup, mha_backward, mha_forward, self_attention, softmax_rows
from .plan import Plan
from ._plans import clear_plan_cache, set_plan_cache_size
from .sdpa_plan import SdpaPlan
from ._sdpa import sdpa

__all__ = ["lookup", "self_attention", "mha_forward", "mha_backward", "sdpa", "softmax_rows",
           "Plan", "SdpaPlan", "Gradients", "set_plan_cache_size", "clear_plan_cache",
           "Error", "ArgumentError", "DTypeError", "OutOfMemoryError", "PlanError", "ClosedPlanError", "status_name",
           "status_string", "library_version", "simd", "library_path", "__version__"]

#: The version of the libattn this package carries ("0.1.0").
library_version = _lib.lib.attn_version_string().decode()
__version__ = library_version
#: The kernel set libattn picked for this CPU ("amx", "avx512-bf16", "avx512",
#: "avx2", "neon" or "scalar"; the first two are avx512 with a bf16 plan's
#: products on AMX tiles or vdpbf16ps).
simd = _lib.lib.attn_simd_name().decode()
#: The file of the loaded libattn.
library_path = _lib.library_path


def __getattr__(name):
    # attn.torch and attn.transformers are imported on first use, so that
    # `import attn` never needs torch or transformers.
    if name in ("torch", "transformers"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'attn' has no attribute %r" % name)
