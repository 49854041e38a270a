# SPDX-License-Identifier: Apache-2.0
"""A Python user of the installed library through ctypes (no compiled wrapper): fftshift of a
C-order array compared with NumPy's definition, computed here without NumPy."""
import ctypes
import os
import sys

lib = ctypes.CDLL(os.environ["SFFT_LIBRARY"])
lib.fftshift_nd.restype = ctypes.c_int
lib.fftshift_nd.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
                            ctypes.c_uint32, ctypes.c_int, ctypes.c_void_p]
lib.sfft_last_error.restype = ctypes.c_char_p
lib.sfft_version_string.restype = ctypes.c_char_p

rows, cols = 5, 4
data = (ctypes.c_double * (rows * cols))(*range(rows * cols))
out = (ctypes.c_double * (rows * cols))()
shape = (ctypes.c_int64 * 2)(rows, cols)
SFFT_FLOAT64 = 2
status = lib.fftshift_nd(out, data, 2, shape, 0b01, SFFT_FLOAT64, None)  # axis 0 only
if status != 0:
    sys.exit(f"fftshift_nd failed: {lib.sfft_last_error().decode()}")
for i in range(rows):
    for j in range(cols):
        src = ((i - rows // 2) % rows) * cols + j
        if out[i * cols + j] != data[src]:
            sys.exit(f"mismatch at ({i},{j}): {out[i * cols + j]} != {data[src]}")
bad = lib.fftshift_nd(out, data, 2, shape, 0b100, SFFT_FLOAT64, None)
if bad != 1 or b"axes_mask" not in lib.sfft_last_error():
    sys.exit(f"bad mask not rejected: status {bad}, {lib.sfft_last_error()}")
print(f"Python ctypes consumer OK (sfft {lib.sfft_version_string().decode()})")
