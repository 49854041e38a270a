# SPDX-License-Identifier: Apache-2.0
# N-d fftshift / ifftshift.
list(APPEND SFFT_SOURCES capi/shift_api.cpp src/shift/shift.cpp src/shift/layout.cpp src/shift/pairs.cpp src/shift/cpu.cpp)
# The CUDA plugin: its units and the host code they call (layout, in-place plans).
list(APPEND SFFT_CUDA_SOURCES src/shift/cuda.cu src/shift/layout.cpp src/shift/pairs.cpp)
list(APPEND SFFT_CUDA_SEAMS src/shift/cuda_seam.cpp)
list(APPEND SFFT_EXPORTS fftshift_nd ifftshift_nd)
