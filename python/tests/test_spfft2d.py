# SPDX-License-Identifier: Apache-2.0
"""Sparse-input 2-D FFT against numpy.fft.rfft2 of the dense matrix."""
import numpy as np
import pytest

import sfft

scipy_sparse = pytest.importorskip("scipy.sparse")
scipy_io = pytest.importorskip("scipy.io")


def coo(rng, rows, cols, nnz):
    return rng.integers(0, rows, nnz), rng.integers(0, cols, nnz), rng.standard_normal(nnz)


def dense(rows, cols, r, c, v=None):
    a = np.zeros((rows, cols))
    if v is None:
        a[r, c] = 1.0
    else:
        np.add.at(a, (r, c), v)
    return a


def assert_close(Y, a, rtol=1e-12):
    want = np.fft.rfft2(a)
    assert Y.shape == want.shape
    np.testing.assert_allclose(Y, want, rtol=0, atol=rtol * max(1.0, np.abs(a).sum()))


@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (64, 48), (33, 130)])
@pytest.mark.parametrize("method", ["auto", "direct", "direct_rows", "dense", "pruned"])
def test_coo_values_and_pattern(rng, shape, method):
    rows, cols = shape
    r, c, v = coo(rng, rows, cols, 3 * max(rows, cols))  # repeats included
    assert_close(sfft.spfft2d((v, (r, c)), shape=shape, method=method), dense(rows, cols, r, c, v))
    assert_close(sfft.spfft2d((r, c), shape=shape, method=method), dense(rows, cols, r, c))
    Y = sfft.spfft2d((v, (r, c)), shape=shape, binary=True, dtype=np.complex64, method=method)
    assert Y.dtype == np.complex64
    assert_close(Y, dense(rows, cols, r, c), rtol=1e-5)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dok", "bsr"])
def test_scipy_formats(fmt):
    m = scipy_sparse.random(40, 30, density=0.1, format=fmt, random_state=4)
    assert_close(sfft.spfft2d(m), m.toarray())
    assert_close(sfft.spfft2d(m, binary=True), (m.toarray() != 0).astype(float))


def test_scipy_sparse_array_and_integer_values():
    if not hasattr(scipy_sparse, "csr_array"):
        pytest.skip("SciPy without sparse arrays")
    m = scipy_sparse.csr_array(np.arange(24, dtype=np.int32).reshape(4, 6) % 5)
    assert_close(sfft.spfft2d(m), m.toarray().astype(float))


def test_mtx_paths(tmp_path, rng):
    m = scipy_sparse.random(20, 25, density=0.15, format="coo", random_state=5)
    path = tmp_path / "m.mtx"
    scipy_io.mmwrite(str(path), m)
    assert_close(sfft.spfft2d(path), m.toarray())  # os.PathLike
    assert_close(sfft.spfft2d(str(path), binary=True), (m.toarray() != 0).astype(float))
    sym = tmp_path / "sym.mtx"
    sym.write_text("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 2.0\n3 1 -1.5\n")
    assert_close(sfft.spfft2d(sym), np.array([[2.0, 0, -1.5], [0, 0, 0], [-1.5, 0, 0]]))
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 x 2.0\n")
    with pytest.raises(sfft.InvalidArgumentError, match="line 3"):
        sfft.spfft2d(bad)
    with pytest.raises(sfft.UnsupportedError, match="spfft2d_create_from_mtx"):
        cplx = tmp_path / "c.mtx"
        cplx.write_text("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1.0 2.0\n")
        sfft.spfft2d(cplx)
    with pytest.raises(sfft.InvalidArgumentError, match="spfft2d_create_from_mtx"):
        sfft.spfft2d(tmp_path / "missing.mtx")
    with pytest.raises(ValueError, match="shape is read"):
        sfft.spfft2d(path, shape=(20, 25))


