# SPDX-License-Identifier: Apache-2.0
"""Package-wide behaviour: version and build information, errors, the GIL, handles across threads."""
import threading
import time

import numpy as np
import pytest

import sfft


def test_version_and_build_info():
    info = sfft.build_info()
    assert sfft.__version__ == info["version"]
    major, minor, patch = (int(p) for p in sfft.__version__.split("."))
    assert info["version_number"] == major * 10000 + minor * 100 + patch
    assert info["families"] == ["shift", "sparse", "nufft3", "spfft2d"]
    assert info["fft_library"].startswith("fftw")
    assert info["cuda_loaded"] == (info["cuda_unavailable"] == "")
    if not info["cuda_compiled"]:
        assert info["cuda_architectures"] == [] and info["cuda_device_count"] == 0


def test_error_classes_carry_status_and_message():
    with pytest.raises(sfft.SfftError) as e:
        sfft.SparsePlan(1001, 1)
    err = e.value
    assert isinstance(err, sfft.InvalidArgumentError) and isinstance(err, ValueError)
    assert err.status == 1 and err.status_name == "SFFT_ERROR_INVALID_ARGUMENT"
    assert err.message.startswith("sfft_create: ") and err.message in str(err)
    for cls, base in [(sfft.UnsupportedError, NotImplementedError), (sfft.OutOfMemoryError, MemoryError),
                      (sfft.NoDeviceError, RuntimeError), (sfft.DeviceError, RuntimeError),
                      (sfft.InternalError, RuntimeError)]:
        assert issubclass(cls, sfft.SfftError) and issubclass(cls, base)


def test_error_message_is_per_thread():
    messages = {}

    def fail(n):
        try:
            sfft.SparsePlan(n, 1)
        except sfft.SfftError as e:
            messages[n] = e.message

    threads = [threading.Thread(target=fail, args=(n,)) for n in (1001, 1003, 1005, 1007)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(f"n = {n} is odd" in m for n, m in messages.items()) and len(messages) == 4


def test_gil_released_during_calls(rng):
    # A single-threaded transform of about half a second. While it runs, this thread keeps executing
    # bytecode only if the call released the GIL; otherwise its loop stalls for the whole call.
    n = 2048
    r, c = rng.integers(0, n, 400_000), rng.integers(0, n, 400_000)
    plan = sfft.Spfft2dPlan((r, c), shape=(n, n), method="direct", nthreads=1, backend="cpu")
    out = np.empty(plan.out_shape, np.complex128)
    span = {}
    started = threading.Event()

    def work():
        started.set()
        t0 = time.perf_counter()
        plan.execute(out=out)
        span["call"] = (t0, time.perf_counter())

    worker = threading.Thread(target=work)
    worker.start()
    started.wait()
    stamps = []
    while worker.is_alive():
        stamps.append(time.perf_counter())
    worker.join()
    t0, t1 = span["call"]
    inside = [s for s in stamps if t0 <= s <= t1]
    gaps = np.diff([t0] + inside + [t1])
    assert t1 - t0 > 0.05, "the call was too short to tell"
    assert gaps.max() < 0.5 * (t1 - t0), f"this thread stalled {gaps.max():.3f} s of a {t1 - t0:.3f} s call"
    plan.close()


def test_concurrent_use_of_one_plan_is_refused_not_corrupted(rng):
    n = 1024
    r, c = rng.integers(0, n, 100_000), rng.integers(0, n, 100_000)
    plan = sfft.Spfft2dPlan((r, c), shape=(n, n), method="direct", nthreads=1, backend="cpu")
    want = plan.execute()
    results, errors = [], []

    def work():
        try:
            results.append(plan.execute())
        except sfft.InvalidArgumentError as e:
            errors.append(e.message)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) + len(errors) == 4 and results
    for got in results:
        np.testing.assert_array_equal(got, want)
    assert all(m.startswith("spfft2d_exec: plan is in use by another call") for m in errors)
