# SPDX-License-Identifier: Apache-2.0
# Reliability tests (issue 6): many threads on distinct plans, and resource limits (size_t overflow,
# out-of-memory under an address-space limit). Each test program adapts to the families this build
# compiles: SFFT_TEST_FAMILY_<name>=1 for every entry of SFFT_MODULES.
set(SFFT_RELIABILITY_FAMILY_DEFS)
foreach(module IN LISTS SFFT_MODULES)
  list(APPEND SFFT_RELIABILITY_FAMILY_DEFS SFFT_TEST_FAMILY_${module}=1)
endforeach()

# common_test's handle tests run for each family this build compiles.
target_compile_definitions(common_test PRIVATE ${SFFT_RELIABILITY_FAMILY_DEFS})

sfft_add_gtest(threads_test threads_test.cpp)
target_link_libraries(threads_test PRIVATE Threads::Threads)
target_compile_definitions(threads_test PRIVATE ${SFFT_RELIABILITY_FAMILY_DEFS})

# Threads value, fork() and FFTW's process-wide planner setting (issue 26); reads fftw_planner_nthreads.
sfft_add_gtest(process_test process_test.cpp)
target_link_libraries(process_test PRIVATE ${SFFT_FFTW3_THREADS} ${SFFT_FFTW3F_THREADS})
target_compile_definitions(process_test PRIVATE ${SFFT_RELIABILITY_FAMILY_DEFS})

# FFTW's 64-bit plans, the memory ceiling and nufft3's design memo, from the units themselves.
sfft_add_gtest(reliability_internals_test reliability_internals_test.cpp)
target_link_libraries(reliability_internals_test PRIVATE sfft_internal ${SFFT_FFTW3_THREADS} ${SFFT_FFTW3F_THREADS}
                      Threads::Threads)
target_compile_definitions(reliability_internals_test PRIVATE ${SFFT_RELIABILITY_FAMILY_DEFS})

sfft_add_gtest(limits_test limits_test.cpp)
target_compile_definitions(limits_test PRIVATE ${SFFT_RELIABILITY_FAMILY_DEFS})

# What the fuzzers found, as readable regression tests (enum arguments arrive through C shims).
sfft_add_gtest(fuzz_regressions_test fuzz/regressions_test.cpp fuzz/c_abi.c)
target_include_directories(fuzz_regressions_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
target_compile_definitions(fuzz_regressions_test PRIVATE ${SFFT_RELIABILITY_FAMILY_DEFS})
