#!/usr/bin/env python3
"""CPU fftshift benchmark: sfft's CPU backend (through ctypes, out of place and in place) against NumPy's
np.fft.fftshift, in the same process, median of repeats, with the result checked for equality.
usage: bench_shift_cpu.py path/to/libsfft.so [--threads N] [--repeat R]"""
import argparse
import ctypes
import os
import platform
import resource
import statistics
import time

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("library")
parser.add_argument("--threads", type=int, default=0)
parser.add_argument("--repeat", type=int, default=7)
args = parser.parse_args()

lib = ctypes.CDLL(args.library)


class Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("backend", ctypes.c_int), ("device", ctypes.c_int),
                ("stream", ctypes.c_void_p), ("threads", ctypes.c_int), ("seed", ctypes.c_uint64)]


lib.fftshift_nd.restype = ctypes.c_int
lib.fftshift_nd.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
                            ctypes.c_uint32, ctypes.c_int, ctypes.POINTER(Options)]
lib.sfft_last_error.restype = ctypes.c_char_p
opts = Options()
lib.sfft_options_init(ctypes.byref(opts))
opts.backend = 1  # CPU
opts.threads = args.threads
DTYPES = {np.float32: 1, np.float64: 2, np.complex64: 3, np.complex128: 4}


def sfft_shift(out, a, axes_mask):
    shape = (ctypes.c_int64 * a.ndim)(*a.shape)
    s = lib.fftshift_nd(out.ctypes.data, a.ctypes.data, a.ndim, shape, axes_mask, DTYPES[a.dtype.type],
                        ctypes.byref(opts))
    if s != 0:
        raise RuntimeError(lib.sfft_last_error().decode())


def median_time(fn):
    fn()
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


cases = [("1-D 2^24", (1 << 24,), None), ("2-D 4096^2", (4096, 4096), None), ("2-D 4095^2", (4095, 4095), None),
         ("3-D 256^3", (256, 256, 256), None), ("3-D 255^3", (255, 255, 255), None),
         ("16x1024^2 ax1,2", (16, 1024, 1024), (1, 2))]
print(f"sfft CPU fftshift vs NumPy {np.__version__} on {platform.processor() or platform.machine()}, "
      f"{os.cpu_count()} cores, threads={args.threads or os.cpu_count()}, median of {args.repeat}")
print(f"{'shape':<17} {'dtype':<10} {'MiB':>6} {'numpy ms':>9} {'sfft ms':>8} {'speedup':>8} "
      f"{'sfft in-place ms':>16} {'equal':>6}")
rng = np.random.default_rng(0)
for name, shape, axes in cases:
    for dt in (np.float32, np.complex128):
        a = rng.standard_normal(shape).astype(dt)
        mask = 0 if axes is None else sum(1 << ax for ax in axes)
        ref = np.fft.fftshift(a, axes=axes)
        out = np.empty_like(a)
        t_np = median_time(lambda: np.fft.fftshift(a, axes=axes))
        t_sf = median_time(lambda: sfft_shift(out, a, mask))
        equal = np.array_equal(out, ref)
        b = a.copy()
        t_ip = median_time(lambda: sfft_shift(b, b, mask))
        print(f"{name:<17} {np.dtype(dt).name:<10} {a.nbytes / 2**20:6.0f} {t_np * 1e3:9.2f} {t_sf * 1e3:8.2f} "
              f"{t_np / t_sf:7.2f}x {t_ip * 1e3:16.2f} {str(equal):>6}")
print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
