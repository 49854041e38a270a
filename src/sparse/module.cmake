# SPDX-License-Identifier: Apache-2.0
# Sparse FFT (sfft_create / sfft_exec / sfft_destroy): filter design shared by both backends, CPU on FFTW,
# CUDA on cuFFT + CUB.
list(APPEND SFFT_SOURCES capi/sparse_api.cpp src/sparse/api_plan.cpp src/sparse/filter.cpp src/sparse/fold.cpp src/sparse/cpu.cpp)
# The CUDA plugin: its units (one per stage, src/sparse/cuda/README.md) and the host code they call (design,
# host-side folding).
list(APPEND SFFT_CUDA_SOURCES src/sparse/cuda/engine.cu src/sparse/cuda/fold.cu src/sparse/cuda/peel.cu
     src/sparse/cuda/robust.cu src/sparse/cuda/comb.cu src/sparse/cuda/topk.cu src/sparse/filter.cpp
     src/sparse/fold.cpp)
list(APPEND SFFT_CUDA_SEAMS src/sparse/cuda_seam.cpp)
list(APPEND SFFT_EXPORTS sfft_sparse_options_init sfft_sparse_options_init_sized sfft_create sfft_create_ex sfft_exec sfft_exec_batch sfft_get_report sfft_destroy)
