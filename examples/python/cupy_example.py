# SPDX-License-Identifier: Apache-2.0
"""sfft on CuPy (GPU) arrays through ctypes: device pointers go straight to the library, which runs its CUDA
backend on them (asynchronously on the default stream: synchronise before comparing). Checked against CuPy/NumPy.
Run: SFFT_LIBRARY=/path/to/prefix/lib/libsfft.so python3 cupy_example.py"""
import ctypes
import ctypes.util
import os
import sys

import cupy as cp
import numpy as np

lib = ctypes.CDLL(os.environ.get("SFFT_LIBRARY") or ctypes.util.find_library("sfft") or "libsfft.so.0")
SFFT_SUCCESS, SFFT_COMPLEX128 = 0, 4
P, I64, U64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint64
lib.sfft_last_error.restype = ctypes.c_char_p
lib.fftshift_nd.argtypes = [P, P, ctypes.c_int, ctypes.POINTER(I64), ctypes.c_uint32, ctypes.c_int, P]
lib.nufft3_create.argtypes = [ctypes.POINTER(P), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_double, P]
lib.nufft3_setpts.argtypes = [P, U64, P, P, P, U64, P, P, P]
lib.nufft3_exec.argtypes = [P, P, P]
lib.nufft3_destroy.argtypes = [P]


def ok(status):
    if status != SFFT_SUCCESS:
        raise RuntimeError(lib.sfft_last_error().decode())


if lib.sfft_cuda_device_count() == 0:
    print("CuPy example: skipped, sfft finds no usable CUDA device")
    sys.exit(77)

failures = 0
a = cp.arange(6 * 7 * 8, dtype=cp.complex128).reshape(6, 7, 8) * (1 - 0.5j)
out = cp.empty_like(a)
ok(lib.fftshift_nd(out.data.ptr, a.data.ptr, a.ndim, (I64 * a.ndim)(*a.shape), 0, SFFT_COMPLEX128, None))
cp.cuda.Device().synchronize()
good = bool(cp.array_equal(out, cp.fft.fftshift(a)))
failures += not good
print(f"shift: fftshift_nd of a 6x7x8 device array == cupy.fft.fftshift: {'ok' if good else 'WRONG'}")

rng = np.random.default_rng(1)
x, s = cp.asarray(rng.uniform(-5, 5, 2000)), cp.asarray(rng.uniform(-50, 50, 1000))
f = cp.asarray(rng.standard_normal(2000) + 1j * rng.standard_normal(2000))
F = cp.empty(1000, cp.complex128)
plan, tol = P(), 1e-9
ok(lib.nufft3_create(ctypes.byref(plan), 1, SFFT_COMPLEX128, 1, tol, None))
ok(lib.nufft3_setpts(plan, x.size, x.data.ptr, None, None, s.size, s.data.ptr, None, None))  # device: CUDA plan
ok(lib.nufft3_exec(plan, f.data.ptr, F.data.ptr))
cp.cuda.Device().synchronize()
ok(lib.nufft3_destroy(plan))
exact = cp.exp(1j * cp.outer(s, x)) @ f
rel = float(cp.linalg.norm(F - exact) / cp.linalg.norm(exact))
good = rel <= 10 * tol
failures += not good
print(f"nufft3: 2000 -> 1000 device points, relative l2 error {rel:.1e} vs the direct sum: {'ok' if good else 'WRONG'}")
sys.exit(1 if failures else 0)
