"""NumPy arrays at the C boundary: dtype choice, conversion, addresses, layouts.

Rules (they hold for every function of the package):
  - the computing dtype is float32 when the leading array (X, q) is float32,
    float64 when it is float64 or any other real dtype (integers, bool,
    float16, longdouble); complex, object, string arrays raise DTypeError;
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

__all__ = ["F32", "F64", "compute_dtype", "as_input", "output", "address"]

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
_CONVERTIBLE_KINDS = "fiub"

_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _copy(x, dtype):
    """The package's only input copy: x as a new C-contiguous array of dtype."""
    return np.array(x, dtype=dtype, order="C", copy=True)


def _refuse_dtype(dtype, name):
    raise DTypeError("%s has dtype %s; attn computes on real numbers (float32 or "
                     "float64; integer, bool and other float arrays are converted)"
                     % (name, dtype))


def compute_dtype(x, name):
    """The computing dtype chosen by the leading array x (see the module rules)."""
    dtype = x.dtype
    if dtype is F32 or (dtype.kind == "f" and dtype.itemsize == 4):  # any byte order
        return F32
    if dtype.kind not in _CONVERTIBLE_KINDS:
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
    elif x.dtype.kind not in _CONVERTIBLE_KINDS:
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
