# SPDX-License-Identifier: Apache-2.0
# Type-3 NUFFT (irregular points to irregular frequencies), CPU and CUDA.
list(APPEND SFFT_SOURCES capi/nufft3_api.cpp src/nufft3/params.cpp src/nufft3/plan.cpp src/nufft3/horner.cpp
     src/nufft3/cpu.cpp src/nufft3/cpu_kernels_generic.cpp)
# The CUDA plugin: its units and the host code they call (kernel design, grid layout, Horner tables).
list(APPEND SFFT_CUDA_SOURCES src/nufft3/cuda.cu src/nufft3/params.cpp src/nufft3/horner.cpp)
list(APPEND SFFT_CUDA_SEAMS src/nufft3/cuda_seam.cpp)
list(APPEND SFFT_EXPORTS nufft3_options_init nufft3_options_init_sized nufft3_create nufft3_set_options nufft3_setpts nufft3_exec
     nufft3_destroy)
# The CPU spreading/interpolation loops again for AVX2 + FMA and AVX-512 (common/cpu_isa.hpp), picked at run time
# by cpu::select_kernels.
if(SFFT_X86_VARIANTS)
  list(APPEND SFFT_SOURCES src/nufft3/cpu_kernels_avx2.cpp src/nufft3/cpu_kernels_avx512.cpp)
  set_source_files_properties(src/nufft3/cpu_kernels_avx2.cpp PROPERTIES COMPILE_OPTIONS "${SFFT_AVX2_FLAGS}")
  set_source_files_properties(src/nufft3/cpu_kernels_avx512.cpp PROPERTIES COMPILE_OPTIONS "${SFFT_AVX512_FLAGS}")
endif()
