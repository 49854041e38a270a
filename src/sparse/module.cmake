# Sparse FFT (sfft_create / sfft_exec / sfft_destroy): filter design shared by both backends, CPU on FFTW,
# CUDA on cuFFT + CUB.
list(APPEND SFFT_SOURCES capi/sparse_api.cpp src/sparse/filter.cpp src/sparse/cpu.cpp)
list(APPEND SFFT_CUDA_SOURCES src/sparse/cuda.cu)
list(APPEND SFFT_EXPORTS sfft_sparse_options_init sfft_create sfft_create_ex sfft_exec sfft_destroy)