def test_plan_rows_stream_and_facts(rng):
    rows, cols = 50, 37
    r, c, v = coo(rng, rows, cols, 120)
    a = dense(rows, cols, r, c, v)
    want = np.fft.rfft2(a)
    with sfft.Spfft2dPlan((v, (r, c)), shape=(rows, cols), method="direct", tile_rows=8,
                          backend="cpu") as plan:
        assert plan.shape == (rows, cols) and plan.out_shape == (rows, cols // 2 + 1)
        assert plan.nnz == np.count_nonzero(a) and plan.backend == "cpu" and plan.method == "direct"
        assert plan.tile_rows == 8 and plan.workspace_bytes > 0
        full = plan.execute()
        np.testing.assert_array_equal(plan.execute_rows(10, 15), full[10:25])
        out = np.empty((rows, 2 * (cols // 2 + 1)), np.complex128)
        plan.execute(out=out[:, ::2])  # non-contiguous out
        np.testing.assert_array_equal(out[:, ::2], full)
        got = np.full(want.shape, np.nan, np.complex128)
        seen = []

        def collect(row0, block):
            assert not block.flags.writeable
            got[row0:row0 + block.shape[0]] = block
            seen.append(block.shape[0])

        plan.execute_stream(collect)
        np.testing.assert_array_equal(got, full)
        assert sum(seen) == rows
        plan.method = "dense"
        plan.tile_rows = 0
        assert plan.method == "dense"
        assert_close(plan.execute(), a)

        def boom(row0, block):
            raise KeyError("from the callback")

        with pytest.raises(KeyError, match="from the callback"):
            plan.execute_stream(boom)
        np.testing.assert_allclose(plan.execute(), want, atol=1e-12 * np.abs(a).sum())  # still usable
    assert_close(full, a)


def test_conversions_and_non_contiguous(rng):
    r, c, v = coo(rng, 16, 24, 60)
    a = dense(16, 24, r, c, v)
    r32, c32 = r.astype(np.int32), c.astype(np.uint16)
    assert_close(sfft.spfft2d((v.astype(np.float32), (r32, c32)), shape=(16, 24)),
                 dense(16, 24, r, c, v.astype(np.float32).astype(np.float64)))
    stacked = np.stack([r, c])  # rows of a 2 x nnz array; columns of its transpose are non-contiguous
    assert_close(sfft.spfft2d((v[::-1][::-1], (stacked.T[:, 0], stacked.T[:, 1])), shape=(16, 24)), a)
    assert_close(sfft.spfft2d((list(v), (list(r), list(c))), shape=(16, 24)), a)


def test_bad_inputs(rng):
    with pytest.raises(sfft.InvalidArgumentError, match=r"col_idx\[1\] = 70 is outside"):
        sfft.spfft2d(([0, 5], [3, 70]), shape=(10, 10))
    with pytest.raises(sfft.InvalidArgumentError, match=r"row_idx\[1\] = -5"):
        sfft.spfft2d(([0, -5], [3, 7]), shape=(10, 10))
    with pytest.raises(sfft.InvalidArgumentError, match=r"values\[1\] = inf is not finite"):
        sfft.spfft2d(([1.0, np.inf], ([0, 5], [3, 7])), shape=(10, 10))
    with pytest.raises(sfft.InvalidArgumentError, match="spfft2d_create"):
        sfft.spfft2d(([], []), shape=(0, 10))
    with pytest.raises(ValueError, match="shape"):
        sfft.spfft2d(([0], [0]))
    with pytest.raises(ValueError, match="col has 1 entries, row has 2"):
        sfft.spfft2d(([0, 1], [0]), shape=(4, 4))
    with pytest.raises(TypeError, match="dtype"):
        sfft.spfft2d(([0.5], [0]), shape=(4, 4))
    with pytest.raises(TypeError, match="complex"):
        sfft.spfft2d(scipy_sparse.random(4, 4, density=0.5, format="csr", random_state=1) * 1j)
    with pytest.raises(ValueError, match="complex64 or complex128"):
        sfft.spfft2d(([0], [0]), shape=(4, 4), dtype=np.float64)
    with pytest.raises(ValueError, match="method"):
        sfft.spfft2d(([0], [0]), shape=(4, 4), method="fastest")
    with pytest.raises(ValueError, match="shape"):
        sfft.spfft2d(([0], [0]), shape=(4, 4), out=np.empty((4, 4), np.complex128))


def test_empty_matrix():
    np.testing.assert_array_equal(sfft.spfft2d((np.zeros(0, int), np.zeros(0, int)), shape=(3, 4)),
                                  np.zeros((3, 3), np.complex128))
