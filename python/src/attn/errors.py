"""Exceptions: every attn_status other than ATTN_OK becomes one of these.

    Error                       base of everything attn raises
      ArgumentError(ValueError) a bad argument (shape, scale, stride, length,
                                flags, threads, aliasing ...), found by the C
                                library (``status`` set) or before the call
                                (``status`` None)
      DTypeError(TypeError)     an array whose dtype cannot be converted
                                (complex, object, ...) or a tensor of an
                                unsupported dtype
      OutOfMemoryError(MemoryError)  ATTN_ERR_OUT_OF_MEMORY
      PlanError(RuntimeError)   a call a plan cannot take in its state:
                                DTYPE_MISMATCH, INFERENCE_PLAN, NO_FORWARD,
                                FORWARD_MISMATCH, PLAN_KIND
        ClosedPlanError         any use of a closed plan

Each carries ``status`` (the int, or None), ``name`` (e.g.
``"ATTN_ERR_BAD_SCALE"``), ``text`` (attn_status_string) and ``function``
(the C function or Python call that failed).
"""

from . import _lib

__all__ = ["Error", "ArgumentError", "DTypeError", "OutOfMemoryError", "PlanError",
           "ClosedPlanError", "STATUS_NAMES", "status_name", "status_string", "check"]

STATUS_NAMES = {
    0: "ATTN_OK",
    1: "ATTN_ERR_NULL_POINTER",
    2: "ATTN_ERR_ZERO_DIMENSION",
    3: "ATTN_ERR_SIZE_OVERFLOW",
    4: "ATTN_ERR_BLAS_RANGE",
    5: "ATTN_ERR_BAD_STRIDE",
    6: "ATTN_ERR_BAD_SCALE",
    7: "ATTN_ERR_ALIASING",
    8: "ATTN_ERR_OUT_OF_MEMORY",
    9: "ATTN_ERR_BAD_SHAPE",
    10: "ATTN_ERR_BAD_DTYPE",
    11: "ATTN_ERR_BAD_FLAGS",
    12: "ATTN_ERR_DTYPE_MISMATCH",
    13: "ATTN_ERR_INFERENCE_PLAN",
    14: "ATTN_ERR_NO_FORWARD",
    15: "ATTN_ERR_FORWARD_MISMATCH",
    16: "ATTN_ERR_BAD_THREADS",
    17: "ATTN_ERR_PLAN_KIND",
    18: "ATTN_ERR_BAD_LENGTH",
}


def status_name(status):
    """The enum name of an attn_status value ("ATTN_ERR_..." or "unknown (N)")."""
    return STATUS_NAMES.get(status, "unknown (%d)" % status)


def status_string(status):
    """attn_status_string(status): the library's description of it."""
    return _lib.lib.attn_status_string(status).decode("utf-8", "replace")


class Error(Exception):
    """Base of attn's exceptions; see the module docstring for the attributes."""

    def __init__(self, message, status=None, function=None):
        self.status = status
        self.function = function
        if status is None:
            self.name = None
            self.text = None
            text = message
        else:
            self.name = status_name(status)
            self.text = status_string(status)
            text = "%s: %s (%s)" % (function, self.name, self.text)
            if message:
                text += ": " + message
        super().__init__(text)


class ArgumentError(Error, ValueError):
    """A bad argument: shape, scale, stride, key length, flags, threads, overlap."""


class DTypeError(Error, TypeError):
    """An array or tensor of a dtype attn cannot take or convert."""


class OutOfMemoryError(Error, MemoryError):
    """The library could not allocate its workspace."""


class PlanError(Error, RuntimeError):
    """A plan cannot take this call in its present state or kind."""


class ClosedPlanError(PlanError):
    """The plan was closed (its C plan destroyed)."""


_CLASS_OF_STATUS = {8: OutOfMemoryError, 12: PlanError, 13: PlanError, 14: PlanError,
                    15: PlanError, 17: PlanError}


def raise_status(status, function, message=""):
    """Raises the exception of a nonzero attn_status returned by `function`."""
    cls = _CLASS_OF_STATUS.get(status, ArgumentError)
    raise cls(message, status=status, function=function)


def check(status, function, message=""):
    """Returns None for ATTN_OK, else raises the status's exception."""
    if status:
        raise_status(status, function, message)
