# SPDX-License-Identifier: Apache-2.0
"""CUDA arrays (CuPy, __cuda_array_interface__, DLPack) used in place on the GPU. Skipped without CuPy, a GPU
or an sfft built with CUDA (see the cupy fixture in conftest.py)."""
import numpy as np
import pytest

import sfft


class CAIOnly:
    """Exposes a device array only through __cuda_array_interface__."""

    def __init__(self, a):
        self._a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__


class DLPackOnly:
    """Exposes a device array only through the DLPack protocol."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_build_info_sees_the_gpu(cupy):
    info = sfft.build_info()
    assert info["cuda_compiled"] and info["cuda_loaded"] and info["cuda_device_count"] >= 1
    assert info["cufft_version"] > 0 and info["cuda_architectures"]


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int64])
def test_shift_on_device(cupy, rng, dtype):
    x = rng.standard_normal((33, 20, 7)).astype(dtype)
    d = cupy.asarray(x)
    ptr = d.data.ptr
    y = sfft.fftshift(d, axes=(0, 2))
    assert isinstance(y, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(y), np.fft.fftshift(x, axes=(0, 2)))
    assert sfft.ifftshift(d, out=d) is d and d.data.ptr == ptr  # in place, same memory
    np.testing.assert_array_equal(cupy.asnumpy(d), np.fft.ifftshift(x))
    t = cupy.asarray(x).transpose(2, 0, 1)  # non-contiguous device input: copied on the device
    np.testing.assert_array_equal(cupy.asnumpy(sfft.fftshift(t)), np.fft.fftshift(x.transpose(2, 0, 1)))


def test_shift_protocols_and_streams(cupy, rng):
    x = rng.standard_normal((16, 9))
    for wrapped in (CAIOnly(cupy.asarray(x)), DLPackOnly(cupy.asarray(x))):
        np.testing.assert_array_equal(cupy.asnumpy(sfft.fftshift(wrapped)), np.fft.fftshift(x))
    out = cupy.empty((16, 9))
    sfft.fftshift(CAIOnly(cupy.asarray(x)), out=CAIOnly(out))  # written through the interface
    np.testing.assert_array_equal(cupy.asnumpy(out), np.fft.fftshift(x))
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        d = cupy.asarray(x)
        y = sfft.fftshift(d)  # on CuPy's current stream, ordered with the copy above
        host = cupy.asnumpy(y, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(host, np.fft.fftshift(x))
    np.testing.assert_array_equal(sfft.fftshift(x, backend="cuda"), np.fft.fftshift(x))  # host, staged
    with pytest.raises(TypeError, match="device"):
        sfft.fftshift(d, out=np.empty((16, 9)))


def test_sparse_fft_on_device(cupy, rng):
    n, k = 1 << 16, 10
    X = np.zeros(n, np.complex128)
    f = rng.choice(n, k, replace=False)
    X[f] = 1 + rng.uniform(0, 1, k)
    x = np.fft.ifft(X)
    with sfft.SparsePlan(n, k, backend="cuda") as plan:
        freqs, values = plan.execute(cupy.asarray(x))
        assert isinstance(freqs, cupy.ndarray) and isinstance(values, cupy.ndarray)
        freqs, values = cupy.asnumpy(freqs), cupy.asnumpy(values)
        assert sorted(freqs.tolist()) == sorted(f.tolist())
        np.testing.assert_allclose(values, X[freqs], rtol=1e-6)
        hf, hv = plan.execute(x)  # host input, CUDA plan
        assert sorted(hf.tolist()) == sorted(f.tolist())
    with sfft.SparsePlan(n, k, backend="cpu") as plan:
        with pytest.raises(sfft.InvalidArgumentError, match="device memory but the plan is a CPU plan"):
            plan.execute(cupy.asarray(x))


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_nufft3_on_device(cupy, rng, dim):
    n, k = 2000, 1500
    xs = [rng.uniform(-np.pi, np.pi, n) for _ in range(dim)]
    ss = [rng.uniform(-40, 40, k) for _ in range(dim)]
    c = rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))
    want = c @ np.exp(-1j * sum(np.outer(x, s) for x, s in zip(xs, ss)))
    names = "xyz"[:dim] + "stu"[:dim]
    with sfft.Plan(3, dim, n_trans=2, eps=1e-10, isign=-1) as plan:
        plan.setpts(**{nm: cupy.asarray(a) for nm, a in zip(names, xs + ss)})
        F = plan.execute(cupy.asarray(c))
        assert isinstance(F, cupy.ndarray)
        assert np.linalg.norm(cupy.asnumpy(F) - want) < 1e-9 * np.linalg.norm(want)
        Fh = plan.execute(c)  # host strengths staged through the GPU
        assert isinstance(Fh, np.ndarray)
        assert np.linalg.norm(Fh - want) < 1e-9 * np.linalg.norm(want)
    F1 = sfft.nufft3(tuple(cupy.asarray(a) for a in xs), cupy.asarray(c[0]), tuple(cupy.asarray(a) for a in ss),
                     eps=1e-10, isign=-1)
    assert np.linalg.norm(cupy.asnumpy(F1) - want[0]) < 1e-9 * np.linalg.norm(want[0])
    with pytest.raises(TypeError, match="all be host or all be CUDA device"):
        sfft.nufft3(cupy.asarray(xs[0]), c[0], ss[0])


def test_spfft2d_on_device(cupy, rng):
    sparse = pytest.importorskip("scipy.sparse")
    rows, cols, nnz = 300, 257, 2000
    r, c, v = rng.integers(0, rows, nnz), rng.integers(0, cols, nnz), rng.standard_normal(nnz)
    a = np.zeros((rows, cols))
    np.add.at(a, (r, c), v)
    want = np.fft.rfft2(a)
    tol = 1e-12 * np.abs(a).sum()
    Y = sfft.spfft2d((cupy.asarray(v), (cupy.asarray(r), cupy.asarray(c))), shape=(rows, cols), backend="cuda")
    assert isinstance(Y, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(Y), want, atol=tol)
    m = sparse.coo_matrix((v, (r, c)), shape=(rows, cols))
    with sfft.Spfft2dPlan(m, backend="cuda") as plan:
        assert plan.backend == "cuda"
        out = cupy.empty(plan.out_shape, np.complex128)
        assert plan.execute(out=out) is out
        np.testing.assert_allclose(cupy.asnumpy(out), want, atol=tol)
        np.testing.assert_allclose(plan.execute(), want, atol=tol)  # host output, streamed by tiles
        np.testing.assert_allclose(cupy.asnumpy(plan.execute_rows(7, 30, out=cupy.empty((30, cols // 2 + 1),
                                                                                        np.complex128))),
                                   want[7:37], atol=tol)
