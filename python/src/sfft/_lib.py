# SPDX-License-Identifier: Apache-2.0
"""ctypes binding of libsfft.so.0: the C structs and signatures of include/sfft/sfft.h, status checking,
and the option structs filled by the library's ``*_init_sized`` functions.

ctypes.CDLL releases the GIL for the duration of every foreign call, so transforms run while other Python
threads keep going; a plan is used by one thread at a time (the library refuses a second concurrent call).
"""
from __future__ import annotations

import ctypes
import operator
import os
from typing import Any, Dict, Optional, TypeVar

__all__ = ["lib", "check", "SfftError", "InvalidArgumentError", "UnsupportedError", "OutOfMemoryError",
           "NoDeviceError", "DeviceError", "InternalError", "make_options", "build_info",
           "FLOAT32", "FLOAT64", "COMPLEX64", "COMPLEX128"]

# sfft_dtype
FLOAT32, FLOAT64, COMPLEX64, COMPLEX128 = 1, 2, 3, 4
# sfft_backend
_BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
BACKEND_NAMES = {v: k for k, v in _BACKENDS.items()}
_FAMILIES = {1: "shift", 2: "sparse", 4: "nufft3", 8: "spfft2d"}

_size_t = ctypes.c_size_t
_u64 = ctypes.c_uint64
_i64p = ctypes.POINTER(ctypes.c_int64)
_u64p = ctypes.POINTER(ctypes.c_uint64)
_vp = ctypes.c_void_p
_int = ctypes.c_int
_status = ctypes.c_int


class Options(ctypes.Structure):
    """sfft_options."""
    _fields_ = [("struct_size", _size_t), ("backend", _int), ("device", _int), ("stream", _vp),
                ("threads", _int), ("seed", _u64)]


class SparseOptions(ctypes.Structure):
    """sfft_sparse_options."""
    _fields_ = [("struct_size", _size_t), ("variant", _int), ("filter_tolerance", ctypes.c_double),
                ("bucket_factor", ctypes.c_double), ("location_loops", _int), ("estimation_loops", _int),
                ("bits_per_stage", _int), ("min_votes", _int), ("comb_loops", _int), ("comb_width", _u64),
                ("comb_keep", _u64)]


class Nufft3Options(ctypes.Structure):
    """nufft3_options."""
    _fields_ = [("struct_size", _size_t), ("ntransf", _int), ("kernel", _int), ("upsampfac", ctypes.c_double),
                ("maxbatchsize", _int)]


class BuildInfo(ctypes.Structure):
    """sfft_build_info."""
    _fields_ = [("struct_size", _size_t), ("version", _int), ("families", ctypes.c_uint32),
                ("cuda_compiled", _int), ("cuda_loaded", _int), ("cuda_device_count", _int),
                ("cuda_runtime_version", _int), ("cuda_driver_version", _int), ("cufft_version", _int),
                ("cuda_architectures", ctypes.c_char * 64), ("fft_library", ctypes.c_char * 64),
                ("cuda_unavailable", ctypes.c_char * 256)]


# spfft2d_rows_callback
ROWS_CALLBACK = ctypes.CFUNCTYPE(None, _u64, _u64, _vp, _vp)

