# SPDX-License-Identifier: Apache-2.0
# spfft2d benchmark: sparse-input 2-D FFT vs dense cuFFT R2C 2-D in the same run (CUDA builds only).
if(SFFT_HAVE_CUDA)
  add_executable(bench_spfft2d ${CMAKE_CURRENT_SOURCE_DIR}/bench_spfft2d.cpp)
  target_link_libraries(bench_spfft2d PRIVATE sfft::sfft sfft_bench_support CUDA::cudart CUDA::cufft)
  target_compile_options(bench_spfft2d PRIVATE -Wall -Wextra)
endif()
