# SPDX-License-Identifier: Apache-2.0
# libsfft_mpi scaling benchmark (run under mpiexec; see docs/distributed.md).
add_executable(bench_mpi ${CMAKE_CURRENT_SOURCE_DIR}/bench_mpi.cpp)
target_link_libraries(bench_mpi PRIVATE sfft::sfft_mpi sfft::sfft sfft_bench_support PkgConfig::FFTW3)
target_compile_options(bench_mpi PRIVATE -Wall -Wextra)
if(SFFT_HAVE_CUDA)  # --gpu: device-resident samples, built on the device
  target_sources(bench_mpi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/bench_mpi_signal.cu)
  target_link_libraries(bench_mpi PRIVATE CUDA::cudart)
endif()
