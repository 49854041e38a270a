# SPDX-License-Identifier: Apache-2.0
"""cuFFT time by transform length, the data behind nufft3's GPU FFT lengths (src/nufft3/params.hpp,
CostModel::fft_odd_prime; docs/nufft3.md, "GPU FFT lengths").

Times an in-place complex-to-complex cuFFT (through CuPy) of every even 2,3,5,7-smooth length in a range, as a
1-D transform, an n x n one and an n^3 one, in double and single precision, and prints one line per length:
dim, n, microseconds in complex128, microseconds in complex64 (best of 10, CUDA events).

    python3 benchmarks/cufft_lengths.py > lengths.txt
"""
import cupy as cp
import cupyx.scipy.fft as cpfft

RANGES = ((2, 400, 4200), (3, 48, 520), (1, 500000, 2500000))


def smooth_even(n):
    if n % 2:
        return False
    for p in (2, 3, 5, 7):
        while n % p == 0:
            n //= p
    return n == 1


def best_time_us(shape, dtype, reps=10):
    a = cp.ones(shape, dtype=dtype)
    axes = tuple(range(len(shape)))
    for _ in range(2):
        cpfft.fftn(a, axes=axes, overwrite_x=True)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(reps):
        start.record()
        cpfft.fftn(a, axes=axes, overwrite_x=True)
        stop.record()
        stop.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, stop))
    return best * 1e3


def main():
    cp.fft.config.get_plan_cache().set_size(2)
    print(f"# cuFFT in-place c2c, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}: dim n us_c128 us_c64")
    for dim, lo, hi in RANGES:
        for n in range(lo, hi + 1):
            if smooth_even(n):
                shape = (n,) * dim
                print(dim, n, f"{best_time_us(shape, cp.complex128):.1f}", f"{best_time_us(shape, cp.complex64):.1f}",
                      flush=True)
                cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
