# SPDX-License-Identifier: Apache-2.0
"""sfft: structured Fourier transforms on CPU (FFTW) and CUDA (cuFFT), NumPy-first.

* :func:`fftshift`, :func:`ifftshift` -- NumPy-exact shifts, any rank up to 8, any axes, in place via ``out=``.
* :func:`sparse_fft`, :class:`SparsePlan` -- the k largest coefficients of ``numpy.fft.fft(x)``;
  :class:`SparseReport` -- how far to trust them (``SparsePlan.report``).
* :func:`nufft3`, :func:`nufft1d3`, :func:`nufft2d3`, :func:`nufft3d3`, :class:`Plan` -- type-3 NUFFT in
  finufft's calling style.
* :func:`spfft2d`, :class:`Spfft2dPlan` -- ``numpy.fft.rfft2`` of a sparse matrix (COO arrays, SciPy sparse,
  Matrix Market files).

Host arrays are NumPy arrays (anything ``numpy.asarray`` takes); CUDA arrays (CuPy, or anything with
``__cuda_array_interface__`` or a CUDA DLPack device) are used in place on the GPU. Inputs of another dtype
or layout are converted (copied); outputs are checked. Library failures raise :class:`SfftError` subclasses
carrying ``sfft_last_error()``. Every call releases the GIL while the library runs.

The distribution is ``sfft-fourier``; the import name is ``sfft``. It binds the bundled ``libsfft.so.0``
through ctypes.
"""
from ._lib import (DeviceError, InternalError, InvalidArgumentError, NoDeviceError, OutOfMemoryError, SfftError,
                   UnsupportedError, build_info, lib as _clib)
from ._nufft3 import Plan, nufft1d3, nufft2d3, nufft3, nufft3d3
from ._shift import fftshift, ifftshift
from ._sparse import SparsePlan, SparseReport, sparse_fft
from ._spfft2d import Spfft2dPlan, spfft2d

__version__: str = _clib.sfft_version_string().decode()

__all__ = ["fftshift", "ifftshift", "sparse_fft", "SparsePlan", "SparseReport", "nufft3", "nufft1d3", "nufft2d3", "nufft3d3", "Plan",
           "spfft2d", "Spfft2dPlan", "build_info", "SfftError", "InvalidArgumentError", "UnsupportedError",
           "OutOfMemoryError", "NoDeviceError", "DeviceError", "InternalError", "__version__"]
