# SPDX-License-Identifier: Apache-2.0
# Type-3 NUFFT (irregular points to irregular frequencies), CPU and CUDA.
list(APPEND SFFT_SOURCES capi/nufft3_api.cpp src/nufft3/params.cpp src/nufft3/plan.cpp src/nufft3/horner.cpp
     src/nufft3/cpu.cpp src/nufft3/cpu_kernels_generic.cpp)
# The CUDA plugin: its units and the host code they call (kernel design, grid layout, Horner tables).
list(APPEND SFFT_CUDA_SOURCES src/nufft3/cuda.cu src/nufft3/params.cpp src/nufft3/horner.cpp)
list(APPEND SFFT_CUDA_SEAMS src/nufft3/cuda_seam.cpp)
list(APPEND SFFT_EXPORTS nufft3_options_init nufft3_options_init_sized nufft3_create nufft3_set_options nufft3_setpts nufft3_exec
     nufft3_destroy)
# The CPU spreading/interpolation loops again for AVX2+FMA and AVX-512 on x86-64 (GCC/Clang), picked at run
# time by cpu::select_kernels; elsewhere only the baseline build.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  list(APPEND SFFT_SOURCES src/nufft3/cpu_kernels_avx2.cpp src/nufft3/cpu_kernels_avx512.cpp)
  set_source_files_properties(src/nufft3/cpu_kernels_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
  set_source_files_properties(src/nufft3/cpu_kernels_avx512.cpp PROPERTIES COMPILE_OPTIONS
                              "-mavx512f;-mavx512dq;-mavx512vl;-mavx2;-mfma;-mprefer-vector-width=512")
  set_source_files_properties(src/nufft3/cpu.cpp PROPERTIES COMPILE_DEFINITIONS SFFT_NUFFT3_X86_VARIANTS=1)
endif()
