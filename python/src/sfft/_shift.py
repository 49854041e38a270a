# SPDX-License-Identifier: Apache-2.0
"""fftshift / ifftshift (fftshift_nd / ifftshift_nd)."""
from __future__ import annotations

import ctypes
import operator
from typing import Any, List, Sequence, Union

import numpy as np

from . import _arrays, _lib

__all__ = ["fftshift", "ifftshift"]

Axes = Union[int, Sequence[int], None]

# A shift moves whole elements and never looks at their values: an element is handed to the library as the
# sfft_dtype of its size (int32 as float32, int64 as float64, any 16-byte type as complex128).
_NATIVE = {np.dtype(np.float32): _lib.FLOAT32, np.dtype(np.float64): _lib.FLOAT64,
           np.dtype(np.complex64): _lib.COMPLEX64, np.dtype(np.complex128): _lib.COMPLEX128}
_BY_SIZE = {4: _lib.FLOAT32, 8: _lib.FLOAT64, 16: _lib.COMPLEX128}
_AxisError = getattr(getattr(np, "exceptions", np), "AxisError")  # numpy.exceptions from NumPy 1.25


def _element_code(dtype: np.dtype) -> int:
    if dtype in _NATIVE:
        return _NATIVE[dtype]
    if dtype.hasobject or dtype.itemsize not in _BY_SIZE:
        raise TypeError(f"sfft: fftshift takes elements of 4, 8 or 16 bytes without Python objects, not {dtype}")
    return _BY_SIZE[dtype.itemsize]


def _axes_masks(axes: Axes, ndim: int) -> List[int]:
    """The axes_mask of each pass: an axis listed m times is shifted m times, as NumPy's roll does."""
    if axes is None:
        return [(1 << ndim) - 1] if ndim else []
    items = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    counts = [0] * ndim
    for a in items:
        d = operator.index(a)
        if not -ndim <= d < ndim:
            raise _AxisError(d, ndim)
        counts[d % ndim] += 1
    return [sum(1 << d for d in range(ndim) if counts[d] > i) for i in range(max(counts, default=0))]


def _shift(name: str, x: Any, axes: Axes, out: Any, backend: str, device: int, stream: Any,
           nthreads: int) -> Any:
    dev = _arrays.is_device(x)
    arr = _arrays.as_array(x, dev)
    code = _element_code(arr.dtype)
    masks = _axes_masks(axes, arr.ndim)
    result = _arrays.Output(out, arr.shape, arr.dtype, dev)
    src = result.separate(_arrays.namespace(dev).ascontiguousarray(arr), same_allowed=True)
    if not masks:  # nothing moves (a 0-d array, or axes=())
        if src is not result.buffer:
            result.buffer[...] = src
        return result.result()
    opts = _lib.make_options(backend, device, _arrays.default_stream(stream, dev), nthreads)
    shape = (ctypes.c_int64 * arr.ndim)(*arr.shape)
    fn = getattr(_lib.lib, name)
    for mask in masks:  # later passes (repeated axes) shift the result in place
        _lib.check(fn(result.pointer, _arrays.pointer(src), arr.ndim, shape, mask, code, ctypes.byref(opts)))
        src = result.buffer
    return result.result()


def fftshift(x: Any, axes: Axes = None, out: Any = None, *, backend: str = "auto", device: int = 0,
             stream: Any = None, nthreads: int = 0) -> Any:
    """Shift the zero-frequency component to the centre of the spectrum, exactly as ``numpy.fft.fftshift``.

    Parameters
    ----------
    x : array_like or CUDA array
        Input of any shape (rank up to 8) whose elements are 4, 8 or 16 bytes (float32, float64, complex64,
        complex128, int32, int64, ...). CuPy arrays (or objects with ``__cuda_array_interface__`` / a CUDA
        DLPack device) are shifted on the GPU without leaving it.
    axes : int or sequence of int, optional
        Axes to shift (negative values count from the end); default all. An axis listed twice is shifted
        twice, as by NumPy.
    out : array, optional
        Where to write the result: same shape, dtype and memory kind as ``x``. ``out=x`` shifts in place; a
        non-contiguous ``out`` is written through a temporary.
    backend, device, stream, nthreads
        ``"auto"`` (GPU for device arrays), ``"cpu"`` or ``"cuda"`` (host arrays staged through the GPU);
        the CUDA device ordinal; a CUDA stream (default: CuPy's current stream for device arrays); CPU
        threads (0 = all).

    Returns
    -------
    The shifted array (``out`` when given), a NumPy array for host input, a CuPy array for device input.

    Raises
    ------
    SfftError
        (InvalidArgumentError etc.) with the library's message, e.g. for more than 8 dimensions.
    """
    return _shift("fftshift_nd", x, axes, out, backend, device, stream, nthreads)


def ifftshift(x: Any, axes: Axes = None, out: Any = None, *, backend: str = "auto",
              device: int = 0, stream: Any = None, nthreads: int = 0) -> Any:
    """The inverse of :func:`fftshift`, exactly as ``numpy.fft.ifftshift`` (they differ for odd extents).
    Parameters, return value and errors as for :func:`fftshift`."""
    return _shift("ifftshift_nd", x, axes, out, backend, device, stream, nthreads)
