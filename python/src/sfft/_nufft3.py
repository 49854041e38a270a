# SPDX-License-Identifier: Apache-2.0
"""Type-3 NUFFT (nufft3_create / nufft3_set_options / nufft3_setpts / nufft3_exec / nufft3_destroy), in the
shape of finufft's Python interface: ``Plan(3, dim, ...)``, ``setpts``, ``execute``, and one-shot calls."""
from __future__ import annotations

import ctypes
import operator
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays, _lib
from ._sparse import complex_dtype, complex_dtype_of

__all__ = ["Plan", "nufft3", "nufft1d3", "nufft2d3", "nufft3d3"]

_KERNELS = {"es": 0, "gaussian": 1, "pswf": 2}
_CODES = {np.dtype(np.complex64): _lib.COMPLEX64, np.dtype(np.complex128): _lib.COMPLEX128}
_REAL = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}

Points = Union[Any, Sequence[Any]]


class Plan(_lib.PlanHandle):
    """A type-3 NUFFT plan: ``F[k] = sum_j c[j] exp(isign * 1j * (x[j] s[k] + y[j] t[k] + z[j] u[k]))`` in
    1, 2 or 3 dimensions, to relative l2 tolerance ``eps``; the same transform and call sequence as
    ``finufft.Plan(3, dim, ...)``.

    Parameters
    ----------
    nufft_type : int
        Must be 3 (the only type sfft computes; kept first for finufft compatibility).
    n_modes_or_dim : int
        The dimension, 1, 2 or 3.
    n_trans : int
        Strength vectors transformed per :meth:`execute` (batch), >= 1.
    eps : float
        Relative l2 tolerance: [1e-14, 1) for complex128, [1e-6, 1) for complex64.
    isign : int, optional
        Sign of the exponent, +1 or -1; default +1 (finufft's default for type 3).
    dtype : complex64 or complex128
        Precision; coordinates are float32 resp. float64 and are converted to it.
    kernel : {"es", "pswf", "gaussian"}
        Spreading kernel: FINUFFT's "exponential of semicircle" (default), the prolate spheroidal wave
        function (FINUFFT 2.5's kernel; often one width narrower at the same eps) or the Gaussian scheme, whose
        smallest reachable eps is larger (see the header).
    upsampfac : float
        Grid oversampling; 0 = automatic.
    maxbatchsize : int
        Transforms spread, transformed and interpolated together, i.e. grids the plan holds at once; 0 =
        automatic (all ``n_trans``, or as many as fit in memory), as finufft's ``maxbatchsize``.
    backend, device, stream, nthreads
        ``"auto"`` (CUDA when the coordinates given to :meth:`setpts` are device arrays), ``"cpu"`` or
        ``"cuda"``; CUDA device ordinal; the CUDA stream the plan runs on (default: the default stream; pass
        ``cupy.cuda.get_current_stream()`` to order it with CuPy's work on another stream); CPU threads (0 = all).
    """

    _destroy = _lib.lib.nufft3_destroy

    def __init__(self, nufft_type: int, n_modes_or_dim: int, n_trans: int = 1, eps: float = 1e-6,
                 isign: Optional[int] = None, dtype: Any = np.complex128, *, kernel: str = "es",
                 upsampfac: float = 0.0, maxbatchsize: int = 0, backend: str = "auto", device: int = 0,
                 stream: Any = None, nthreads: int = 0) -> None:
        self._handle = ctypes.c_void_p()
        if operator.index(nufft_type) != 3:
            raise ValueError(f"sfft: only type-3 NUFFTs are provided, not type {nufft_type}")
        self.dim = operator.index(n_modes_or_dim)
        self.n_trans = operator.index(n_trans)
        self.dtype = complex_dtype(dtype, "Plan")
        self.isign = 1 if isign is None else operator.index(isign)
        if kernel not in _KERNELS:
            raise ValueError(f"sfft: kernel must be one of {sorted(_KERNELS)}, not {kernel!r}")
        self._n_sources: Optional[int] = None
        self._n_targets = 0
        opts = _lib.make_options(backend, device, stream, nthreads)
        _lib.check(_lib.lib.nufft3_create(ctypes.byref(self._handle), self.dim, _CODES[self.dtype], self.isign,
                                          float(eps), ctypes.byref(opts)))
        nopts = _lib.Nufft3Options()
        _lib.lib.nufft3_options_init_sized(ctypes.byref(nopts), ctypes.sizeof(nopts))
        nopts.ntransf = self.n_trans
        nopts.kernel = _KERNELS[kernel]
        nopts.upsampfac = float(upsampfac)
        nopts.maxbatchsize = operator.index(maxbatchsize)
        try:
            _lib.check(_lib.lib.nufft3_set_options(self._handle, ctypes.byref(nopts)))
        except _lib.SfftError:
            self.close()
            raise

    def setpts(self, x: Any = None, y: Any = None, z: Any = None, s: Any = None, t: Any = None,
               u: Any = None) -> None:
        """Sets the N source points (x, y, z) and K target frequencies (s, t, u): 1-D real arrays, the first
        ``dim`` of each triple required, the rest None. Coordinates must be finite (InvalidArgumentError
        naming the first bad one otherwise). The plan copies what it needs; call again to reuse the plan with
        new points. All arrays host, or all CUDA device arrays."""
        src = [("x", x), ("y", y), ("z", z)]
        tgt = [("s", s), ("t", t), ("u", u)]
        for name, a in src[self.dim:] + tgt[self.dim:]:
            if a is not None:
                raise ValueError(f"sfft: {name} given to a {self.dim}-D plan")
        for name, a in src[:self.dim] + tgt[:self.dim]:
            if a is None:
                raise ValueError(f"sfft: a {self.dim}-D plan needs {name}")
        dev = _arrays.same_kind(src + tgt)
        real = _REAL[self.dtype]
        xs = [_arrays.input_array(a, real, n, dev, ndim=1) for n, a in src[:self.dim]]
        ss = [_arrays.input_array(a, real, n, dev, ndim=1) for n, a in tgt[:self.dim]]
        for names, arrays in (("xyz", xs), ("stu", ss)):
            for name, a in zip(names[1:], arrays[1:]):
                if a.shape[0] != arrays[0].shape[0]:
                    raise ValueError(f"sfft: {name} has {a.shape[0]} points, {names[0]} has {arrays[0].shape[0]}")
        n_src, n_tgt = xs[0].shape[0], ss[0].shape[0]
        ptr = [_arrays.pointer(a) for a in xs] + [None] * (3 - self.dim)
        tptr = [_arrays.pointer(a) for a in ss] + [None] * (3 - self.dim)
        _lib.check(_lib.lib.nufft3_setpts(self._live(), n_src, *ptr, n_tgt, *tptr))
        self._n_sources, self._n_targets = n_src, n_tgt

    def execute(self, data: Any, out: Any = None) -> Any:
        """Transforms strengths ``data``: shape (N,) when n_trans == 1, or (n_trans, N); converted to the plan's
        dtype. Returns the (K,) or (n_trans, K) outputs (``out`` when given: that shape, the plan's dtype,
        the memory kind of ``data``). Host arrays run on a CPU plan or are staged through the GPU by a CUDA
        plan; device arrays need a CUDA plan. A NaN or infinite strength makes the outputs NaN."""
        if self._n_sources is None:
            raise ValueError("sfft: call setpts before execute")
        dev = _arrays.is_device(data)
        arr = _arrays.input_array(data, self.dtype, "data", dev)
        n, k = self._n_sources, self._n_targets
        if arr.shape == (self.n_trans, n):
            shape: Tuple[int, ...] = (self.n_trans, k)
        elif arr.shape == (n,) and self.n_trans == 1:
            shape = (k,)
        else:
            want = f"({n},) or (1, {n})" if self.n_trans == 1 else f"({self.n_trans}, {n})"
            raise ValueError(f"sfft: data has shape {arr.shape}, expected {want}")
        result = _arrays.Output(out, shape, self.dtype, dev)
        arr = result.separate(arr)
        _lib.check(_lib.lib.nufft3_exec(self._live(), _arrays.pointer(arr), result.pointer))
        return result.result()

    def __repr__(self) -> str:
        return f"Plan(3, {self.dim}, n_trans={self.n_trans}, isign={self.isign}, dtype={self.dtype.name})"


