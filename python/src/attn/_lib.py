"""Loading libattn and declaring its C functions for ctypes.

The package carries its own copy of the shared library (``libattn.so.0``
next to this file, installed by the package's CMake build). The environment
variable ``ATTN_LIBRARY`` may name another build of it (a development tree).

Every function gets ``argtypes``/``restype`` once, here; pointers are passed
as plain integers (``c_void_p``), which is the cheapest argument ctypes
converts. ``ctypes.CDLL`` releases the GIL for the duration of each call.

The two sdpa structs are declared as ctypes Structures (for ``sizeof`` and
their field order) and filled with one ``struct.pack_into`` call (``SHAPE``,
``ARGS``), which costs about a tenth of setting 14 fields one by one.
"""

import ctypes
import os
import struct

__all__ = ["lib", "SdpaShape", "SdpaArgs", "SHAPE", "ARGS", "library_path"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _find_library():
    explicit = os.environ.get("ATTN_LIBRARY")
    if explicit:
        return explicit
    for name in sorted(os.listdir(_HERE)):
        if name.startswith("libattn.so"):
            return os.path.join(_HERE, name)
    raise ImportError(
        "attn: the bundled libattn.so is missing from %s; install the package "
        "with `pip install ./python` from a clone (or set ATTN_LIBRARY to a "
        "built libattn.so)" % _HERE)


library_path = _find_library()
lib = ctypes.CDLL(library_path)

_p = ctypes.c_void_p
_z = ctypes.c_size_t
_i = ctypes.c_int
_u = ctypes.c_uint
_d = ctypes.c_double
_status = ctypes.c_int


class SdpaShape(ctypes.Structure):
    """attn_sdpa_shape: B, NH, NH_kv, Tq, Tk, hs, hs_v."""
    _fields_ = [(n, _z) for n in ("B", "NH", "NH_kv", "Tq", "Tk", "hs", "hs_v")]


class SdpaArgs(ctypes.Structure):
    """attn_sdpa_args_f32 / _f64 / _bf16 / _f16 (identical layouts: pointers
    and size_t; only the element type of Q, K, V and out differs)."""
    _fields_ = [
        ("Q", _p), ("ldq", _z),
        ("K", _p), ("ldk", _z),
        ("V", _p), ("ldv", _z),
        ("mask", _p), ("mask_ld", _z), ("mask_sb", _z), ("mask_sh", _z),
        ("key_lengths", _p),
        ("out", _p), ("ldo", _z),
        ("lse", _p),
        ("sbq", _z), ("shq", _z), ("sbk", _z), ("shk", _z),
        ("sbv", _z), ("shv", _z), ("sbo", _z), ("sho", _z),
    ]


# Field order of SdpaArgs: Q ldq K ldk V ldv mask mask_ld mask_sb mask_sh
# key_lengths out ldo lse, then the batch and head strides sbq shq sbk shk
# sbv shv sbo sho. 'N' is size_t; a NULL pointer is 0, a zero stride dense.
SHAPE = struct.Struct("@7N")
ARGS = struct.Struct("@PNPNPNPNNNPPNP8N")
if SHAPE.size != ctypes.sizeof(SdpaShape) or ARGS.size != ctypes.sizeof(SdpaArgs):
    raise ImportError("attn: struct layout mismatch between struct and ctypes")


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_declare("attn_status_string", ctypes.c_char_p, _status)
_declare("attn_version_number", _u)
_declare("attn_version_string", ctypes.c_char_p)
_declare("attn_simd_name", ctypes.c_char_p)

for _s in ("f32", "f64"):
    _declare("attn_softmax_rows_" + _s, _status, _p, _z, _z, _z)
    _declare("attn_lookup_" + _s, _status, _z, _z, _z, _z, _d, _p, _p, _p, _p, _p)
    _declare("attn_self_attention_" + _s, _status, _z, _z, _z, _z, _i, _p, _p, _p, _p, _p, _p)
    _declare("attn_mha_forward_" + _s, _status, _z, _z, _z, _z, _i, _p, _p, _p, _p, _p, _p)
    _declare("attn_mha_backward_" + _s, _status, _z, _z, _z, _z, _i,
             _p, _p, _p, _p, _p, _p, _p, _p, _p, _p, _p)
    _declare("attn_forward_" + _s, _status, _p, _p, _p, _p, _p, _p, _p, _p)
    _declare("attn_backward_" + _s, _status, _p, _p, _p, _p, _p, _p, _p, _p, _p, _p, _p, _p)
    _declare("attn_sdpa_forward_" + _s, _status, _p, _p)
    _declare("attn_sdpa_backward_" + _s, _status, _p, _p, _p, _p, _p, _p)
    _declare("attn_sdpa_" + _s, _status, _p, _d, _u, _z, _p)

for _s in ("bf16", "f16"):
    _declare("attn_sdpa_forward_" + _s, _status, _p, _p)
    _declare("attn_sdpa_backward_" + _s, _status, _p, _p, _p, _p, _p, _p)
    _declare("attn_sdpa_" + _s, _status, _p, _d, _u, _z, _p)
    _declare("attn_%s_from_f32" % _s, None, _p, _p, _z)
    _declare("attn_%s_to_f32" % _s, None, _p, _p, _z)

_declare("attn_plan_create", _status, _p, _i, _z, _z, _z, _z, _z, _d, _u)
_declare("attn_plan_destroy", None, _p)
_declare("attn_plan_set_threads", _status, _p, _u)
_declare("attn_plan_get_threads", _status, _p, _p)
_declare("attn_plan_set_dropout", _status, _p, _d, ctypes.c_uint64, ctypes.c_uint64)
_declare("attn_sdpa_plan_create", _status, _p, _i, _p, _d, _u, _z)

# Constants of attn.h.
ATTN_F32 = 1
ATTN_F64 = 2
ATTN_BF16 = 3
ATTN_F16 = 4
ATTN_CAUSAL = 1 << 0
ATTN_INFERENCE = 1 << 1
ATTN_MATERIALIZED = 1 << 2
ATTN_TILED = 1 << 3
ATTN_MAX_THREADS = 256
ATTN_THREADS_AUTO = 0xFFFFFFFF
