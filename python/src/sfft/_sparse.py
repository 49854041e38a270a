# SPDX-License-Identifier: Apache-2.0
"""Sparse FFT: the k largest DFT coefficients (sfft_create_ex / sfft_exec / sfft_exec_batch / sfft_get_report /
sfft_destroy)."""
from __future__ import annotations

import ctypes
import operator
from typing import Any, NamedTuple, Tuple

import numpy as np

from . import _arrays, _lib

__all__ = ["SparsePlan", "SparseReport", "sparse_fft"]

_VARIANTS = {"auto": 0, "robust": 1, "exact": 2}
_CODES = {np.dtype(np.complex64): _lib.COMPLEX64, np.dtype(np.complex128): _lib.COMPLEX128}

# sfft_exec_batch(plan, batch, x, x_dist, freqs, values, out_dist, counts)
_exec_batch = _lib.lib.sfft_exec_batch
_exec_batch.restype = _lib._status
_exec_batch.argtypes = [_lib._vp, _lib._u64, _lib._vp, _lib._u64, _lib._u64p, _lib._vp, _lib._u64, _lib._u64p]



class _Report(ctypes.Structure):
    """sfft_report (include/sfft/sfft.h)."""
    _fields_ = [("struct_size", _lib._size_t), ("variant", _lib._int), ("unexplained", _lib._int),
                ("count", ctypes.c_uint64), ("significant", ctypes.c_uint64),
                ("unexplained_buckets", ctypes.c_uint64), ("explained", ctypes.c_double),
                ("signal_energy", ctypes.c_double), ("noise_floor", ctypes.c_double), ("excess", ctypes.c_double)]


# sfft_get_report(plan, signal, report)
_get_report = _lib.lib.sfft_get_report
_get_report.restype = _lib._status
_get_report.argtypes = [_lib._vp, _lib._u64, ctypes.POINTER(_Report)]


