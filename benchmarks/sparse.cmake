# SPDX-License-Identifier: Apache-2.0
# Sparse FFT benchmark: sfft_exec vs cuFFT (CUDA builds) and vs threaded FFTW in the same run.
add_executable(bench_sparse ${CMAKE_CURRENT_SOURCE_DIR}/bench_sparse.cpp)
target_link_libraries(bench_sparse PRIVATE sfft::sfft sfft_bench_support PkgConfig::FFTW3 ${SFFT_FFTW3_THREADS}
                      ${SFFT_FFTW3F_THREADS})
if(SFFT_HAVE_CUDA)
  target_link_libraries(bench_sparse PRIVATE CUDA::cudart CUDA::cufft CUDA::curand)
endif()
target_compile_options(bench_sparse PRIVATE -Wall -Wextra)

# Batched sparse FFT benchmark: sfft_exec_batch vs cufftPlanMany (CUDA builds) and batched FFTW, same run.
add_executable(bench_sparse_batch ${CMAKE_CURRENT_SOURCE_DIR}/bench_sparse_batch.cpp)
target_link_libraries(bench_sparse_batch PRIVATE sfft::sfft sfft_bench_support PkgConfig::FFTW3 ${SFFT_FFTW3_THREADS}
                      ${SFFT_FFTW3F_THREADS})
if(SFFT_HAVE_CUDA)
  target_link_libraries(bench_sparse_batch PRIVATE CUDA::cudart CUDA::cufft)
endif()
target_compile_options(bench_sparse_batch PRIVATE -Wall -Wextra)

# The sparse FFT under white noise: an SNR sweep (-5..40 dB) of recall, value error, time and the exec report
# against cuFFT (CUDA builds) and threaded FFTW, with the full FFT's top-k as the recall reference.
add_executable(bench_sparse_noise ${CMAKE_CURRENT_SOURCE_DIR}/bench_sparse_noise.cpp)
target_link_libraries(bench_sparse_noise PRIVATE sfft::sfft sfft_bench_support PkgConfig::FFTW3 ${SFFT_FFTW3_THREADS}
                      ${SFFT_FFTW3F_THREADS})
if(SFFT_HAVE_CUDA)
  target_link_libraries(bench_sparse_noise PRIVATE CUDA::cudart CUDA::cufft CUDA::curand)
endif()
target_compile_options(bench_sparse_noise PRIVATE -Wall -Wextra)
