# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: a seeded generator, and CuPy on a usable GPU (tests needing it skip otherwise)."""
import numpy as np
import pytest

import sfft


@pytest.fixture
def rng():
    return np.random.default_rng(20261125)


@pytest.fixture
def cupy():
    cp = pytest.importorskip("cupy")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except cp.cuda.runtime.CUDARuntimeError as e:
        pytest.skip(f"no usable CUDA runtime: {e}")
    info = sfft.build_info()
    if not info["cuda_loaded"] or info["cuda_device_count"] < 1:
        pytest.skip(f"this sfft has no usable CUDA backend: {info['cuda_unavailable']}")
    return cp