class SparseReport(NamedTuple):
    """What an exec found out about its own answer (``sfft_report``; docs/sparse-noise.md).

    variant: "exact" or "robust" (the stage whose result was returned); unexplained: energy is left that
    neither the coefficients nor the noise floor explain (missed or colliding coefficients, k too small, pure
    noise: the answer is not a full FFT's top-k); count: coefficients returned; significant: of them, those
    above the noise; unexplained_buckets: residual buckets per loop above the noise (~ coefficients missed);
    explained: fraction of the signal energy the coefficients explain; signal_energy: sum |X[f]|^2;
    noise_floor: noise energy per bin E|N[f]|^2; excess: residual energy / what the noise accounts for. The
    energies are NaN where the plan measures none (CUDA EXACT peeling).
    """
    variant: str
    unexplained: bool
    count: int
    significant: int
    unexplained_buckets: int
    explained: float
    signal_energy: float
    noise_floor: float
    excess: float


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

    def report_of(self, signal: int = 0) -> SparseReport:
        """The report of signal ``signal`` of the last :meth:`execute_batch` (0: the last :meth:`execute`).

        Raises InvalidArgumentError before any execution, or for a signal beyond the last batch.
        """
        r = _Report()
        r.struct_size = ctypes.sizeof(r)
        _lib.check(_get_report(self._live(), _lib._nonnegative_int(signal, "signal"), ctypes.byref(r)))
        return SparseReport("exact" if r.variant == _VARIANTS["exact"] else "robust", bool(r.unexplained),
                            int(r.count), int(r.significant), int(r.unexplained_buckets), r.explained,
                            r.signal_energy, r.noise_floor, r.excess)

    @property
    def report(self) -> SparseReport:
        """The report of the last :meth:`execute` (signal 0 of the last :meth:`execute_batch`)."""
        return self.report_of(0)

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

    def execute_batch(self, x: Any) -> Tuple[Any, Any, Any]:
        """:meth:`execute` on every row of ``x`` in one call (``sfft_exec_batch``).

        Each row's result is the one :meth:`execute` gives for it (values up to rounding, see
        ``sfft_exec_batch`` in include/sfft/sfft.h). A CUDA plan runs the rows in the same kernels (EXACT
        and AUTO); a CPU plan runs them on threads. The first call with a larger batch than before allocates
        the plan's batch workspace.

        Parameters
        ----------
        x : array_like or CUDA array
            Shape (batch, n), batch >= 1, converted to the plan's dtype (copied if not C-contiguous or of
            another dtype). Device arrays stay on the GPU.

        Returns
        -------
        freqs : int64 array, shape (batch, k)
            Row i: its frequencies by decreasing ``|X|`` in ``freqs[i, :counts[i]]``, -1 after them.
        values : complex array, shape (batch, k)
            ``X[freqs]`` of each row in the plan's dtype, 0 after ``counts[i]``.
        counts : int64 array, shape (batch,)
            Coefficients found per row (host memory). freqs and values are NumPy arrays for host ``x``,
            CuPy arrays for device ``x``.
        """
        dev = _arrays.is_device(x)
        arr = _arrays.input_array(x, self.dtype, "x", dev, ndim=2)
        batch, n = arr.shape
        if n != self.n:
            raise ValueError(f"sfft: each row of x has {n} samples, the plan's n is {self.n}")
        if batch == 0:
            raise ValueError("sfft: x holds no signal (batch 0)")
        xp = _arrays.namespace(dev)
        freqs = xp.empty((batch, self.k), dtype=np.uint64)
        values = xp.empty((batch, self.k), dtype=self.dtype)
        counts = np.full(batch, self.k, dtype=np.uint64)
        _lib.check(_exec_batch(self._live(), batch, _arrays.pointer(arr), self.n,
                               ctypes.cast(_arrays.pointer(freqs), _lib._u64p), _arrays.pointer(values), self.k,
                               counts.ctypes.data_as(_lib._u64p)))
        # Entries past a row's count are unspecified after the call: pad them (-1, 0).
        unused = xp.arange(self.k)[None, :] >= xp.asarray(counts.astype(np.int64))[:, None]
        freqs = freqs.view(np.int64)
        freqs[unused] = -1
        values[unused] = 0
        return freqs, values, counts.astype(np.int64)

    def __repr__(self) -> str:
        return f"SparsePlan(n={self.n}, k={self.k}, dtype={self.dtype.name})"


def sparse_fft(x: Any, k: int, **kwargs: Any) -> Tuple[Any, ...]:
    """The ``k`` largest coefficients of ``numpy.fft.fft(x)``, computed by a sparse FFT.

    Creates a :class:`SparsePlan` for ``len(x)`` and ``k`` (keyword arguments go to it; ``dtype`` defaults to
    complex64 for float32/complex64 input, else complex128) and runs it once. For repeated transforms of the
    same length, keep a SparsePlan: planning costs more than a call. A 2-D ``x`` of shape (batch, n) is a
    batch of signals, one per row, transformed in one call (:meth:`SparsePlan.execute_batch`).

    Returns
    -------
    (freqs, values)
        1-D ``x``: int64 frequencies in [0, n) by decreasing magnitude, and the coefficients ``X[freqs]``.
    (freqs, values, counts)
        2-D ``x``: per row, as :meth:`SparsePlan.execute_batch` (arrays of shape (batch, k) padded with -1
        and 0 after each row's count).

    Example
    -------
    >>> n = 1 << 16
    >>> x = np.exp(2j * np.pi * 123 * np.arange(n) / n)
    >>> freqs, values = sparse_fft(x, k=1)   # freqs == [123], values ~= [n]
    """
    dev = _arrays.is_device(x)
    arr = _arrays.as_array(x, dev)
    if arr.ndim not in (1, 2):
        raise ValueError(f"sfft: x must be 1-D (a signal) or 2-D (a batch of rows), not shape {arr.shape}")
    kwargs.setdefault("dtype", complex_dtype_of(arr))
    with SparsePlan(arr.shape[-1], k, **kwargs) as plan:
        return plan.execute(arr) if arr.ndim == 1 else plan.execute_batch(arr)
