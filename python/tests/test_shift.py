# SPDX-License-Identifier: Apache-2.0
"""fftshift / ifftshift against numpy.fft.fftshift / ifftshift."""
import numpy as np
import pytest

import sfft

SHAPES = [(7,), (8,), (5, 4), (3, 6, 5), (2, 3, 4, 5, 1, 3, 2, 3)]
AXES = [None, 0, -1, (0,), (0, -1), (), [0, 0], (-1, 0, -1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("axes", AXES)
def test_matches_numpy(rng, dtype, shape, axes):
    x = rng.standard_normal(shape).astype(dtype)
    if np.iscomplexobj(x):
        x = x + 1j * rng.standard_normal(shape).astype(dtype)
    np.testing.assert_array_equal(sfft.fftshift(x, axes), np.fft.fftshift(x, axes))
    np.testing.assert_array_equal(sfft.ifftshift(x, axes), np.fft.ifftshift(x, axes))
    assert sfft.fftshift(x, axes).dtype == x.dtype


def test_inverse_for_odd_extents(rng):
    x = rng.standard_normal((5, 7))
    np.testing.assert_array_equal(sfft.ifftshift(sfft.fftshift(x)), x)
    assert not np.array_equal(sfft.fftshift(sfft.fftshift(x)), x)


def test_lists_and_scalars():
    np.testing.assert_array_equal(sfft.fftshift([0.0, 1.0, 2.0, 3.0, 4.0]), [3.0, 4.0, 0.0, 1.0, 2.0])
    assert sfft.fftshift(np.array(2.5)) == 2.5


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_other_element_types_move_bits_unchanged(dtype):
    info = np.iinfo(dtype)
    # Bit patterns that are signalling NaNs as float32/float64 must still arrive unchanged.
    x = np.array([info.max, info.min, 0x7F800001, 5, 0x7FF0000000000001 if info.bits == 64 else 7], dtype=dtype)
    x = np.tile(x, (3, 1))
    np.testing.assert_array_equal(sfft.fftshift(x, axes=(0, 1)), np.fft.fftshift(x, axes=(0, 1)))


def test_structured_16_byte_elements():
    dt = np.dtype([("a", np.int64), ("b", np.float64)])
    x = np.array([(i, i / 2) for i in range(9)], dtype=dt)
    np.testing.assert_array_equal(sfft.fftshift(x), np.fft.fftshift(x))


def test_non_contiguous_input_is_copied_not_misread(rng):
    base = rng.standard_normal((9, 12))
    for x in (base[::2, 1::3], base.T, base[:, ::-1], np.asfortranarray(base)):
        assert not x.flags.c_contiguous
        np.testing.assert_array_equal(sfft.fftshift(x, axes=0), np.fft.fftshift(x, axes=0))
        np.testing.assert_array_equal(sfft.ifftshift(x), np.fft.ifftshift(x))


def test_non_native_byte_order(rng):
    x = rng.standard_normal((4, 5)).astype(">f8")
    np.testing.assert_array_equal(sfft.fftshift(x), np.fft.fftshift(x))


def test_out_in_place(rng):
    x = rng.standard_normal((5, 6)) + 1j * rng.standard_normal((5, 6))
    want = np.fft.fftshift(x, axes=1)
    y = x.copy()
    assert sfft.fftshift(y, axes=1, out=y) is y
    np.testing.assert_array_equal(y, want)
    assert sfft.ifftshift(y, axes=1, out=y) is y
    np.testing.assert_array_equal(y, x)


def test_out_separate_and_non_contiguous(rng):
    x = rng.standard_normal((6, 7)).astype(np.float32)
    out = np.empty_like(x)
    assert sfft.fftshift(x, out=out) is out
    np.testing.assert_array_equal(out, np.fft.fftshift(x))
    big = np.zeros((6, 14), np.float32)
    view = big[:, ::2]
    sfft.fftshift(x, out=view)
    np.testing.assert_array_equal(view, np.fft.fftshift(x))
    assert not big[:, 1::2].any()
    y = np.asfortranarray(x)  # in place on a non-contiguous array
    sfft.ifftshift(y, out=y)
    np.testing.assert_array_equal(y, np.fft.ifftshift(x))


def test_out_overlapping_input_view(rng):
    buf = rng.standard_normal(20)
    x = buf[:16].copy()
    sfft.fftshift(buf[:16], out=buf[4:])  # partial overlap: the input is read before it is overwritten
    np.testing.assert_array_equal(buf[4:], np.fft.fftshift(x))


def test_bad_out():
    x = np.zeros((3, 4))
    with pytest.raises(TypeError, match="dtype"):
        sfft.fftshift(x, out=np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="shape"):
        sfft.fftshift(x, out=np.zeros((4, 3)))
    ro = np.zeros((3, 4))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        sfft.fftshift(x, out=ro)


def test_bad_axes_and_dtypes():
    x = np.zeros((3, 4))
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        sfft.fftshift(x, axes=2)
    with pytest.raises(TypeError):
        sfft.fftshift(np.zeros(4, np.int16))
    with pytest.raises(TypeError):
        sfft.fftshift(np.array([1, "a"], dtype=object))


def test_library_error_carries_message():
    x = np.zeros((1,) * 9)
    with pytest.raises(sfft.InvalidArgumentError, match=r"fftshift_nd: .*ndim") as e:
        sfft.fftshift(x)
    assert e.value.status == 1 and e.value.status_name == "SFFT_ERROR_INVALID_ARGUMENT"
    with pytest.raises(ValueError, match="backend"):
        sfft.fftshift(np.zeros(4), backend="gpu")


def test_cuda_backend_without_gpu_raises_no_device():
    if sfft.build_info()["cuda_device_count"] > 0:
        pytest.skip("a GPU is usable here")
    with pytest.raises(sfft.SfftError) as e:
        sfft.fftshift(np.zeros(8), backend="cuda")
    assert e.value.status_name in ("SFFT_ERROR_NO_DEVICE", "SFFT_ERROR_UNSUPPORTED")
    assert e.value.message
