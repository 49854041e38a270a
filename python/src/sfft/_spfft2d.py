# SPDX-License-Identifier: Apache-2.0
"""Sparse-input 2-D FFT (spfft2d_*): the real-to-complex half spectrum of a sparse real matrix, from COO
arrays, a SciPy (or CuPy) sparse matrix, or a Matrix Market file."""
from __future__ import annotations

import ctypes
import operator
import os
from typing import Any, Callable, Optional, Tuple

import numpy as np

from . import _arrays, _lib
from ._sparse import complex_dtype

__all__ = ["Spfft2dPlan", "spfft2d"]

_METHODS = {"auto": 0, "direct": 1, "direct_rows": 2, "dense": 3, "pruned": 4}
_METHOD_NAMES = {v: k for k, v in _METHODS.items()}
_CODES = {np.dtype(np.complex64): _lib.COMPLEX64, np.dtype(np.complex128): _lib.COMPLEX128}


class Spfft2dPlan(_lib.PlanHandle):
    """A plan for the forward, unnormalised 2-D DFT of a sparse real ``rows x cols`` matrix,
    ``Y[u, v] = sum over entries (r, c) of w_rc exp(-2j pi (r u / rows + c v / cols))``, returned as the
    half spectrum ``numpy.fft.rfft2(dense)``: shape ``(rows, cols // 2 + 1)``.

    Parameters
    ----------
    a
        The matrix, one of:

        * a SciPy sparse matrix or array (any format; CuPy's ``cupyx.scipy.sparse`` too), its stored entries;
        * ``(row, col)``: a 0/1 pattern (every listed coordinate is 1, repeats too), with ``shape``;
        * ``(data, (row, col))``: values, repeated coordinates summed (scipy's COO convention), with ``shape``;
        * a path (str or os.PathLike) to a Matrix Market coordinate file (pattern, real or integer;
          general, symmetric or skew-symmetric).

        Indices are converted to int64 and values to float64 (copied if needed). Values must be finite; the
        library checks indices against the shape and names the first bad entry.
    shape : (rows, cols), optional
        Required for the COO tuples; taken from the matrix or file otherwise.
    binary : bool
        Treat every stored entry as 1 (values ignored).
    dtype : complex64 or complex128
        Output precision.
    method : {"auto", "direct", "direct_rows", "dense", "pruned"}
        How the spectrum is computed (see spfft2d_set_method in the header); "auto" picks by a cost model.
    tile_rows : int
        Spectrum rows per tile (0 = automatic); smaller tiles use less memory.
    backend, device, stream, nthreads
        ``"auto"`` (CUDA when a usable GPU exists, else CPU), ``"cpu"`` or ``"cuda"``; CUDA device ordinal;
        CUDA stream (default: CuPy's current stream for device COO arrays); CPU threads (0 = all).
    """

    _destroy = _lib.lib.spfft2d_destroy

    def __init__(self, a: Any, shape: Optional[Tuple[int, int]] = None, *, binary: bool = False,
                 dtype: Any = np.complex128, method: str = "auto", tile_rows: int = 0, backend: str = "auto",
                 device: int = 0, stream: Any = None, nthreads: int = 0) -> None:
        self._handle = ctypes.c_void_p()
        self.dtype = complex_dtype(dtype, "Spfft2dPlan")
        code = _CODES[self.dtype]
        if isinstance(a, (str, bytes, os.PathLike)):
            if shape is not None:
                raise ValueError("sfft: shape is read from the Matrix Market file; do not give it")
            self.device_inputs = False
            opts = _lib.make_options(backend, device, stream, nthreads)
            _lib.check(_lib.lib.spfft2d_create_from_mtx(ctypes.byref(self._handle), os.fsencode(a), int(bool(binary)),
                                                        code, ctypes.byref(opts)))
        else:
            row, col, data, rows, cols = _coo(a, shape)
            if binary:
                data = None
            dev = _arrays.same_kind([("row", row), ("col", col), ("data", data)])
            row = _arrays.input_array(row, np.int64, "row", dev, ndim=1)
            col = _arrays.input_array(col, np.int64, "col", dev, ndim=1)
            if data is not None:
                data = _arrays.input_array(data, np.float64, "data", dev, ndim=1)
            nnz = row.shape[0]
            for name, arr in (("col", col), ("data", data)):
                if arr is not None and arr.shape[0] != nnz:
                    raise ValueError(f"sfft: {name} has {arr.shape[0]} entries, row has {nnz}")
            self.device_inputs = dev
            opts = _lib.make_options(backend, device, _arrays.default_stream(stream, dev), nthreads)
            ptrs = [None if v is None or nnz == 0 else _arrays.pointer(v) for v in (row, col, data)]
            _lib.check(_lib.lib.spfft2d_create(ctypes.byref(self._handle), rows, cols, nnz, *ptrs, code,
                                               ctypes.byref(opts)))
        rows, cols = self._info()[:2]
        self.shape: Tuple[int, int] = (rows, cols)
        """(rows, cols) of the matrix."""
        self.out_shape: Tuple[int, int] = (rows, cols // 2 + 1)
        """(rows, cols // 2 + 1): the shape of the half spectrum."""
        if method != "auto":
            self.method = method
        if tile_rows:
            self.tile_rows = tile_rows

    # ------------------------------------------------------------------ facts
    def _info(self) -> Tuple[int, int, int, int, int, str]:
        vals = [ctypes.c_uint64() for _ in range(5)]
        backend = ctypes.c_int()
        _lib.check(_lib.lib.spfft2d_get_info(self._live(), *[ctypes.byref(v) for v in vals], ctypes.byref(backend)))
        return (*[v.value for v in vals], _lib.BACKEND_NAMES[backend.value])  # type: ignore[return-value]

    @property
    def nnz(self) -> int:
        """Stored nonzeros after symmetric expansion and merging of repeats."""
        return self._info()[2]

    @property
    def workspace_bytes(self) -> int:
        """Workspace of the plan (device bytes for a CUDA plan, host bytes for a CPU plan)."""
        return self._info()[4]

    @property
    def backend(self) -> str:
        """"cpu" or "cuda"."""
        return self._info()[5]

    @property
    def tile_rows(self) -> int:
        """Spectrum rows computed per tile; assigning re-plans the workspace (0 = automatic)."""
        return self._info()[3]

    @tile_rows.setter
    def tile_rows(self, value: int) -> None:
        _lib.check(_lib.lib.spfft2d_set_tile_rows(self._live(), _lib._nonnegative_int(value, "tile_rows")))

    @property
    def method(self) -> str:
        """The method a whole spectrum in the plan's native memory is computed with ("direct",
        "direct_rows", "dense" or "pruned": what "auto" resolved to); assigning ("auto" too) re-plans."""
        m = ctypes.c_int()
        _lib.check(_lib.lib.spfft2d_get_method(self._live(), ctypes.byref(m)))
        return _METHOD_NAMES[m.value]

    @method.setter
    def method(self, value: str) -> None:
        if value not in _METHODS:
            raise ValueError(f"sfft: method must be one of {sorted(_METHODS)}, not {value!r}")
        _lib.check(_lib.lib.spfft2d_set_method(self._live(), _METHODS[value]))

    # ------------------------------------------------------------------ transforms
    def _output(self, out: Any, shape: Tuple[int, int]) -> _arrays.Output:
        dev = self.device_inputs if out is None else _arrays.is_device(out)
        return _arrays.Output(out, shape, self.dtype, dev)

    def execute(self, out: Any = None) -> Any:
        """The whole half spectrum, shape ``(rows, cols // 2 + 1)``. ``out``: an array of that shape and the
        plan's dtype, host or (with a CUDA plan) device memory; by default a new NumPy array, or a CuPy array
        when the plan was made from device arrays."""
        result = self._output(out, self.out_shape)
        _lib.check(_lib.lib.spfft2d_exec(self._live(), result.pointer))
        return result.result()

    def execute_rows(self, row0: int, nrows: int, out: Any = None) -> Any:
        """Spectrum rows ``[row0, row0 + nrows)``, shape ``(nrows, cols // 2 + 1)``; ``out`` as for
        :meth:`execute`."""
        row0 = _lib._nonnegative_int(row0, "row0")
        nrows = _lib._nonnegative_int(nrows, "nrows")
        result = self._output(out, (nrows, self.out_shape[1]))
        _lib.check(_lib.lib.spfft2d_exec_rows(self._live(), row0, nrows, result.pointer))
        return result.result()

    def execute_stream(self, callback: Callable[[int, np.ndarray], None]) -> None:
        """Streams the half spectrum block by block: ``callback(row0, block)`` receives consecutive rows
        ``row0 .. row0 + len(block) - 1`` as a read-only NumPy array valid only during the call (copy what
        you keep), every row exactly once, in no particular order; memory stays at the plan's workspace.
        An exception raised by the callback stops further deliveries and is raised here when the stream ends.
        """
        width = self.out_shape[1]
        failure: list = []

        def deliver(row0: int, nrows: int, rows: int, _user: Any) -> None:
            if failure:
                return
            try:
                buf = (ctypes.c_char * (nrows * width * self.dtype.itemsize)).from_address(rows)
                block = np.frombuffer(buf, dtype=self.dtype).reshape(nrows, width)
                block.flags.writeable = False
                callback(row0, block)
            except BaseException as e:  # noqa: B902 - re-raised below, after the C call returns
                failure.append(e)

        trampoline = _lib.ROWS_CALLBACK(deliver)
        status = _lib.lib.spfft2d_exec_stream(self._live(), trampoline, None)
        if failure:
            raise failure[0]
        _lib.check(status)

    def __repr__(self) -> str:
        if not self._handle:
            return "Spfft2dPlan(closed)"
        return f"Spfft2dPlan(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype.name}, backend={self.backend!r})"


def _coo(a: Any, shape: Optional[Tuple[int, int]]) -> Tuple[Any, Any, Any, int, int]:
    """(row, col, data or None, rows, cols) from a sparse matrix or a COO tuple."""
    if hasattr(a, "tocoo") and hasattr(a, "shape"):
        if shape is not None and tuple(shape) != tuple(a.shape):
            raise ValueError(f"sfft: shape {tuple(shape)} differs from the matrix's {tuple(a.shape)}")
        if len(a.shape) != 2:
            raise ValueError(f"sfft: the sparse matrix must be 2-D, not shape {a.shape}")
        coo = a.tocoo()
        if np.dtype(coo.dtype).kind == "c":
            raise TypeError("sfft: spfft2d takes real matrices, not complex ones")
        return coo.row, coo.col, coo.data, int(a.shape[0]), int(a.shape[1])
    if not isinstance(a, tuple) or len(a) != 2:
        raise TypeError("sfft: give a sparse matrix, (row, col), (data, (row, col)) or a Matrix Market path")
    if shape is None:
        raise ValueError("sfft: shape=(rows, cols) is required with COO arrays")
    if len(shape) != 2:
        raise ValueError(f"sfft: shape must be (rows, cols), not {shape!r}")
    rows, cols = (_lib._nonnegative_int(v, "shape") for v in shape)
    if isinstance(a[1], tuple) and len(a[1]) == 2 and all(np.ndim(v) == 1 for v in a[1]):
        data, (row, col) = a
        return row, col, data, rows, cols
    row, col = a
    return row, col, None, rows, cols


def spfft2d(a: Any, shape: Optional[Tuple[int, int]] = None, *, binary: bool = False, dtype: Any = np.complex128,
            out: Any = None, **kwargs: Any) -> Any:
    """``numpy.fft.rfft2`` of a sparse real matrix without forming the dense matrix: the half spectrum,
    shape ``(rows, cols // 2 + 1)``.

    ``a``, ``shape``, ``binary``, ``dtype`` and the keyword arguments are those of :class:`Spfft2dPlan`;
    ``out`` those of :meth:`Spfft2dPlan.execute`.

    Example
    -------
    >>> import scipy.sparse
    >>> m = scipy.sparse.random(300, 200, density=0.01, format="csr", random_state=1)
    >>> Y = spfft2d(m)                       # == numpy.fft.rfft2(m.toarray()) to rounding
    >>> Y = spfft2d(([0, 5], [3, 7]), shape=(64, 64))   # a 0/1 pattern
    """
    with Spfft2dPlan(a, shape, binary=binary, dtype=dtype, **kwargs) as plan:
        return plan.execute(out)
