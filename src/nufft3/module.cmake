# Type-3 NUFFT (irregular points to irregular frequencies), CPU and CUDA.
list(APPEND SFFT_SOURCES capi/nufft3_api.cpp src/nufft3/params.cpp src/nufft3/plan.cpp src/nufft3/cpu.cpp)
list(APPEND SFFT_CUDA_SOURCES src/nufft3/cuda.cu)
list(APPEND SFFT_EXPORTS nufft3_options_init nufft3_create nufft3_set_options nufft3_setpts nufft3_exec
     nufft3_destroy)
# SIMD exp/sqrt (libmvec) in the CPU spreading kernels needs -ffast-math; nothing in cpu.cpp tests for NaN
# (coordinates are checked in plan.cpp before they get here).
set_source_files_properties(src/nufft3/cpu.cpp PROPERTIES COMPILE_OPTIONS "-ffast-math")
