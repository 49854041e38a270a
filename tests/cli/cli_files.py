# SPDX-License-Identifier: Apache-2.0
"""The `sfft` CLI on user data: .npy/.npz/.mtx in, .npy/.csv/.json/.png out, checked against references
computed here (pure Python: index rules and direct sums), and its refusals of bad arguments.
usage: cli_files.py PATH/TO/sfft"""
import cmath
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

SFFT = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def npy_bytes(descr, shape, payload):
    dims = "(" + ", ".join(str(s) for s in shape) + (",)" if len(shape) == 1 else ")")
    header = "{'descr': %s, 'fortran_order': False, 'shape': %s, }" % (repr(descr), dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


def write_npy(path, descr, shape, payload):
    with open(path, "wb") as f:
        f.write(npy_bytes(descr, shape, payload))


def read_npy(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    n = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + n].decode()
    return header, data[10 + n:]


def run(*args, expect=0):
    p = subprocess.run([SFFT, *args], capture_output=True, text=True)
    if p.returncode != expect:
        failures.append(f"sfft {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}")
        print("FAIL:", failures[-1])
    return p


def cplx(values, fmt):
    return b"".join(struct.pack(fmt, z.real, z.imag) for z in values)


def unpack_cplx(payload, fmt):
    size = struct.calcsize(fmt)
    return [complex(*struct.unpack(fmt, payload[i:i + size])) for i in range(0, len(payload), size)]


def shift_reference(values, shape, axes, inverse):
    out = [None] * len(values)
    for flat in range(len(values)):
        rem, src, stride = flat, 0, 1
        for d in reversed(range(len(shape))):
            e = shape[d]
            j = rem % e
            rem //= e
            s = ((e + 1) // 2 if inverse else e // 2) if d in axes else 0
            src += ((j - s) % e) * stride
            stride *= e
        out[flat] = values[src]
    return out


def main():
    tmp = tempfile.mkdtemp()
    p = lambda name: os.path.join(tmp, name)

    # fftshift / ifftshift of a 3x4x5 float32 array on axes 0 and 2, out of place and in place.
    shape = [3, 4, 5]
    values = [float(i) for i in range(60)]
    write_npy(p("a.npy"), "<f4", shape, struct.pack("<60f", *values))
    for extra, inverse in (([], False), (["--inverse"], True), (["--in-place"], False)):
        run("shift", p("a.npy"), "--axes", "0,-1", "--out", p("b.npy"), "--backend", "cpu", *extra)
        header, payload = read_npy(p("b.npy"))
        check("'<f4'" in header and "(3, 4, 5)" in header, f"shift header {header}")
        check(list(struct.unpack("<60f", payload)) == shift_reference(values, shape, {0, 2}, inverse),
              f"shift values {extra}")
    # complex128, all axes, with a summary and a plot.
    zs = [complex(i, -i) for i in range(35)]
    write_npy(p("z.npy"), "<c16", [5, 7], cplx(zs, "<2d"))
    run("shift", p("z.npy"), "--out", p("zs.npy"), "--summary", p("shift.json"), "--plot", p("shift.png"))
    check(unpack_cplx(read_npy(p("zs.npy"))[1], "<2d") == shift_reference(zs, [5, 7], {0, 1}, False), "shift c128")
    check(json.load(open(p("shift.json")))["shape"] == "5x7", "shift summary")
    check(open(p("shift.png"), "rb").read(8) == b"\x89PNG\r\n\x1a\n", "shift plot is a PNG")

    # Sparse FFT: three tones of a length-1024 signal (numpy.fft.fft convention).
    n, tones = 1024, {3: 4 + 0j, 77: 2j, 500: -1.5 + 0j}
    x = [sum(v * cmath.exp(2j * math.pi * f * t / n) for f, v in tones.items()) / n for t in range(n)]
    write_npy(p("x.npy"), "<c16", [n], cplx(x, "<2d"))
    run("sparse", p("x.npy"), "--k", "3", "--out", p("c.npy"), "--backend", "cpu", "--plot", p("sp.png"))
    header, payload = read_npy(p("c.npy"))
    check("('freq', '<u8'), ('value', '<c16')" in header, f"sparse .npy header {header}")
    found = {struct.unpack("<Q", payload[i:i + 8])[0]: complex(*struct.unpack("<2d", payload[i + 8:i + 24]))
             for i in range(0, len(payload), 24)}
    check(set(found) == set(tones) and all(abs(found[f] - v) < 1e-9 for f, v in tones.items()), f"sparse {found}")
    run("sparse", p("x.npy"), "--k", "3", "--out", p("c.json"), "--backend", "cpu")
    check({r["freq"] for r in json.load(open(p("c.json")))} == set(tones), "sparse JSON")
    run("sparse", p("x.npy"), "--k", "3", "--out", p("c.csv"), "--backend", "cpu")
    check(open(p("c.csv")).readline().strip() == "freq,real,imag,abs", "sparse CSV header")
    # complex64 input runs in single precision.
    write_npy(p("x64.npy"), "<c8", [n], cplx(x, "<2f"))
    out = run("sparse", p("x64.npy"), "--k", "3", "--backend", "cpu").stdout
    check("complex64" in out and "3 of k = 3" in out, "sparse complex64")

    # Type-3 NUFFT in 2-D with two strength vectors against the direct sum.
    N, K = 40, 30
    xs = [(math.sin(1.3 * i) * 2, math.cos(0.7 * i) * 3) for i in range(N)]
    ss = [(math.cos(2.1 * k) * 5, math.sin(0.9 * k) * 4) for k in range(K)]
    cs = [[complex(math.cos(i + t), math.sin(2 * i - t)) for i in range(N)] for t in range(2)]
    write_npy(p("xs.npy"), "<f8", [N, 2], struct.pack(f"<{2 * N}d", *[c for pt in xs for c in pt]))
    write_npy(p("ss.npy"), "<f8", [K, 2], struct.pack(f"<{2 * K}d", *[c for pt in ss for c in pt]))
    write_npy(p("cs.npy"), "<c16", [2, N], cplx([c for row in cs for c in row], "<2d"))
    run("nufft3", "--sources", p("xs.npy"), "--targets", p("ss.npy"), "--strengths", p("cs.npy"), "--tol", "1e-10",
        "--out", p("F.npy"), "--backend", "cpu")
    header, payload = read_npy(p("F.npy"))
    F = unpack_cplx(payload, "<2d")
    check("(2, 30)" in header, f"nufft3 shape {header}")
    worst = 0.0
    for t in range(2):
        exact = [sum(cs[t][i] * cmath.exp(-1j * (xs[i][0] * ss[k][0] + xs[i][1] * ss[k][1])) for i in range(N))
                 for k in range(K)]
        num = math.sqrt(sum(abs(F[t * K + k] - exact[k]) ** 2 for k in range(K)))
        worst = max(worst, num / math.sqrt(sum(abs(e) ** 2 for e in exact)))
    check(worst < 1e-8, f"nufft3 relative error {worst:.2e}")
    # The same with the PSWF kernel; an unknown kernel name is a usage error.
    run("nufft3", "--sources", p("xs.npy"), "--targets", p("ss.npy"), "--strengths", p("cs.npy"), "--tol", "1e-10",
        "--kernel", "pswf", "--out", p("Fp.npy"), "--backend", "cpu")
    Fp = unpack_cplx(read_npy(p("Fp.npy"))[1], "<2d")
    diff = math.sqrt(sum(abs(a - b) ** 2 for a, b in zip(Fp, F)) / sum(abs(b) ** 2 for b in F))
    check(0 < diff < 1e-8, f"nufft3 --kernel pswf differs from es by {diff:.2e}")
    # One transform at a time (--maxbatchsize 1): the same outputs to rounding.
    run("nufft3", "--sources", p("xs.npy"), "--targets", p("ss.npy"), "--strengths", p("cs.npy"), "--tol", "1e-10",
        "--maxbatchsize", "1", "--out", p("F1.npy"), "--backend", "cpu")
    F1 = unpack_cplx(read_npy(p("F1.npy"))[1], "<2d")
    diff = math.sqrt(sum(abs(a - b) ** 2 for a, b in zip(F1, F)) / sum(abs(b) ** 2 for b in F))
    check(diff < 1e-12, f"nufft3 --maxbatchsize 1 differs from one pass by {diff:.2e}")
    err = run("nufft3", "--sources", p("xs.npy"), "--targets", p("ss.npy"), "--strengths", p("cs.npy"), "--kernel",
              "kb", "--backend", "cpu", expect=2).stderr
    check("--kernel must be es, pswf or gaussian" in err, f"nufft3 --kernel kb: {err}")

    # spfft2d from COO .npz archives (stored and deflated, as np.savez / scipy.sparse.save_npz write them).
    rows, cols = 6, 7
    entries = [(0, 0, 1.5), (1, 3, 2.0), (5, 6, -1.0), (2, 2, 0.5), (4, 1, 3.0), (2, 2, 0.25)]
    for compression in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        with zipfile.ZipFile(p("m.npz"), "w", compression) as z:
            z.writestr("row.npy", npy_bytes("<i4", [len(entries)], struct.pack(f"<{len(entries)}i", *[e[0] for e in entries])))
            z.writestr("col.npy", npy_bytes("<i8", [len(entries)], struct.pack(f"<{len(entries)}q", *[e[1] for e in entries])))
            z.writestr("data.npy", npy_bytes("<f8", [len(entries)], struct.pack(f"<{len(entries)}d", *[e[2] for e in entries])))
            z.writestr("shape.npy", npy_bytes("<i8", [2], struct.pack("<2q", rows, cols)))
            # scipy.sparse.save_npz stores the format as str (U3) in current releases, as bytes (S3) in old ones.
            z.writestr("format.npy", npy_bytes("<U3", [], "coo".encode("utf-32-le")) if compression
                       else npy_bytes("|S3", [], b"coo"))
        run("spfft2d", p("m.npz"), "--values", "--double", "--out", p("Y.npy"), "--summary", p("Y.csv"),
            "--plot", p("Y.png"), "--backend", "cpu")
        header, payload = read_npy(p("Y.npy"))
        Y = unpack_cplx(payload, "<2d")
        width = cols // 2 + 1
        check("(6, 4)" in header, f"spfft2d shape {header}")
        err = max(abs(Y[u * width + v] - sum(w * cmath.exp(-2j * math.pi * (u * r / rows + v * c / cols))
                                              for r, c, w in entries))
                  for u in range(rows) for v in range(width))
        check(err < 1e-12, f"spfft2d error {err:.2e} (compression {compression})")
    check(open(p("Y.csv")).readline().strip() == "key,value", "spfft2d summary CSV")

    # Refusals name the option and the value, and exit 2.
    for args, words in ((["shift", "--repeat", "0"], "--repeat"),
                        (["sparse", p("x.npy"), "--k", "abc"], "--k expects an integer, got 'abc'"),
                        (["shift", "--shape", "100000000x100000000"], "bytes"),
                        (["shift", p("missing.npy")], "cannot open"),
                        (["sparse", p("x.npy"), "--k", "3", "--out", p("c.txt")], ".npy, .csv or .json"),
                        (["shift", p("a.npy"), "--axes", "3"], "outside")):
        err = run(*args, expect=2).stderr
        check(words in err, f"sfft {' '.join(args)}: message {err!r} lacks {words!r}")
    write_npy(p("be.npy"), ">f8", [2], struct.pack(">2d", 1, 2))
    check("little-endian" in run("shift", p("be.npy"), expect=2).stderr, "big-endian input refused")
    check("families:" in run("--version").stdout, "--version")

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("CLI on user files: all checks passed")
    return 0


sys.exit(main())
