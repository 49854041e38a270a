# N-d fftshift / ifftshift.
list(APPEND SFFT_SOURCES capi/shift_api.cpp src/shift/layout.cpp src/shift/cpu.cpp)
list(APPEND SFFT_CUDA_SOURCES src/shift/cuda.cu)
list(APPEND SFFT_EXPORTS fftshift_nd ifftshift_nd)
