# SPDX-License-Identifier: Apache-2.0
"""Sparse FFT against the k largest coefficients of numpy.fft.fft."""
import threading

import numpy as np
import pytest

import sfft


def sparse_signal(rng, n, k, dtype=np.complex128, noise=0.0):
    X = np.zeros(n, np.complex128)
    f = rng.choice(n, k, replace=False)
    X[f] = (1 + rng.uniform(0, 1, k)) * np.exp(2j * np.pi * rng.uniform(0, 1, k))
    x = np.fft.ifft(X)
    if noise:
        x += noise * (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / np.sqrt(2 * n)
    return x.astype(dtype)


def top_k(x, k):
    X = np.fft.fft(x.astype(np.complex128))
    f = np.argsort(-np.abs(X))[:k]
    return f, X[f]


def assert_top_k(freqs, values, x, k, rtol):
    want_f, want_v = top_k(x, k)
    assert freqs.dtype == np.int64
    assert sorted(freqs.tolist()) == sorted(want_f.tolist())
    order = np.argsort(freqs)
    np.testing.assert_allclose(values[order], want_v[np.argsort(want_f)], rtol=rtol, atol=rtol * np.abs(want_v).max())
    assert np.all(np.diff(np.abs(values)) <= 1e-6 * np.abs(values).max())  # decreasing magnitude


@pytest.mark.parametrize("variant", ["auto", "exact", "robust"])
@pytest.mark.parametrize("n", [1 << 14, 3 << 12, 1920 * 8])
def test_matches_numpy_top_k(rng, variant, n):
    k = 8
    x = sparse_signal(rng, n, k)
    freqs, values = sfft.sparse_fft(x, k, variant=variant, seed=3)
    assert_top_k(freqs, values, x, k, rtol=1e-6)


def test_complex64_and_real_input(rng):
    x = sparse_signal(rng, 1 << 12, 4, np.complex64)
    freqs, values = sfft.sparse_fft(x, 4)
    assert values.dtype == np.complex64
    assert_top_k(freqs, values, x, 4, rtol=2e-3)
    n = 1 << 12
    t = np.arange(n)
    real = np.cos(2 * np.pi * 100 * t / n) + 0.5 * np.cos(2 * np.pi * 300 * t / n)  # float64 -> complex128
    freqs, values = sfft.sparse_fft(real, 4)
    assert values.dtype == np.complex128
    assert sorted(freqs.tolist()) == [100, 300, n - 300, n - 100]


def test_noisy_robust(rng):
    x = sparse_signal(rng, 1 << 14, 6, noise=1e-3)
    freqs, values = sfft.sparse_fft(x, 6, variant="robust")
    assert_top_k(freqs, values, x, 6, rtol=0.05)


def test_plan_reuse_and_determinism(rng):
    n, k = 1 << 13, 5
    with sfft.SparsePlan(n, k, seed=7) as plan:
        assert plan.n == n and plan.k == k and "n=8192" in repr(plan)
        for _ in range(3):
            x = sparse_signal(rng, n, k)
            assert_top_k(*plan.execute(x), x, k, rtol=1e-6)
        a, b = plan(x), plan(x)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    with pytest.raises(ValueError, match="closed"):
        plan.execute(x)
    plan.close()  # harmless twice


def test_non_contiguous_and_converted_input(rng):
    n, k = 1 << 12, 3
    x = sparse_signal(rng, n, k)
    strided = np.empty(2 * n, np.complex128)
    strided[::2] = x
    assert_top_k(*sfft.sparse_fft(strided[::2], k), x, k, rtol=1e-6)
    with sfft.SparsePlan(n, k, dtype=np.complex64) as plan:  # complex128 samples converted to complex64
        assert_top_k(*plan.execute(x), x, k, rtol=2e-3)
    with pytest.raises(TypeError, match="dtype"):
        sfft.sparse_fft(np.array(["a"] * n), k)


def test_bad_inputs_raise_with_library_message(rng):
    with pytest.raises(sfft.InvalidArgumentError, match="sfft_create: .*odd"):
        sfft.SparsePlan(1001, 1)
    with pytest.raises(sfft.InvalidArgumentError, match="sfft_create"):
        sfft.SparsePlan(1 << 10, 1 << 9)
    with pytest.raises(sfft.InvalidArgumentError, match="location_loops"):
        sfft.SparsePlan(1 << 10, 2, location_loops=100)
    with pytest.raises(ValueError, match="variant"):
        sfft.SparsePlan(1 << 10, 2, variant="fast")
    with pytest.raises(ValueError, match=">= 0"):
        sfft.SparsePlan(-16, 2)
    x = sparse_signal(rng, 1 << 10, 2)
    with sfft.SparsePlan(1 << 10, 2) as plan:
        with pytest.raises(ValueError, match="1000 samples"):
            plan.execute(x[:1000])
        with pytest.raises(ValueError, match="dimension"):
            plan.execute(x.reshape(32, 32))
        x[17] = np.nan
        with pytest.raises(sfft.InvalidArgumentError, match="sfft_exec: .*finite|sfft_exec: .*NaN|sfft_exec"):
            plan.execute(x)


def test_distinct_plans_in_threads(rng):
    n, k = 1 << 14, 6
    signals = [sparse_signal(rng, n, k) for _ in range(4)]
    results = [None] * 4

    def work(i):
        with sfft.SparsePlan(n, k, nthreads=1) as plan:
            results[i] = plan.execute(signals[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, (freqs, values) in zip(signals, results):
        assert_top_k(freqs, values, x, k, rtol=1e-6)


@pytest.mark.parametrize("dtype,rtol", [(np.complex128, 1e-6), (np.complex64, 2e-3)])
def test_batch_matches_execute_and_numpy(rng, dtype, rtol):
    n, k, batch = 1 << 12, 6, 5
    rows = [sparse_signal(rng, n, k, dtype) for _ in range(batch)]
    rows[2] = np.zeros(n, dtype)  # an empty row: no coefficient
    x = np.stack(rows)
    with sfft.SparsePlan(n, k, dtype=dtype, variant="exact", seed=3) as plan:
        freqs, values, counts = plan.execute_batch(x)
        assert freqs.shape == (batch, k) and values.shape == (batch, k) and values.dtype == dtype
        assert counts.dtype == np.int64 and counts.tolist() == [k, k, 0, k, k]
        for i, row in enumerate(rows):
            c = counts[i]
            assert np.all(freqs[i, c:] == -1) and np.all(values[i, c:] == 0)
            single_f, single_v = plan.execute(row)
            np.testing.assert_array_equal(freqs[i, :c], single_f)
            np.testing.assert_allclose(values[i, :c], single_v, rtol=rtol, atol=rtol * np.abs(single_v).max(initial=1))
            if c:
                assert_top_k(freqs[i, :c], values[i, :c], row, k, rtol)
    bf, bv, bc = sfft.sparse_fft(x, k, variant="exact", seed=3)  # the 2-D form of sparse_fft
    np.testing.assert_array_equal(bf, freqs)
    np.testing.assert_array_equal(bc, counts)


def test_batch_bad_inputs(rng):
    n, k = 1 << 10, 2
    with sfft.SparsePlan(n, k) as plan:
        with pytest.raises(ValueError, match="1000 samples"):
            plan.execute_batch(np.zeros((3, 1000), np.complex128))
        with pytest.raises(ValueError, match="dimension"):
            plan.execute_batch(np.zeros(n, np.complex128))
        with pytest.raises(ValueError, match="batch 0"):
            plan.execute_batch(np.zeros((0, n), np.complex128))
        x = np.stack([sparse_signal(rng, n, k) for _ in range(3)])
        x[1, 5] = np.nan
        with pytest.raises(sfft.InvalidArgumentError, match="sfft_exec_batch: .*signal 1"):
            plan.execute_batch(x)
    with pytest.raises(ValueError, match="1-D .* or 2-D"):
        sfft.sparse_fft(np.zeros((2, 2, n)), k)


def test_batch_on_device(cupy, rng):
    n, k, batch = 1 << 14, 8, 4
    x = np.stack([sparse_signal(rng, n, k) for _ in range(batch)])
    with sfft.SparsePlan(n, k, backend="cuda", variant="exact") as plan:
        freqs, values, counts = plan.execute_batch(cupy.asarray(x))
        assert isinstance(freqs, cupy.ndarray) and isinstance(values, cupy.ndarray)
        assert isinstance(counts, np.ndarray) and counts.tolist() == [k] * batch
        freqs, values = cupy.asnumpy(freqs), cupy.asnumpy(values)
        for i in range(batch):
            assert_top_k(freqs[i], values[i], x[i], k, rtol=1e-6)


def test_report_explains_clean_and_flags_noise(rng):
    n, k = 1 << 14, 8
    with sfft.SparsePlan(n, k, variant="robust", backend="cpu") as plan:
        with pytest.raises(sfft.InvalidArgumentError):
            plan.report  # before any execution
        x = sparse_signal(rng, n, k)
        freqs, values = plan(x)
        r = plan.report
        assert isinstance(r, sfft.SparseReport)
        assert r.variant == "robust" and not r.unexplained
        assert r.count == len(freqs) == k and r.significant == k
        assert r.explained > 0.999
        energy = np.sum(np.abs(np.fft.fft(x)) ** 2)
        assert abs(r.signal_energy - energy) < 0.05 * energy
        noise = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex128)
        plan(noise)
        r = plan.report
        assert r.unexplained and r.significant == 0 and r.explained < 0.5
        # The noise floor per bin: E|N[f]|^2 = 2n for unit-variance real and imaginary parts.
        assert abs(r.noise_floor - 2 * n) < 0.2 * 2 * n
        # A batch: one report per row.
        plan.execute_batch(np.stack([x, noise]))
        assert not plan.report_of(0).unexplained and plan.report_of(1).unexplained
        with pytest.raises(sfft.InvalidArgumentError):
            plan.report_of(2)
