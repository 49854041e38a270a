# SPDX-License-Identifier: Apache-2.0
# Shift benchmark: GPU driver (vs device-to-device copy in the same run) and a CPU comparison with NumPy.
if(SFFT_HAVE_CUDA)
  add_executable(bench_shift bench_shift.cu)
  target_link_libraries(bench_shift PRIVATE sfft::sfft sfft_bench_support CUDA::cudart)
endif()