_SIGNATURES = {
    "sfft_options_init_sized": (None, [ctypes.POINTER(Options), _size_t]),
    "sfft_sparse_options_init_sized": (None, [ctypes.POINTER(SparseOptions), _size_t]),
    "nufft3_options_init_sized": (None, [ctypes.POINTER(Nufft3Options), _size_t]),
    "sfft_get_build_info": (_status, [ctypes.POINTER(BuildInfo), _size_t]),
    "sfft_status_string": (ctypes.c_char_p, [_status]),
    "sfft_last_error": (ctypes.c_char_p, []),
    "sfft_version_string": (ctypes.c_char_p, []),
    "sfft_version": (_int, []),
    "sfft_cuda_device_count": (_int, []),
    "fftshift_nd": (_status, [_vp, _vp, _int, _i64p, ctypes.c_uint32, _int, ctypes.POINTER(Options)]),
    "ifftshift_nd": (_status, [_vp, _vp, _int, _i64p, ctypes.c_uint32, _int, ctypes.POINTER(Options)]),
    "nufft3_create": (_status, [ctypes.POINTER(_vp), _int, _int, _int, ctypes.c_double, ctypes.POINTER(Options)]),
    "nufft3_set_options": (_status, [_vp, ctypes.POINTER(Nufft3Options)]),
    "nufft3_setpts": (_status, [_vp, _u64, _vp, _vp, _vp, _u64, _vp, _vp, _vp]),
    "nufft3_exec": (_status, [_vp, _vp, _vp]),
    "nufft3_destroy": (_status, [_vp]),
    "spfft2d_create": (_status, [ctypes.POINTER(_vp), _u64, _u64, _u64, _vp, _vp, _vp, _int,
                                 ctypes.POINTER(Options)]),
    "spfft2d_create_from_mtx": (_status, [ctypes.POINTER(_vp), ctypes.c_char_p, _int, _int, ctypes.POINTER(Options)]),
    "spfft2d_exec": (_status, [_vp, _vp]),
    "spfft2d_exec_rows": (_status, [_vp, _u64, _u64, _vp]),
    "spfft2d_exec_stream": (_status, [_vp, ROWS_CALLBACK, _vp]),
    "spfft2d_set_tile_rows": (_status, [_vp, _u64]),
    "spfft2d_set_method": (_status, [_vp, _int]),
    "spfft2d_get_method": (_status, [_vp, ctypes.POINTER(_int)]),
    "spfft2d_get_info": (_status, [_vp, _u64p, _u64p, _u64p, _u64p, _u64p, ctypes.POINTER(_int)]),
    "spfft2d_destroy": (_status, [_vp]),
    "sfft_create_ex": (_status, [ctypes.POINTER(_vp), _u64, _u64, _int, ctypes.POINTER(Options),
                                 ctypes.POINTER(SparseOptions)]),
    "sfft_exec": (_status, [_vp, _vp, _u64p, _vp, _u64p]),
    "sfft_destroy": (_status, [_vp]),
}


