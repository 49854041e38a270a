#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Type-3 NUFFT benchmark: sfft (through its C ABI, ctypes) against FINUFFT (CPU) or cuFINUFFT (GPU) type 3,
in one process, on the same points and strengths. Prints execute time (median of repeats after one warm-up),
setpts time, the ratio peer/sfft (> 1: sfft faster), memory, and the relative l2 error of each on a random
sample of targets against a direct sum in double.

  python3 benchmarks/nufft3_bench.py --lib build-nufft3/libsfft.so --backend cuda
  python3 benchmarks/nufft3_bench.py --lib build-nufft3/libsfft.so --backend cpu --scale 0.25
"""
import argparse
import ctypes as C
import datetime
import os
import resource
import statistics
import sys
import time

import numpy as np

SFFT_COMPLEX64, SFFT_COMPLEX128 = 3, 4
SFFT_BACKEND_CPU, SFFT_BACKEND_CUDA = 1, 2


class SfftOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("backend", C.c_int), ("device", C.c_int), ("stream", C.c_void_p),
                ("threads", C.c_int), ("seed", C.c_uint64)]


class Nufft3Options(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("ntransf", C.c_int), ("kernel", C.c_int), ("upsampfac", C.c_double)]


class Sfft:
    def __init__(self, path):
        self.lib = C.CDLL(path)
        self.lib.sfft_last_error.restype = C.c_char_p
        self.lib.nufft3_create.argtypes = [C.POINTER(C.c_void_p), C.c_int, C.c_int, C.c_int, C.c_double,
                                           C.POINTER(SfftOptions)]
        self.lib.nufft3_setpts.argtypes = [C.c_void_p, C.c_uint64, C.c_void_p, C.c_void_p, C.c_void_p, C.c_uint64,
                                           C.c_void_p, C.c_void_p, C.c_void_p]
        self.lib.nufft3_exec.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p]
        self.lib.nufft3_destroy.argtypes = [C.c_void_p]
        self.lib.nufft3_set_options.argtypes = [C.c_void_p, C.POINTER(Nufft3Options)]

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what}: status {status}: {self.lib.sfft_last_error().decode()}")

    def plan(self, backend, dtype, sign, tol, kernel=0):
        opts = SfftOptions()
        self.lib.sfft_options_init(C.byref(opts))
        opts.backend = backend
        p = C.c_void_p()
        self.check(self.lib.nufft3_create(C.byref(p), 2, dtype, sign, tol, C.byref(opts)), "nufft3_create")
        o = Nufft3Options()
        self.lib.nufft3_options_init(C.byref(o))
        o.kernel = kernel
        self.check(self.lib.nufft3_set_options(p, C.byref(o)), "nufft3_set_options")
        return p


def make_case(name, n, k, real, rng):
    """Sources/targets in 2-D. "uniform": X = 512, S = pi/2 (X*S ~ 804 per dimension, about a 1030-cell source
    grid at sigma = 2). "grid": an aperture of side^2 elements at unit spacing (X = side/2) and side^2 directions
    with S = pi/2, the seed paper's N = K^2 setting."""
    half_x, half_s = 512.0, np.pi / 2
    if name == "grid":
        half_x = np.sqrt(n) / 2
    if name == "uniform":
        x = rng.uniform(-half_x, half_x, (2, n))
        s = rng.uniform(-half_s, half_s, (2, k))
    else:  # jittered square grids: an aperiodic array of n = side^2 elements, k = side^2 directions
        def jittered(count, half):
            side = int(round(np.sqrt(count)))
            g = (np.arange(side) + 0.5) / side * 2 - 1
            gx, gy = np.meshgrid(g, g, indexing="ij")
            pts = np.stack([gx.ravel(), gy.ravel()]) * half
            return pts + rng.uniform(-0.3, 0.3, pts.shape) * (2 * half / side)
        x, s = jittered(n, half_x), jittered(k, half_s)
    c = (rng.uniform(-1, 1, x.shape[1]) + 1j * rng.uniform(-1, 1, x.shape[1]))
    return x.astype(real), s.astype(real), c.astype(np.complex64 if real == np.float32 else np.complex128)


