# SPDX-License-Identifier: Apache-2.0
# spfft2d benchmark: the issue-22 suite against scatter + FFTW R2C (CPU) and scatter + cuFFT R2C (device), and
# the earlier four cases (--cases). A CUDA build compiles the driver as CUDA (its device peer's scatter kernel).
add_executable(bench_spfft2d ${CMAKE_CURRENT_SOURCE_DIR}/bench_spfft2d.cpp)
target_link_libraries(bench_spfft2d PRIVATE sfft::sfft sfft_bench_support sfft_spfft2d_method_names PkgConfig::FFTW3
                      ${SFFT_FFTW3F_THREADS})
target_compile_definitions(bench_spfft2d PRIVATE SFFT_HAVE_CUDA=${SFFT_HAVE_CUDA})
if(SFFT_HAVE_CUDA)
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/bench_spfft2d.cpp PROPERTIES LANGUAGE CUDA)
  target_link_libraries(bench_spfft2d PRIVATE CUDA::cudart CUDA::cufft)
else()
  target_compile_options(bench_spfft2d PRIVATE -Wall -Wextra)
endif()
