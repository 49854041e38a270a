# SPDX-License-Identifier: Apache-2.0
# spfft2d's further test programs, split by stage like src/spfft2d/cuda/ (spfft2d_test: every method's accuracy
# and the C API's checks).
sfft_add_gtest(spfft2d_direct_test spfft2d_direct_test.cpp)
sfft_add_gtest(spfft2d_whole_test spfft2d_whole_test.cpp)
sfft_add_gtest(spfft2d_mtx_test spfft2d_mtx_test.cpp)
# AUTO's cost model (src/spfft2d/columns.cpp, in the internal objects): its picks on the suite's shapes.
sfft_add_gtest(spfft2d_cost_test spfft2d_cost_test.cpp)
target_link_libraries(spfft2d_cost_test PRIVATE sfft_internal sfft_spfft2d_method_names)
# The host tables (src/spfft2d/columns.cpp): compression, memoised twiddles, sums of twiddle runs.
sfft_add_gtest(spfft2d_columns_test spfft2d_columns_test.cpp)
target_link_libraries(spfft2d_columns_test PRIVATE sfft_internal)