def direct_sample(xp, x, s, c, sign, idx):
    x64, s64, c128 = xp.asarray(x, dtype=xp.float64), xp.asarray(s, dtype=xp.float64), xp.asarray(c, dtype=xp.complex128)
    out = []
    step = 64 if xp.__name__ == "cupy" else 8
    for a in range(0, len(idx), step):
        sel = idx[a:a + step]
        ph = xp.outer(s64[0, sel], x64[0]) + xp.outer(s64[1, sel], x64[1])
        out.append(xp.exp(1j * sign * ph) @ c128)
    return xp.concatenate(out)


def rel_err(xp, got, ref):
    got = xp.asarray(got, dtype=xp.complex128)
    return float(xp.linalg.norm(got - ref) / xp.linalg.norm(ref))


def median_time(fn, repeats, sync):
    fn()
    sync()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--backend", choices=["cpu", "cuda"], required=True)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the point counts (CPU runs on small hosts)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sample", type=int, default=1000, help="targets checked by direct sum")
    ap.add_argument("--gaussian", action="store_true", help="also time sfft's Gaussian (seed) option, N = K^2")
    args = ap.parse_args()
    sf = Sfft(args.lib)
    gpu = args.backend == "cuda"
    peer_mod = None
    if gpu:
        import cupy as xp
        try:
            import cufinufft as peer_mod
        except (ImportError, OSError) as e:
            print(f"# cufinufft unavailable ({e}); peer columns left empty")
        dev = xp.cuda.Device()
        sync = dev.synchronize
        device = xp.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()
        free_bytes = lambda: xp.cuda.runtime.memGetInfo()[0]
        peer_name = f"cuFINUFFT {getattr(peer_mod, '__version__', '?')}" if peer_mod else "none"
    else:
        xp = np
        try:
            import finufft as peer_mod
        except (ImportError, OSError) as e:
            print(f"# finufft unavailable ({e}); peer columns left empty")
        sync = lambda: None
        device = f"CPU ({os.cpu_count()} hardware threads)"
        peer_name = f"FINUFFT {getattr(peer_mod, '__version__', '?')}" if peer_mod else "none"
    print(f"# nufft3 benchmark, {datetime.date.today()}, {device}, peer {peer_name}, repeats {args.repeats}")
    print("# times are execute-only medians (sfft and peer timed alternately); setpts listed separately; "
          "err = rel. l2 on "
          f"{args.sample} random targets vs direct sum; mem = device bytes held by the plan (GPU) or RSS growth (CPU)")
    hdr = f"{'case':<28}{'prec':<8}{'tol':>7} | {'sfft exec':>10}{'setpts':>9}{'err':>10}{'mem MB':>8} | " \
          f"{'peer exec':>10}{'setpts':>9}{'err':>10}{'mem MB':>8} | {'peer/sfft':>9}"
    print(hdr)
    print("-" * len(hdr))
    rng = np.random.default_rng(1)
    n1e6 = int(1e6 * args.scale)
    side = int(round(1024 * np.sqrt(args.scale)))
    cases = [("N=K=1e6 uniform" if args.scale == 1 else f"N=K={n1e6} uniform", "uniform", n1e6, n1e6),
             (f"N=K^2, K={side} jittered", "grid", side * side, side * side)]
    sign = -1
    for label, kind, n, k in cases:
        for real, tol in ((np.float64, 1e-6), (np.float32, 1e-4)):
            x, s, c = make_case(kind, n, k, real, rng)
            dtype = SFFT_COMPLEX128 if real == np.float64 else SFFT_COMPLEX64
            cplx = np.complex128 if real == np.float64 else np.complex64
            xd, sd, cd = (xp.asarray(np.ascontiguousarray(a)) for a in (x, s, c))
            idx = rng.choice(k, size=min(args.sample, k), replace=False)
            ptr = (lambda a: a.data.ptr) if gpu else (lambda a: a.ctypes.data)
            prec = "double" if real == np.float64 else "single"
            # Both plans are set up first and then timed alternately (sfft, peer, sfft, ...), so a change of load
            # on a shared host hits both medians alike. The direct-sum reference comes last: BLAS worker threads
            # keep spinning for a while after a product and would slow whichever side ran next.
            F = xp.zeros(k, dtype=cplx)
            mem0 = free_bytes() if gpu else rss_bytes()
            plan = sf.plan(SFFT_BACKEND_CUDA if gpu else SFFT_BACKEND_CPU, dtype, sign, tol)
            t0 = time.perf_counter()
            sf.check(sf.lib.nufft3_setpts(plan, n, ptr(xd[0]), ptr(xd[1]), None, k, ptr(sd[0]), ptr(sd[1]), None),
                     "nufft3_setpts")
            sync()
            t_set = time.perf_counter() - t0
            sfft_exec = lambda: sf.check(sf.lib.nufft3_exec(plan, ptr(cd), ptr(F)), "nufft3_exec")
            sfft_exec()  # warm-up
            sync()
            mem = (mem0 - free_bytes()) if gpu else (rss_bytes() - mem0)
            runs = [(sfft_exec, [])]
            if peer_mod is not None:
                out = xp.zeros(k, dtype=cplx)
                if gpu:
                    xp.get_default_memory_pool().free_all_blocks()
                mem0 = free_bytes() if gpu else rss_bytes()
                pp = peer_mod.Plan(3, 2, eps=tol, isign=sign,
                                   dtype="complex128" if real == np.float64 else "complex64")
                t0 = time.perf_counter()
                pp.setpts(xd[0], xd[1], None, sd[0], sd[1])
                sync()
                p_set = time.perf_counter() - t0
                peer_exec = lambda: pp.execute(cd, out=out)
                peer_exec()  # warm-up
                sync()
                p_mem = (mem0 - free_bytes()) if gpu else (rss_bytes() - mem0)
                runs.append((peer_exec, []))
            for _ in range(args.repeats):
                for fn, times in runs:
                    t0 = time.perf_counter()
                    fn()
                    sync()
                    times.append(time.perf_counter() - t0)
            t_exec = statistics.median(runs[0][1])
            sf.lib.nufft3_destroy(plan)
            ref = direct_sample(xp, xd, sd, cd, sign, xp.asarray(idx))
            err = rel_err(xp, F[xp.asarray(idx)], ref)
            del F
            sfft_cols = f"{label:<28}{prec:<8}{tol:>7.0e} | {t_exec * 1e3:>8.2f}ms{t_set * 1e3:>7.0f}ms{err:>10.2e}" \
                        f"{mem / 2**20:>8.0f}"
            if peer_mod is None:
                print(f"{sfft_cols} | {'n/a':>10}", flush=True)
                continue
            p_exec = statistics.median(runs[1][1])
            p_err = rel_err(xp, out[xp.asarray(idx)], ref)
            del pp, out
            print(f"{sfft_cols} | {p_exec * 1e3:>8.2f}ms{p_set * 1e3:>7.0f}ms{p_err:>10.2e}"
                  f"{p_mem / 2**20:>8.0f} | {p_exec / t_exec:>8.2f}x", flush=True)
    if args.gaussian:
        print("\n# sfft Gaussian (Capozzoli) option, N = K^2 sources and targets on jittered grids, single precision, "
              "tol 1e-4; seed's published GTX 960 Step-1 (spreading) time alone for comparison")
        seed_ms = {256: 38.0, 512: 150.0, 1024: 600.0}
        for kk in (256, 512, 1024):
            x, s, c = make_case("grid", kk * kk, kk * kk, np.float32, rng)
            xd, sd, cd = (xp.asarray(np.ascontiguousarray(a)) for a in (x, s, c))
            F = xp.zeros(kk * kk, dtype=np.complex64)
            ptr = (lambda a: a.data.ptr) if gpu else (lambda a: a.ctypes.data)
            plan = sf.plan(SFFT_BACKEND_CUDA if gpu else SFFT_BACKEND_CPU, SFFT_COMPLEX64, sign, 1e-4, kernel=1)
            sf.check(sf.lib.nufft3_setpts(plan, kk * kk, ptr(xd[0]), ptr(xd[1]), None, kk * kk, ptr(sd[0]),
                                          ptr(sd[1]), None), "nufft3_setpts")
            t = median_time(lambda: sf.check(sf.lib.nufft3_exec(plan, ptr(cd), ptr(F)), "nufft3_exec"),
                            args.repeats, sync)
            idx = rng.choice(kk * kk, size=min(args.sample, kk * kk), replace=False)
            err = rel_err(xp, F[xp.asarray(idx)], direct_sample(xp, xd, sd, cd, sign, xp.asarray(idx)))
            sf.lib.nufft3_destroy(plan)
            print(f"K={kk:<5} N=K^2={kk * kk:<8} sfft Gaussian exec {t * 1e3:8.2f} ms  err {err:.2e}  "
                  f"seed Step 1 alone {seed_ms[kk]:.0f} ms  -> {seed_ms[kk] / (t * 1e3):.0f}x", flush=True)
    print(f"# peak host RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
