"""attn's shared threads on a host's OpenMP threads (attn_openmp.h).

PyTorch runs its CPU operators on an OpenMP runtime (the libgomp its wheel
carries) whose threads keep polling for a few milliseconds after each
operator. An attn call made then shares the cores with them; run on that
runtime instead, attn's phases are parallel regions its polling threads
join at once. ``attn.torch`` does this when it is imported (see
``use_openmp_threads`` there); this module finds the runtime and sets it.
"""

import ctypes
import os

from ._lib import lib

_RUNTIMES = ("libgomp", "libomp", "libiomp5")
_use = getattr(lib, "attn_use_openmp_threads", None)
if _use is not None:
    _use.restype = ctypes.c_int
    _use.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_held = None  # the runtime attn runs on (kept loaded while attn may call it)


def loaded_runtime(prefer_dir=None):
    """The path of an OpenMP runtime loaded in this process (Linux: read from
    /proc/self/maps), one under ``prefer_dir`` first; None if there is none."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6:
                    path = fields[5].strip()
                    if os.path.basename(path).startswith(_RUNTIMES) and path not in found:
                        found.append(path)
    except OSError:
        return None
    for path in found:
        if prefer_dir and path.startswith(prefer_dir + os.sep):
            return path
    return found[0] if found else None


def use(path):
    """Runs attn's shared threads on the OpenMP runtime at ``path`` (None: on
    attn's own threads again). Returns whether attn runs on ``path`` now;
    False when the library predates attn_use_openmp_threads or the runtime
    lacks GOMP_parallel."""
    global _held
    if _use is None:
        return False
    if path is None:
        _use(None, None)
        _held = None
        return True
    try:
        runtime = ctypes.CDLL(path)
        parallel, thread_num = runtime.GOMP_parallel, runtime.omp_get_thread_num
    except (OSError, AttributeError):
        return False
    status = _use(ctypes.cast(parallel, ctypes.c_void_p), ctypes.cast(thread_num, ctypes.c_void_p))
    if status != 0:
        return False
    _held = (path, runtime)
    return True


def current():
    """The path of the OpenMP runtime attn's shared threads run on, or None."""
    return _held[0] if _held else None
