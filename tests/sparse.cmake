# sparse_decode_test checks the header-only bucket arithmetic the sparse FFT's backends share
# (src/sparse/bucket_math.hpp) on hand-built buckets.
sfft_add_gtest(sparse_decode_test sparse_decode_test.cpp)
target_include_directories(sparse_decode_test PRIVATE ${PROJECT_SOURCE_DIR}/src)

# sparse_window_test builds the plan-time design (src/sparse/filter.cpp, compiled into the test: the
# library exports only the C API) and checks the window's truncated taps against the analytic response.
sfft_add_gtest(sparse_window_test sparse_window_test.cpp ${PROJECT_SOURCE_DIR}/src/sparse/filter.cpp)
target_include_directories(sparse_window_test PRIVATE ${PROJECT_SOURCE_DIR}/src)
