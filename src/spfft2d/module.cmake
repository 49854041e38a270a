# SPDX-License-Identifier: Apache-2.0
# Sparse-input (binary or real-valued) 2-D FFT.
list(APPEND SFFT_SOURCES capi/spfft2d_api.cpp src/spfft2d/plan.cpp src/spfft2d/columns.cpp src/spfft2d/mtx_reader.cpp
     src/spfft2d/cpu.cpp src/spfft2d/sparse_row_r2c.cpp src/spfft2d/sparse_row_ramps_generic.cpp)
# The sparse R2C's ramp loop again for AVX2 + FMA and AVX-512 (common/cpu_isa.hpp), picked by select_ramp_adders.
if(SFFT_X86_VARIANTS)
  list(APPEND SFFT_SOURCES src/spfft2d/sparse_row_ramps_avx2.cpp src/spfft2d/sparse_row_ramps_avx512.cpp)
  set_source_files_properties(src/spfft2d/sparse_row_ramps_avx2.cpp PROPERTIES COMPILE_OPTIONS "${SFFT_AVX2_FLAGS}")
  set_source_files_properties(src/spfft2d/sparse_row_ramps_avx512.cpp PROPERTIES COMPILE_OPTIONS
                              "${SFFT_AVX512_FLAGS}")
endif()
# The CUDA plugin: its units and the host code they call (cost model, twiddles, sizes).
list(APPEND SFFT_CUDA_SOURCES src/spfft2d/cuda/engine.cu src/spfft2d/cuda/streaming.cu src/spfft2d/cuda/direct_tiles.cu
     src/spfft2d/cuda/bluestein.cu src/spfft2d/cuda/whole.cu src/spfft2d/cuda/pruned.cu
     src/spfft2d/cuda/four_step.cu src/spfft2d/columns.cpp)
# The seam's library side forwards to the plugin; without CUDA the plugin lookup fails with
# SFFT_ERROR_UNSUPPORTED, so the same file serves the CPU-only build.
if(SFFT_HAVE_CUDA)
  list(APPEND SFFT_CUDA_SEAMS src/spfft2d/cuda_seam.cpp)
else()
  list(APPEND SFFT_SOURCES src/spfft2d/cuda_seam.cpp)
endif()
list(APPEND SFFT_EXPORTS spfft2d_create spfft2d_create_from_mtx spfft2d_exec spfft2d_exec_rows spfft2d_exec_stream
     spfft2d_set_tile_rows spfft2d_set_method spfft2d_get_method spfft2d_get_info spfft2d_destroy)
# spfft2d_method's names (src/spfft2d/method_names.hpp, header-only, not in the public API) for the CLI,
# bench_spfft2d and the tests.
add_library(sfft_spfft2d_method_names INTERFACE)
target_include_directories(sfft_spfft2d_method_names INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/include
                           ${CMAKE_CURRENT_SOURCE_DIR}/src)
