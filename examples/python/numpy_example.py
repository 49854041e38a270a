# SPDX-License-Identifier: Apache-2.0
"""sfft from Python with NumPy arrays, through ctypes (no compiled wrapper): every family, each checked against
NumPy. The library: $SFFT_LIBRARY, else the system's libsfft (ctypes.util.find_library).
Run: SFFT_LIBRARY=/path/to/prefix/lib/libsfft.so python3 numpy_example.py"""
import ctypes
import ctypes.util
import os
import sys

import numpy as np

lib = ctypes.CDLL(os.environ.get("SFFT_LIBRARY") or ctypes.util.find_library("sfft") or "libsfft.so.0")
SFFT_SUCCESS, SFFT_COMPLEX64, SFFT_COMPLEX128 = 0, 3, 4
P, I64, U64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint64
lib.sfft_last_error.restype = ctypes.c_char_p
lib.sfft_version_string.restype = ctypes.c_char_p
# Every other function returns sfft_status (int). opts NULL (None) = defaults.
lib.fftshift_nd.argtypes = [P, P, ctypes.c_int, ctypes.POINTER(I64), ctypes.c_uint32, ctypes.c_int, P]
lib.nufft3_create.argtypes = [ctypes.POINTER(P), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_double, P]
lib.nufft3_setpts.argtypes = [P, U64, P, P, P, U64, P, P, P]
lib.nufft3_exec.argtypes = [P, P, P]
lib.nufft3_destroy.argtypes = [P]
lib.spfft2d_create.argtypes = [ctypes.POINTER(P), U64, U64, U64, P, P, P, ctypes.c_int, P]
lib.spfft2d_exec.argtypes = [P, P]
lib.spfft2d_destroy.argtypes = [P]
lib.sfft_create.argtypes = [ctypes.POINTER(P), U64, U64, ctypes.c_int, P]
lib.sfft_exec.argtypes = [P, P, P, P, ctypes.POINTER(U64)]
lib.sfft_destroy.argtypes = [P]


def ok(status):
    if status != SFFT_SUCCESS:
        raise RuntimeError(lib.sfft_last_error().decode())


def ptr(a):
    """The data pointer of a C-contiguous array (keep the array alive while the library uses it)."""
    assert a.flags.c_contiguous
    return a.ctypes.data


failures = 0


def report(family, good, detail):
    global failures
    failures += not good
    print(f"{family}: {detail}: {'ok' if good else 'WRONG'}")


rng = np.random.default_rng(0)
print("sfft", lib.sfft_version_string().decode(), "with NumPy", np.__version__)

# fftshift_nd == np.fft.fftshift, any rank and extents.
a = (rng.standard_normal((5, 6, 7)) + 1j * rng.standard_normal((5, 6, 7))).astype(np.complex64)
out = np.empty_like(a)
ok(lib.fftshift_nd(ptr(out), ptr(a), a.ndim, (I64 * a.ndim)(*a.shape), 0, SFFT_COMPLEX64, None))
report("shift", np.array_equal(out, np.fft.fftshift(a)), "fftshift_nd of a 5x6x7 complex64 array == np.fft.fftshift")

# Type-3 NUFFT, 1-D: F[k] = sum_i f[i] exp(-i x[i] s[k]).
x, s = rng.uniform(-10, 10, 400), rng.uniform(-30, 30, 300)
f = rng.standard_normal(400) + 1j * rng.standard_normal(400)
F = np.empty(300, np.complex128)
plan, tol = P(), 1e-9
ok(lib.nufft3_create(ctypes.byref(plan), 1, SFFT_COMPLEX128, -1, tol, None))
ok(lib.nufft3_setpts(plan, x.size, ptr(x), None, None, s.size, ptr(s), None, None))
ok(lib.nufft3_exec(plan, ptr(f), ptr(F)))
ok(lib.nufft3_destroy(plan))
exact = np.exp(-1j * np.outer(s, x)) @ f
rel = np.linalg.norm(F - exact) / np.linalg.norm(exact)
report("nufft3", rel <= 10 * tol, f"400 -> 300 points, relative l2 error {rel:.1e} vs the direct sum")

# Sparse-input 2-D FFT == np.fft.rfft2 of the dense matrix.
rows, cols = 40, 30
r, c = rng.integers(0, rows, 25), rng.integers(0, cols, 25)
w = rng.standard_normal(25)
dense = np.zeros((rows, cols))
np.add.at(dense, (r, c), w)  # repeated coordinates sum, as in the library
Y = np.empty((rows, cols // 2 + 1), np.complex128)
plan = P()
ok(lib.spfft2d_create(ctypes.byref(plan), rows, cols, r.size, ptr(r), ptr(c), ptr(w), SFFT_COMPLEX128, None))
ok(lib.spfft2d_exec(plan, ptr(Y)))
ok(lib.spfft2d_destroy(plan))
err = np.abs(Y - np.fft.rfft2(dense)).max()
report("spfft2d", err <= 1e-12 * np.abs(w).sum(), f"40x30 matrix, 25 entries, max error {err:.1e} vs np.fft.rfft2")

# Sparse FFT: the k largest coefficients == the largest entries of np.fft.fft.
n, k = 1 << 15, 4
X = np.zeros(n, np.complex128)
X[rng.choice(n, k, replace=False)] = n * (1 + np.abs(rng.standard_normal(k))) * np.exp(2j * np.pi * rng.random(k))
signal = np.fft.ifft(X)
freqs, values, count = np.empty(k, np.uint64), np.empty(k, np.complex128), U64(k)
plan = P()
ok(lib.sfft_create(ctypes.byref(plan), n, k, SFFT_COMPLEX128, None))
ok(lib.sfft_exec(plan, ptr(signal), ptr(freqs), ptr(values), ctypes.byref(count)))
ok(lib.sfft_destroy(plan))
good = count.value == k and np.allclose(values, X[freqs.astype(np.int64)], rtol=1e-6, atol=0) and \
    set(freqs.tolist()) == set(np.flatnonzero(X).tolist())
report("sparse FFT", good, f"n = 2^15, k = {k}: frequencies and values those of np.fft.fft")
sys.exit(1 if failures else 0)
