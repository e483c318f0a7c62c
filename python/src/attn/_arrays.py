"""NumPy arrays at the C boundary: dtype choice, conversion, addresses, layouts.

Rules (they hold for every function of the package):
  - the computing dtype is float32 when the leading array (X, q) is float32,
    float64 when it is float64 or any other real dtype (integers, bool,
    float16, ml_dtypes' bfloat16, longdouble); complex, object, string
    arrays raise DTypeError;
  - except for attention on given q, k, v (attn.sdpa, attn.SdpaPlan): there
    q, k, v all float16, or all bfloat16 (ml_dtypes.bfloat16), compute in
    half precision (attn.h: float arithmetic, 16-bit storage; out in that
    dtype, lse and masks float32), and a half array mixed with any other
    dtype raises DTypeError (see half_dtype, sdpa_dtype);
  - every other input is converted to the computing dtype;
  - an input that is already a C-contiguous, aligned ndarray of that dtype is
    passed to C as it is (never copied), and so are the arrays of attention
    on given q, k, v of any strides C reads (attn/_layout.py); anything else
    is copied once, by ``_copy`` (the one place that copies, so tests can
    count copies);
  - an output array given by the caller (``out=``) must already be exactly
    right (dtype, shape, C-contiguous, writeable, aligned): it is written in
    place, never replaced by a copy.
"""

import ctypes

import numpy as np

from .errors import ArgumentError, DTypeError

__all__ = ["F32", "F64", "F16", "compute_dtype", "half_dtype", "is_bfloat16", "bfloat16",
           "sdpa_dtype", "CODES", "as_input", "output", "address"]

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
F16 = np.dtype(np.float16)
_CONVERTIBLE_KINDS = "fiub"
# attn_dtype of the sdpa calls (attn.h) per computing dtype; bfloat16's is 3
# (its NumPy dtype exists only where ml_dtypes is imported: code_of).
CODES = {F32: 1, F64: 2, F16: 4}
BF16_CODE = 3

_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _copy(x, dtype):
    """The package's only input copy: x as a new C-contiguous array of dtype."""
    return np.array(x, dtype=dtype, order="C", copy=True)


def is_bfloat16(dtype):
    """Whether dtype is bfloat16 as ml_dtypes (and JAX, TensorFlow, which use
    it) defines it for NumPy: a 2-byte dtype named "bfloat16" (checked without
    importing ml_dtypes: such an array exists only once it is imported)."""
    return dtype.itemsize == 2 and dtype.kind == "V" and dtype.name == "bfloat16"


def bfloat16():
    """ml_dtypes' bfloat16 NumPy dtype; DTypeError when ml_dtypes is missing."""
    try:
        import ml_dtypes
    except ImportError:
        raise DTypeError("bfloat16 arrays need the ml_dtypes package (pip install "
                         "ml_dtypes)") from None
    return np.dtype(ml_dtypes.bfloat16)


def half_dtype(dtype):
    """The native half-precision computing dtype of an array of `dtype`
    (float16 of either byte order gives F16, bfloat16 itself), or None."""
    if dtype.kind == "f" and dtype.itemsize == 2:
        return F16
    if is_bfloat16(dtype):
        return dtype
    return None


def code_of(dtype):
    """The attn_dtype code of a computing dtype (1 f32, 2 f64, 3 bf16, 4 f16)."""
    code = CODES.get(dtype)
    if code is None and is_bfloat16(dtype):
        return BF16_CODE
    return code


def sdpa_dtype(q, k, v):
    """The computing dtype of attention on given q, k, v (ndarrays): their
    half dtype when all three have it, DTypeError when only some are half,
    else compute_dtype(q)."""
    hq, hk, hv = half_dtype(q.dtype), half_dtype(k.dtype), half_dtype(v.dtype)
    if hq is None and hk is None and hv is None:
        return compute_dtype(q, "q")
    if hq is not None and hq == hk and hq == hv:
        return hq
    raise DTypeError("q, k, v have dtypes %s, %s, %s: half precision (float16, bfloat16) "
                     "needs q, k and v of one dtype (convert them first)"
                     % (q.dtype, k.dtype, v.dtype))


def _refuse_dtype(dtype, name):
    raise DTypeError("%s has dtype %s; attn computes on real numbers (float32 or "
                     "float64; integer, bool and other float arrays are converted)"
                     % (name, dtype))


def compute_dtype(x, name):
    """The computing dtype chosen by the leading array x (see the module rules)."""
    dtype = x.dtype
    if dtype is F32 or (dtype.kind == "f" and dtype.itemsize == 4):  # any byte order
        return F32
    if dtype.kind not in _CONVERTIBLE_KINDS and not is_bfloat16(dtype):
        _refuse_dtype(dtype, name)
    return F64


def as_array(x, name):
    """x as an ndarray (lists, tuples, scalars and array-likes are wrapped)."""
    if type(x) is np.ndarray:
        return x
    try:
        return np.asarray(x)
    except Exception as exc:  # a ragged list, an object numpy cannot take
        raise ArgumentError("%s cannot be read as an array: %s" % (name, exc)) from None


def as_input(x, dtype, name):
    """x as a C-contiguous aligned ndarray of `dtype`; x itself when it already is."""
    if type(x) is not np.ndarray:
        x = as_array(x, name)
    if x.dtype is dtype or x.dtype == dtype:
        flags = x.flags
        if flags.c_contiguous and flags.aligned:
            return x
    elif x.dtype.kind not in _CONVERTIBLE_KINDS and not is_bfloat16(x.dtype):
        _refuse_dtype(x.dtype, name)
    return _copy(x, dtype)


def check_shape(x, shape, name, what=""):
    """Raises ArgumentError unless x.shape == shape."""
    if x.shape != shape:
        raise ArgumentError("%s has shape %s, expected %s%s"
                            % (name, x.shape, shape, (" " + what) if what else ""))


def output(out, shape, dtype, name="out"):
    """A new array of `shape`, or the caller's `out` checked to be exactly right."""
    if out is None:
        return np.empty(shape, dtype)
    if type(out) is not np.ndarray and not isinstance(out, np.ndarray):
        raise ArgumentError("%s must be a NumPy array, not %s" % (name, type(out).__name__))
    if out.dtype != dtype:
        raise DTypeError("%s has dtype %s; this call writes %s" % (name, out.dtype, dtype))
    if out.shape != tuple(shape):
        raise ArgumentError("%s has shape %s, expected %s" % (name, out.shape, tuple(shape)))
    flags = out.flags
    if not (flags.c_contiguous and flags.aligned and flags.writeable):
        raise ArgumentError("%s must be C-contiguous, aligned and writeable (it is "
                            "written in place, never through a copy)" % name)
    return out


def address(a):
    """The address of a's first element (a C-contiguous or strided ndarray)."""
    try:
        # About 0.2 us against 0.5-0.9 us for a.ctypes.data; needs a writeable,
        # contiguous, non-empty buffer, else the slower general way.
        return _addressof(_from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.ctypes.data
