# SPDX-License-Identifier: Apache-2.0
"""Arrays at the C boundary: host arrays (NumPy, or anything np.asarray takes) and CUDA device arrays (CuPy,
or any object with ``__cuda_array_interface__`` or a CUDA DLPack device, viewed through CuPy without a copy).
Inputs are checked and converted to the C-contiguous array of the dtype the library reads (a copy only when
the layout or dtype differs); outputs are checked, never converted: a non-contiguous ``out`` is written
through a contiguous temporary."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _lib

_DL_CUDA, _DL_CUDA_MANAGED = 2, 13


def is_device(a: Any) -> bool:
    """True for CUDA device arrays: ``__cuda_array_interface__`` or a DLPack CUDA / CUDA-managed device."""
    if hasattr(a, "__cuda_array_interface__"):
        return True
    if isinstance(a, np.ndarray) or not hasattr(a, "__dlpack_device__"):
        return False
    return a.__dlpack_device__()[0] in (_DL_CUDA, _DL_CUDA_MANAGED)


def _cupy() -> Any:
    try:
        import cupy
    except ImportError as e:
        raise TypeError("sfft: CUDA device arrays are handled through CuPy, which is not installed "
                        "(pip install cupy-cuda13x)") from e
    return cupy


def namespace(device: bool) -> Any:
    """numpy for host arrays, cupy for device arrays."""
    return _cupy() if device else np


def as_array(a: Any, device: bool) -> Any:
    """A numpy.ndarray (host) or cupy.ndarray (device) view of a, copying nothing that need not be copied."""
    if not device:
        return np.asarray(a)
    cp = _cupy()
    if isinstance(a, cp.ndarray):
        return a
    if hasattr(a, "__cuda_array_interface__"):
        return cp.asarray(a)
    return cp.from_dlpack(a)


def same_kind(arrays: Sequence[Tuple[str, Any]]) -> bool:
    """Whether the given (name, array) pairs, None skipped, are device arrays; TypeError for a mixture."""
    given = [(n, is_device(a)) for n, a in arrays if a is not None]
    kinds = {d for _, d in given}
    if len(kinds) > 1:
        names = ", ".join(f"{n} ({'device' if d else 'host'})" for n, d in given)
        raise TypeError(f"sfft: arrays must all be host or all be CUDA device memory: {names}")
    return kinds == {True}


def input_array(a: Any, dtype: Any, name: str, device: bool, ndim: Optional[int] = None) -> Any:
    """a as a C-contiguous array of dtype in its own memory kind. The conversion must be a safe or same-kind
    cast (float32 -> float64, float64 -> complex128, int32 -> int64, complex128 -> complex64 are; complex ->
    float and float -> int are not: TypeError; an empty input converts to anything). Non-contiguous or
    non-native-byte-order inputs are copied."""
    arr = as_array(a, device)
    dtype = np.dtype(dtype)
    if arr.dtype != dtype and arr.size and not np.can_cast(arr.dtype, dtype, "same_kind"):
        raise TypeError(f"sfft: {name} has dtype {arr.dtype}, which does not convert to {dtype} "
                        "(a same-kind cast is required)")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"sfft: {name} must have {ndim} dimension(s), not shape {arr.shape}")
    return namespace(device).ascontiguousarray(arr, dtype=dtype)


def pointer(arr: Any) -> int:
    """The address of a numpy or cupy array's first element."""
    return arr.ctypes.data if isinstance(arr, np.ndarray) else arr.data.ptr


def default_stream(stream: Any, device: bool) -> Any:
    """The stream argument, or for device arrays CuPy's current stream, so sfft's work is ordered with it."""
    if stream is None and device:
        return _cupy().cuda.get_current_stream().ptr
    return stream


class Output:
    """The array a call writes. ``buffer`` is C-contiguous and what the library writes; ``array`` is what
    the caller gets back (``out`` itself when given). ``result()`` copies buffer into array when they differ."""

    def __init__(self, out: Any, shape: Tuple[int, ...], dtype: Any, device: bool, name: str = "out") -> None:
        dtype = np.dtype(dtype)
        xp = namespace(device)
        if out is None:
            self.array = self.buffer = xp.empty(shape, dtype=dtype)
            return
        if is_device(out) != device:
            raise TypeError(f"sfft: {name} must be {'CUDA device' if device else 'host'} memory like the inputs")
        arr = as_array(out, device)
        if arr.dtype != dtype:
            raise TypeError(f"sfft: {name} has dtype {arr.dtype}, expected {dtype}")
        if tuple(arr.shape) != tuple(shape):
            raise ValueError(f"sfft: {name} has shape {tuple(arr.shape)}, expected {tuple(shape)}")
        if isinstance(arr, np.ndarray) and not arr.flags.writeable:
            raise ValueError(f"sfft: {name} is read-only")
        self.array = arr
        self.buffer = arr if arr.flags.c_contiguous else xp.empty(shape, dtype=dtype)

    @property
    def pointer(self) -> int:
        return pointer(self.buffer)

    def separate(self, inp: Any, same_allowed: bool = False) -> Any:
        """inp, or a copy of it where it overlaps the output buffer (the library would read what it already
        wrote). With same_allowed, an input occupying exactly the output buffer is kept (in place)."""
        xp = np if isinstance(inp, np.ndarray) else _cupy()
        if inp.size == 0 or not xp.may_share_memory(inp, self.buffer):
            return inp
        if same_allowed and pointer(inp) == pointer(self.buffer) and inp.nbytes == self.buffer.nbytes:
            return inp
        return inp.copy()

    def result(self) -> Any:
        if self.buffer is not self.array:
            self.array[...] = self.buffer
        return self.array
