#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Transforms per pass: sfft's type-3 NUFFT exec time and plan memory against nufft3_options.maxbatchsize.

On the ntransf > 1 cases of nufft3_bench.py's suite (the same points), each maxbatchsize runs a plan of its own
in one process on the same arrays: the exec median and, on the GPU, the device memory the plan holds after its
setpts and exec (cudaMemGetInfo with CuPy's and the CUDA runtime's pools trimmed).

  python3 benchmarks/nufft3_passes.py --lib build/libsfft.so --backend cuda --prec double \\
      --tols 1e-3,1e-6,1e-9,1e-12 --batches 16,8,4,2,1
"""
import argparse
import sys
import time

import numpy as np

import nufft3_bench as nb


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--backend", choices=["cpu", "cuda"], required=True)
    ap.add_argument("--scale", type=float, default=1.0, help="as nufft3_bench.py's")
    ap.add_argument("--prec", choices=["single", "double"], default="double")
    ap.add_argument("--tols", default="1e-3,1e-6,1e-9")
    ap.add_argument("--batches", default="16,8,4,2,1", help="maxbatchsize values (0: automatic)")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: all)")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    gpu = args.backend == "cuda"
    if gpu:
        import cupy as xp
        ptr = lambda a: a.data.ptr
        sync = xp.cuda.runtime.deviceSynchronize
    else:
        xp = np
        ptr = lambda a: a.ctypes.data
        sync = lambda: None

    def used():
        if not gpu:
            return 0
        sync()
        rt = xp.cuda.runtime
        try:
            rt.memPoolTrimTo(rt.deviceGetDefaultMemPool(xp.cuda.Device().id), 0)
        except (AttributeError, rt.CUDARuntimeError):
            pass
        xp.get_default_memory_pool().free_all_blocks()
        free, total = rt.memGetInfo()
        return total - free

    sf = nb.Sfft(args.lib)
    rng = np.random.default_rng(5)
    real = np.float32 if args.prec == "single" else np.float64
    cplx = np.complex64 if args.prec == "single" else np.complex128
    dtype = nb.SFFT_COMPLEX64 if args.prec == "single" else nb.SFFT_COMPLEX128
    backend = nb.SFFT_BACKEND_CUDA if gpu else nb.SFFT_BACKEND_CPU
    print(f"# nufft3 transforms per pass, {'GPU' if gpu else 'CPU'}, {args.prec}, scale {args.scale}, exec median "
          f"of {args.repeats}; mbB: maxbatchsize B, exec ms" + (" and plan MiB" if gpu else ""))
    for case in nb.suite(args.scale):
        if case["ntransf"] == 1:
            continue
        dim, nt = case["dim"], case["ntransf"]
        n, k = int(case["nf"] * 1e6 * args.scale), int(case["kf"] * 1e6 * args.scale)
        x, s = case["gen"](rng, n, k)
        xd = [xp.asarray(x[d].astype(real)) for d in range(dim)]
        sd = [xp.asarray(s[d].astype(real)) for d in range(dim)]
        c = xp.asarray((rng.standard_normal((nt, n)) + 1j * rng.standard_normal((nt, n))).astype(cplx))
        F = xp.zeros((nt, k), cplx)
        xs = [ptr(a) for a in xd] + [None] * (3 - dim)
        ss = [ptr(a) for a in sd] + [None] * (3 - dim)
        for tol in (float(t) for t in args.tols.split(",")):
            line = f"{case['name']:32s} {args.prec} tol {tol:7.0e}:"
            for batch in (int(b) for b in args.batches.split(",")):
                before = used()
                plan = sf.plan(backend, dim, dtype, -1, tol, ntransf=nt, threads=args.threads, maxbatchsize=batch)
                try:
                    sf.check(sf.lib.nufft3_setpts(plan, n, *xs, k, *ss), "nufft3_setpts")
                    times = []
                    for _ in range(args.repeats):
                        sync()
                        start = time.perf_counter()
                        sf.check(sf.lib.nufft3_exec(plan, ptr(c), ptr(F)), "nufft3_exec")
                        sync()
                        times.append(time.perf_counter() - start)
                    held = used() - before
                finally:
                    sf.lib.nufft3_destroy(plan)
                line += f"  mb{batch} {np.median(times) * 1e3:7.2f} ms" + (f" {held / 2**20:6.0f} MiB" if gpu else "")
            print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
