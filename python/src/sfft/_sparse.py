# SPDX-License-Identifier: Apache-2.0
"""Sparse FFT: the k largest DFT coefficients (sfft_create_ex / sfft_exec / sfft_destroy)."""
from __future__ import annotations

import ctypes
import operator
from typing import Any, Tuple

import numpy as np

from . import _arrays, _lib

__all__ = ["SparsePlan", "sparse_fft"]

_VARIANTS = {"auto": 0, "robust": 1, "exact": 2}
_CODES = {np.dtype(np.complex64): _lib.COMPLEX64, np.dtype(np.complex128): _lib.COMPLEX128}


def complex_dtype(dtype: Any, what: str) -> np.dtype:
    """complex64 or complex128 from a dtype-like; ValueError for anything else."""
    dt = np.dtype(dtype)
    if dt not in _CODES:
        raise ValueError(f"sfft: {what} dtype must be complex64 or complex128, not {dt}")
    return dt


def complex_dtype_of(a: Any) -> np.dtype:
    """complex64 for single-precision input (float32, complex64), complex128 otherwise."""
    dt = getattr(a, "dtype", None)
    single = dt is not None and np.dtype(dt) in (np.dtype(np.float32), np.dtype(np.complex64))
    return np.dtype(np.complex64 if single else np.complex128)