def _load() -> ctypes.CDLL:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libsfft.so.0")
    if not os.path.exists(path):
        raise ImportError(f"sfft: the bundled library {path} is missing; install the package with "
                          "`pip install ./python` from an sfft checkout")
    # CDLL (not PyDLL): the GIL is released during each call. RTLD_LOCAL keeps sfft's symbols private.
    handle = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(handle, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return handle


lib = _load()


_Plan = TypeVar("_Plan", bound="PlanHandle")


class PlanHandle:
    """The lifetime of one library plan, shared by the plan classes: ``close()``, ``with`` blocks, and the plan
    freed when the object is garbage-collected. Each subclass sets ``_destroy`` to its family's destroy
    function (a class attribute, so it outlives module teardown at interpreter exit)."""

    _destroy: Any
    _handle: ctypes.c_void_p

    def _live(self) -> ctypes.c_void_p:
        if not self._handle:
            raise ValueError("sfft: the plan was closed")
        return self._handle

    def close(self) -> None:
        """Frees the plan (also done when the object is garbage-collected). Calling it again is harmless."""
        handle = getattr(self, "_handle", None)
        if handle:
            self._handle = ctypes.c_void_p()
            check(type(self)._destroy(handle))

    def __enter__(self: _Plan) -> _Plan:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            type(self)._destroy(handle)


class SfftError(Exception):
    """A call into libsfft failed. ``status`` is the sfft_status code, ``status_name`` its name
    (e.g. ``"SFFT_ERROR_INVALID_ARGUMENT"``) and ``message`` the library's ``sfft_last_error()`` text."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.status_name = lib.sfft_status_string(status).decode().split(":", 1)[0]
        self.message = message
        super().__init__(f"{message} [{self.status_name}]")


class InvalidArgumentError(SfftError, ValueError):
    """SFFT_ERROR_INVALID_ARGUMENT: a bad size, shape, value (NaN, out of range) or pointer."""


class UnsupportedError(SfftError, NotImplementedError):
    """SFFT_ERROR_UNSUPPORTED: a valid request this build or backend cannot serve."""


class OutOfMemoryError(SfftError, MemoryError):
    """SFFT_ERROR_OUT_OF_MEMORY: a host or device allocation failed (the message gives the size)."""


class NoDeviceError(SfftError, RuntimeError):
    """SFFT_ERROR_NO_DEVICE: the CUDA backend was asked for but no usable GPU (or CUDA library) exists."""


class DeviceError(SfftError, RuntimeError):
    """SFFT_ERROR_DEVICE: a CUDA or cuFFT call failed."""


class InternalError(SfftError, RuntimeError):
    """SFFT_ERROR_INTERNAL: a bug in sfft; please report it with the message."""


_ERRORS = {1: InvalidArgumentError, 2: UnsupportedError, 3: OutOfMemoryError, 4: NoDeviceError, 5: DeviceError,
           6: InternalError}


def check(status: int) -> None:
    """Raises the SfftError subclass of a failed status, carrying this thread's sfft_last_error()."""
    if status != 0:
        raise _ERRORS.get(status, SfftError)(status, lib.sfft_last_error().decode(errors="replace"))


def _nonnegative_int(value: Any, name: str) -> int:
    v = operator.index(value)
    if v < 0:
        raise ValueError(f"{name} = {v} must be >= 0")
    return v


def stream_pointer(stream: Any) -> Optional[int]:
    """A cudaStream_t as an integer from None, an int, or a stream object with a ``ptr`` attribute
    (cupy.cuda.Stream) or a ``cuda_stream`` attribute (numba)."""
    if stream is None:
        return None
    for attr in ("ptr", "cuda_stream"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return _nonnegative_int(stream, "stream")


def make_options(backend: str = "auto", device: int = 0, stream: Any = None, nthreads: int = 0,
                 seed: int = 0) -> Options:
    """An sfft_options filled with the library's defaults by sfft_options_init_sized, then the given fields."""
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {sorted(_BACKENDS)}, not {backend!r}")
    o = Options()
    lib.sfft_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    o.backend = _BACKENDS[backend]
    o.device = _nonnegative_int(device, "device")
    o.stream = stream_pointer(stream)
    o.threads = _nonnegative_int(nthreads, "nthreads")
    o.seed = _nonnegative_int(seed, "seed")
    return o


def build_info() -> Dict[str, Any]:
    """What the loaded libsfft contains and what this host provides (``sfft_get_build_info``): version,
    families compiled in, CPU FFT library, whether the CUDA plugin was built and loads here, CUDA runtime,
    driver and cuFFT versions, device count, GPU architectures and why CUDA is unavailable."""
    info = BuildInfo()
    check(lib.sfft_get_build_info(ctypes.byref(info), ctypes.sizeof(info)))
    v = info.version
    archs = info.cuda_architectures.decode()
    return {
        "version": f"{v // 10000}.{v // 100 % 100}.{v % 100}",
        "version_number": v,
        "families": [name for bit, name in _FAMILIES.items() if info.families & bit],
        "fft_library": info.fft_library.decode(),
        "cuda_compiled": bool(info.cuda_compiled),
        "cuda_loaded": bool(info.cuda_loaded),
        "cuda_device_count": info.cuda_device_count,
        "cuda_runtime_version": info.cuda_runtime_version,
        "cuda_driver_version": info.cuda_driver_version,
        "cufft_version": info.cufft_version,
        "cuda_architectures": [a for a in archs.replace(",", ";").split(";") if a],
        "cuda_unavailable": info.cuda_unavailable.decode(),
    }
