"""Strided arrays at the C boundary: which layouts attn_sdpa_args can describe.

attn.h ("The arrays of one call"): element i of row t of head h of sequence b
of an array X is ``X[b*sb + h*sh + t*ld + i]``, strides in elements, the last
dimension contiguous. C takes such an array as it is when its dimensions of
more than one entry, sorted by stride, each step over the span of the row
and of the dimensions below (else ATTN_ERR_BAD_STRIDE) and its row stride
fits BLAS's int (else ATTN_ERR_BLAS_RANGE). These pure functions decide that
from sizes and strides, so that the NumPy and PyTorch bindings pass an array
in place whenever C will take it, and copy it only when C would refuse it.

Strides here are in elements and nonnegative; a dimension of one entry may
have any stride in NumPy or PyTorch, and is given 0 (the dense default,
which C never uses for it).
"""

__all__ = ["INT_MAX", "c_strides", "merge_batch", "extent", "grad_placements"]

INT_MAX = 0x7FFFFFFF


def c_strides(d, T, st, H, sh, B, sb):
    """(ld, sh, sb) for attn_sdpa_args of a (B, H, T, d) array, or None when C
    would refuse it (overlapping or interleaved dimensions, a row stride above
    INT_MAX, a negative stride): then the array must be copied. `st`, `sh`,
    `sb` are the row, head and batch strides; 0 stands for each dimension of
    one entry."""
    if T <= 1:
        st = 0
    elif st > INT_MAX:
        return None
    if H <= 1:
        sh = 0
    if B <= 1:
        sb = 0
    dims = []
    if T > 1:
        dims.append((st, T))
    if H > 1:
        dims.append((sh, H))
    if B > 1:
        dims.append((sb, B))
    if len(dims) > 1:
        dims.sort()
    below = d
    for s, n in dims:
        if s < below:
            return None
        below += (n - 1) * s
    return st, sh, sb


def merge_batch(shape, strides):
    """(B, sb): leading batch dimensions read as one of B entries sb apart, or
    None when their strides do not allow it without a copy. Empty: (1, 0)."""
    B, sb = 1, 0
    for i in range(len(shape) - 1, -1, -1):
        n = shape[i]
        if n == 1:
            continue
        if B == 1:
            B, sb = n, strides[i]
        elif strides[i] == B * sb:
            B *= n
        else:
            return None
    return B, sb


def extent(d, T, st, H, sh, B, sb):
    """Elements from the first to past the last element of an array laid out
    by c_strides (0 for dimensions of one entry); equal to d*T*H*B exactly
    when the array is dense (no gaps)."""
    return d + (T - 1) * st + (H - 1) * sh + (B - 1) * sb


def grad_placements(arrays):
    """Where the gradients of q, k, v may go, best first, given that C writes
    dQ, dK, dV with the strides of Q, K, V.

    `arrays` holds (address in elements, extent, dense) for each input. A
    dense input's gradient is a dense array of the same strides (the
    framework's empty_like). The others: inputs that interleave in one
    region, as q, k, v split from one fused projection, get their gradients
    at the same offsets in one buffer of that region's size (no more memory
    than dense gradients; C accepts such interleaved outputs, attn.h); then,
    should C refuse that (ATTN_ERR_ALIASING, nothing written: inputs that
    overlap each other), a buffer of its own extent for each.

    Yields (buffers, places): buffer sizes in elements, and per input None
    (dense) or (buffer index, offset).
    """
    loose = [i for i, (_, _, dense) in enumerate(arrays) if not dense]
    if len(loose) > 1:
        lo = min(arrays[i][0] for i in loose)
        hi = max(arrays[i][0] + arrays[i][1] for i in loose)
        starts = {arrays[i][0] for i in loose}
        if hi - lo <= sum(arrays[i][1] for i in loose) and len(starts) == len(loose):
            places = [None] * len(arrays)
            for i in loose:
                places[i] = (0, arrays[i][0] - lo)
            yield [hi - lo], places
    places = [None] * len(arrays)
    buffers = []
    for i, (_, size, dense) in enumerate(arrays):
        if not dense:
            places[i] = (len(buffers), 0)
            buffers.append(size)
    yield buffers, places