class SparsePlan(_lib.PlanHandle):
    """A sparse-FFT plan for length ``n`` returning up to ``k`` coefficients, for repeated calls.

    All filter design, FFT planning and workspace allocation happen here; :meth:`execute` allocates only
    its outputs. The transform is the unnormalised forward DFT ``X[f] = sum_t x[t] exp(-2j pi f t / n)``
    (numpy.fft.fft's convention); the plan finds the k largest ``|X[f]|`` in time sublinear in n when X is
    k-sparse. Randomised by ``seed``: a plan gives the same result on every call.

    Parameters
    ----------
    n : int
        Signal length: a power of two in [16, 2**40], or an even n < 2**32 with an even divisor in
        [bucket_factor * k, n/2] (the library's message says why a length is refused).
    k : int
        Coefficients wanted, 1 <= k <= n/4.
    dtype : complex64 or complex128
        Precision of the plan; inputs are converted to it.
    variant : {"auto", "robust", "exact"}
        "exact" (peeling, for exactly sparse spectra), "robust" (voting and median estimates, tolerates
        noise), "auto" (exact first, robust when exact leaves energy unexplained).
    filter_tolerance, bucket_factor, location_loops, estimation_loops, bits_per_stage, min_votes,
    comb_loops, comb_width, comb_keep
        The algorithm knobs of ``sfft_sparse_options`` (0 = the default for the variant and precision);
        see include/sfft/sfft.h for their meaning and ranges.
    seed : int
        Seed of the random spectral permutations.
    backend, device, stream, nthreads
        ``"auto"`` (CUDA when a GPU is usable, else CPU), ``"cpu"`` or ``"cuda"``; CUDA device ordinal;
        CUDA stream of a CUDA plan; CPU threads (0 = all).

    Raises
    ------
    InvalidArgumentError
        For an unsupported n, k or knob, with the library's explanation.
    """

    _destroy = _lib.lib.sfft_destroy

    def __init__(self, n: int, k: int, dtype: Any = np.complex128, *, variant: str = "auto",
                 filter_tolerance: float = 0.0, bucket_factor: float = 0.0, location_loops: int = 0,
                 estimation_loops: int = 0, bits_per_stage: int = 0, min_votes: int = 0, comb_loops: int = 0,
                 comb_width: int = 0, comb_keep: int = 0, seed: int = 0, backend: str = "auto",
                 device: int = 0, stream: Any = None, nthreads: int = 0) -> None:
        self._handle = ctypes.c_void_p()
        self.n = _lib._nonnegative_int(n, "n")
        self.k = _lib._nonnegative_int(k, "k")
        self.dtype = complex_dtype(dtype, "SparsePlan")
        if variant not in _VARIANTS:
            raise ValueError(f"sfft: variant must be one of {sorted(_VARIANTS)}, not {variant!r}")
        knobs = _lib.SparseOptions()
        _lib.lib.sfft_sparse_options_init_sized(ctypes.byref(knobs), ctypes.sizeof(knobs))
        knobs.variant = _VARIANTS[variant]
        knobs.filter_tolerance = float(filter_tolerance)
        knobs.bucket_factor = float(bucket_factor)
        knobs.location_loops = operator.index(location_loops)
        knobs.estimation_loops = operator.index(estimation_loops)
        knobs.bits_per_stage = operator.index(bits_per_stage)
        knobs.min_votes = operator.index(min_votes)
        knobs.comb_loops = operator.index(comb_loops)
        knobs.comb_width = _lib._nonnegative_int(comb_width, "comb_width")
        knobs.comb_keep = _lib._nonnegative_int(comb_keep, "comb_keep")
        opts = _lib.make_options(backend, device, stream, nthreads, seed)
        _lib.check(_lib.lib.sfft_create_ex(ctypes.byref(self._handle), self.n, self.k, _CODES[self.dtype],
                                           ctypes.byref(opts), ctypes.byref(knobs)))

    def execute(self, x: Any) -> Tuple[Any, Any]:
        """The k (or fewer) largest coefficients of the DFT of ``x``.

        Parameters
        ----------
        x : array_like or CUDA array
            n samples (1-D), converted to the plan's dtype (copied if non-contiguous or of another dtype).
            Device arrays stay on the GPU (a CUDA plan reads them directly; a CPU plan refuses them).

        Returns
        -------
        freqs : int64 array
            Frequencies in [0, n), ordered by decreasing ``|X|``.
        values : complex array
            ``X[freqs]`` in the plan's dtype. Both are NumPy arrays for host ``x``, CuPy arrays for device ``x``.
        """
        dev = _arrays.is_device(x)
        arr = _arrays.input_array(x, self.dtype, "x", dev, ndim=1)
        if arr.shape[0] != self.n:
            raise ValueError(f"sfft: x has {arr.shape[0]} samples, the plan's n is {self.n}")
        xp = _arrays.namespace(dev)
        freqs = xp.empty(self.k, dtype=np.uint64)
        values = xp.empty(self.k, dtype=self.dtype)
        count = ctypes.c_uint64(self.k)
        _lib.check(_lib.lib.sfft_exec(self._live(), _arrays.pointer(arr),
                                      ctypes.cast(_arrays.pointer(freqs), ctypes.POINTER(ctypes.c_uint64)),
                                      _arrays.pointer(values), ctypes.byref(count)))
        found = count.value
        return freqs[:found].view(np.int64), values[:found]

    __call__ = execute

    def __repr__(self) -> str:
        return f"SparsePlan(n={self.n}, k={self.k}, dtype={self.dtype.name})"


def sparse_fft(x: Any, k: int, **kwargs: Any) -> Tuple[Any, Any]:
    """The ``k`` largest coefficients of ``numpy.fft.fft(x)``, computed by a sparse FFT.

    Creates a :class:`SparsePlan` for ``len(x)`` and ``k`` (keyword arguments go to it; ``dtype`` defaults to
    complex64 for float32/complex64 input, else complex128) and runs it once. For repeated transforms of the
    same length, keep a SparsePlan: planning costs more than a call.

    Returns
    -------
    (freqs, values)
        int64 frequencies in [0, n) by decreasing magnitude, and the coefficients ``X[freqs]``.

    Example
    -------
    >>> n = 1 << 16
    >>> x = np.exp(2j * np.pi * 123 * np.arange(n) / n)
    >>> freqs, values = sparse_fft(x, k=1)   # freqs == [123], values ~= [n]
    """
    dev = _arrays.is_device(x)
    arr = _arrays.as_array(x, dev)
    if arr.ndim != 1:
        raise ValueError(f"sfft: x must be 1-D, not shape {arr.shape}")
    kwargs.setdefault("dtype", complex_dtype_of(arr))
    with SparsePlan(arr.shape[0], k, **kwargs) as plan:
        return plan.execute(arr)