def _as_tuple(points: Points) -> Tuple[Any, ...]:
    return points if isinstance(points, tuple) else (points,)


def nufft3(x: Points, c: Any, s: Points, out: Any = None, eps: float = 1e-6, isign: int = 1,
           **kwargs: Any) -> Any:
    """One type-3 NUFFT: ``F[k] = sum_j c[j] exp(isign * 1j * (x[j] s[k] + ...))``.

    Parameters
    ----------
    x : array or tuple of arrays
        Source coordinates: one 1-D array (1-D transform) or a tuple ``(x, y)`` / ``(x, y, z)``.
    c : array
        Strengths, shape (N,) or (n_trans, N). Its precision picks the plan's (complex64 for
        float32/complex64, else complex128) unless ``dtype=`` is given.
    s : array or tuple of arrays
        Target frequencies, as many arrays as ``x``.
    out, eps, isign
        As for :meth:`Plan.execute` and :class:`Plan`; further keyword arguments (``kernel``, ``upsampfac``,
        ``backend``, ``nthreads``, ...) go to :class:`Plan`.

    Example
    -------
    >>> F = nufft3(x, c, s, eps=1e-9)            # 1-D
    >>> F = nufft3((x, y), c, (s, t), isign=-1)  # 2-D
    """
    xs, ss = _as_tuple(x), _as_tuple(s)
    if len(xs) != len(ss) or not 1 <= len(xs) <= 3:
        raise ValueError(f"sfft: {len(xs)} source and {len(ss)} target coordinate arrays; give 1, 2 or 3 of each")
    dev = _arrays.is_device(c)
    arr = _arrays.as_array(c, dev)
    n_trans = arr.shape[0] if arr.ndim == 2 else 1
    kwargs.setdefault("dtype", complex_dtype_of(arr))
    kwargs.setdefault("stream", _arrays.default_stream(None, dev))
    with Plan(3, len(xs), n_trans, eps, isign, **kwargs) as plan:
        plan.setpts(*xs, *([None] * (3 - len(xs))), *ss)
        return plan.execute(arr, out)


def nufft1d3(x: Any, c: Any, s: Any, out: Any = None, eps: float = 1e-6, isign: int = 1, **kwargs: Any) -> Any:
    """finufft.nufft1d3's signature: a 1-D type-3 NUFFT (see :func:`nufft3`)."""
    return nufft3(x, c, s, out, eps, isign, **kwargs)


def nufft2d3(x: Any, y: Any, c: Any, s: Any, t: Any, out: Any = None, eps: float = 1e-6, isign: int = 1,
             **kwargs: Any) -> Any:
    """finufft.nufft2d3's signature: a 2-D type-3 NUFFT (see :func:`nufft3`)."""
    return nufft3((x, y), c, (s, t), out, eps, isign, **kwargs)


def nufft3d3(x: Any, y: Any, z: Any, c: Any, s: Any, t: Any, u: Any, out: Any = None, eps: float = 1e-6,
             isign: int = 1, **kwargs: Any) -> Any:
    """finufft.nufft3d3's signature: a 3-D type-3 NUFFT (see :func:`nufft3`)."""
    return nufft3((x, y, z), c, (s, t, u), out, eps, isign, **kwargs)
