#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU fftshift benchmark: sfft's CPU backend (through ctypes, out of place and in place) against a memcpy of
the same bytes (np.copyto into a preallocated array) and NumPy's np.fft.fftshift, in the same process, every
result checked against NumPy. The memcpy and sfft's two calls run in turn, round by round; times are medians of
the rounds, ratios (memcpy time / sfft time) the median of each round's ratio, so that a host whose speed drifts
reaches both sides alike. The last line gives the minimum ratio out of place and in place.
usage: bench_shift_cpu.py path/to/libsfft.so [--threads N] [--repeat R]"""
import argparse
import ctypes
import os
import platform
import statistics
import time

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("library")
parser.add_argument("--threads", type=int, default=0)
parser.add_argument("--repeat", type=int, default=5)
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


def rounds(fns):
    """Each of fns once a round, in turn, after a warm-up call each, so that a drift of the host's speed (a VM's
    neighbours) reaches them alike; each one's times, round by round."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(args.repeat):
        for f, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            times[f].append(time.perf_counter() - t0)
    return times


def median_ratio(reference, times):
    """The median over rounds of reference time / time, each round's pair measured back to back."""
    return statistics.median(r / t for r, t in zip(reference, times))


# Even, odd and mixed extents, 1-D to 5-D, primes, a long axis, many short odd rows, rows of a few elements
# (coordinate-like N x 2, N x 5, N x 13), 3-component fields (grid axes shifted, or every axis), a short odd first
# axis over a large block (3 image planes), extents of 1,
# axis subsets; >= 64 MiB in f32.
cases = [("1-D 2^24", (1 << 24,), None), ("1-D 2^24+1", ((1 << 24) + 1,), None),
         ("2-D 4096^2", (4096, 4096), None), ("2-D 4095^2", (4095, 4095), None),
         ("2-D 4096x4095", (4096, 4095), None), ("2-D 4097x4099", (4097, 4099), None),
         ("2-D 3x(2^23+1)", (3, (1 << 23) + 1), None), ("2-D 16384x1025", (16384, 1025), None),
         ("2-D 65536x257", (65536, 257), None), ("3-D 256^3", (256, 256, 256), None),
         ("3-D 255^3", (255, 255, 255), None), ("3-D 255x257x259", (255, 257, 259), None),
         ("4-D 63x65x67x69", (63, 65, 67, 69), None), ("5-D 29x31x37x41x43", (29, 31, 37, 41, 43), None),
         ("4-D 1x4095x1x4095", (1, 4095, 1, 4095), None), ("3-D 255^3 ax0", (255, 255, 255), (0,)),
         ("3-D 255^3 ax2", (255, 255, 255), (2,)), ("2-D 4095^2 ax1", (4095, 4095), (1,)),
         ("16x1024^2 ax1,2", (16, 1024, 1024), (1, 2)), ("2-D (2^23+1)x2", ((1 << 23) + 1, 2), None),
         ("2-D (2^22+1)x5", ((1 << 22) + 1, 5), None), ("4-D 180^3x3 ax0-2", (180, 180, 180, 3), (0, 1, 2)),
         ("4-D 181^3x3", (181, 181, 181, 3), None), ("4-D 181^3x3 ax0-2", (181, 181, 181, 3), (0, 1, 2)),
         ("2-D (2^21+1)x13", ((1 << 21) + 1, 13), None), ("3-D 3x4096x4096", (3, 4096, 4096), None)]
print(f"sfft CPU fftshift vs memcpy and NumPy {np.__version__} on {platform.processor() or platform.machine()}, "
      f"{os.cpu_count()} cores, threads={args.threads or os.cpu_count()}, {args.repeat} rounds (memcpy and sfft "
      f"in turn), medians")
print(f"{'shape':<19} {'dtype':<10} {'MiB':>5} {'memcpy ms':>9} {'numpy ms':>9} {'out ms':>8} {'out/memcpy':>10} "
      f"{'in ms':>8} {'in/memcpy':>9} {'equal':>6}")
rng = np.random.default_rng(0)
worst_out = worst_in = float("inf")
for name, shape, axes in cases:
    for dt in (np.float32, np.float64, np.complex64, np.complex128):
        a = rng.random(shape, dtype=np.float32).astype(dt)
        if np.iscomplexobj(a):
            a.imag = rng.random(shape, dtype=np.float32)
        mask = 0 if axes is None else sum(1 << ax for ax in axes)
        ref = np.fft.fftshift(a, axes=axes)
        out = np.empty_like(a)
        t_np = median_time(lambda: np.fft.fftshift(a, axes=axes))
        sfft_shift(out, a, mask)
        equal = np.array_equal(out, ref)
        b = a.copy()
        sfft_shift(b, b, mask)
        equal = equal and np.array_equal(b, ref)
        copies, outs, ins = rounds([lambda: np.copyto(out, a), lambda: sfft_shift(out, a, mask),
                                    lambda: sfft_shift(b, b, mask)])
        ratio_out, ratio_in = median_ratio(copies, outs), median_ratio(copies, ins)
        worst_out = min(worst_out, ratio_out)
        worst_in = min(worst_in, ratio_in)
        print(f"{name:<19} {np.dtype(dt).name:<10} {a.nbytes / 2**20:5.0f} {statistics.median(copies) * 1e3:9.2f} "
              f"{t_np * 1e3:9.2f} {statistics.median(outs) * 1e3:8.2f} {100 * ratio_out:9.1f}% "
              f"{statistics.median(ins) * 1e3:8.2f} {100 * ratio_in:8.1f}% {str(equal):>6}", flush=True)
        del a, ref, out, b
print(f"minimum ratio to memcpy: out of place {100 * worst_out:.1f}%, in place {100 * worst_in:.1f}%")
